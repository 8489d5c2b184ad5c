// The runner's job life cycle (cip11/runner/job_cycle.h), driven directly:
// one test per transition, the refused ones included.
#include "cip11/runner/job_cycle.h"

#include <gtest/gtest.h>

namespace cowboy::cip11 {
namespace {

using Admit = JobCycle::Admit;
using Verdict = JobCycle::Verdict;
using Due = JobCycle::Due;
using Finish = JobCycle::Finish;
using Window = JobCycle::Window;
using Check = JobCycle::Check;
using Included = JobCycle::Included;
using Superseded = JobCycle::Superseded;
using Cancel = JobCycle::Cancel;
using Resumed = JobCycle::Resumed;

Bytes32 h(std::uint8_t n) {
  Bytes32 b{};
  b.fill(n);
  return b;
}
const JobId kJob{h(1)}, kOther{h(2)};
const Bytes32 kCommitTx = h(0xc1), kRevealTx = h(0xd1), kSalt = h(0x5a);
const Bytes kResult = {'o', 'k'};

JobPhase phase(const JobCycle& c, const JobId& id) { return c.find(id)->phase; }

/// kJob pushed at assignment height 10 and verified, committee of `runners`: Running.
JobCycle running(std::uint32_t runners) {
  JobCycle c;
  EXPECT_EQ(c.push(kJob, Height{10}, 4), Admit::kTaken);
  EXPECT_EQ(c.verified(kJob, true, runners, Height{10}), Verdict::kRun);
  return c;
}
/// kJob with a committee of two, its commitment signed as kCommitTx.
JobCycle committed() {
  JobCycle c = running(2);
  EXPECT_EQ(c.finished(kJob, kResult, kSalt), Finish::kCommit);
  EXPECT_TRUE(c.commit_signed(kJob, kCommitTx));
  return c;
}
/// kJob with a committee of one, its result signed as kRevealTx.
JobCycle revealed() {
  JobCycle c = running(1);
  EXPECT_EQ(c.finished(kJob, kResult, kSalt), Finish::kReveal);
  EXPECT_TRUE(c.reveal_signed(kJob, kRevealTx));
  return c;
}
/// kJob's commitment included: its reveal owed, a window read under way.
JobCycle owed() {
  JobCycle c = committed();
  EXPECT_EQ(c.included(kCommitTx), (Included{kJob, Included::What::kCommitment}));
  return c;
}

// ---- push -------------------------------------------------------------------

TEST(Cip11JobCycle, APushOfANewJobIsVerifyingAtItsAssignmentHeight) {
  JobCycle c;
  EXPECT_EQ(c.push(kJob, Height{10}, 1), Admit::kTaken);
  ASSERT_TRUE(c.holds(kJob));
  EXPECT_EQ(phase(c, kJob), JobPhase::kVerifying);
  EXPECT_EQ(c.find(kJob)->assignment_height, Height{10});
  EXPECT_FALSE(c.find(kJob)->held);
  EXPECT_EQ(c.verifying(), 1u);
  EXPECT_EQ(c.running(), 0u);
}

TEST(Cip11JobCycle, APushIsRefusedWhenVerifyingAndRunningJobsTakeEverySlot) {
  JobCycle c;
  EXPECT_EQ(c.push(kJob, Height{10}, 2), Admit::kTaken);
  EXPECT_EQ(c.polled(kOther, 1, 2, Height{10}, Height{10}), Admit::kTaken);
  EXPECT_EQ(c.push(JobId{h(3)}, Height{10}, 2), Admit::kAtCapacity);  // one verifying + one running = 2
  EXPECT_FALSE(c.holds(JobId{h(3)}));
  EXPECT_EQ(c.size(), 2u);
}

TEST(Cip11JobCycle, APushOfAJobHeldAlreadyIsRefusedAndChangesNothing) {
  JobCycle c = running(1);
  EXPECT_EQ(c.push(kJob, Height{20}, 4), Admit::kAlreadyHeld);
  EXPECT_EQ(phase(c, kJob), JobPhase::kRunning);
  EXPECT_EQ(c.find(kJob)->assignment_height, Height{10});
}

// ---- polled -----------------------------------------------------------------

TEST(Cip11JobCycle, APolledJobRunsAtOnceWithItsCommittee) {
  JobCycle c;
  EXPECT_EQ(c.polled(kJob, 3, 1, Height{10}, Height{10}), Admit::kTaken);
  EXPECT_EQ(phase(c, kJob), JobPhase::kRunning);
  EXPECT_EQ(c.find(kJob)->runners, 3u);
  EXPECT_EQ(c.running(), 1u);
}

// §10.1 for the poll fallback: a job assigned above what is final in this
// runner's view is not run (a fork may drop its block) nor held; the next
// poll finds it again and runs it once its height is final (choice 159).
TEST(Cip11JobCycle, APolledJobWhoseHeightIsNotFinalIsNotRunUntilItIs) {
  JobCycle c;
  EXPECT_EQ(c.polled(kJob, 1, 4, Height{10}, Height{6}), Admit::kNotFinal);
  EXPECT_FALSE(c.holds(kJob));
  EXPECT_EQ(c.running(), 0u);
  EXPECT_EQ(c.polled(kJob, 1, 4, Height{10}, Height{9}), Admit::kNotFinal);
  EXPECT_EQ(c.polled(kJob, 1, 4, Height{10}, Height{10}), Admit::kTaken);
  EXPECT_EQ(phase(c, kJob), JobPhase::kRunning);
}

TEST(Cip11JobCycle, APolledJobIsRefusedOnlyWhenRunningJobsTakeEverySlot) {
  JobCycle c;
  EXPECT_EQ(c.push(kOther, Height{10}, 1), Admit::kTaken);
  // A verifying push does not count against a poll.
  EXPECT_EQ(c.polled(kJob, 1, 1, Height{10}, Height{10}), Admit::kTaken);
  EXPECT_EQ(c.polled(JobId{h(3)}, 1, 1, Height{10}, Height{10}), Admit::kAtCapacity);
  EXPECT_FALSE(c.holds(JobId{h(3)}));
}

TEST(Cip11JobCycle, APolledJobHeldAlreadyIsRefusedAndChangesNothing) {
  JobCycle c;
  EXPECT_EQ(c.push(kJob, Height{10}, 4), Admit::kTaken);
  EXPECT_EQ(c.polled(kJob, 1, 4, Height{10}, Height{10}), Admit::kAlreadyHeld);
  EXPECT_EQ(phase(c, kJob), JobPhase::kVerifying);
}

// ---- verified ---------------------------------------------------------------

TEST(Cip11JobCycle, ABackedPushRunsWithTheChainsCommittee) {
  JobCycle c;
  c.push(kJob, Height{10}, 4);
  EXPECT_EQ(c.verified(kJob, true, 2, Height{10}), Verdict::kRun);
  EXPECT_EQ(phase(c, kJob), JobPhase::kRunning);
  EXPECT_EQ(c.find(kJob)->runners, 2u);
  EXPECT_EQ(c.verifying(), 0u);
  EXPECT_EQ(c.running(), 1u);
}

TEST(Cip11JobCycle, AnUnbackedReadBelowTheAssignmentHeightHoldsThePush) {
  JobCycle c;
  c.push(kJob, Height{10}, 4);
  EXPECT_EQ(c.verified(kJob, false, 1, Height{9}), Verdict::kHeld);
  EXPECT_EQ(phase(c, kJob), JobPhase::kVerifying);
  EXPECT_TRUE(c.find(kJob)->held);
  EXPECT_EQ(c.verifying(), 1u);  // it keeps its slot
}

// docs/cip11.md choice 159: backed, but its assignment height not final in
// the read's view (several validators): held like a push ahead of the view,
// and read again once a block makes that height final.
TEST(Cip11JobCycle, ABackedPushWhoseHeightIsNotFinalYetIsHeldUntilItIs) {
  JobCycle c;
  c.push(kJob, Height{10}, 4);
  EXPECT_EQ(c.verified(kJob, true, 1, Height{9}), Verdict::kHeld);  // final through 9: block 10 applied, not final
  EXPECT_EQ(phase(c, kJob), JobPhase::kVerifying);
  EXPECT_TRUE(c.find(kJob)->held);
  EXPECT_TRUE(c.block(Height{9}).empty());
  EXPECT_EQ(c.block(Height{10}), (std::vector<Due>{{kJob, Due::What::kVerifyAgain}}));
  EXPECT_EQ(c.verified(kJob, true, 1, Height{10}), Verdict::kRun);
}

TEST(Cip11JobCycle, AnUnbackedReadAtOrPastTheAssignmentHeightRefusesThePush) {
  JobCycle c;
  c.push(kJob, Height{10}, 4);
  c.push(kOther, Height{10}, 4);
  EXPECT_EQ(c.verified(kJob, false, 1, Height{10}), Verdict::kRefused);
  EXPECT_EQ(c.verified(kOther, false, 1, Height{11}), Verdict::kRefused);
  EXPECT_EQ(c.size(), 0u);
}

TEST(Cip11JobCycle, AVerdictForAJobNotVerifyingIsStale) {
  JobCycle c = running(1);
  EXPECT_EQ(c.verified(kJob, false, 1, Height{20}), Verdict::kStale);  // Running: a second answer changes nothing
  EXPECT_EQ(phase(c, kJob), JobPhase::kRunning);
  EXPECT_EQ(c.verified(kOther, true, 1, Height{20}), Verdict::kStale);  // not held (cancelled meanwhile, say)
  EXPECT_FALSE(c.holds(kOther));
}

// ---- block ------------------------------------------------------------------

TEST(Cip11JobCycle, ABlockReleasesAHeldPushOnlyAtItsAssignmentHeight) {
  JobCycle c;
  c.push(kJob, Height{10}, 4);
  c.verified(kJob, false, 1, Height{8});
  EXPECT_TRUE(c.block(Height{9}).empty());
  EXPECT_EQ(c.block(Height{10}), (std::vector<Due>{{kJob, Due::What::kVerifyAgain}}));
  EXPECT_FALSE(c.find(kJob)->held);
  EXPECT_TRUE(c.block(Height{11}).empty());  // one read again, not one per block
}

TEST(Cip11JobCycle, ABlockStartsAWindowReadForAnOwedRevealNotASecondWhileOneIsUnderWay) {
  JobCycle c = committed();
  EXPECT_TRUE(c.block(Height{11}).empty());  // awaiting its commitment's receipt: nothing to read
  c = owed();                        // the receipt started one read
  EXPECT_TRUE(c.block(Height{11}).empty());
  EXPECT_EQ(c.checked(kJob, Window::kClosed), Check::kWait);
  EXPECT_EQ(c.block(Height{12}), (std::vector<Due>{{kJob, Due::What::kCheckReveal}}));
  EXPECT_TRUE(c.find(kJob)->checking);
  EXPECT_TRUE(c.block(Height{13}).empty());
}

// ---- finished ---------------------------------------------------------------

TEST(Cip11JobCycle, AResultOfACommitteeOfOneIsRevealedDirectly) {
  JobCycle c = running(1);
  EXPECT_EQ(c.finished(kJob, kResult, kSalt), Finish::kReveal);
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingReveal);
  EXPECT_EQ(c.find(kJob)->result, kResult);
  EXPECT_EQ(c.find(kJob)->salt, kSalt);
  EXPECT_EQ(c.running(), 0u);
}

TEST(Cip11JobCycle, AResultOfALargerCommitteeIsCommittedFirst) {
  JobCycle c = running(2);
  EXPECT_EQ(c.finished(kJob, kResult, kSalt), Finish::kCommit);
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingCommit);
  EXPECT_EQ(c.find(kJob)->result, kResult);
  EXPECT_FALSE(c.find(kJob)->commit_tx);
  EXPECT_EQ(c.running(), 0u);
}

