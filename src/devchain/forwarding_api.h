// devchain::ForwardingApi: a follower's chain API (cip11d --follow,
// docs/devchain.md D14). Reads are its own node's; a transaction is not
// admitted locally (no key: nothing here ever proposes it) but sent at once to
// the validators, and the client gets a validator's own answer - so a refusal
// or an unreachable chain reaches the client, whose resend then goes through
// (docs/cip11.md choice 173).
#pragma once

#include <atomic>
#include <memory>

#include "devchain/api.h"
#include "devchain/peer_apis.h"

namespace cowboy::devchain {

class ForwardingApi final : public ChainApi {
 public:
  ForwardingApi(ChainApi& local, std::shared_ptr<PeerApis> peers) : local_(local), peers_(std::move(peers)) {}

  /// The first peer that answers: its hash or its refusal; kUnavailable when none answers.
  ApiResult<Bytes32> submit(const Transaction& tx) override;
  ApiResult<std::optional<TxReceipt>> receipt(const Bytes32& h) override { return local_.receipt(h); }
  ApiResult<std::uint64_t> height() override { return local_.height(); }
  ApiResult<Bytes32> chain_instance_id() override { return local_.chain_instance_id(); }
  ApiResult<AccountInfo> account_info(const Address& a) override { return local_.account_info(a); }
  ApiResult<cbqs::ProviderRecordV2> provider(const Address& p) override { return local_.provider(p); }
  ApiResult<cbqs::StreamRecordV2> stream(const Bytes32& s) override { return local_.stream(s); }
  ApiResult<cbqs::CbqsAccountV2> account(const Address& o, const Address& p) override { return local_.account(o, p); }
  ApiResult<cbqs::Params> params() override { return local_.params(); }
  ApiResult<std::vector<BlockEvents>> events(std::uint64_t from, std::uint64_t to) override {
    return local_.events(from, to);
  }
  ApiResult<ProviderSnapshot> provider_snapshot(const Address& p) override { return local_.provider_snapshot(p); }

 private:
  ChainApi& local_;
  const std::shared_ptr<PeerApis> peers_;
  std::atomic<std::size_t> next_{0};  // the peer asked first, turn by turn
};

}  // namespace cowboy::devchain
