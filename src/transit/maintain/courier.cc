// The courier pass: every route head the node lists is delivered, disposed of
// or cancelled, oldest first (docs/transit.md, decisions 50, 53).
#include <set>

#include "transit/maintain/maintainer.h"

namespace cowboy::transit::maintain {
namespace {

// A destination that cannot admit yet: uninitialized (until it is), or fenced
// (until the terminal pass records its retirement, and delivery disposes).
bool waits(ProcessState destination) {
  return destination == ProcessState::kUninitialized || destination == ProcessState::kFenced;
}

}  // namespace

// Pages follow their cursor while nothing is resolved; once something is, the
// cut has moved, and the listing starts again at the oldest head - which is
// the work to do next anyway (a resolved head's route shows its next output).
Maintainer::Round Maintainer::courier_pass() {
  std::set<Id> seen, waiting;
  std::optional<Cursor> cursor;
  bool worked = false;
  for (std::size_t pages = 0; pages < options_.pages_per_pass; ++pages) {
    Response response;
    switch (list(ListRoutes{cursor}, response)) {
      case Listed::kPage: break;
      case Listed::kStale: cursor.reset(); continue;
      case Listed::kUnreachable: return Round::kUnreachable;
      case Listed::kRefused: return worked ? Round::kWorked : Round::kIdle;
    }
    const auto& page = std::get<RoutePage>(response.result);
    if (!cursor) {  // a first page starts at the oldest head: the lag
      const auto& heads = page.items.items;
      metrics_.lag_positions = heads.empty() ? 0 : response.position - heads.front().published_at;
      const TrustedMs now = trusted_now();
      metrics_.lag_ms = heads.empty() || heads.front().published_at_ms > now ? 0 : (now - heads.front().published_at_ms).value;
    }
    bool moved = false;
    for (const auto& head : page.items.items) {
      seen.insert(head.output);
      Command op = Deliver{head.output};  // into a retired destination it disposes of the output
      if (head.source_terminated) op = CancelOutput{head.output};
      else if (waits(head.destination_state)) {
        waiting.insert(head.output);
        continue;
      }
      switch (act(op)) {
        case Act::kUnreachable: return Round::kUnreachable;
        case Act::kDone:
        case Act::kLostRace: moved = true; break;
        case Act::kWaiting: waiting.insert(head.output); break;
        case Act::kRefused: break;
      }
    }
    worked = worked || moved;
    if (moved) cursor.reset();
    else if (page.cursor) cursor = page.cursor;
    else break;
  }
  metrics_.routes_seen = seen.size();
  metrics_.routes_waiting = waiting.size();
  return worked ? Round::kWorked : Round::kIdle;
}

}  // namespace cowboy::transit::maintain