TEST(Cip11JobCycle, ATaskWithoutAResultFailsAndTheJobLeaves) {
  JobCycle c = running(2);
  EXPECT_EQ(c.finished(kJob, std::nullopt, kSalt), Finish::kFailed);
  EXPECT_FALSE(c.holds(kJob));
}

TEST(Cip11JobCycle, ATaskReturnForAJobNotRunningIsStale) {
  JobCycle c;
  EXPECT_EQ(c.finished(kJob, kResult, kSalt), Finish::kStale);  // not held
  c = committed();
  EXPECT_EQ(c.finished(kJob, Bytes{'x'}, h(9)), Finish::kStale);  // returned already
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingCommit);
  EXPECT_EQ(c.find(kJob)->result, kResult);
}

// ---- signing ----------------------------------------------------------------

TEST(Cip11JobCycle, ACommitmentIsSignedOnlyWhileAwaitingIt) {
  JobCycle c = running(2);
  EXPECT_FALSE(c.commit_signed(kJob, kCommitTx));  // still running
  EXPECT_FALSE(c.commit_signed(kOther, kCommitTx));  // not held
  c.finished(kJob, kResult, kSalt);
  EXPECT_TRUE(c.commit_signed(kJob, kCommitTx));
  EXPECT_EQ(c.find(kJob)->commit_tx, kCommitTx);
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingCommit);
  EXPECT_FALSE(revealed().commit_signed(kJob, kCommitTx));
}

