// ChainApi and Cip11Api over a devchain's HTTP API. One connection per call, each bounded
// by a timeout; an unreachable chain is ApiErrorCode::kUnavailable.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "devchain/api.h"
#include "devchain/blocks_api.h"
#include "devchain/cip11_api.h"

namespace cowboy::devchain {

struct HttpText {
  int status = 0;
  std::string body;
};

class HttpClient final : public ChainApi, public Cip11Api, public BlocksApi, public PresenceViewsApi {
 public:
  HttpClient(std::string host, std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(5));
  /// Parses "http://host:port" (the only scheme the devchain serves).
  static std::optional<HttpClient> from_url(const std::string& url,
                                            std::chrono::milliseconds timeout = std::chrono::seconds(5));

  ApiResult<Bytes32> submit(const Transaction& tx) override;
  ApiResult<std::optional<TxReceipt>> receipt(const Bytes32& tx_hash) override;
  ApiResult<std::uint64_t> height() override;
  ApiResult<Bytes32> chain_instance_id() override;
  ApiResult<AccountInfo> account_info(const Address& address) override;
  ApiResult<cbqs::ProviderRecordV2> provider(const Address& provider) override;
  ApiResult<cbqs::StreamRecordV2> stream(const Bytes32& stream_id) override;
  ApiResult<cbqs::CbqsAccountV2> account(const Address& owner, const Address& provider) override;
  ApiResult<cbqs::Params> params() override;
  ApiResult<std::vector<BlockEvents>> events(std::uint64_t from, std::uint64_t to) override;
  ApiResult<ProviderSnapshot> provider_snapshot(const Address& provider) override;

  ApiResult<Cip11Genesis> cip11_genesis() override;
  ApiResult<std::vector<cip11::chain::RunnerRecord>> runners() override;
  ApiResult<cip11::chain::RunnerRecord> runner(const Address& runner) override;
  ApiResult<cip11::chain::PresenceProof> presence_proof(const Address& runner) override;
  ApiResult<cip11::chain::JobRecord> job(const cip11::JobId& job_id) override;
  ApiResult<std::vector<cip11::chain::JobRecord>> runner_jobs(const Address& runner) override;
  ApiResult<BlockPresence> block_presence(std::uint64_t height) override;
  ApiResult<cip11::chain::Effects> block_assignments(std::uint64_t height) override;
  ApiResult<std::vector<cip11::chain::ValidatorSetChange>> validator_set_changes() override;
  ApiResult<std::vector<cip11::chain::ValidatorEntry>> validators() override;
  ApiResult<std::uint64_t> accept_block(const SignedBlock& block) override;
  ApiResult<SignedBlock> block_at(std::uint64_t height) override;
  ApiResult<ChainHead> chain_head() override;
  ApiResult<bool> post_presence_view(const Bytes& view) override;
  /// Any JSON route on the same host (the CLI also reads cbqsd's admin routes with it).
  ApiResult<nlohmann::json> get_json(const std::string& target);
  ApiResult<nlohmann::json> post_json(const std::string& target, const std::string& body = {});
  /// A plain-text route (/healthz, /metrics): its status and body.
  ApiResult<HttpText> get_text(const std::string& target);

 private:
  std::string host_;
  std::uint16_t port_;
  std::chrono::milliseconds timeout_;
};

}  // namespace cowboy::devchain
