#include "transit/contract/effects.h"

#include <string>

namespace cowboy::transit {
namespace {

using Problem = std::optional<std::string>;

std::string name(ClosureKind k) { return std::string(EnumTraits<ClosureKind>::kNames[static_cast<std::size_t>(k)]); }

// Steps are decided in order: positions strictly increase and policy revisions never go back.
Problem after(const EffectStep& earlier, const EffectStep& later, std::string_view what) {
  if (later.position <= earlier.position || later.policy_revision < earlier.policy_revision)
    return std::string(what) + " does not come after the step before it";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> effect_inconsistency(const EffectInfo& e) {
  const auto& obs = e.observations.items;
  const Id budget = e.intent.observation_budget;
  if (e.effect == 0 || e.pid.value == 0 || e.authorization.position.value == 0) return "an effect with a zero id, caller or position";
  if (budget == 0 || budget > kMaxObservations) return "an observation budget outside 1..16";
  if (obs.size() > budget) return "more observations than the budget";
  if (!obs.empty() && !e.attempt) return "observations without an attempt";
  if (e.attempt)
    if (auto p = after(e.authorization, *e.attempt, "the attempt")) return p;
  const EffectStep* last = e.attempt ? &*e.attempt : &e.authorization;
  for (std::size_t i = 0; i < obs.size(); ++i) {
    if (obs[i].step.principal != e.intent.executor) return "an observation by another principal than the executor";
    if (obs[i].final && i + 1 != obs.size()) return "an observation after a final one";
    if (auto p = after(*last, obs[i].step, "an observation")) return p;
    last = &obs[i].step;
  }
  const bool final = !obs.empty() && obs.back().final;
  if ((e.phase == EffectPhase::kClosed) != e.closure.has_value()) return "a closure without the closed phase, or the reverse";

  switch (e.phase) {
    case EffectPhase::kAuthorized:
      if (e.attempt) return "an authorized effect with an attempt";
      return std::nullopt;
    case EffectPhase::kAttempted:
      if (!e.attempt) return "an attempted effect without its attempt";
      if (final || obs.size() == budget) return "an attempted effect whose observations closed it";
      return std::nullopt;
    case EffectPhase::kClosed: break;
  }
  const auto& c = *e.closure;
  if (c.trusted_lower_bound_ms.has_value() != (c.kind == ClosureKind::kDeadline))
    return "a trusted time sample on a closure other than deadline, or none on a deadline closure";
  // A closure by an observation is that observation's decision; any other comes after the last step.
  const bool by_observation = c.kind == ClosureKind::kObserved || c.kind == ClosureKind::kObservationBudget;
  if (by_observation) {
    if (obs.empty() || c.step.position != obs.back().step.position || c.step.principal != obs.back().step.principal ||
        c.step.policy_revision != obs.back().step.policy_revision)
      return name(c.kind) + " closure not made by the last observation";
  } else if (auto p = after(*last, c.step, "the closure")) {
    return p;
  }
  switch (c.kind) {
    case ClosureKind::kObserved:
      if (!final) return "an observed closure without a final observation";
      return std::nullopt;
    case ClosureKind::kObservationBudget:
      if (final || obs.size() != budget) return "an observation_budget closure before the budget was spent";
      return std::nullopt;
    case ClosureKind::kAbandoned:
      if (!e.attempt || final || obs.size() == budget) return "an abandoned closure of an effect that was not open and attempted";
      return std::nullopt;
    case ClosureKind::kDeadline:
      if (final || obs.size() == budget) return "a deadline closure of an effect its observations closed";
      if (!e.intent.deadline_ms || *c.trusted_lower_bound_ms < *e.intent.deadline_ms)
        return "a deadline closure whose trusted lower bound is short of the reconciliation deadline";
      return std::nullopt;
    case ClosureKind::kUnattemptedCancel:
      if (e.attempt) return "an unattempted_cancel closure of an attempted effect";
      return std::nullopt;
  }
  return "an unknown closure";
}

}  // namespace cowboy::transit
