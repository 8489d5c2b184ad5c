#include "transit/history.h"

namespace cowboy::transit {

ClientResult<TrimStep> trim_history(Client& client) {
  auto read = client.query(CheckpointQuery{});
  if (!read.ok()) return Err{read.error()};
  const auto& status = std::get<CheckpointStatus>(read->result);
  TrimStep step{status.floor, status.floor, std::nullopt};
  // No checkpoint above the floor (a realm without the opt-in never has one): nothing to do.
  if (!status.latest || status.latest->position <= status.floor) return step;
  auto receipt = client.submit(AdvanceFloor{status.latest->position, status.latest->roots});
  if (!receipt.ok()) {
    const auto& rejection = receipt.error().rejection;
    // Another maintainer got there first: the conditional append decided, and nothing is left to do.
    if (rejection && rejection->reason == Reason::kFloorNotAdvancing) return step;
    return Err{receipt.error()};
  }
  step.floor = std::get<FloorAdvanced>(receipt->outcome).floor;
  step.receipt = std::move(*receipt);
  return step;
}

}  // namespace cowboy::transit
