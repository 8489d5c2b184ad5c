// Effects to closure: a turn's intent authorized, its one attempt, its
// observations and exactly one closure, cancel_effect, and the effect read
// and listing (docs/transit.md, decisions 11 and 43-49). Each step writes its
// own fields once; nothing later - a policy change, an exact retry, a restart -
// rewrites them.
#include "transit/node/authority.h"
#include "transit/node/layout.h"

namespace cowboy::transit::node {
namespace {

Err<Refusal> refuse(Reason reason, std::string message) {
  return Err{Refusal{reason, std::move(message)}};
}

template <typename Op> inline constexpr bool kEffectCommand =
    std::is_same_v<Op, AttemptEffect> || std::is_same_v<Op, ObserveEffect> || std::is_same_v<Op, CloseEffect> ||
    std::is_same_v<Op, CancelEffect>;

EffectChanged changed(const EffectInfo& e, std::optional<Id> input = std::nullopt) {
  return EffectChanged{e.effect, e.pid, e.phase, e.closure ? std::optional(e.closure->kind) : std::nullopt, input};
}

}  // namespace

// Every process here is a finite caller (any can retire: an expired
// suspension, a lifetime owner's end), so every intent needs a finite
// reconciliation deadline, and its executor the effect permission at the
// caller's PID, within the executor's own PID scope (decision 11).
std::optional<Refusal> Authority::check_effect(const EffectIntent& effect, Pid pid, TrustedMs now_ms) const {
  if (!principal(effect.executor)) return Refusal{Reason::kUnknownExecutor, "no such effect executor"};
  if (!(rights(effect.executor, PidScope{pid}) & kEffect))
    return Refusal{Reason::kExecutorNotPermitted, "the executor holds no effect permission at the process"};
  if (!effect.deadline_ms) return Refusal{Reason::kDeadlineRequired, "a finite caller's effect needs a reconciliation deadline"};
  if (*effect.deadline_ms <= now_ms) return Refusal{Reason::kDeadlinePassed, "the reconciliation deadline must be in the future"};
  return std::nullopt;
}

Id Authority::authorize_effect(Pid pid, const EffectIntent& intent, Step& step) {
  const Id id = head_.next_effect++;
  EffectInfo e{id, pid, intent, EffectStep{step.caller, head_.policy_revision, step.position}, EffectPhase::kAuthorized,
               std::nullopt, {}, std::nullopt};
  effects_.put(id, EffectRecord{std::move(e)});
  put_row(layout::key(layout::kEffectsOf, pid, id), true);
  put_row(layout::key(layout::kUnresolved, id), true);
  step.touched.effects.push_back(id);
  return id;
}

Result<EffectInfo*, Refusal> Authority::open_effect(Id id) {
  auto* found = effect_mut(id);
  if (!found) return refuse(Reason::kUnknownEffect, "no effect " + std::to_string(id));
  // Nothing is built on evidence that contradicts itself.
  if (auto problem = effect_inconsistency(found->info)) return refuse(Reason::kInconsistentEffect, *problem);
  return &found->info;
}

bool Authority::may_read_effects(PrincipalId caller, Pid pid) const { return rights(caller, PidScope{pid}) & (kInspect | kEffect); }

bool Authority::administers_effect(PrincipalId caller, const EffectInfo& e) const {
  return (rights(caller, PidScope{e.pid}) & (kPidAdmin | kEffect)) == (kPidAdmin | kEffect);
}

void Authority::record_closure(EffectInfo& e, ClosureKind kind, const EffectStep& by,
                               std::optional<TrustedMs> trusted_lower_bound_ms) {
  e.phase = EffectPhase::kClosed;
  e.closure = EffectClosure{kind, by, trusted_lower_bound_ms};
  put_row(layout::key(layout::kUnresolved, e.effect), false);
}

std::optional<Refusal> Authority::recheck_retry(const Request& request) const {
  return std::visit(
      [&](const auto& op) -> std::optional<Refusal> {
        if constexpr (kEffectCommand<std::decay_t<decltype(op)>>) {
          const auto* e = effect(op.effect);
          if (e && !(rights(request.principal, PidScope{e->info.pid}) & kEffect))
            return Refusal{Reason::kNotPermitted, "an exact retry of effect evidence needs current effect permission"};
        }
        return std::nullopt;
      },
      request.op);
}

// ---- commands ----------------------------------------------------------------------
// Each checks, in order: the effect exists and is consistent; the caller's
// current rights at its process; its phase; the verb's own rule. Only then
// does anything change.

namespace {

// The executor's own verbs need its current effect permission at the process.
std::optional<Refusal> check_executor_rights(PrincipalId caller, const EffectInfo& e, std::uint64_t bits) {
  if (!(bits & kEffect)) return Refusal{Reason::kNotPermitted, "requires effect at the effect's process"};
  if (caller != e.intent.executor)
    return Refusal{Reason::kNotEffectExecutor, "principal " + std::to_string(e.intent.executor.value) + " executes this effect"};
  return std::nullopt;
}

std::optional<Refusal> check_open(const EffectInfo& e) {
  if (e.phase == EffectPhase::kClosed) return Refusal{Reason::kEffectClosed, "the effect is closed"};
  return std::nullopt;
}

}  // namespace

Result<Outcome, Refusal> Authority::apply(const AttemptEffect& op, Step& step) {
  auto found = open_effect(op.effect);
  if (!found.ok()) return Err{found.error()};
  auto& e = **found;
  if (auto refusal = check_executor_rights(step.caller, e, rights(step.caller, PidScope{e.pid}))) return Err{*refusal};
  if (auto refusal = check_open(e)) return Err{*refusal};
  if (e.phase == EffectPhase::kAttempted) return refuse(Reason::kAlreadyAttempted, "the effect is attempted once");
  // Termination fences unattempted work at once (decision 49).
  if (auto refusal = termination_fence(e, step.now_ms)) return Err{*refusal};
  if (e.intent.deadline_ms && step.now_ms >= *e.intent.deadline_ms)
    return refuse(Reason::kDeadlinePassed, "the reconciliation deadline has passed: the effect closes by deadline");
  e.attempt = EffectStep{step.caller, head_.policy_revision, step.position};
  e.phase = EffectPhase::kAttempted;
  step.touched.effects.push_back(e.effect);
  return Outcome{changed(e)};
}

Result<Outcome, Refusal> Authority::apply(const ObserveEffect& op, Step& step) {
  auto found = open_effect(op.effect);
  if (!found.ok()) return Err{found.error()};
  auto& e = **found;
  if (auto refusal = check_executor_rights(step.caller, e, rights(step.caller, PidScope{e.pid}))) return Err{*refusal};
  if (auto refusal = check_open(e)) return Err{*refusal};
  if (e.phase == EffectPhase::kAuthorized) return refuse(Reason::kNotAttempted, "the effect was not attempted");
  // The result enters the caller's mailbox while it can take input; after
  // that it is evidence only, and the caller stays as it is (decision 44).
  std::optional<Id> input;
  if (auto* caller = process_mut(e.pid);
      caller && !retired(*caller, step.now_ms) && !check_required(*caller, step.now_ms)) {
    input = ++caller->tail;
    step.touched.inputs.push_back({e.pid, Input{*input, op.result, Origin{step.caller, std::nullopt, std::nullopt, e.effect}}});
    step.touched.processes.push_back(e.pid);
  }
  const EffectStep here{step.caller, head_.policy_revision, step.position};
  e.observations.items.push_back(EffectObservation{here, input, op.final, op.result});
  if (op.final) record_closure(e, ClosureKind::kObserved, here, std::nullopt);
  else if (e.observations.items.size() == e.intent.observation_budget)
    record_closure(e, ClosureKind::kObservationBudget, here, std::nullopt);
  step.touched.effects.push_back(e.effect);
  return Outcome{changed(e, input)};
}

Result<Outcome, Refusal> Authority::apply(const CloseEffect& op, Step& step) {
  auto found = open_effect(op.effect);
  if (!found.ok()) return Err{found.error()};
  auto& e = **found;
  const bool executor = step.caller == e.intent.executor && (rights(step.caller, PidScope{e.pid}) & kEffect);
  if (!executor && !administers_effect(step.caller, e))
    return refuse(Reason::kNotPermitted, "requires the executor's effect permission, or pid_admin and effect at the process");
  if (auto refusal = check_open(e)) return Err{*refusal};
  const EffectStep here{step.caller, head_.policy_revision, step.position};
  if (op.kind == CloseKind::kAbandoned) {
    if (e.phase == EffectPhase::kAuthorized) return refuse(Reason::kNotAttempted, "only an attempt is abandoned");
    // An attempt is orphaned when its executor can no longer observe it.
    if (!executor && (rights(e.intent.executor, PidScope{e.pid}) & kEffect))
      return refuse(Reason::kNotOrphaned, "the executor still holds effect permission: it closes its own attempt");
    record_closure(e, ClosureKind::kAbandoned, here, std::nullopt);
  } else {
    // Trusted time's sample at this decision is its lower bound: time never goes back (decision 8).
    if (!e.intent.deadline_ms || step.now_ms < *e.intent.deadline_ms)
      return refuse(Reason::kDeadlineNotReached,
                    "trusted time " + std::to_string(step.now_ms.value) + " is short of the reconciliation deadline");
    record_closure(e, ClosureKind::kDeadline, here, step.now_ms);
  }
  step.touched.effects.push_back(e.effect);
  return Outcome{changed(e)};
}

Result<Outcome, Refusal> Authority::apply(const CancelEffect& op, Step& step) {
  auto found = open_effect(op.effect);
  if (!found.ok()) return Err{found.error()};
  auto& e = **found;
  if (!administers_effect(step.caller, e))
    return refuse(Reason::kNotPermitted, "cancel_effect requires pid_admin and effect at the effect's process");
  if (auto refusal = check_open(e)) return Err{*refusal};
  // An attempt may have started external work; cancelling cannot claim it stopped.
  if (e.phase == EffectPhase::kAttempted) return refuse(Reason::kAlreadyAttempted, "an attempted effect is not cancelled");
  if (!caller_terminal(e, step.now_ms))
    return refuse(Reason::kCallerLive, "process " + std::to_string(e.pid.value) + " is not terminal");
  record_closure(e, ClosureKind::kUnattemptedCancel, EffectStep{step.caller, head_.policy_revision, step.position},
                 std::nullopt);
  step.touched.effects.push_back(e.effect);
  return Outcome{changed(e)};
}

// ---- reads -----------------------------------------------------------------------------

bool Authority::shown(const EffectInfo& e, EffectFilter filter, TrustedMs now_ms) const {
  const bool open = e.phase != EffectPhase::kClosed;
  switch (filter) {
    case EffectFilter::kAll: return true;
    case EffectFilter::kUnresolved: return open;
    case EffectFilter::kCancellable: return e.phase == EffectPhase::kAuthorized && caller_terminal(e, now_ms);
    case EffectFilter::kOverdue: return open && e.intent.deadline_ms && now_ms >= *e.intent.deadline_ms;
  }
  return false;
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const EffectRead& q) const {
  const auto* e = effect(q.effect);
  if (!e) return refuse(Reason::kUnknownEffect, "no effect " + std::to_string(q.effect));
  if (!may_read_effects(ctx.caller, e->info.pid))
    return refuse(Reason::kNotPermitted, "requires inspect or effect at the effect's process");
  if (auto problem = effect_inconsistency(e->info)) return refuse(Reason::kInconsistentEffect, *problem);
  return QueryResult{e->info};
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ListEffects& q) const {
  if (q.cursor)
    if (auto stale = stale_cut(q.cursor->cut, head_.effects_position)) return Err{*stale};
  if (q.pid && !may_read_effects(ctx.caller, *q.pid))
    return refuse(Reason::kNotPermitted, "requires inspect or effect at the process");
  EffectPage page;
  page.cut = q.cursor ? q.cursor->cut : head_.position;
  page.pid = q.pid;
  page.filter = q.filter;
  const Id after = q.cursor ? q.cursor->after : 0;
  // The candidates, in id order: one process's effects (a PID-scoped caller's
  // own at most), or the unresolved ones when closed ones are not wanted, or all.
  const auto* caller = principal(ctx.caller);
  const std::optional<Pid> only = q.pid ? q.pid : caller ? caller->pid_scope : std::nullopt;
  // The candidates' ids first, from a stored index or the effects table
  // (decision 170), at most the scan budget and whether more follow.
  std::vector<Id> ids;
  bool more = false;
  const auto take = [&](Id id) {
    if (ids.size() == kScanBudget) return !(more = true);
    ids.push_back(id);
    return true;
  };
  if (only) visit_ids(layout::key(layout::kEffectsOf, *only), after, take);
  else if (q.filter != EffectFilter::kAll) visit_ids(layout::table(layout::kUnresolved), after, take);
  else visit_stored<EffectRecord>(effects_, layout::kEffects, after, [&](const EffectRecord& e) { return take(e.info.effect); });

  // A filtered page examines at most kScanBudget candidates (decision 29).
  std::size_t examined = 0;
  for (; examined < ids.size() && page.items.items.size() < kPageRecords; ++examined) {
    const auto* record = effect(ids[examined]);
    if (!record) continue;  // unreadable: the answer is refused (storage_corrupt)
    const auto& e = record->info;
    if (!may_read_effects(ctx.caller, e.pid) || !shown(e, q.filter, ctx.now_ms)) continue;
    if (auto problem = effect_inconsistency(e))
      return refuse(Reason::kInconsistentEffect, "effect " + std::to_string(e.effect) + ": " + *problem);
    page.items.items.push_back(e);
  }
  if (more || examined < ids.size()) page.cursor = Cursor{page.cut, ids[examined - 1]};
  return QueryResult{std::move(page)};
}

}  // namespace cowboy::transit::node