TEST(Cip11JobCycle, ARevealIsSignedOnlyWhileOwed) {
  JobCycle c = committed();
  EXPECT_FALSE(c.reveal_signed(kJob, kRevealTx));  // its commitment is not included yet
  EXPECT_FALSE(c.reveal_signed(kOther, kRevealTx));
  c = owed();
  EXPECT_TRUE(c.reveal_signed(kJob, kRevealTx));
  EXPECT_EQ(phase(c, kJob), JobPhase::kRevealed);
  EXPECT_EQ(c.find(kJob)->reveal_tx, kRevealTx);
  EXPECT_FALSE(c.reveal_signed(kJob, h(0xd2)));  // one reveal
  EXPECT_EQ(c.find(kJob)->reveal_tx, kRevealTx);
}

// ---- checked ----------------------------------------------------------------

TEST(Cip11JobCycle, AnOpenWindowRevealsAnOwedReveal) {
  JobCycle c = owed();
  EXPECT_EQ(c.checked(kJob, Window::kOpen), Check::kReveal);
  EXPECT_FALSE(c.find(kJob)->checking);
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingReveal);  // until reveal_signed
}

TEST(Cip11JobCycle, AClosedWindowOrAFailedReadWaitsForTheNextBlock) {
  JobCycle c = owed();
  EXPECT_EQ(c.checked(kJob, Window::kClosed), Check::kWait);
  EXPECT_FALSE(c.find(kJob)->checking);
  c.block(Height{12});
  EXPECT_EQ(c.checked(kJob, Window::kUnread), Check::kWait);
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingReveal);
}

