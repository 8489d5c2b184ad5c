// The trim pass (docs/transit.md, decision 68): in a realm whose genesis opts
// in to history trimming, publish a checkpoint every `checkpoint_every`
// positions when asked to, and advance the history floor onto the latest
// checkpoint with `trim_history`, the one trim step (include/transit/history.h).
// In any other realm it does nothing, not even a query: the genesis is fixed.
#include <algorithm>

#include "transit/history.h"
#include "transit/maintain/maintainer.h"

namespace cowboy::transit::maintain {

Maintainer::Round Maintainer::trim_pass() {
  if (!history_trim_) return Round::kIdle;
  bool worked = false;
  if (options_.checkpoint_every) {
    Response response;
    switch (list(CheckpointQuery{}, response)) {
      case Listed::kPage: break;
      case Listed::kUnreachable: return Round::kUnreachable;
      case Listed::kStale:
      case Listed::kRefused: return Round::kIdle;
    }
    const auto& status = std::get<CheckpointStatus>(response.result);
    const Position latest = status.latest ? status.latest->position : Position{0};
    const Id every = std::max(options_.checkpoint_every, kMinCheckpointEvery);
    if (response.position >= latest + every) switch (act(Checkpoint{})) {
        case Act::kUnreachable: return Round::kUnreachable;
        case Act::kDone: worked = true; break;
        case Act::kLostRace:
        case Act::kWaiting:
        case Act::kRefused: break;
      }
  }
  auto step = trim_history(client_);
  if (!step.ok()) {
    if (failed(step.error(), AdvanceFloor::kName) == Act::kUnreachable) return Round::kUnreachable;
    return worked ? Round::kWorked : Round::kIdle;
  }
  metrics_.history_floor = step->floor.value;
  if (step->receipt) {
    metrics_.node_position = step->receipt->position.value;
    ++metrics_.floor_advances;
    worked = true;
  }
  return worked ? Round::kWorked : Round::kIdle;
}

}  // namespace cowboy::transit::maintain
