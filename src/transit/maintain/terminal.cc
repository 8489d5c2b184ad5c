// The terminal pass: every ended process the node lists gets its retirement
// recorded (docs/transit.md, decisions 52, 54).
#include "transit/maintain/maintainer.h"

namespace cowboy::transit::maintain {

Maintainer::Round Maintainer::terminal_pass() {
  std::optional<Cursor> cursor;
  bool worked = false;
  std::size_t seen = 0;
  for (std::size_t pages = 0; pages < options_.pages_per_pass; ++pages) {
    Response response;
    switch (list(ListEnded{cursor}, response)) {
      case Listed::kPage: break;
      case Listed::kStale: cursor.reset(); continue;
      case Listed::kUnreachable: return Round::kUnreachable;
      case Listed::kRefused: return worked ? Round::kWorked : Round::kIdle;
    }
    const auto& page = std::get<EndedPage>(response.result);
    bool moved = false;
    for (const auto& ended : page.items.items) {
      ++seen;
      switch (act(RecordRetirement{ended.pid})) {
        case Act::kUnreachable: return Round::kUnreachable;
        case Act::kDone:
        case Act::kLostRace: moved = true; break;
        case Act::kWaiting:
        case Act::kRefused: break;
      }
    }
    worked = worked || moved;
    if (moved) cursor.reset();  // our own records moved the cut
    else if (page.cursor) cursor = page.cursor;
    else break;
  }
  metrics_.ended_seen = seen;
  return worked ? Round::kWorked : Round::kIdle;
}

}  // namespace cowboy::transit::maintain