TEST(Cip11JobCycle, AJobSettledWithoutItsRevealLeaves) {
  JobCycle c = owed();
  EXPECT_EQ(c.checked(kJob, Window::kSettled), Check::kSettled);
  EXPECT_FALSE(c.holds(kJob));
}

TEST(Cip11JobCycle, AWindowAnswerWithNoReadUnderWayIsStale) {
  JobCycle c = committed();
  EXPECT_EQ(c.checked(kJob, Window::kOpen), Check::kStale);
  EXPECT_EQ(c.checked(kJob, Window::kSettled), Check::kStale);
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingCommit);
  EXPECT_EQ(c.checked(kOther, Window::kOpen), Check::kStale);
}

// ---- included ---------------------------------------------------------------

TEST(Cip11JobCycle, ACommitmentsReceiptMakesTheRevealOwedAndReadsItsWindow) {
  JobCycle c = committed();
  EXPECT_EQ(c.included(kCommitTx), (Included{kJob, Included::What::kCommitment}));
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingReveal);
  EXPECT_TRUE(c.find(kJob)->checking);
}

TEST(Cip11JobCycle, ARevealsReceiptCompletesTheJob) {
  JobCycle c = revealed();
  EXPECT_EQ(c.included(kRevealTx), (Included{kJob, Included::What::kReveal}));
  EXPECT_FALSE(c.holds(kJob));
}

TEST(Cip11JobCycle, AReceiptOfNoJobsTransactionOrOneInAnotherStateIsRefused) {
  JobCycle c = committed();
  EXPECT_FALSE(c.included(h(0xee)));
  EXPECT_FALSE(c.included(kRevealTx));
  c = owed();
  EXPECT_FALSE(c.included(kCommitTx));  // a second receipt of the commitment
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingReveal);
  c.checked(kJob, Window::kOpen);
  c.reveal_signed(kJob, kRevealTx);
  EXPECT_FALSE(c.included(kCommitTx));  // revealed: the commitment's receipt moves nothing back
  EXPECT_EQ(phase(c, kJob), JobPhase::kRevealed);
}

