#include "devchain/forwarding_api.h"

namespace cowboy::devchain {

ApiResult<Bytes32> ForwardingApi::submit(const Transaction& tx) {
  const auto clients = peers_->clients();
  const std::size_t first = next_.fetch_add(1);
  std::string unreachable;
  for (std::size_t k = 0; k < clients.size(); ++k) {
    auto answer = clients[(first + k) % clients.size()]->submit(tx);
    // A peer that answered holds it or refused it; the validators forward what one admits to the others.
    // kInternal is no answer of a node's (a proxy's page, an unreadable body): the next peer is asked.
    const auto code = answer ? ApiErrorCode::kInternal : answer.error().code;
    if (answer || (code != ApiErrorCode::kUnavailable && code != ApiErrorCode::kInternal)) return answer;
    unreachable = answer.error().message;
  }
  return Err{ApiError{ApiErrorCode::kUnavailable,
                      "no validator this follower asks took the transaction" +
                          (unreachable.empty() ? std::string() : " (last: " + unreachable + ")")}};
}

}  // namespace cowboy::devchain
