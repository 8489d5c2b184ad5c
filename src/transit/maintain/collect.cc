// The collection pass (docs/transit.md, decision 155): the records the node
// lists as collectable - of processes admitted with allow_collection, each
// one whose every gate passes now - each taken by one signed collect, which
// rechecks every gate; at most collects_per_pass commands a pass. A process
// or resource collection that needs more commands (complete: false) is listed again by
// the next pass; a blocked record is never listed, so it is left alone.
#include "transit/maintain/maintainer.h"

namespace cowboy::transit::maintain {

Maintainer::Round Maintainer::collect_pass() {
  if (!collection_) return Round::kIdle;  // the node does not report collection
  std::optional<Cursor> cursor;
  std::set<Id> seen;
  std::size_t sent = 0;
  bool worked = false;
  for (std::size_t pages = 0; pages < options_.pages_per_pass && sent < options_.collects_per_pass; ++pages) {
    Response response;
    switch (list(ListCollectable{cursor}, response)) {
      case Listed::kPage: break;
      case Listed::kStale: cursor.reset(); continue;
      case Listed::kUnreachable: return Round::kUnreachable;
      case Listed::kRefused: return worked ? Round::kWorked : Round::kIdle;
    }
    const auto& page = std::get<CollectablePage>(response.result);
    for (const auto& r : page.items.items) {
      if (sent == options_.collects_per_pass) break;
      seen.insert(r.pid.value);
      ++sent;
      const auto record = r.kind == CollectKind::kProcess ? std::nullopt : std::optional<Id>(r.record);
      switch (act(Collect{r.pid, r.kind, record})) {
        case Act::kUnreachable: return Round::kUnreachable;
        case Act::kDone:
        case Act::kLostRace: worked = true; break;
        case Act::kWaiting:
        case Act::kRefused: break;
      }
    }
    // The listing has no cut a collect expires: the scan goes on past what it acted on.
    if (!page.cursor) break;
    cursor = page.cursor;
  }
  metrics_.collectable_seen = seen.size();
  return worked ? Round::kWorked : Round::kIdle;
}

}  // namespace cowboy::transit::maintain