// ---- superseded -------------------------------------------------------------

TEST(Cip11JobCycle, ASupersededCommitmentIsSignedAgain) {
  JobCycle c = committed();
  EXPECT_EQ(c.superseded(kCommitTx), (Superseded{kJob, Superseded::What::kCommitAgain}));
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingCommit);
  EXPECT_TRUE(c.commit_signed(kJob, h(0xc2)));
  EXPECT_EQ(c.find(kJob)->commit_tx, h(0xc2));
  EXPECT_EQ(c.find(kJob)->result, kResult);  // the same result and salt, a new nonce
  EXPECT_EQ(c.find(kJob)->salt, kSalt);
}

TEST(Cip11JobCycle, ASupersededRevealIsOwedAgainAndItsWindowRead) {
  JobCycle c = revealed();
  EXPECT_EQ(c.superseded(kRevealTx), (Superseded{kJob, Superseded::What::kCheckReveal}));
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingReveal);
  EXPECT_TRUE(c.find(kJob)->checking);
  EXPECT_EQ(c.checked(kJob, Window::kOpen), Check::kReveal);
  EXPECT_TRUE(c.reveal_signed(kJob, h(0xd2)));
}

TEST(Cip11JobCycle, ASupersededTransactionOfNoJobOrInAnotherStateIsRefused) {
  JobCycle c = owed();
  EXPECT_FALSE(c.superseded(kCommitTx));  // included already
  EXPECT_FALSE(c.superseded(h(0xee)));
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingReveal);
}

// ---- cancel -----------------------------------------------------------------

TEST(Cip11JobCycle, ACancelWhileVerifyingDropsTheJob) {
  JobCycle c;
  c.push(kJob, Height{10}, 4);
  EXPECT_EQ(c.cancel(kJob), Cancel::kDropped);
  EXPECT_FALSE(c.holds(kJob));
  EXPECT_EQ(c.verified(kJob, true, 1, Height{10}), Verdict::kStale);  // its read's answer comes too late
}

TEST(Cip11JobCycle, ACancelWhileRunningStopsTheTaskAndTheJobLeavesWhenItReturns) {
  JobCycle c = running(2);
  EXPECT_EQ(c.cancel(kJob), Cancel::kStopping);
  EXPECT_TRUE(c.find(kJob)->cancelled);
  EXPECT_EQ(c.running(), 1u);  // its thread is still taken
  EXPECT_EQ(c.finished(kJob, kResult, kSalt), Finish::kDropped);  // a result, but nothing committed: none sent
  EXPECT_FALSE(c.holds(kJob));
}

TEST(Cip11JobCycle, ACancelAfterTheCommitmentKeepsTheJobAndItStillReveals) {
  JobCycle c = committed();
  EXPECT_EQ(c.cancel(kJob), Cancel::kKept);
  EXPECT_EQ(c.included(kCommitTx), (Included{kJob, Included::What::kCommitment}));
  EXPECT_EQ(c.checked(kJob, Window::kOpen), Check::kReveal);
  EXPECT_TRUE(c.reveal_signed(kJob, kRevealTx));
  EXPECT_EQ(c.cancel(kJob), Cancel::kKept);
  EXPECT_EQ(c.included(kRevealTx), (Included{kJob, Included::What::kReveal}));
}

TEST(Cip11JobCycle, ACancelOfAJobNotHeldIsRefused) {
  JobCycle c = running(1);
  EXPECT_EQ(c.cancel(kOther), Cancel::kUnknown);
  EXPECT_FALSE(c.find(kJob)->cancelled);
}

// ---- resume -----------------------------------------------------------------

JobState obligation(std::optional<Bytes32> commit_tx, std::optional<Bytes32> reveal_tx) {
  return JobState{.runners = 2, .result = kResult, .salt = kSalt, .commit_tx = commit_tx, .reveal_tx = reveal_tx};
}

