// The effects pass: the effect records nobody can take further are closed
// (docs/transit.md, decisions 45, 49, 60). An unattempted intent of a
// terminal caller can never be attempted (termination fences it), so it is
// cancelled: `unattempted_cancel`. An open effect whose reconciliation
// deadline trusted time has reached - attempted, or unattempted with a live
// caller - can never be attempted either, and its executor's late result
// would be refused once closed: `deadline`. Cancellation goes first, so an
// intent that qualifies for both is recorded as the unattempted work it was.
#include <set>

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
  const auto command = [filter](Id effect) -> Command {
    if (filter == EffectFilter::kCancellable) return CancelEffect{effect};
    return CloseEffect{effect, CloseKind::kDeadline};
  };
  std::set<Id> seen;
  std::optional<Cursor> cursor;
  bool worked = false;
  for (std::size_t pages = 0; pages < options_.pages_per_pass; ++pages) {
    Response response;
    switch (list(ListEffects{std::nullopt, filter, cursor}, response)) {
      case Listed::kPage: break;
      case Listed::kStale: cursor.reset(); continue;
      case Listed::kUnreachable: return Round::kUnreachable;
      case Listed::kRefused: return worked ? Round::kWorked : Round::kIdle;
    }
    const auto& page = std::get<EffectPage>(response.result);
    bool moved = false;
    for (const auto& effect : page.items.items) {
      seen.insert(effect.effect);
      switch (act(command(effect.effect))) {
        case Act::kUnreachable: return Round::kUnreachable;
        case Act::kDone:
        case Act::kLostRace: moved = true; break;
        case Act::kWaiting:
        case Act::kRefused: break;
      }
    }
    worked = worked || moved;
    if (moved) cursor.reset();  // our own closures moved the cut
    else if (page.cursor) cursor = page.cursor;
    else break;
  }
  (filter == EffectFilter::kCancellable ? metrics_.cancellable_seen : metrics_.overdue_seen) = seen.size();
  return worked ? Round::kWorked : Round::kIdle;
}

}  // namespace cowboy::transit::maintain
