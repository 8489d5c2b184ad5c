// Effects to closure over real HTTP (docs/transit.md, decisions 43-49): each
// closure kind with its provenance, each refusal (which changes nothing), a
// result after the caller's retirement, evidence that policy changes, exact
// retries and a restart leave as it was, and the listings the maintenance
// process scans.
#include <gtest/gtest.h>

#include "state_fixture.h"

namespace cowboy::transit {
namespace {

constexpr PrincipalId kExecutor{31};  // effect (and inspect) at PID 7: the intents' executor
constexpr PrincipalId kOther{32};     // effect at PID 7 too, but executes nothing
constexpr PrincipalId kAdmin{40};     // pid_admin and effect at PID 7: an administrator of its effects
constexpr PrincipalId kInspector{41}; // inspect at PID 7 only
constexpr PrincipalId kPlainAdmin{42};  // pid_admin at PID 7, without effect

class EffectTest : public StateTest {
 protected:
  void SetUp() override {
    StateTest::SetUp();
    process(resource("doc"));
    generation_ = ok<ProcessChanged>(admin_->submit(Own{kPid, 1})).generation;
    executor_grant_ = member(kExecutor, 131, kEffect | kInspect).grant;
    member(kOther, 132, kEffect);
    member(kAdmin, 140, kPidAdmin | kEffect | kInspect);
    member(kInspector, 141, kInspect);
    member(kPlainAdmin, 142, kPidAdmin);
    executor_ = std::make_unique<Client>(client(kExecutor, 131));
    effect_admin_ = std::make_unique<Client>(client(kAdmin, 140));
  }
  void TearDown() override {
    executor_.reset();
    effect_admin_.reset();
    StateTest::TearDown();
  }

