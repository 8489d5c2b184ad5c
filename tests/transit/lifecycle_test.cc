// The rules a running process relies on, over real HTTP: its required
// dependencies change only while it and its borrowers are quiescent; a
// process whose dependency ends anyway is reported fenced and its views are
// not read; termination fences its undelivered outputs; an effect intent
// names an executor with effect permission and a finite deadline; and a
// delivery to a retired destination disposes of the output.
#include <gtest/gtest.h>

#include "state_fixture.h"

namespace cowboy::transit {
namespace {

class LifecycleTest : public StateTest {
 protected:
  Turn empty_turn(auto pid, Id generation) {
    return Turn{testing::id<Pid>(pid), generation, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  }
  /// `pid`, requiring each name, associated with its resource and initialized (generation 1).
  void process_with(auto pid_of, const std::vector<std::pair<std::string, ResourceId>>& required) {
    const Pid pid = testing::id<Pid>(pid_of);
    CreateProcess create{pid, {}};
    for (const auto& [name, r] : required) create.required.items.push_back({name});
    accept(*admin_, create);
    for (const auto& [name, r] : required) accept(*admin_, Associate{pid, {name}, r});
    accept(*admin_, Initialize{pid, 0});
  }
  struct Route {
    Id generation;  // process 7's, owned by the root
    Id first, second;
  };
  /// Processes 7 and 8, each with its own resource; 7 owned, and two outputs of it pending for 8.
  Route two_outputs_from_7_to_8() {
    process_with(7, {{"doc", resource("doc")}});
    process_with(8, {{"inbox", resource("inbox")}});
    const Id generation = ok<ProcessChanged>(admin_->submit(Own{Pid{7}, 1})).generation;
    Turn outputs = empty_turn(7, generation);
    outputs.outputs.items = {{Pid{8}, value("one")}, {Pid{8}, value("two")}};
    const auto published = ok<TurnPublished>(admin_->submit(outputs));
    return {generation, published.outputs.items.at(0), published.outputs.items.at(1)};
  }
  Rejection refused_as(Client& c, Command op, RejectionCode code, Reason reason) {
    auto r = refused(c.submit(std::move(op)));
    EXPECT_EQ(r.code, code) << name_of(reason);
    EXPECT_EQ(r.reason, reason);
    return r;
  }
};

// "Active": initialized, neither retired nor fenced, and owned (an executor
// may be in a turn) or holding admitted input not yet consumed. "Borrower" of
// a process: another process that requires a resource whose lifetime owner it is.
TEST_F(LifecycleTest, ARequiredResourceRetiresOnlyWhileItsDependentsAndTheirBorrowersAreQuiescent) {
  const ResourceId doc = resource("doc");
  const ResourceId lib = resource("lib");
  process_with(7, {{"doc", doc}, {"lib", lib}});
  const ResourceId shared = resource("shared", 7);  // owned by 7, required by 8: 8 borrows from 7
  process_with(8, {{"shared", shared}});
  const Id owned = ok<ProcessChanged>(admin_->submit(Own{Pid{7}, 1})).generation;

  // The owner is active: its required resource stays.
  refused_as(*admin_, RetireResource{lib}, RejectionCode::kConflict, Reason::kNotQuiescent);
  auto running = process_info(*admin_, 7);
  EXPECT_EQ(running.state, ProcessState::kOwned);
  accept(*admin_, empty_turn(7, owned));  // and it runs on

  // The owner quiescent (suspended, nothing admitted), its borrower owned: still refused.
  accept(*admin_, Suspend{Pid{7}, owned, clock_.trusted() + Millis{60'000}});
  accept(*admin_, Own{Pid{8}, 1});
  refused_as(*admin_, RetireResource{lib}, RejectionCode::kConflict, Reason::kNotQuiescent);
  // Both quiescent: the change is accepted, and the owner is fenced by it.
  accept(*admin_, Suspend{Pid{8}, 2, clock_.trusted() + Millis{60'000}});
  accept(*admin_, RetireResource{lib});
  EXPECT_EQ(process_info(*admin_, 7).state, ProcessState::kFenced);
  EXPECT_EQ(process_info(*admin_, 8).state, ProcessState::kSuspended);  // its own dependency is live
  refused_as(*admin_, Resume{Pid{7}, owned}, RejectionCode::kInvalidProposal, Reason::kMissingDependency);

  // Admitted input is work too: an idle process with a queued input is active.
  const ResourceId aux = resource("aux");
  process_with(9, {{"aux", aux}});
  accept(*admin_, Send{Pid{9}, value("queued")});
  refused_as(*admin_, RetireResource{aux}, RejectionCode::kConflict, Reason::kNotQuiescent);
  EXPECT_EQ(process_info(*admin_, 9).state, ProcessState::kIdle);
  // A resource no process requires retires at once, whatever the processes do.
  const ResourceId loose = resource("loose");
  accept(*admin_, Associate{Pid{9}, {"extra"}, loose});
  accept(*admin_, RetireResource{loose});
}

// A required dependency can still end without a command: its lifetime owner
// retires when its suspension expires. The dependent is then fenced: reported
// so (not "owned"), its views are not read, and it runs no turn.
TEST_F(LifecycleTest, AProcessWhoseDependencyEndedIsReportedFencedAndItsViewsAreNotRead) {
  const ResourceId doc = resource("doc");
  process_with(9, {});
  const ResourceId lib = resource("lib", 9);  // lives while process 9 does
  process_with(7, {{"doc", doc}, {"lib", lib}});
  const Id generation = ok<ProcessChanged>(admin_->submit(Own{Pid{7}, 1})).generation;
  Turn with_view = empty_turn(7, generation);
  with_view.resource = doc;
  with_view.mutations.items.push_back({key("a"), value("one")});
  with_view.views.items.push_back(doc);
  const Id view = ok<TurnPublished>(admin_->submit(with_view)).views.items.at(0);
  accept(*admin_, Send{Pid{7}, value("next")});
  EXPECT_EQ(answer<EntryBatch>(*admin_, ReadEntries{doc, std::nullopt, view, slots({"a"})}).view, view);

  const TrustedMs deadline = clock_.trusted() + Millis{1000};
  accept(*admin_, Suspend{Pid{9}, 1, deadline});
  clock_.set(deadline + Millis{1});  // 9 retires for good, and lib's lifetime ends with it

  auto fenced = process_info(*admin_, 7);
  EXPECT_EQ(fenced.state, ProcessState::kFenced);
  EXPECT_EQ(fenced.owner, std::optional<PrincipalId>(PrincipalId{1}));  // the recorded owner, no readiness claim
  EXPECT_FALSE(fenced.input);                     // its next input is not released
  // A listing shows the record, the read judges it now: not the same readiness claim.
  const auto listed = answer<ProcessPage>(*admin_, ListProcesses{std::nullopt}).items.items;
  const auto seven = std::find_if(listed.begin(), listed.end(), [](const ProcessSummary& p) { return p.pid == Pid{7}; });
  ASSERT_NE(seven, listed.end());
  EXPECT_EQ(seven->state, ProcessState::kOwned);
  // Every read through its view rechecks the dependencies.
  EXPECT_EQ(query_refused(*admin_, ReadEntries{doc, std::nullopt, view, slots({"a"})}).reason, Reason::kMissingDependency);
  EXPECT_EQ(query_refused(*admin_, ListEntries{ViewBasis{view}, std::nullopt, std::nullopt}).reason,
            Reason::kMissingDependency);
  EXPECT_EQ(query_refused(*admin_, ReadBlock{ViewBasis{view}, key("b"), std::nullopt}).reason, Reason::kMissingDependency);
  // The resource itself is still readable on its current basis: only its view is the process's.
  EXPECT_EQ(answer<EntryBatch>(*admin_, ReadEntries{doc, std::nullopt, std::nullopt, slots({"a"})}).revision, Revision{2});
  refused_as(*admin_, empty_turn(7, generation), RejectionCode::kInvalidProposal, Reason::kMissingDependency);
}

// Termination (here, an expired suspension) fences the unattempted work of
// the source at once: its undelivered outputs are never delivered.
TEST_F(LifecycleTest, TerminationFencesTheUndeliveredOutputsOfItsSource) {
  const auto [generation, first, second] = two_outputs_from_7_to_8();
  EXPECT_EQ(ok<Delivered>(admin_->submit(Deliver{first})).input, std::optional<Id>(1));

  const TrustedMs deadline = clock_.trusted() + Millis{1000};
  accept(*admin_, Suspend{Pid{7}, generation, deadline});
  clock_.set(deadline + Millis{1});
  EXPECT_EQ(process_info(*admin_, 7).state, ProcessState::kRetired);
  refused_as(*admin_, Deliver{second}, RejectionCode::kInvalidProposal, Reason::kSourceTerminated);
  EXPECT_EQ(process_info(*admin_, 8).tail, 1u);  // only the output delivered before termination
}

// A delivery into a retired destination admits nothing: the output is
// disposed of, its route released, and it cannot be resolved twice.
TEST_F(LifecycleTest, ADeliveryToARetiredDestinationDisposesOfTheOutputAndReleasesTheRoute) {
  const auto [generation, first, second] = two_outputs_from_7_to_8();
  refused_as(*admin_, Deliver{second}, RejectionCode::kConflict, Reason::kRouteOrder);

  const TrustedMs deadline = clock_.trusted() + Millis{1000};
  accept(*admin_, Suspend{Pid{8}, 1, deadline});
  clock_.set(deadline + Millis{1});
  const auto disposed = ok<Delivered>(admin_->submit(Deliver{first}));
  EXPECT_EQ(disposed.pid, Pid{8});
  EXPECT_FALSE(disposed.input);  // disposed of, not admitted
  EXPECT_FALSE(ok<Delivered>(admin_->submit(Deliver{second})).input);  // the route was released
  refused_as(*admin_, Deliver{first}, RejectionCode::kInvalidProposal, Reason::kResolved);
  const auto destination = process_info(*admin_, 8);
  EXPECT_EQ(destination.state, ProcessState::kRetired);
  EXPECT_EQ(destination.tail, 0u);  // nothing entered its mailbox
}

// An effect intent is captured only with an executor that holds `effect` at
// the caller's PID (within its own PID scope) and, since every process here
// is a finite caller, a reconciliation deadline after trusted time now.
TEST_F(LifecycleTest, AnEffectIntentNeedsAnExecutorWithEffectPermissionAndAFiniteDeadline) {
  const ResourceId doc = resource("doc");
  process_with(7, {{"doc", doc}});
  const Id generation = ok<ProcessChanged>(admin_->submit(Own{Pid{7}, 1})).generation;
  principal(30, 130, RealmScope{}, kInspect | kRead);              // no effect anywhere
  principal(31, 131, PidScope{Pid{7}}, kEffect);                        // effect at 7
  principal(32, 132, RealmScope{}, kEffect, /*pid_scope=*/8);      // effect, but scoped to 8
  principal(33, 133, PidScope{Pid{7}}, kEffect);
  accept(*admin_, RevokePrincipal{PrincipalId{33}, std::nullopt});
  const TrustedMs later = clock_.trusted() + Millis{60'000};
  const auto with_effect = [&](auto executor_of, std::optional<TrustedMs> deadline) {
    const PrincipalId executor = testing::id<PrincipalId>(executor_of);
    Turn t = empty_turn(7, generation);
    t.effect = EffectIntent{executor, deadline, Hex<256>{{1, 2, 3}}};
    return t;
  };
  refused_as(*admin_, with_effect(30, std::nullopt), RejectionCode::kInvalidProposal, Reason::kExecutorNotPermitted);
  refused_as(*admin_, with_effect(30, later), RejectionCode::kInvalidProposal, Reason::kExecutorNotPermitted);
  refused_as(*admin_, with_effect(32, later), RejectionCode::kInvalidProposal, Reason::kExecutorNotPermitted);
  refused_as(*admin_, with_effect(33, later), RejectionCode::kInvalidProposal, Reason::kExecutorNotPermitted);
  refused_as(*admin_, with_effect(99, later), RejectionCode::kInvalidProposal, Reason::kUnknownExecutor);
  refused_as(*admin_, with_effect(31, std::nullopt), RejectionCode::kInvalidProposal, Reason::kDeadlineRequired);
  refused_as(*admin_, with_effect(31, clock_.trusted()), RejectionCode::kInvalidProposal, Reason::kDeadlinePassed);
  const auto captured = ok<TurnPublished>(admin_->submit(with_effect(31, later)));
  EXPECT_EQ(captured.effect, std::optional<Id>(1));  // the first effect: every refusal above left nothing
}

}  // namespace
}  // namespace cowboy::transit
