// The chain interface cbqsd, the CLI and tests read through. Two
// implementations: devchain::Node (in process, what `cbqsd --dev` embeds) and
// devchain::HttpClient (a devchain process over its HTTP API). A real Cowboy
// node would be a third.
#pragma once

#include <string>
#include <vector>

#include "cbqs/chain/registry.h"
#include "cip11/ids.h"
#include "cbqs/chain/snapshot.h"
#include "devchain/tx.h"

namespace cowboy::devchain {

#define DEVCHAIN_API_ERRORS(X)                                                      \
  X(MalformedTx, 400, "the transaction failed strict decoding")                     \
  X(TxTooLarge, 413, "the transaction exceeds 65,536 bytes")                        \
  X(WrongChain, 400, "the transaction names another chain_instance_id")             \
  X(BadSignature, 400, "the signature recovers no sender")                          \
  X(BadNonce, 409, "the nonce is not the sender's next nonce")                      \
  X(MempoolFull, 503, "too many pending transactions; retry after the next block") \
  X(NotFound, 404, "no such record")                                                \
  X(Gone, 410, "the poll endpoint is retired on this chain (CIP11_POLL_DISABLED)")   \
  X(BadRequest, 400, "the request is malformed")                                    \
  X(Unavailable, 503, "the chain cannot be reached or is shutting down")           \
  X(BlockRefused, 422, "the block does not verify; nothing of it was applied")     \
  X(ViewRefused, 422, "the presence view does not decode or verify; it was dropped") \
  X(Internal, 500, "an internal failure")

enum class ApiErrorCode : std::uint8_t {
#define X(name, status, text) k##name,
  DEVCHAIN_API_ERRORS(X)
#undef X
};
std::string_view api_error_name(ApiErrorCode code);
int api_error_http_status(ApiErrorCode code);
std::optional<ApiErrorCode> api_error_from_name(std::string_view name);

struct ApiError {
  ApiErrorCode code = ApiErrorCode::kInternal;
  std::string message;
};

template <typename T>
using ApiResult = Result<T, ApiError>;

struct TxReceipt {
  Bytes32 tx_hash{};
  std::uint64_t height = 0;
  std::uint32_t index = 0;  // position in its block
  Address sender{};
  std::uint64_t nonce = 0;
  std::optional<std::string> error;  // the ChainError name when rejected
  std::vector<cbqs::ChainEvent> events;
  cbqs::Metering metering;
  std::optional<cip11::JobId> job_id;     // a CIP-11 SubmitJob's new job
  bool ok() const { return !error; }
};

struct AccountInfo {
  u128 balance = 0;
  std::uint64_t next_nonce = 0;
};

using cbqs::ProviderSnapshot;

struct BlockEvents {
  std::uint64_t height = 0;
  Bytes32 tx_hash{};
  std::vector<cbqs::ChainEvent> events;
};

class ChainApi : public cbqs::SnapshotProvider {
 public:
  virtual ~ChainApi() = default;
  virtual ApiResult<Bytes32> submit(const Transaction& tx) = 0;
  /// nullopt while the transaction is pending or unknown.
  virtual ApiResult<std::optional<TxReceipt>> receipt(const Bytes32& tx_hash) = 0;
  virtual ApiResult<std::uint64_t> height() = 0;
  virtual ApiResult<Bytes32> chain_instance_id() = 0;
  virtual ApiResult<AccountInfo> account_info(const Address& address) = 0;
  virtual ApiResult<cbqs::ProviderRecordV2> provider(const Address& provider) = 0;
  virtual ApiResult<cbqs::StreamRecordV2> stream(const Bytes32& stream_id) = 0;
  virtual ApiResult<cbqs::CbqsAccountV2> account(const Address& owner, const Address& provider) = 0;
  virtual ApiResult<cbqs::Params> params() = 0;
  /// Events of blocks from..=to (inclusive), at most 1,000 blocks at a time.
  virtual ApiResult<std::vector<BlockEvents>> events(std::uint64_t from, std::uint64_t to) = 0;
  virtual ApiResult<ProviderSnapshot> provider_snapshot(const Address& provider) = 0;
  /// cbqs::SnapshotProvider: provider_snapshot with its error as text.
  Result<ProviderSnapshot, std::string> read_snapshot(const Address& provider) final;
};

inline constexpr std::uint64_t kMaxEventBlocksPerQuery = 1'000;

}  // namespace cowboy::devchain