  /// An unscoped principal with one grant at PID 7.
  PrincipalCreated member(auto id, std::uint8_t seed, std::uint64_t bits) {
    return ok<PrincipalCreated>(admin_->submit(CreatePrincipal{testing::id<PrincipalId>(id), testing::key_of(testing::seed_of(seed)),
                                                               PidScope{kPid}, Permissions{bits}, std::nullopt,
                                                               std::nullopt}));
  }
  /// A member's client: its grants are at PID 7, so it cannot read its own identity for its sequence.
  Client client(auto id, std::uint8_t seed) {
    Client c(options(id, seed));
    c.set_next_sequence(1);
    return c;
  }
  Id revision() { return admin_->identity()->policy_revision; }
  TrustedMs later() { return clock_.trusted() + Millis{60'000}; }

  struct Captured {
    Id effect;
    EffectStep authorization;
  };
  /// A turn of PID 7 (by the root, its owner) capturing an intent for kExecutor.
  Captured capture(Id budget = 1, std::optional<TrustedMs> deadline = std::nullopt) {
    Turn t{kPid, generation_, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
    t.effect = EffectIntent{kExecutor, deadline.value_or(later()), Hex<256>{{'c', 'h', 'a', 'r', 'g', 'e'}}, budget};
    const Receipt r = accept(*admin_, t);
    return {std::get<TurnPublished>(r.outcome).effect.value_or(0), EffectStep{PrincipalId{1}, revision(), r.position}};
  }
  /// Accepted, with the step it recorded: the signer, the policy revision now, the receipt's position.
  std::pair<EffectChanged, EffectStep> take(Client& c, auto signer_of, Command op) {
    const PrincipalId signer = testing::id<PrincipalId>(signer_of);
    const Receipt r = accept(c, std::move(op));
    const auto* changed = std::get_if<EffectChanged>(&r.outcome);
    EXPECT_TRUE(changed);
    return {changed ? *changed : EffectChanged{}, EffectStep{signer, revision(), r.position}};
  }
  EffectInfo read(Id effect) { return answer<EffectInfo>(*admin_, EffectRead{effect}); }
  /// `op` is refused with `reason`, and the effect's record is as it was.
  void refused_as(Client& c, Command op, Reason reason, Id effect) {
    const std::string before = to_json(read(effect));
    const Rejection r = refused(c.submit(std::move(op)));
    EXPECT_EQ(r.reason, reason) << name_of(reason);
    EXPECT_EQ(r.code, code_of(reason));
    EXPECT_EQ(to_json(read(effect)), before) << name_of(reason);
  }
  /// Retires PID 7 for good: a suspension whose deadline trusted time passes.
  void retire_caller() {
    const TrustedMs deadline = clock_.trusted() + Millis{1000};
    accept(*admin_, Suspend{kPid, generation_, deadline});
    clock_.set(deadline + Millis{1});
    EXPECT_EQ(process_info(*admin_).state, ProcessState::kRetired);
  }
  /// What the record must hold once authorized: the intent, who authorized it, under which revision, where.
  EffectInfo authorized(const Captured& c, Id budget, TrustedMs deadline) {
    return EffectInfo{c.effect,
                      kPid,
                      EffectIntent{kExecutor, deadline, Hex<256>{{'c', 'h', 'a', 'r', 'g', 'e'}}, budget},
                      c.authorization,
                      EffectPhase::kAuthorized,
                      std::nullopt,
                      {},
                      std::nullopt};
  }
  static EffectObservation observation(const EffectStep& step, std::optional<Id> input, bool final, std::string result) {
    return EffectObservation{step, input, final, InputValue{{result.begin(), result.end()}}};
  }
  static InputValue bytes(const std::string& s) { return InputValue{{s.begin(), s.end()}}; }

  Id generation_ = 0;
  Id executor_grant_ = 0;
  std::unique_ptr<Client> executor_, effect_admin_;
};

// Observed: the executor attempts, records a progress result and then a
// final one. Each result enters the caller's mailbox with the effect as its
// origin; the final one closes the effect, by the executor, at its position.
TEST_F(EffectTest, AnObservedClosureIsTheFinalObservationsDecision) {
  const TrustedMs deadline = later();
  const Captured c = capture(3, deadline);
  const auto [attempted, attempt] = take(*executor_, kExecutor, AttemptEffect{c.effect});
  EXPECT_EQ(attempted, (EffectChanged{c.effect, kPid, EffectPhase::kAttempted, std::nullopt, std::nullopt}));
  const auto [progress, first] = take(*executor_, kExecutor, ObserveEffect{c.effect, bytes("pending"), false});
  EXPECT_EQ(progress, (EffectChanged{c.effect, kPid, EffectPhase::kAttempted, std::nullopt, Id{1}}));
  const auto [done, last] = take(*executor_, kExecutor, ObserveEffect{c.effect, bytes("done"), true});
  EXPECT_EQ(done, (EffectChanged{c.effect, kPid, EffectPhase::kClosed, ClosureKind::kObserved, Id{2}}));

  EffectInfo expected = authorized(c, 3, deadline);
  expected.phase = EffectPhase::kClosed;
  expected.attempt = attempt;
  expected.observations.items = {observation(first, 1, false, "pending"), observation(last, 2, true, "done")};
  expected.closure = EffectClosure{ClosureKind::kObserved, last, std::nullopt};
  EXPECT_EQ(to_json(read(c.effect)), to_json(expected));
  // The results reached the caller: its mailbox holds them, with the effect as their origin.
  const auto p = process_info(*admin_);
  EXPECT_EQ(p.tail, 2u);
  EXPECT_EQ(p.input, (std::optional<Input>(Input{1, bytes("pending"), Origin{kExecutor, std::nullopt, std::nullopt, c.effect}})));
}

// Observation budget: the budget-th result that is not final closes the effect.
TEST_F(EffectTest, TheBudgetthResultWithoutAFinalOneClosesItAsObservationBudget) {
  const TrustedMs deadline = later();
  const Captured c = capture(2, deadline);
  const auto attempt = take(*executor_, kExecutor, AttemptEffect{c.effect}).second;
  const auto first = take(*executor_, kExecutor, ObserveEffect{c.effect, bytes("poll-1"), false}).second;
  const auto [spent, second] = take(*executor_, kExecutor, ObserveEffect{c.effect, bytes("poll-2"), false});
  EXPECT_EQ(spent.closure, std::optional(ClosureKind::kObservationBudget));

  EffectInfo expected = authorized(c, 2, deadline);
  expected.phase = EffectPhase::kClosed;
  expected.attempt = attempt;
  expected.observations.items = {observation(first, 1, false, "poll-1"), observation(second, 2, false, "poll-2")};
  expected.closure = EffectClosure{ClosureKind::kObservationBudget, second, std::nullopt};
  EXPECT_EQ(to_json(read(c.effect)), to_json(expected));
  // Closed attempts reject new results.
  refused_as(*executor_, ObserveEffect{c.effect, bytes("late"), true}, Reason::kEffectClosed, c.effect);
}

// Abandoned: by the executor, or - once its executor can no longer observe
// it - by an administrator with effect permission, who is then recorded as
// the resolving principal with the policy revision that orphaned it.
TEST_F(EffectTest, AnAttemptIsAbandonedByItsExecutorOrOnceOrphanedByAnAdministrator) {
  const TrustedMs deadline = later();
  const Captured own = capture(1, deadline);
  const auto own_attempt = take(*executor_, kExecutor, AttemptEffect{own.effect}).second;
  const auto [gave_up, by_executor] = take(*executor_, kExecutor, CloseEffect{own.effect, CloseKind::kAbandoned});
  EXPECT_EQ(gave_up.closure, std::optional(ClosureKind::kAbandoned));
  EffectInfo expected = authorized(own, 1, deadline);
  expected.phase = EffectPhase::kClosed;
  expected.attempt = own_attempt;
  expected.closure = EffectClosure{ClosureKind::kAbandoned, by_executor, std::nullopt};
  EXPECT_EQ(to_json(read(own.effect)), to_json(expected));

  const Captured orphan = capture(1, deadline);
  const auto attempt = take(*executor_, kExecutor, AttemptEffect{orphan.effect}).second;
  // While the executor holds effect, the attempt is its own to close.
  refused_as(*effect_admin_, CloseEffect{orphan.effect, CloseKind::kAbandoned}, Reason::kNotOrphaned, orphan.effect);
  accept(*admin_, RevokeGrant{executor_grant_, std::nullopt});  // the executor loses effect at 7
  refused_as(*executor_, ObserveEffect{orphan.effect, bytes("late"), true}, Reason::kNotPermitted, orphan.effect);
  Client plain = client(kPlainAdmin, 142);  // pid_admin without effect is no administrator of effects
  refused_as(plain, CloseEffect{orphan.effect, CloseKind::kAbandoned}, Reason::kNotPermitted, orphan.effect);
  const auto by_admin = take(*effect_admin_, kAdmin, CloseEffect{orphan.effect, CloseKind::kAbandoned}).second;
  expected = authorized(orphan, 1, deadline);
  expected.phase = EffectPhase::kClosed;
  expected.attempt = attempt;
  expected.closure = EffectClosure{ClosureKind::kAbandoned, by_admin, std::nullopt};
  EXPECT_EQ(to_json(read(orphan.effect)), to_json(expected));
  EXPECT_GT(by_admin.policy_revision, attempt.policy_revision);  // the revision that orphaned it
}

// Deadline: only once trusted time reaches the reconciliation deadline; the
// record keeps that sample, which meets the deadline. A closure one
// millisecond short is refused. Attempted or not, an open effect closes so.
TEST_F(EffectTest, ADeadlineClosureKeepsTheTrustedSampleAndOneShortOfTheDeadlineIsRefused) {
  const TrustedMs deadline = clock_.trusted() + Millis{5'000};
  const Captured attempted = capture(4, deadline);
  const Captured unattempted = capture(1, deadline);
  const auto attempt = take(*executor_, kExecutor, AttemptEffect{attempted.effect}).second;
  const auto seen = take(*executor_, kExecutor, ObserveEffect{attempted.effect, bytes("pending"), false}).second;

  clock_.set(deadline - Millis{1});
  refused_as(*executor_, CloseEffect{attempted.effect, CloseKind::kDeadline}, Reason::kDeadlineNotReached, attempted.effect);
  refused_as(*effect_admin_, CloseEffect{unattempted.effect, CloseKind::kDeadline}, Reason::kDeadlineNotReached,
             unattempted.effect);
  clock_.set(deadline);
  // Past the deadline an unattempted intent is never attempted: it closes by deadline.
  refused_as(*executor_, AttemptEffect{unattempted.effect}, Reason::kDeadlinePassed, unattempted.effect);
  const auto by_executor = take(*executor_, kExecutor, CloseEffect{attempted.effect, CloseKind::kDeadline}).second;
  clock_.set(deadline + Millis{7});
  const auto by_admin = take(*effect_admin_, kAdmin, CloseEffect{unattempted.effect, CloseKind::kDeadline}).second;

  EffectInfo expected = authorized(attempted, 4, deadline);
  expected.phase = EffectPhase::kClosed;
  expected.attempt = attempt;
  expected.observations.items = {observation(seen, 1, false, "pending")};
  expected.closure = EffectClosure{ClosureKind::kDeadline, by_executor, deadline};
  EXPECT_EQ(to_json(read(attempted.effect)), to_json(expected));
  expected = authorized(unattempted, 1, deadline);
  expected.phase = EffectPhase::kClosed;
  expected.closure = EffectClosure{ClosureKind::kDeadline, by_admin, deadline + Millis{7}};
  EXPECT_EQ(to_json(read(unattempted.effect)), to_json(expected));
}

// unattempted_cancel: cancel_effect is administrative, for an unattempted
// intent of a terminal caller only; an attempted one is refused, since its
// external work may have started.
TEST_F(EffectTest, CancelEffectClosesOnlyAnUnattemptedIntentOfATerminalCaller) {
  const TrustedMs deadline = later();
  const Captured unattempted = capture(1, deadline);
  const Captured attempted = capture(1, deadline);
  take(*executor_, kExecutor, AttemptEffect{attempted.effect});
  refused_as(*effect_admin_, CancelEffect{unattempted.effect}, Reason::kCallerLive, unattempted.effect);

  retire_caller();
  refused_as(*effect_admin_, CancelEffect{attempted.effect}, Reason::kAlreadyAttempted, attempted.effect);
  refused_as(*executor_, CancelEffect{unattempted.effect}, Reason::kNotPermitted, unattempted.effect);  // not an administrator
  // Termination fences the unattempted intent: its executor cannot start it now.
  refused_as(*executor_, AttemptEffect{unattempted.effect}, Reason::kCallerTerminated, unattempted.effect);
  const auto [cancelled, by_admin] = take(*effect_admin_, kAdmin, CancelEffect{unattempted.effect});
  EXPECT_EQ(cancelled, (EffectChanged{unattempted.effect, kPid, EffectPhase::kClosed, ClosureKind::kUnattemptedCancel,
                                      std::nullopt}));
  EffectInfo expected = authorized(unattempted, 1, deadline);
  expected.phase = EffectPhase::kClosed;
  expected.closure = EffectClosure{ClosureKind::kUnattemptedCancel, by_admin, std::nullopt};
  EXPECT_EQ(to_json(read(unattempted.effect)), to_json(expected));
  refused_as(*effect_admin_, CancelEffect{unattempted.effect}, Reason::kEffectClosed, unattempted.effect);
  // The attempted effect outlives its caller: its executor still observes and closes it.
  EXPECT_EQ(take(*executor_, kExecutor, ObserveEffect{attempted.effect, bytes("ok"), true}).first.closure,
            std::optional(ClosureKind::kObserved));
}

// A result after the caller's retirement is recorded as evidence - no
// mailbox input - and the PID stays retired, its mailbox as it was.
TEST_F(EffectTest, AResultAfterCallerRetirementIsEvidenceAndThePidStaysRetired) {
  const Captured c = capture(2);
  take(*executor_, kExecutor, AttemptEffect{c.effect});
  retire_caller();
  const auto before = process_info(*admin_);
  const auto [late, step] = take(*executor_, kExecutor, ObserveEffect{c.effect, bytes("charged"), false});
  EXPECT_EQ(late, (EffectChanged{c.effect, kPid, EffectPhase::kAttempted, std::nullopt, std::nullopt}));
  const auto after = process_info(*admin_);
  EXPECT_EQ(after.state, ProcessState::kRetired);
  EXPECT_EQ(after.tail, before.tail);
  EXPECT_EQ(to_json(after), to_json(before));
  const auto recorded = read(c.effect);
  ASSERT_EQ(recorded.observations.items.size(), 1u);
  EXPECT_EQ(to_json(recorded.observations.items[0]), to_json(observation(step, std::nullopt, false, "charged")));
  refused_as(*admin_, Send{kPid, value("x")}, Reason::kRetired, c.effect);  // nothing revived it
}

// Every refusal before the verb's own rule, in order: the effect, the
// caller's rights at its process, its phase. Each leaves the record as it was.
TEST_F(EffectTest, EachRefusalNamesItsRuleAndChangesNothing) {
  const Captured c = capture(1);
  Client other = client(kOther, 132), inspector = client(kInspector, 141);
  refused_as(*executor_, AttemptEffect{999}, Reason::kUnknownEffect, c.effect);
  refused_as(inspector, AttemptEffect{c.effect}, Reason::kNotPermitted, c.effect);
  refused_as(other, AttemptEffect{c.effect}, Reason::kNotEffectExecutor, c.effect);
  refused_as(*executor_, ObserveEffect{c.effect, bytes("early"), false}, Reason::kNotAttempted, c.effect);
  refused_as(*executor_, CloseEffect{c.effect, CloseKind::kAbandoned}, Reason::kNotAttempted, c.effect);
  refused_as(inspector, CloseEffect{c.effect, CloseKind::kDeadline}, Reason::kNotPermitted, c.effect);
  refused_as(other, CloseEffect{c.effect, CloseKind::kDeadline}, Reason::kNotPermitted, c.effect);
  refused_as(inspector, CancelEffect{c.effect}, Reason::kNotPermitted, c.effect);
  take(*executor_, kExecutor, AttemptEffect{c.effect});
  refused_as(*executor_, AttemptEffect{c.effect}, Reason::kAlreadyAttempted, c.effect);
  refused_as(other, ObserveEffect{c.effect, bytes("x"), false}, Reason::kNotEffectExecutor, c.effect);
  refused_as(inspector, ObserveEffect{c.effect, bytes("x"), false}, Reason::kNotPermitted, c.effect);
  refused_as(*effect_admin_, CancelEffect{c.effect}, Reason::kAlreadyAttempted, c.effect);
  take(*executor_, kExecutor, ObserveEffect{c.effect, bytes("ok"), false});  // budget 1: closed
  for (Command late : std::vector<Command>{AttemptEffect{c.effect}, ObserveEffect{c.effect, bytes("x"), true},
                                           CloseEffect{c.effect, CloseKind::kAbandoned}, CancelEffect{c.effect}}) {
    Client& signer = std::holds_alternative<CancelEffect>(late) ? *effect_admin_ : *executor_;
    refused_as(signer, late, Reason::kEffectClosed, c.effect);
  }
  // Reads: inspect or effect at the process.
  EXPECT_EQ(answer<EffectInfo>(inspector, EffectRead{c.effect}).effect, c.effect);
  EXPECT_EQ(answer<EffectInfo>(other, EffectRead{c.effect}).effect, c.effect);
  Client plain = client(kPlainAdmin, 142);
  EXPECT_EQ(query_refused(plain, EffectRead{c.effect}).reason, Reason::kNotPermitted);
  EXPECT_EQ(query_refused(inspector, EffectRead{999}).reason, Reason::kUnknownEffect);
}

// An observation budget is 1..16, a rule of the contract: the client refuses
// it before signing, the node before the signature check.
TEST_F(EffectTest, AnObservationBudgetOutsideOneToSixteenIsRefusedBeforeSigning) {
  for (const Id budget : {Id{0}, Id{17}}) {
    Turn t{kPid, generation_, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
    t.effect = EffectIntent{kExecutor, later(), {}, budget};
    auto r = admin_->submit(t);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ClientError::Kind::kInvalid) << budget;
    const auto me = admin_->identity();
    const auto answer = post("/v1/command", to_json(sign(admin_->build(t, me->sequence + 1), testing::seed_of(0))));
    EXPECT_EQ(answer.status, 400);
    EXPECT_EQ(rejection_of(answer).reason, Reason::kBadObservationBudget);
  }
  EXPECT_EQ(capture(16).effect, 1u);  // 16 is accepted; nothing before it was
}

// The evidence is written once: a policy change, an exact retry and a restart
// leave every step as it was. An exact retry still needs current permission.
TEST_F(EffectTest, PolicyChangesExactRetriesAndRestartsNeverReplaceTheEvidence) {
  const Captured c = capture(2);
  take(*executor_, kExecutor, AttemptEffect{c.effect});
  const SignedRequest observe = sign(executor_->build(ObserveEffect{c.effect, bytes("pending"), false},
                                                      *executor_->next_sequence()),
                                     testing::seed_of(131));
  auto first = executor_->resubmit(observe);
  ASSERT_TRUE(first.ok()) << first.error().message;
  const std::string recorded = to_json(read(c.effect));

  member(50, 150, kEffect);  // the policy revision moves on
  auto again = executor_->resubmit(observe);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(to_json(*again), to_json(*first));   // the original receipt
  EXPECT_EQ(to_json(read(c.effect)), recorded);  // no second observation, no new revision
  EXPECT_EQ(process_info(*admin_).tail, 1u);     // and no second input

  restart();
  admin_ = std::make_unique<Client>(root());
  executor_ = std::make_unique<Client>(client(kExecutor, 131));
  EXPECT_EQ(to_json(read(c.effect)), recorded);
  auto after_restart = executor_->resubmit(observe);
  ASSERT_TRUE(after_restart.ok()) << after_restart.error().message;
  EXPECT_EQ(to_json(*after_restart), to_json(*first));

  accept(*admin_, RevokeGrant{executor_grant_, std::nullopt});
  const Rejection denied = refused(executor_->resubmit(observe));
  EXPECT_EQ(denied.reason, Reason::kNotPermitted);  // exact historical retries still require current permission
  EXPECT_EQ(to_json(read(c.effect)), recorded);
}

// The listings the maintenance process scans: by process or realm-wide, by
// filter, a page of eight at a cut that any effect change expires.
TEST_F(EffectTest, ListingsFindUnresolvedCancellableAndOverdueEffectsPageByPage) {
  std::vector<Id> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(capture(1, clock_.trusted() + Millis{10'000u + i}).effect);
  take(*executor_, kExecutor, AttemptEffect{ids[0]});
  take(*executor_, kExecutor, ObserveEffect{ids[0], bytes("ok"), true});  // closed
  take(*executor_, kExecutor, AttemptEffect{ids[1]});                     // attempted
  const auto list = [&](Client& c, std::optional<Pid> pid, EffectFilter filter) {
    std::vector<Id> out;
    std::optional<Cursor> cursor;
    do {
      auto page = c.effects(pid, filter, cursor);
      EXPECT_TRUE(page.ok()) << (page.ok() ? "" : page.error().message);
      if (!page.ok()) break;
      EXPECT_LE(page->items.items.size(), kPageRecords);
      for (const auto& e : page->items.items) out.push_back(e.effect);
      cursor = page->cursor;
    } while (cursor);
    return out;
  };
  const std::vector<Id> open(ids.begin() + 1, ids.end()), unattempted(ids.begin() + 2, ids.end());
  EXPECT_EQ(list(*admin_, std::nullopt, EffectFilter::kAll), ids);
  EXPECT_EQ(list(*admin_, kPid, EffectFilter::kAll), ids);
  EXPECT_EQ(list(*admin_, std::nullopt, EffectFilter::kUnresolved), open);
  EXPECT_EQ(list(*admin_, std::nullopt, EffectFilter::kCancellable), std::vector<Id>{});  // the caller is live
  EXPECT_EQ(list(*admin_, std::nullopt, EffectFilter::kOverdue), std::vector<Id>{});
  Client inspector = client(kInspector, 141);
  EXPECT_EQ(list(inspector, std::nullopt, EffectFilter::kUnresolved), open);
  EXPECT_EQ(query_refused(inspector, ListEffects{Pid{8}, EffectFilter::kAll, std::nullopt}).reason, Reason::kNotPermitted);

  // A continuation expires when any effect changes after its cut.
  auto page = admin_->effects(std::nullopt, EffectFilter::kAll, std::nullopt);
  ASSERT_TRUE(page.ok());
  ASSERT_TRUE(page->cursor);
  take(*executor_, kExecutor, AttemptEffect{ids[2]});
  EXPECT_EQ(query_refused(*admin_, ListEffects{std::nullopt, EffectFilter::kAll, page->cursor}).reason,
            Reason::kCatalogChanged);

  // The maintenance process's pass: what is cancellable once the caller is
  // terminal (not the attempted ones), then overdue once the deadlines pass.
  retire_caller();
  const std::vector<Id> cancellable(ids.begin() + 3, ids.end());
  EXPECT_EQ(list(*admin_, std::nullopt, EffectFilter::kCancellable), cancellable);
  for (Id e : list(*admin_, std::nullopt, EffectFilter::kCancellable)) take(*admin_, 1, CancelEffect{e});
  EXPECT_EQ(list(*admin_, std::nullopt, EffectFilter::kCancellable), std::vector<Id>{});
  EXPECT_EQ(list(*admin_, std::nullopt, EffectFilter::kUnresolved), (std::vector<Id>{ids[1], ids[2]}));
  clock_.set(clock_.now_ms() + 20'000);
  EXPECT_EQ(list(*admin_, std::nullopt, EffectFilter::kOverdue), (std::vector<Id>{ids[1], ids[2]}));
  for (Id e : list(*admin_, std::nullopt, EffectFilter::kOverdue)) take(*admin_, 1, CloseEffect{e, CloseKind::kDeadline});
  EXPECT_EQ(list(*admin_, std::nullopt, EffectFilter::kUnresolved), std::vector<Id>{});
}

// A PID-scoped executor reaches its own process's effects only.
TEST_F(EffectTest, APidScopedExecutorListsAndActsOnItsOwnProcessesEffectsOnly) {
  principal(60, 160, RealmScope{}, kEffect | kInspect, /*pid_scope=*/kPid);
  process(resource("doc8"), 8);
  const Id generation8 = ok<ProcessChanged>(admin_->submit(Own{Pid{8}, 1})).generation;
  Turn t{Pid{8}, generation8, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  t.effect = EffectIntent{PrincipalId{1}, later(), {}, 1};
  const Id of8 = ok<TurnPublished>(admin_->submit(t)).effect.value_or(0);
  const Id of7 = capture(1).effect;
  Client scoped(options(60, 160));  // scoped to 7, its identity is readable
  auto page = scoped.effects(std::nullopt, EffectFilter::kAll, std::nullopt);
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page->items.items.size(), 1u);
  EXPECT_EQ(page->items.items[0].effect, of7);
  EXPECT_EQ(query_refused(scoped, EffectRead{of8}).reason, Reason::kNotPermitted);
  EXPECT_EQ(query_refused(scoped, ListEffects{Pid{8}, EffectFilter::kAll, std::nullopt}).reason, Reason::kNotPermitted);
  EXPECT_EQ(refused(scoped.submit(CloseEffect{of8, CloseKind::kDeadline})).reason, Reason::kNotPermitted);
}

}  // namespace
}  // namespace cowboy::transit
