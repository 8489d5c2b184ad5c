// The node's side of the maintenance process, over real HTTP (docs/transit.md,
// decisions 50-54): an output of a terminated source is cancelled, in route
// order, and never delivered; the retirement of a process that ended without
// a command is recorded once, counting its unconsumed inputs cancelled; route
// heads and ended processes are listed in bounded pages whose cuts expire;
// both indices come back the same after a restart. Then the maintainer's
// loop (src/transit/maintain): route order, two at once, what it needs to
// start, the effects it closes (decisions 49, 60) and the history it trims
// (decision 68).
#include <gtest/gtest.h>

#include <thread>

#include "../support/poll.h"
#include "state_fixture.h"
#include "transit/maintain/maintainer.h"
#include "transit/node/storage.h"

namespace cowboy::transit {
namespace {

class MaintenanceTest : public StateTest {
 protected:
  Turn empty_turn(auto pid, Id generation) {
    return Turn{testing::id<Pid>(pid), generation, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  }
  /// `pid` requiring "doc", associated with a fresh resource (owned by `owner`) and initialized.
  template <typename O = std::nullopt_t> void initialized(auto pid_of, O owner = std::nullopt) {
    const Pid pid = testing::id<Pid>(pid_of);
    const ResourceId doc = resource(numbered("doc", static_cast<int>(pid.value)), owner);
    process(doc, pid);
  }
  /// Owns `source` and publishes one turn with these outputs; returns their ids.
  std::vector<Id> publish(auto source_of, std::vector<std::pair<Id, std::string>> outputs) {
    const Pid source = testing::id<Pid>(source_of);
    const auto info = process_info(*admin_, source);
    Id generation = info.generation;
    if (info.state != ProcessState::kOwned) generation = ok<ProcessChanged>(admin_->submit(Own{source, generation})).generation;
    Turn t = empty_turn(source, generation);
    for (const auto& [destination, v] : outputs) t.outputs.items.push_back({Pid{destination}, value(v)});
    return ok<TurnPublished>(admin_->submit(t)).outputs.items;
  }
  /// Suspends `pid` and lets the deadline pass: it has retired by trusted time.
  void expire(auto pid_of) {
    const Pid pid = testing::id<Pid>(pid_of);
    const TrustedMs deadline = clock_.trusted() + Millis{1000};
    accept(*admin_, Suspend{pid, process_info(*admin_, pid).generation, deadline});
    clock_.set(deadline + Millis{1});
  }
  Reason refusal(Client& c, Command op) { return refused(c.submit(std::move(op))).reason; }
  std::vector<RouteHead> heads(Client& c) {
    std::vector<RouteHead> out;
    std::optional<Cursor> cursor;
    do {
      auto page = answer<RoutePage>(c, ListRoutes{cursor});
      out.insert(out.end(), page.items.items.begin(), page.items.items.end());
      cursor = page.cursor;
    } while (cursor);
    return out;
  }
  std::vector<EndedProcess> ended() { return answer<EndedPage>(*admin_, ListEnded{std::nullopt}).items.items; }
};

TEST_F(MaintenanceTest, AnOutputOfATerminatedSourceIsCancelledInRouteOrderAndNeverDelivered) {
  initialized(7);
  initialized(8);
  const auto outs = publish(7, {{8, "one"}, {8, "two"}});
  // A live source's output is delivered, not cancelled.
  EXPECT_EQ(refusal(*admin_, CancelOutput{outs[0]}), Reason::kSourceNotTerminated);
  expire(7);
  EXPECT_EQ(refusal(*admin_, Deliver{outs[0]}), Reason::kSourceTerminated);
  // The disposition needs courier at the destination, and keeps route order.
  principal(20, 120, PidScope{Pid{8}}, kAllPermissions & ~std::uint64_t{kCourier});
  Client no_courier(options(20, 120));
  EXPECT_EQ(refusal(no_courier, CancelOutput{outs[0]}), Reason::kNotPermitted);
  EXPECT_EQ(refusal(*admin_, CancelOutput{outs[1]}), Reason::kRouteOrder);
  const auto first = ok<OutputCancelled>(admin_->submit(CancelOutput{outs[0]}));
  EXPECT_EQ(first.source, Pid{7});
  EXPECT_EQ(first.destination, Pid{8});
  EXPECT_EQ(refusal(*admin_, CancelOutput{outs[0]}), Reason::kResolved);
  EXPECT_EQ(refusal(*admin_, Deliver{outs[0]}), Reason::kResolved);
  ok<OutputCancelled>(admin_->submit(CancelOutput{outs[1]}));  // the route was released
  EXPECT_TRUE(heads(*admin_).empty());
  EXPECT_EQ(process_info(*admin_, 8).tail, 0u);  // nothing ever reached the destination
  EXPECT_EQ(refusal(*admin_, CancelOutput{999}), Reason::kUnknownOutput);
}

// An expired suspension: refused before its deadline, recorded once after,
// with the same cancelled count the process read already showed.
TEST_F(MaintenanceTest, AnExpiredSuspensionsRetirementIsRecordedOnceWithItsInputsCancelled) {
  initialized(7);
  accept(*admin_, Send{Pid{7}, value("a")});
  accept(*admin_, Send{Pid{7}, value("b")});
  const TrustedMs deadline = clock_.trusted() + Millis{1000};
  accept(*admin_, Suspend{Pid{7}, 1, deadline});
  EXPECT_EQ(refusal(*admin_, RecordRetirement{Pid{7}}), Reason::kNotEnded);
  EXPECT_TRUE(ended().empty());
  clock_.set(deadline + Millis{1});
  EXPECT_EQ(process_info(*admin_, 7).cancelled, 2u);  // judged now, before anything is recorded
  const auto listed = ended();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0], (EndedProcess{Pid{7}, Ending::kSuspensionExpired, 2}));

