#include "cbqs/chain/events.h"

namespace cowboy::cbqs {

std::string_view event_name(const ChainEvent& e) {
  static constexpr std::string_view kNames[] = {
      "ProviderRegistered", "ProviderUpdated", "StreamCreated",   "StreamUpdated",    "StreamClosed",
      "AccountCreated",     "AccountToppedUp", "AccountSettled",  "AccountSuspended", "AccountResumed",
      "AccountWithdrawn",   "AccountDeleted",  "ParameterChanged"};
  static_assert(std::size(kNames) == std::variant_size_v<ChainEvent>);
  return kNames[e.index()];
}

}  // namespace cowboy::cbqs
