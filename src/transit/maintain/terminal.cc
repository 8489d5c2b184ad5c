// The terminal pass: every ended process the node lists gets its retirement
// recorded (docs/transit.md, decisions 52, 54).
#include "transit/maintain/maintainer.h"

namespace cowboy::transit::maintain {

Maintainer::Round Maintainer::terminal_pass() {
  std::set<Id> seen;
  const Round round = act_on_listed<EndedPage>(
      [](std::optional<Cursor> cursor) -> QueryOp { return ListEnded{cursor}; },
      [](const EndedProcess& ended) { return std::pair<Id, Command>{ended.pid.value, RecordRetirement{ended.pid}}; }, seen);
  metrics_.ended_seen = seen.size();
  return round;
}

}  // namespace cowboy::transit::maintain