  principal(20, 120, PidScope{Pid{7}}, kAllPermissions & ~std::uint64_t{kPidAdmin});
  Client no_admin(options(20, 120));
  EXPECT_EQ(refusal(no_admin, RecordRetirement{Pid{7}}), Reason::kNotPermitted);
  EXPECT_EQ(answer<EndedPage>(no_admin, ListEnded{std::nullopt}).items.items.size(), 1u);  // it may inspect 7
  principal(21, 121, PidScope{Pid{8}}, kAllPermissions);
  Client elsewhere(options(21, 121));
  EXPECT_TRUE(answer<EndedPage>(elsewhere, ListEnded{std::nullopt}).items.items.empty());
  const auto recorded = ok<RetirementRecorded>(admin_->submit(RecordRetirement{Pid{7}}));
  EXPECT_EQ(recorded, (RetirementRecorded{Pid{7}, Ending::kSuspensionExpired, 2}));
  EXPECT_EQ(refusal(*admin_, RecordRetirement{Pid{7}}), Reason::kRetirementRecorded);
  const auto info = process_info(*admin_, 7);
  EXPECT_EQ(info.state, ProcessState::kRetired);
  EXPECT_EQ(info.cancelled, 2u);  // the same count, now recorded
  EXPECT_TRUE(ended().empty());
  // The listing of recorded metadata says retired now too.
  const auto page = answer<ProcessPage>(*admin_, ListProcesses{std::nullopt});
  EXPECT_EQ(page.items.items.at(0).state, ProcessState::kRetired);
  EXPECT_EQ(refusal(*admin_, RecordRetirement{Pid{99}}), Reason::kUnknownProcess);
}

// A dependency's end: the lifetime owner's expiry fences its dependent; once
// the owner's retirement is recorded, the dependent is listed as ended and
// its own retirement recorded. Its outputs still go (decision 10), outputs
// into it are disposed of once recorded.
TEST_F(MaintenanceTest, ADependentOfAnEndedLifetimeIsListedAfterItsOwnerAndItsOutputsStillGo) {
  initialized(9);
  initialized(7, /*owner=*/9);  // 7 requires a resource whose lifetime 9 owns
  initialized(8);
  const auto from7 = publish(7, {{8, "still goes"}});
  const auto into7 = publish(8, {{7, "disposed"}});
  accept(*admin_, Send{Pid{7}, value("queued")});
  expire(9);
  EXPECT_EQ(process_info(*admin_, 7).state, ProcessState::kFenced);
  // Only 9 is listed: 7's dependency ended by trusted time, not by a record.
  auto listed = ended();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].pid, Pid{9});
  EXPECT_EQ(refusal(*admin_, Deliver{into7[0]}), Reason::kMissingDependency);  // a fenced destination waits
  ok<RetirementRecorded>(admin_->submit(RecordRetirement{Pid{9}}));
  listed = ended();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0], (EndedProcess{Pid{7}, Ending::kDependencyEnded, 1}));
  EXPECT_EQ(ok<RetirementRecorded>(admin_->submit(RecordRetirement{Pid{7}})),
            (RetirementRecorded{Pid{7}, Ending::kDependencyEnded, 1}));
  EXPECT_EQ(process_info(*admin_, 7).state, ProcessState::kRetired);
  EXPECT_EQ(refusal(*admin_, CancelOutput{from7[0]}), Reason::kSourceNotTerminated);
  EXPECT_EQ(ok<Delivered>(admin_->submit(Deliver{from7[0]})).input, std::optional<Id>(1));
  EXPECT_FALSE(ok<Delivered>(admin_->submit(Deliver{into7[0]})).input);  // disposed of
  EXPECT_TRUE(ended().empty());
}

TEST_F(MaintenanceTest, RouteHeadsAreListedOldestFirstOneForEachRouteWithWhatDecidesThem) {
  initialized(7);
  initialized(8);
  accept(*admin_, CreateProcess{Pid{9}, {}});  // uninitialized: its route waits
  const auto a = publish(7, {{9, "a1"}, {9, "a2"}, {8, "b1"}});
  const auto c = publish(8, {{7, "c1"}});
  auto listed = heads(*admin_);
  ASSERT_EQ(listed.size(), 3u);
  const Position at = position();
  EXPECT_EQ(listed[0].output, a[0]);  // 7 -> 9: its head only, two pending
  EXPECT_EQ(listed[0].pending, 2u);
  EXPECT_EQ(listed[0].destination_state, ProcessState::kUninitialized);
  EXPECT_FALSE(listed[0].source_terminated);
  EXPECT_EQ(listed[1].output, a[2]);  // 7 -> 8
  EXPECT_EQ(listed[1].destination_state, ProcessState::kOwned);
  EXPECT_EQ(listed[2].output, c[0]);  // 8 -> 7
  EXPECT_EQ(listed[2].destination_state, ProcessState::kOwned);
  EXPECT_LT(listed[0].published_at, listed[2].published_at);
  EXPECT_LE(listed[2].published_at, at);
  EXPECT_EQ(listed[2].published_at_ms, clock_.trusted());

  // A resolution moves the route's head to its next output: still the oldest waiting.
  accept(*admin_, Initialize{Pid{9}, 0});
  ok<Delivered>(admin_->submit(Deliver{a[0]}));
  listed = heads(*admin_);
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].output, a[1]);
  EXPECT_EQ(listed[0].pending, 1u);
  EXPECT_EQ(listed[0].destination_state, ProcessState::kIdle);

  // Only a courier at the destination that may read its metadata sees a head.
  principal(20, 120, PidScope{Pid{7}}, kAllPermissions);
  Client at7(options(20, 120));
  listed = heads(at7);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].output, c[0]);  // into 7, from 8
  principal(21, 121, RealmScope{}, kInspect);
  Client inspector(options(21, 121));
  EXPECT_TRUE(heads(inspector).empty());
}

