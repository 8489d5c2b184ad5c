#include "devchain/forwarding_api.h"

namespace cowboy::devchain {

ApiResult<Bytes32> ForwardingApi::submit(const Transaction& tx) {
  const auto clients = peers_->clients();
  const std::size_t first = next_.fetch_add(1);
  std::string unreachable;
  for (std::size_t k = 0; k < clients.size(); ++k) {
    auto answer = clients[(first + k) % clients.size()]->submit(tx);
    // A peer that answered holds it or refused it; the validators forward what one admits to the others.
    if (answer || answer.error().code != ApiErrorCode::kUnavailable) return answer;
    unreachable = answer.error().message;
  }
  return Err{ApiError{ApiErrorCode::kUnavailable,
                      "no validator this follower asks took the transaction" +
                          (unreachable.empty() ? std::string() : " (last: " + unreachable + ")")}};
}

}  // namespace cowboy::devchain
