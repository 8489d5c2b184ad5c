// The effects pass: the effect records nobody can take further are closed
// (docs/transit.md, decisions 45, 49, 60). An unattempted intent of a
// terminal caller can never be attempted (termination fences it), so it is
// cancelled: `unattempted_cancel`. An open effect whose reconciliation
// deadline trusted time has reached - attempted, or unattempted with a live
// caller - can never be attempted either, and its executor's late result
// would be refused once closed: `deadline`. Cancellation goes first, so an
// intent that qualifies for both is recorded as the unattempted work it was.
#include "transit/maintain/maintainer.h"

namespace cowboy::transit::maintain {

Maintainer::Round Maintainer::effects_pass() {
  const Round cancelled = close_effects(EffectFilter::kCancellable);
  if (cancelled == Round::kUnreachable) return cancelled;
  const Round closed = close_effects(EffectFilter::kOverdue);
  if (closed == Round::kUnreachable) return closed;
  return cancelled == Round::kWorked || closed == Round::kWorked ? Round::kWorked : Round::kIdle;
}

// The node judges both filters by trusted time at each page, and rechecks
// each command: an effect the executor or another maintainer closed after
// the listing is `effect_closed`, a lost race. Any effect change expires a
// continuation, so after a change the listing starts again at the lowest id.
Maintainer::Round Maintainer::close_effects(EffectFilter filter) {
  std::set<Id> seen;
  const Round round = act_on_listed<EffectPage>(
      [filter](std::optional<Cursor> cursor) -> QueryOp { return ListEffects{std::nullopt, filter, cursor}; },
      [filter](const EffectInfo& e) {
        Command close = CancelEffect{e.effect};
        if (filter == EffectFilter::kOverdue) close = CloseEffect{e.effect, CloseKind::kDeadline};
        return std::pair<Id, Command>{e.effect, close};
      },
      seen);
  (filter == EffectFilter::kCancellable ? metrics_.cancellable_seen : metrics_.overdue_seen) = seen.size();
  return round;
}

}  // namespace cowboy::transit::maintain