// Pages of eight heads; a continuation goes on at its cut until a head
// changes: a resolution, or a route that gets its first pending output.
TEST_F(MaintenanceTest, RouteListingsPageAndTheirCutsExpireWhenAHeadChanges) {
  initialized(7);
  for (Pid pid{100}; pid < Pid{112}; pid = Pid{pid.value + 1}) accept(*admin_, CreateProcess{pid, {}});
  std::vector<Id> outs;
  for (Pid pid{100}; pid < Pid{112}; pid = Pid{pid.value + 4}) {
    auto more = publish(7, {{pid.value, "x"}, {pid.value + 1, "x"}, {pid.value + 2, "x"}, {pid.value + 3, "x"}});
    outs.insert(outs.end(), more.begin(), more.end());
  }
  auto first = answer<RoutePage>(*admin_, ListRoutes{std::nullopt});
  ASSERT_EQ(first.items.items.size(), kPageRecords);
  ASSERT_TRUE(first.cursor);
  EXPECT_EQ(first.cursor->after, outs[7]);
  auto second = answer<RoutePage>(*admin_, ListRoutes{first.cursor});
  ASSERT_EQ(second.items.items.size(), 4u);
  EXPECT_EQ(second.items.items[0].output, outs[8]);
  EXPECT_FALSE(second.cursor);
  EXPECT_EQ(second.cut, first.cut);
  // Anything that does not change a head leaves the cut alone; a resolution expires it.
  accept(*admin_, Send{Pid{7}, value("unrelated")});
  EXPECT_EQ(answer<RoutePage>(*admin_, ListRoutes{first.cursor}).cut, first.cut);
  accept(*admin_, Initialize{Pid{100}, 0});
  ok<Delivered>(admin_->submit(Deliver{outs[0]}));
  EXPECT_EQ(query_refused(*admin_, ListRoutes{first.cursor}).reason, Reason::kCatalogChanged);
  // A new route's head is a change too.
  auto fresh = answer<RoutePage>(*admin_, ListRoutes{std::nullopt});
  publish(7, {{101, "again"}});  // 101's route is pending already: no new head
  EXPECT_EQ(answer<RoutePage>(*admin_, ListRoutes{fresh.cursor}).cut, fresh.cut);
  publish(7, {{100, "new route"}});
  EXPECT_EQ(query_refused(*admin_, ListRoutes{fresh.cursor}).reason, Reason::kCatalogChanged);
}

// Both indices are derived from the records, so a restart lists the same work.
TEST_F(MaintenanceTest, ARestartListsTheSameRouteHeadsAndEndedProcesses) {
  initialized(7);
  initialized(8);
  publish(7, {{8, "a"}, {8, "b"}});
  publish(8, {{7, "c"}});
  initialized(9);
  initialized(10, /*owner=*/9);
  expire(9);
  ok<RetirementRecorded>(admin_->submit(RecordRetirement{Pid{9}}));
  const auto routes_before = heads(*admin_);
  const auto ended_before = ended();
  ASSERT_EQ(routes_before.size(), 2u);
  ASSERT_EQ(ended_before.size(), 1u);  // 10, whose dependency ended with 9
  admin_.reset();
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(heads(*admin_), routes_before);
  EXPECT_EQ(ended(), ended_before);
}

// ---- the maintainer's loop (src/transit/maintain), over the same HTTP ----------

using maintain::Maintainer;

class MaintainerTest : public MaintenanceTest {
 protected:
  /// A maintainer as principal `id`, created realm-wide with what it needs unless it exists.
  std::unique_ptr<Maintainer> maintainer(auto id, std::uint8_t seed, bool create = true, std::uint64_t checkpoint_every = 0) {
    if (create) principal(id, seed, RealmScope{}, maintain::kRequiredPermissions);
    maintain::Options o;
    o.client = options(id, seed);
    o.idle = std::chrono::milliseconds(1);
    o.checkpoint_every = checkpoint_every;
    auto m = std::make_unique<Maintainer>(o, clock_);
    EXPECT_TRUE(m->authenticate().ok());
    return m;
  }
  /// The values of `pid`'s inputs from its head on, each consumed by a turn as root.
  std::vector<std::string> consume_all(auto pid_of) {
    const Pid pid = testing::id<Pid>(pid_of);
    std::vector<std::string> out;
    for (auto info = process_info(*admin_, pid);; info = process_info(*admin_, pid)) {
      if (info.state != ProcessState::kOwned) {
        ok<ProcessChanged>(admin_->submit(Own{pid, info.generation}));
        continue;
      }
      if (!info.input) return out;
      out.push_back(text(info.input->value));
      accept(*admin_, Turn{pid, info.generation, info.input->input, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt});
    }
  }
};