TEST(Cip11JobCycle, AResumedJobWhoseRevealWasIncludedOwesNothing) {
  JobCycle c;
  EXPECT_EQ(c.resume(kJob, obligation(kCommitTx, kRevealTx), {}), Resumed::kNothingOwed);
  EXPECT_FALSE(c.holds(kJob));
}

TEST(Cip11JobCycle, AResumedJobWithARetainedRevealAwaitsItsReceipt) {
  JobCycle c;
  EXPECT_EQ(c.resume(kJob, obligation(kCommitTx, kRevealTx), {kRevealTx}), Resumed::kRevealed);
  EXPECT_EQ(phase(c, kJob), JobPhase::kRevealed);
  EXPECT_EQ(c.included(kRevealTx), (Included{kJob, Included::What::kReveal}));
}

TEST(Cip11JobCycle, AResumedJobWithARetainedCommitmentAwaitsItsReceipt) {
  JobCycle c;
  EXPECT_EQ(c.resume(kJob, obligation(kCommitTx, std::nullopt), {kCommitTx}), Resumed::kAwaitingCommit);
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingCommit);
  EXPECT_EQ(c.find(kJob)->runners, 2u);
  EXPECT_EQ(c.included(kCommitTx), (Included{kJob, Included::What::kCommitment}));
}

TEST(Cip11JobCycle, AResumedJobWhoseCommitmentWasIncludedOwesItsRevealFromTheNextBlock) {
  JobCycle c;
  EXPECT_EQ(c.resume(kJob, obligation(kCommitTx, std::nullopt), {}), Resumed::kAwaitingReveal);
  EXPECT_EQ(phase(c, kJob), JobPhase::kAwaitingReveal);
  EXPECT_FALSE(c.find(kJob)->checking);
  EXPECT_EQ(c.block(Height{20}), (std::vector<Due>{{kJob, Due::What::kCheckReveal}}));
  EXPECT_EQ(c.checked(kJob, Window::kOpen), Check::kReveal);
  EXPECT_EQ(c.find(kJob)->result, kResult);
  EXPECT_EQ(c.find(kJob)->salt, kSalt);
}

TEST(Cip11JobCycle, AResumeOfAJobHeldAlreadyIsRefused) {
  JobCycle c = running(1);
  EXPECT_EQ(c.resume(kJob, obligation(kCommitTx, std::nullopt), {kCommitTx}), Resumed::kAlreadyHeld);
  EXPECT_EQ(phase(c, kJob), JobPhase::kRunning);
}

// ---- a whole life -------------------------------------------------------------

TEST(Cip11JobCycle, APushedJobOfACommitteeOfTwoLivesFromItsPushToItsRevealsReceipt) {
  JobCycle c;
  EXPECT_EQ(c.push(kJob, Height{10}, 1), Admit::kTaken);
  EXPECT_EQ(c.verified(kJob, false, 2, Height{9}), Verdict::kHeld);
  EXPECT_EQ(c.block(Height{10}), (std::vector<Due>{{kJob, Due::What::kVerifyAgain}}));
  EXPECT_EQ(c.verified(kJob, true, 2, Height{10}), Verdict::kRun);
  EXPECT_EQ(c.push(kOther, Height{10}, 1), Admit::kAtCapacity);
  EXPECT_EQ(c.finished(kJob, kResult, kSalt), Finish::kCommit);
  EXPECT_TRUE(c.commit_signed(kJob, kCommitTx));
  EXPECT_EQ(c.push(kOther, Height{10}, 1), Admit::kTaken);  // a committed job takes no slot
  EXPECT_EQ(c.included(kCommitTx), (Included{kJob, Included::What::kCommitment}));
  EXPECT_EQ(c.checked(kJob, Window::kClosed), Check::kWait);
  EXPECT_EQ(c.block(Height{12}), (std::vector<Due>{{kJob, Due::What::kCheckReveal}}));
  EXPECT_EQ(c.checked(kJob, Window::kOpen), Check::kReveal);
  EXPECT_TRUE(c.reveal_signed(kJob, kRevealTx));
  EXPECT_EQ(c.included(kRevealTx), (Included{kJob, Included::What::kReveal}));
  EXPECT_FALSE(c.holds(kJob));
  EXPECT_TRUE(c.holds(kOther));
}

}  // namespace
}  // namespace cowboy::cip11
