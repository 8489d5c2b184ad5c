// The phase x closure matrix of decision 45, on records built by hand: each
// combination the verbs can make is admitted, and each other one is refused
// with the rule it breaks (effect_inconsistency, which the node's reads and
// commands and the client's answer checks all apply).
#include <gtest/gtest.h>

#include "samples.h"
#include "transit/contract/effects.h"

namespace cowboy::transit {
namespace {

constexpr TrustedMs kDeadline{5'000};
constexpr PrincipalId kExecutor{31};

template <typename P = PrincipalId>
EffectStep at(std::uint64_t position, P principal = kExecutor, Id revision = 3) {
  return EffectStep{testing::id<PrincipalId>(principal), revision, Position{position}};
}

EffectInfo authorized(Id budget = 2) {
  return EffectInfo{1, Pid{7}, EffectIntent{kExecutor, kDeadline, {}, budget}, at(10, 1), EffectPhase::kAuthorized,
                    std::nullopt, {}, std::nullopt};
}
EffectInfo attempted(Id budget = 2) {
  EffectInfo e = authorized(budget);
  e.phase = EffectPhase::kAttempted;
  e.attempt = at(11);
  return e;
}
EffectInfo observed(EffectInfo e, Id position, bool final) {
  e.observations.items.push_back(EffectObservation{at(position), std::nullopt, final, {}});
  return e;
}
EffectInfo closed(EffectInfo e, ClosureKind kind, EffectStep by, std::optional<TrustedMs> sample = std::nullopt) {
  e.phase = EffectPhase::kClosed;
  e.closure = EffectClosure{kind, by, sample};
  return e;
}

TEST(EffectMatrix, EveryCombinationTheVerbsMakeIsAdmitted) {
  const std::vector<std::pair<std::string, EffectInfo>> made = {
      {"authorized", authorized()},
      {"attempted", attempted()},
      {"attempted, one result", observed(attempted(), 12, false)},
      {"observed", closed(observed(attempted(), 12, true), ClosureKind::kObserved, at(12))},
      {"observed after progress", closed(observed(observed(attempted(), 12, false), 13, true), ClosureKind::kObserved, at(13))},
      {"observation_budget", closed(observed(observed(attempted(), 12, false), 13, false), ClosureKind::kObservationBudget, at(13))},
      {"abandoned", closed(attempted(), ClosureKind::kAbandoned, at(12))},
      {"abandoned by an administrator", closed(observed(attempted(), 12, false), ClosureKind::kAbandoned, at(14, 40, 4))},
      {"deadline, unattempted", closed(authorized(), ClosureKind::kDeadline, at(12, 40), kDeadline)},
      {"deadline, attempted", closed(observed(attempted(), 12, false), ClosureKind::kDeadline, at(13), kDeadline + Millis{9})},
      {"unattempted_cancel", closed(authorized(), ClosureKind::kUnattemptedCancel, at(12, 40))},
  };
  for (const auto& [what, e] : made) EXPECT_EQ(effect_inconsistency(e), std::nullopt) << what;
}

TEST(EffectMatrix, EveryOtherCombinationIsRefusedWithTheRuleItBreaks) {
  auto with_attempt = authorized();
  with_attempt.attempt = at(11);
  auto no_attempt = attempted();
  no_attempt.attempt.reset();
  auto by_another = observed(attempted(), 12, false);
  by_another.observations.items[0].step.principal = PrincipalId{32};
  auto budget_zero = authorized(0), budget_over = authorized(kMaxObservations + 1);
  auto revision_back = observed(attempted(), 12, false);
  revision_back.observations.items[0].step.policy_revision = 2;
  auto closure_not_closed = attempted();
  closure_not_closed.closure = EffectClosure{ClosureKind::kAbandoned, at(12), std::nullopt};

  const std::vector<std::tuple<std::string, EffectInfo, std::string>> broken = {
      {"zero id", [] { auto e = authorized(); e.effect = 0; return e; }(), "zero id"},
      {"budget 0", budget_zero, "budget outside 1..16"},
      {"budget 17", budget_over, "budget outside 1..16"},
      {"authorized with an attempt", with_attempt, "an authorized effect with an attempt"},
      {"results without an attempt", observed(authorized(), 12, false), "observations without an attempt"},
      {"attempted without its attempt", no_attempt, "an attempted effect without its attempt"},
      {"attempted after a final result", observed(attempted(), 12, true), "observations closed it"},
      {"attempted with the budget spent", observed(attempted(1), 12, false), "observations closed it"},
      {"more results than the budget", observed(observed(attempted(1), 12, false), 13, false), "more observations than the budget"},
      {"a result after a final one", observed(observed(attempted(3), 12, true), 13, false), "after a final one"},
      {"a result by another principal", by_another, "another principal than the executor"},
      {"a result before the attempt", observed(attempted(), 11, false), "does not come after"},
      {"an attempt before the authorization", [] { auto e = attempted(); e.attempt->position = Position{9}; return e; }(),
       "does not come after"},
      {"a policy revision going back", revision_back, "does not come after"},
      {"closed without a closure", [] { auto e = attempted(); e.phase = EffectPhase::kClosed; return e; }(),
       "a closure without the closed phase"},
      {"a closure while attempted", closure_not_closed, "a closure without the closed phase"},
      {"observed without a final result", closed(observed(attempted(), 12, false), ClosureKind::kObserved, at(12)),
       "without a final observation"},
      {"observed without any result", closed(attempted(), ClosureKind::kObserved, at(12)), "not made by the last observation"},
      {"observed at another position", closed(observed(attempted(), 12, true), ClosureKind::kObserved, at(13)),
       "not made by the last observation"},
      {"observation_budget before the budget", closed(observed(attempted(), 12, false), ClosureKind::kObservationBudget, at(12)),
       "before the budget was spent"},
      {"abandoned, never attempted", closed(authorized(), ClosureKind::kAbandoned, at(12)), "not open and attempted"},
      {"abandoned after a final result", closed(observed(attempted(3), 12, true), ClosureKind::kAbandoned, at(13)),
       "not open and attempted"},
      {"abandoned before its last result", closed(observed(attempted(), 13, false), ClosureKind::kAbandoned, at(12)),
       "does not come after"},
      {"deadline without its sample", closed(attempted(), ClosureKind::kDeadline, at(12)), "none on a deadline closure"},
      {"deadline short of the deadline", closed(attempted(), ClosureKind::kDeadline, at(12), kDeadline - Millis{1}),
       "short of the reconciliation deadline"},
      {"deadline after a final result", closed(observed(attempted(), 12, true), ClosureKind::kDeadline, at(13), kDeadline),
       "its observations closed"},
      {"a sample on another closure", closed(attempted(), ClosureKind::kAbandoned, at(12), kDeadline),
       "a trusted time sample on a closure other than deadline"},
      {"unattempted_cancel of an attempt", closed(attempted(), ClosureKind::kUnattemptedCancel, at(12, 40)),
       "unattempted_cancel closure of an attempted effect"},
      {"unattempted_cancel before its intent", closed(authorized(), ClosureKind::kUnattemptedCancel, at(10, 40)),
       "does not come after"},
  };
  for (const auto& [what, e, rule] : broken) {
    const auto problem = effect_inconsistency(e);
    ASSERT_TRUE(problem) << what;
    EXPECT_NE(problem->find(rule), std::string::npos) << what << ": " << *problem;
  }
}

}  // namespace
}  // namespace cowboy::transit