// Decision 53: a route's later output never passes an unresolved earlier one,
// and a waiting route holds up no other.
TEST_F(MaintainerTest, A2IsNotDeliveredBeforeA1OnTheSameRouteWhileAnotherRouteProceeds) {
  initialized(7);
  initialized(8);
  accept(*admin_, CreateProcess{Pid{9}, {}});  // uninitialized: the route 7 -> 9 waits
  const auto a = publish(7, {{9, "a1"}, {9, "a2"}, {8, "b1"}});
  auto m = maintainer(30, 130);
  EXPECT_EQ(m->round(), Maintainer::Round::kWorked);
  EXPECT_EQ(process_info(*admin_, 8).tail, 1u);  // b1 went
  EXPECT_EQ(process_info(*admin_, 9).tail, 0u);  // neither a1 nor a2
  EXPECT_EQ(m->round(), Maintainer::Round::kIdle);
  EXPECT_EQ(m->metrics().routes_waiting.load(), 1u);
  EXPECT_EQ(refusal(*admin_, Deliver{a[1]}), Reason::kRouteOrder);  // nor could anyone else deliver a2 first
  publish(7, {{8, "b2"}});
  EXPECT_EQ(m->round(), Maintainer::Round::kWorked);  // 7 -> 8 goes on while 7 -> 9 waits
  EXPECT_EQ(process_info(*admin_, 9).tail, 0u);
  accept(*admin_, Initialize{Pid{9}, 0});
  EXPECT_EQ(m->round(), Maintainer::Round::kWorked);
  EXPECT_EQ(consume_all(9), (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(consume_all(8), (std::vector<std::string>{"b1", "b2"}));
  EXPECT_EQ(m->metrics().delivered.load(), 4u);
  EXPECT_EQ(m->metrics().lost_races.load(), 0u);
  EXPECT_EQ(m->metrics().refused.load(), 0u);
}

// Decision 56: two maintainers running at once - as two principals, and as
// one principal in two processes - resolve every output and record every
// retirement exactly once; the conditional append decides each race, and
// the loser counts it as a lost race (or, sharing the principal, gets the
// winner's receipt for the same signed bytes), never as an error.
TEST_F(MaintainerTest, TwoMaintainersAtOnceResolveEachOutputOnce) {
  for (auto [id_x, id_y, base] : {std::tuple{Id{30}, Id{31}, Id{100}}, std::tuple{Id{32}, Id{32}, Id{200}}}) {
    SCOPED_TRACE(base);
    auto x = maintainer(id_x, static_cast<std::uint8_t>(id_x + 100));
    auto y = maintainer(id_y, static_cast<std::uint8_t>(id_y + 100), /*create=*/id_x != id_y);
    const Id from = base, to_a = base + 1, to_b = base + 2, doomed = base + 3;
    for (Id pid : {from, to_a, to_b, doomed}) initialized(pid);
    constexpr int kTurns = 10;
    for (int t = 0; t < kTurns; ++t)
      publish(from, {{to_a, numbered("a", t)}, {to_b, numbered("b", t)}, {to_a, numbered("c", t)}});
    for (int t = 0; t < 3; ++t) publish(doomed, {{to_a, "never"}, {to_b, "never"}});
    expire(doomed);  // its six outputs are to be cancelled, its retirement recorded
    std::thread run_x([&] { x->run(); });
    std::thread run_y([&] { y->run(); });
    const bool drained = cowboy::testing::eventually([&] { return heads(*admin_).empty() && ended().empty(); },
                                                     std::chrono::seconds(60));
    x->stop();
    y->stop();
    run_x.join();
    run_y.join();
    ASSERT_TRUE(drained);
    std::vector<std::string> expect_a, expect_b;
    for (int t = 0; t < kTurns; ++t) {
      expect_a.push_back(numbered("a", t));
      expect_a.push_back(numbered("c", t));
      expect_b.push_back(numbered("b", t));
    }
    EXPECT_EQ(consume_all(to_a), expect_a);  // each once, in route order
    EXPECT_EQ(consume_all(to_b), expect_b);
    if (id_x != id_y) {  // each act counted by the one maintainer whose command decided it
      EXPECT_EQ(x->metrics().delivered + y->metrics().delivered, 3u * kTurns);
      EXPECT_EQ(x->metrics().cancelled + y->metrics().cancelled, 6u);
      EXPECT_EQ(x->metrics().retired_expired + y->metrics().retired_expired, 1u);
    } else {  // one principal: the same act at the same sequence signs to the same bytes, an
              // exact retry answered with the original receipt, so both may count it (decision 56)
      EXPECT_GE(x->metrics().delivered + y->metrics().delivered, 3u * kTurns);
      EXPECT_LE(x->metrics().delivered.load(), 3u * kTurns);
      EXPECT_LE(y->metrics().delivered.load(), 3u * kTurns);
    }
    EXPECT_EQ(process_info(*admin_, doomed).state, ProcessState::kRetired);
    EXPECT_EQ(x->metrics().refused.load(), 0u);
    EXPECT_EQ(y->metrics().refused.load(), 0u);
    std::printf("maintainers %llu and %llu: %llu and %llu lost races\n", static_cast<unsigned long long>(id_x),
                static_cast<unsigned long long>(id_y), static_cast<unsigned long long>(x->metrics().lost_races.load()),
                static_cast<unsigned long long>(y->metrics().lost_races.load()));
  }
}

// Decision 50: a maintainer acts realm-wide or not at all; it says what is missing.
TEST_F(MaintainerTest, AMaintainerWithoutRealmWideControlAuthorityRefusesToStart) {
  initialized(7);
  auto start = [&](Id id, std::uint8_t seed) {
    maintain::Options o;
    o.client = options(id, seed);
    return Maintainer(o, clock_).authenticate();
  };
  principal(40, 140, RealmScope{}, maintain::kRequiredPermissions & ~std::uint64_t{kPidAdmin});
  auto lacking = start(40, 140);
  ASSERT_FALSE(lacking.ok());
  EXPECT_NE(lacking.error().find("lacks realm-wide pid_admin (holds"), std::string::npos) << lacking.error();
  // Closing others' effects takes effect beside pid_admin (decisions 45, 49).
  principal(43, 143, RealmScope{}, maintain::kRequiredPermissions & ~std::uint64_t{kEffect | kRealmControl});
  auto no_effect = start(43, 143);
  ASSERT_FALSE(no_effect.ok());
  EXPECT_NE(no_effect.error().find("lacks realm-wide effect, realm_control (holds"), std::string::npos) << no_effect.error();
  principal(41, 141, RealmScope{}, maintain::kRequiredPermissions, /*pid_scope=*/7);
  auto scoped = start(41, 141);
  ASSERT_FALSE(scoped.ok());
  EXPECT_NE(scoped.error().find("is scoped to a PID"), std::string::npos) << scoped.error();
  principal(42, 142, RealmScope{}, maintain::kRequiredPermissions);
  EXPECT_TRUE(start(42, 142).ok());
}

// ---- the effects pass (decisions 49, 60) -----------------------------------------

// A terminated caller's unattempted intent is cancelled; its attempted one
// stays open for its executor until trusted time reaches the reconciliation
// deadline, then it is closed `deadline` with the trusted sample. Each
// closure names the maintainer's principal and the policy revision it acted
// under; a live caller's intent before its deadline is left alone.
TEST_F(MaintainerTest, TheEffectsNobodyCanTakeFurtherAreClosedByTheMaintainerWithItsProvenance) {
  constexpr PrincipalId kExecutor{31}, kMaintainer{30};
  initialized(7);
  initialized(8);
  principal(kExecutor, 131, RealmScope{}, kEffect | kInspect);
  Client executor(options(kExecutor, 131));
  const TrustedMs deadline = clock_.trusted() + Millis{60'000};
  const auto capture = [&](auto pid_of, TrustedMs at) {
    const Pid pid = testing::id<Pid>(pid_of);
    const auto info = process_info(*admin_, pid);
    Id generation = info.generation;
    if (info.state != ProcessState::kOwned) generation = ok<ProcessChanged>(admin_->submit(Own{pid, generation})).generation;
    Turn t = empty_turn(pid, generation);
    t.effect = EffectIntent{kExecutor, at, Hex<256>{{'p', 'a', 'y'}}, 2};
    return ok<TurnPublished>(admin_->submit(t)).effect.value_or(0);
  };
  const Id unattempted = capture(7, deadline), attempted = capture(7, deadline), live = capture(8, deadline + Millis{60'000});
  ok<EffectChanged>(executor.submit(AttemptEffect{attempted}));
  ok<EffectChanged>(executor.submit(ObserveEffect{attempted, InputValue{{'1'}}, false}));
  auto m = maintainer(kMaintainer, 130);
  EXPECT_EQ(m->round(), Maintainer::Round::kIdle);  // nothing is terminal or overdue yet
  accept(*admin_, Terminate{Pid{7}, process_info(*admin_, 7).generation});
  const Position terminated_at = position();
  const Id revision = admin_->identity()->policy_revision;
  const auto read = [&](Id effect) { return answer<EffectInfo>(*admin_, EffectRead{effect}); };

  EXPECT_EQ(m->round(), Maintainer::Round::kWorked);
  auto closed = read(unattempted);
  ASSERT_TRUE(closed.closure);
  EXPECT_EQ(closed.phase, EffectPhase::kClosed);
  EXPECT_EQ(closed.closure->kind, ClosureKind::kUnattemptedCancel);
  EXPECT_EQ(closed.closure->step.principal, kMaintainer);
  EXPECT_EQ(closed.closure->step.policy_revision, revision);
  EXPECT_GT(closed.closure->step.position, terminated_at);
  EXPECT_FALSE(closed.closure->trusted_lower_bound_ms);
  EXPECT_EQ(read(attempted).phase, EffectPhase::kAttempted);  // an attempt is not cancelled
  EXPECT_EQ(read(live).phase, EffectPhase::kAuthorized);
  EXPECT_EQ(m->round(), Maintainer::Round::kIdle);
  EXPECT_EQ(m->metrics().effects_cancelled.load(), 1u);

  // The deadline, one millisecond short and then reached by trusted time.
  clock_.set(deadline - Millis{1});
  EXPECT_EQ(m->round(), Maintainer::Round::kIdle);
  EXPECT_EQ(read(attempted).phase, EffectPhase::kAttempted);
  clock_.set(deadline + Millis{5});
  EXPECT_EQ(m->round(), Maintainer::Round::kWorked);
  closed = read(attempted);
  ASSERT_TRUE(closed.closure);
  EXPECT_EQ(closed.closure->kind, ClosureKind::kDeadline);
  EXPECT_EQ(closed.closure->step.principal, kMaintainer);
  EXPECT_EQ(closed.closure->step.policy_revision, revision);
  EXPECT_EQ(closed.closure->trusted_lower_bound_ms, std::optional<TrustedMs>(deadline + Millis{5}));
  EXPECT_EQ(closed.observations.items.size(), 1u);  // the evidence stays as it was
  EXPECT_EQ(refusal(executor, ObserveEffect{attempted, InputValue{{'2'}}, true}), Reason::kEffectClosed);
  EXPECT_EQ(read(live).phase, EffectPhase::kAuthorized);  // its caller lives and its deadline is ahead
  EXPECT_EQ(m->round(), Maintainer::Round::kIdle);
  EXPECT_EQ(m->metrics().effects_deadline.load(), 1u);
  EXPECT_EQ(m->metrics().refused.load(), 0u);
  EXPECT_NE(m->metrics().text().find("\ntransit_maintain_effects_closed_total{closure=\"deadline\"} 1\n"), std::string::npos);
}

// Two maintainers closing the same effects: each closure is decided once,
// the loser's `effect_closed` counted as a lost race, not an error.
TEST_F(MaintainerTest, TwoMaintainersCloseEachEffectOnce) {
  initialized(7);
  principal(31, 131, RealmScope{}, kEffect | kInspect);
  const Id generation = ok<ProcessChanged>(admin_->submit(Own{Pid{7}, 1})).generation;
  constexpr int kEffects = 12;
  for (int i = 0; i < kEffects; ++i) {
    Turn t = empty_turn(7, generation);
    t.effect = EffectIntent{PrincipalId{31}, clock_.trusted() + Millis{60'000}, Hex<256>{{'x'}}, 1};
    accept(*admin_, t);
  }
  accept(*admin_, Terminate{Pid{7}, generation});
  auto x = maintainer(30, 130);
  auto y = maintainer(33, 133);
  std::thread run_x([&] { x->run(); });
  std::thread run_y([&] { y->run(); });
  const bool closed = cowboy::testing::eventually(
      [&] { return answer<EffectPage>(*admin_, ListEffects{std::nullopt, EffectFilter::kUnresolved, std::nullopt}).items.items.empty(); },
      std::chrono::seconds(60));
  x->stop();
  y->stop();
  run_x.join();
  run_y.join();
  ASSERT_TRUE(closed);
  EXPECT_EQ(x->metrics().effects_cancelled + y->metrics().effects_cancelled, std::uint64_t{kEffects});
  EXPECT_EQ(x->metrics().refused.load(), 0u);
  EXPECT_EQ(y->metrics().refused.load(), 0u);
}

// ---- the trim pass (decision 68) --------------------------------------------------

class MaintainerTrimTest : public MaintainerTest {
 protected:
  Genesis genesis() const override {
    Genesis g = testing::sample_genesis();
    g.allow_history_trim = true;
    return g;
  }
  CheckpointStatus status() { return answer<CheckpointStatus>(*admin_, CheckpointQuery{}); }
  void wait_reclaimed(Position floor) {
    EXPECT_TRUE(cowboy::testing::eventually([&] { return node_->sequencer().stats().reclaimed_below >= floor.value; },
                                            std::chrono::seconds(60)));
  }
};

// With the opt-in, the maintainer checkpoints every N positions and advances
// the floor onto each checkpoint, whoever published it; the trimmed commands'
// exact retries still get their original receipts, byte for byte.
TEST_F(MaintainerTrimTest, TheMaintainerCheckpointsAndTrimsAndTrimmedCommandsAreStillAnswered) {
  principal(2, 102, RealmScope{}, kAllPermissions);
  Client worker(options(2, 102));
  struct Sent {
    std::string body, answer;
  };
  std::vector<Sent> sent;
  Id sequence = 1;
  const auto send = [&](const std::string& role) {
    const std::string body = to_json(sign(worker.build(CreateRole{{role}, std::nullopt}, sequence++), testing::seed_of(102)));
    const auto answer = post("/v1/command", body);
    EXPECT_EQ(answer.status, 200) << answer.body;
    sent.push_back({body, answer.body});
  };
  constexpr std::uint64_t kEvery = 10;
  auto m = maintainer(30, 130, /*create=*/true, kEvery);
  for (int i = 0; i < 12; ++i) send(numbered("r", i));
  const Position before = position();
  ASSERT_GE(before, Position{kEvery});
  EXPECT_EQ(m->round(), Maintainer::Round::kWorked);
  auto now = status();
  ASSERT_TRUE(now.latest);
  EXPECT_EQ(now.latest->position, before + 1);  // the maintainer's checkpoint ...
  EXPECT_EQ(now.floor, before + 1);             // ... and the floor on it
  EXPECT_EQ(position(), before + 2);
  EXPECT_EQ(m->metrics().checkpoints.load(), 1u);
  EXPECT_EQ(m->metrics().floor_advances.load(), 1u);
  EXPECT_EQ(m->metrics().history_floor.load(), (before + 1).value);
  // Its own floor advance does not call for the next checkpoint.
  EXPECT_EQ(m->round(), Maintainer::Round::kIdle);
  EXPECT_EQ(position(), before + 2);
  wait_reclaimed(now.floor);
  for (const auto& s : sent) {
    const auto again = post("/v1/command", s.body);
    EXPECT_EQ(again.status, 200);
    EXPECT_EQ(again.body, s.answer);
  }
  // An operator's checkpoint is trimmed onto too, without waiting for N positions.
  const Receipt operator_checkpoint = accept(*admin_, Checkpoint{});
  EXPECT_EQ(m->round(), Maintainer::Round::kWorked);
  EXPECT_EQ(status().floor, operator_checkpoint.position);
  EXPECT_EQ(m->metrics().checkpoints.load(), 1u);
  EXPECT_EQ(m->metrics().floor_advances.load(), 2u);
  EXPECT_EQ(m->metrics().refused.load(), 0u);
  EXPECT_NE(m->metrics().text().find("\ntransit_maintain_history_floor " + std::to_string(operator_checkpoint.position.value) + "\n"),
            std::string::npos);
}

// Without the opt-in the trim pass does nothing at all, even asked to
// checkpoint: no command, no refusal, the floor at 0.
TEST_F(MaintainerTest, WithoutTheOptInTheMaintainerNeitherCheckpointsNorTrimsNorIsRefused) {
  for (int i = 0; i < 12; ++i) accept(*admin_, CreateRole{{numbered("r", i)}, std::nullopt});
  auto m = maintainer(30, 130, /*create=*/true, /*checkpoint_every=*/2);
  const Position before = position();
  EXPECT_EQ(m->round(), Maintainer::Round::kIdle);
  EXPECT_EQ(m->round(), Maintainer::Round::kIdle);
  EXPECT_EQ(position(), before);
  EXPECT_EQ(answer<CheckpointStatus>(*admin_, CheckpointQuery{}), (CheckpointStatus{Position{0}, std::nullopt}));
  EXPECT_EQ(m->metrics().checkpoints.load(), 0u);
  EXPECT_EQ(m->metrics().refused.load(), 0u);
  EXPECT_EQ(m->metrics().history_floor.load(), 0u);
}

// Decision 181: with a storage interval the maintainer fences once per
// interval of trusted time - recording the read-lease grace once a grace has
// passed since the stored fence - and compacts at most compacts_per_run
// leaves a run, the most needy first (decision 183); between runs it sends
// nothing, and a fence by someone else puts the next run an interval after it.
TEST_F(MaintainerTest, TheStoragePassFencesOncePerIntervalRecordsTheGraceAndCompactsWhatNeedsIt) {
  initialized(7);
  initialized(8);
  principal(30, 130, RealmScope{}, maintain::kRequiredPermissions);
  maintain::Options o;
  o.client = options(30, 130);
  o.idle = std::chrono::milliseconds(1);
  o.storage_every = std::chrono::milliseconds(10'000);
  o.compacts_per_run = 1;
  Maintainer m(o, clock_);
  ASSERT_TRUE(m.authenticate().ok());
  const auto storage = [&] { return answer<StorageStatus>(*admin_, StorageQuery{}); };

  EXPECT_EQ(m.round(), Maintainer::Round::kWorked);  // the first run is due at once
  StorageStatus s = storage();
  EXPECT_EQ(s.epoch, 1u);
  EXPECT_EQ(s.grace_below, 0u);  // no earlier fence to wait out
  EXPECT_EQ(s.compaction_cursor, 1u);
  const Position after_first = position();
  clock_.set(clock_.now_ms() + 9'999);
  EXPECT_EQ(m.round(), Maintainer::Round::kIdle);  // not due: nothing sent
  EXPECT_EQ(position(), after_first);

  clock_.set(clock_.now_ms() + 1);  // an interval, short of the grace: a fence that records none
  EXPECT_EQ(m.round(), Maintainer::Round::kWorked);
  s = storage();
  EXPECT_EQ(s.epoch, 2u);
  EXPECT_EQ(s.grace_below, 0u);
  EXPECT_EQ(s.compaction_cursor, 2u);

  // An administrator's fence: the next run is an interval after it, not after the maintainer's.
  clock_.set(clock_.now_ms() + 5'000);
  accept(*admin_, StorageFence{2, false});
  clock_.set(clock_.now_ms() + 9'000);
  EXPECT_EQ(m.round(), Maintainer::Round::kIdle);
  EXPECT_EQ(storage().epoch, 3u);

  clock_.set(clock_.trusted() + kReadLeaseGraceMs);  // a grace past the stored fence: recorded
  EXPECT_EQ(m.round(), Maintainer::Round::kWorked);
  s = storage();
  EXPECT_EQ(s.epoch, 4u);
  EXPECT_EQ(s.grace_below, 3u);
  EXPECT_EQ(s.compaction_cursor, 3u);
  EXPECT_EQ(m.metrics().storage_runs.load(), 3u);
  EXPECT_EQ(m.metrics().fences.load(), 3u);
  EXPECT_EQ(m.metrics().compactions.load(), 3u);
  EXPECT_EQ(m.metrics().refused.load(), 0u);
  EXPECT_NE(m.metrics().text().find("\ntransit_maintain_storage_runs_total 3\n"), std::string::npos);
  EXPECT_NE(m.metrics().text().find("transit_maintain_storage{field=\"grace_below\"} 3\n"), std::string::npos);
}

// Without a storage interval (the library's default) the maintainer neither fences nor compacts.
TEST_F(MaintainerTest, WithoutAStorageIntervalTheMaintainerNeitherFencesNorCompacts) {
  initialized(7);
  auto m = maintainer(30, 130);
  clock_.set(clock_.trusted() + Millis{10 * kReadLeaseGraceMs.value});
  m->round();
  const auto s = answer<StorageStatus>(*admin_, StorageQuery{});
  EXPECT_EQ(s.epoch, 0u);
  EXPECT_EQ(s.compaction_cursor, 0u);
  EXPECT_EQ(m->metrics().storage_runs.load(), 0u);
}

// Decision 183: a storage run compacts the leaves the node lists as most
// needing it - most needy first, at most compacts_per_run - and never one
// written only once since its last relocation; the needs are stored, so a
// restarted node (and a new maintainer) go on from exactly where they were.
TEST_F(MaintainerTest, TheStoragePassCompactsTheMostNeedyLeavesFirstAndARestartGoesOnFromTheStoredNeeds) {
  initialized(7);
  initialized(8);
  const ResourceId notes = resource("notes");
  process(notes, Pid{9});
  const Id generation = ok<ProcessChanged>(admin_->submit(Own{Pid{9}, 1})).generation;
  const auto write = [&](std::vector<std::string> keys) {
    Turn t{Pid{9}, generation, std::nullopt, notes, std::nullopt, {}, {}, {}, {}, std::nullopt};
    for (const auto& k : keys) t.mutations.items.push_back({key(k), value("v")});
    accept(*admin_, t);
  };
  write({"hot", "warm", "cold"});
  write({"hot", "warm"});
  write({"hot"});
  principal(30, 130, RealmScope{}, maintain::kRequiredPermissions);  // its record: one version
  const auto needs = [&] { return answer<CompactionNeeds>(*admin_, CompactionNeedsQuery{}).leaves.items; };
  const auto in_order = [](std::vector<LeafNeed> v) {  // most needy first, ties in leaf key order
    std::sort(v.begin(), v.end(), [](const LeafNeed& a, const LeafNeed& b) {
      return a.need != b.need ? a.need > b.need : node::leaf_key(a.leaf) < node::leaf_key(b.leaf);
    });
    return v;
  };
  const auto listed = [](const std::vector<LeafNeed>& v, const StorageLeaf& leaf) {
    return std::any_of(v.begin(), v.end(), [&](const LeafNeed& n) { return n.leaf == leaf; });
  };
  const auto start = [&] {
    maintain::Options o;
    o.client = options(30, 130);
    o.idle = std::chrono::milliseconds(1);
    o.storage_every = std::chrono::milliseconds(10'000);
    o.compacts_per_run = 3;
    auto m = std::make_unique<Maintainer>(o, clock_);
    EXPECT_TRUE(m->authenticate().ok());
    return m;
  };
  auto m = start();

  const std::vector<LeafNeed> before = needs();
  ASSERT_GE(before.size(), 6u);
  EXPECT_EQ(before[0].leaf, StorageLeaf{PrincipalLeaf{PrincipalId{1}}});  // the root signed every command
  EXPECT_TRUE(listed(before, EntryLeaf{notes, key("hot")}));
  EXPECT_TRUE(listed(before, EntryLeaf{notes, key("warm")}));
  EXPECT_FALSE(listed(before, EntryLeaf{notes, key("cold")}));  // one write: nothing to gather
  EXPECT_GT(before[2].need, 2u);  // so the maintainer's own record (2 once it has fenced) is not among the first three
  EXPECT_EQ(m->round(), Maintainer::Round::kWorked);
  EXPECT_EQ(answer<StorageStatus>(*admin_, StorageQuery{}).compaction_cursor, 3u);
  // The first three went; the maintainer's record gained its fence and three compactions.
  std::vector<LeafNeed> expected(before.begin() + 3, before.end());
  expected.push_back({PrincipalLeaf{PrincipalId{30}}, 1 + 1 + 3});
  expected = in_order(expected);
  EXPECT_EQ(needs(), expected);

  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(needs(), expected);  // stored with the decisions
  m = start();
  clock_.set(clock_.now_ms() + 10'000);
  EXPECT_EQ(m->round(), Maintainer::Round::kWorked);
  // Its fence made the maintainer's record the most needy: it and the next two went,
  // and the two compactions after its own are its record's two versions since.
  std::vector<LeafNeed> next(expected.begin() + 3, expected.end());
  EXPECT_EQ(expected[0].leaf, StorageLeaf{PrincipalLeaf{PrincipalId{30}}});
  next.push_back({PrincipalLeaf{PrincipalId{30}}, 2});
  EXPECT_EQ(needs(), in_order(next));

  // Run after run until a run finds nothing worth it: never the cold entry.
  for (int run = 0; run < 16 && !needs().empty(); ++run) {
    clock_.set(clock_.now_ms() + 10'000);
    m->round();
  }
  EXPECT_EQ(needs(), std::vector<LeafNeed>{});
  // Its first write was a need of 1, which is not stored (decision 183): the
  // restart forgot it, so one more write is 1 again and two are a candidate.
  write({"cold"});
  EXPECT_FALSE(listed(needs(), EntryLeaf{notes, key("cold")}));
  write({"cold"});
  const auto cold = needs();
  ASSERT_TRUE(listed(cold, EntryLeaf{notes, key("cold")}));
  EXPECT_EQ(std::find_if(cold.begin(), cold.end(), [&](const LeafNeed& n) {
              return n.leaf == StorageLeaf{EntryLeaf{notes, key("cold")}};
            })->need,
            2u);
  EXPECT_EQ(m->metrics().refused.load(), 0u);
}

}  // namespace
}  // namespace cowboy::transit
