// The life of every job this runner holds, from its assignment to the receipt
// of its last transaction (§10.1-§10.5): which state each one is in and which
// events move it. Pure: no I/O, no clock, no threads - heights come in as
// arguments. runner.cc asks it first at each event (a push, a chain read's
// answer, a task's return, a receipt, a cancel, a block) and does the I/O its
// answer names: the reads, the signing, the journal's write, the frames.
//
//   from            event                                    to
//   -               push, a slot free                        Verifying
//   -               polled, final, a task slot free          Running
//   -               polled, assignment_height not final      - (the next poll sees it again)
//   -               resume (after a restart, journal.h)      AwaitingCommit, AwaitingReveal or Revealed
//   Verifying       verified: assignment_height not final    Verifying, held: block() once it
//                   in the read's view, backed or not        is final asks for the read again
//   Verifying       verified: final, backed                  Running
//   Verifying       verified: final, not backed              gone (refused)
//   Verifying       cancel                                   gone
//   Running         finished: a result, M > 1                AwaitingCommit, then commit_signed
//   Running         finished: a result, M = 1                AwaitingReveal, then reveal_signed at once
//   Running         finished: no result, or cancelled        gone (a cancel only marks it)
//   AwaitingCommit  its commitment's receipt                 AwaitingReveal, its window read
//   AwaitingCommit  its commitment superseded                AwaitingCommit, signed again
//   AwaitingReveal  block(), no read under way               AwaitingReveal, its window read
//   AwaitingReveal  checked: open                            reveal_signed: Revealed
//   AwaitingReveal  checked: settled on the chain            gone
//   Revealed        its reveal's receipt                     gone (completed)
//   Revealed        its reveal superseded                    AwaitingReveal, its window read
//
// A cancel never drops a committed job: it still reveals (§10.5). An event a
// job's state cannot take - a receipt, a read's answer, a task's return or a
// signing for a job not held or not in the state that asks for it, a second
// life for a job held - is refused and changes nothing (job_cycle_test.cc:
// one test per transition, the refused ones included).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "cip11/ids.h"
#include "common/bytes.h"

namespace cowboy::cip11 {

enum class JobPhase : std::uint8_t {
  kVerifying,       // pushed: a chain read checks it against the chain's record
  kRunning,         // its task runs on the execution pool
  kAwaitingCommit,  // its commitment (M > 1) is signed and sent, not yet included
  kAwaitingReveal,  // its reveal (or direct result, M = 1) is owed: signed once the window is open
  kRevealed,        // its reveal is signed and sent, not yet included
};

/// What the cycle knows of one job.
struct JobState {
  JobPhase phase = JobPhase::kVerifying;
  Height assignment_height{};  // a pushed job's; a held one is read again once it is final
  std::uint32_t runners = 1;            // the committee size M, from the chain's record or the obligation
  bool held = false;       // Verifying: pushed ahead of what is final in this runner's view (choices 111, 159)
  bool checking = false;   // AwaitingReveal: a chain read for its reveal window is under way
  bool cancelled = false;  // a JobCancel came (§10.5): no result frames unless committed
  Bytes result;
  Bytes32 salt{};
  std::optional<Bytes32> commit_tx, reveal_tx;
};

class JobCycle {
 public:
  /// Whether a job enters.
  enum class Admit : std::uint8_t {
    kTaken,        // held now: a push Verifying, a polled job Running
    kAtCapacity,   // max_concurrent slots are taken
    kAlreadyHeld,  // this job_id is held already (refused: one life per job)
    kNotFinal,     // polled: assignment_height not final in this runner's view (not held)
  };
  /// A push the JobBook found new: Verifying if a slot is free, where
  /// verifying and running jobs each take one of `max_concurrent`.
  Admit push(const JobId& id, Height assignment_height, std::uint32_t max_concurrent);
  /// A job found by polling, its committee of `runners`: Running at once if
  /// its `assignment_height` is final at `final_at` (§10.1, as `verified`) and a
  /// task slot is free (its record came from the chain, so nothing to verify).
  Admit polled(const JobId& id, std::uint32_t runners, std::uint32_t max_concurrent, Height assignment_height,
               Height final_at);

  /// The answer to a push's verifying read.
  enum class Verdict : std::uint8_t {
    kStale,    // not held, or no longer Verifying (cancelled meanwhile): refused, nothing changes
    kHeld,     // assignment_height not final in the read's view: read again once it is
    kRefused,  // final, not backed: the job leaves (Reject(UnverifiableAssignment))
    kRun,      // final and backed: Running (ack Accepted, start the task)
  };
  /// `backed`: the chain's record matches the assignment (its committee of
  /// `runners`); `final_at`: the highest block final in this runner's view
  /// that the read proves (§10.1: nothing runs from an assignment height that
  /// is not finalized and applied in the runner's own view, docs/cip11.md
  /// choices 111, 159).
  Verdict verified(const JobId& id, bool backed, std::uint32_t runners, Height final_at);

  /// What a block asks for, per job in job_id order.
  struct Due {
    enum class What : std::uint8_t {
      kVerifyAgain,  // a held push whose assignment_height is now final
      kCheckReveal,  // an owed reveal with no read under way: read its window
    };
    JobId id{};
    What what{};
    bool operator==(const Due&) const = default;
  };
  /// A block is this runner's view now, and `final` the highest final block in it.
  std::vector<Due> block(Height final);

  /// What a returned task leads to.
  enum class Finish : std::uint8_t {
    kStale,    // not held, or not Running: refused, nothing changes
    kDropped,  // cancelled while it ran: the job leaves, nothing is sent (§10.5)
    kFailed,   // no result: the job leaves
    kCommit,   // M > 1: AwaitingCommit, sign the commitment (commit_signed)
    kReveal,   // M = 1: AwaitingReveal, sign the result at once (reveal_signed)
  };
  /// The task returned `result` (none: it failed); `salt` is what a result binds.
  Finish finished(const JobId& id, std::optional<Bytes> result, const Bytes32& salt);

  /// A commitment for an AwaitingCommit job is signed as `tx` (after its
  /// task, or again after the last one was superseded). False, and nothing
  /// changes, in any other state.
  bool commit_signed(const JobId& id, const Bytes32& tx);
  /// A reveal for an AwaitingReveal job is signed as `tx`: Revealed. False,
  /// and nothing changes, in any other state.
  bool reveal_signed(const JobId& id, const Bytes32& tx);

  /// The chain's answer to a reveal-window read.
  enum class Window : std::uint8_t {
    kUnread,   // the read failed: the next block reads again
    kSettled,  // the job is terminal on the chain
    kClosed,   // the next block could not include a reveal yet
    kOpen,     // the next block could include it (chain::reveal_allowed)
  };
  enum class Check : std::uint8_t {
    kStale,    // not held, or no read was under way: refused, nothing changes
    kWait,     // nothing to do until the next block
    kSettled,  // settled without this reveal: the job leaves, nothing more is sent
    kReveal,   // sign the reveal now (reveal_signed)
  };
  Check checked(const JobId& id, Window window);

  /// A receipt for transaction `tx`.
  struct Included {
    enum class What : std::uint8_t {
      kCommitment,  // the job is AwaitingReveal, its window read under way (checked)
      kReveal,      // the job is done and leaves
    };
    JobId id{};
    What what{};
    bool operator==(const Included&) const = default;
  };
  /// None when `tx` is no job's commitment while AwaitingCommit nor its
  /// reveal while Revealed.
  std::optional<Included> included(const Bytes32& tx);

  /// Transaction `tx` can never be included (another took its nonce).
  struct Superseded {
    enum class What : std::uint8_t {
      kCommitAgain,  // still AwaitingCommit: sign a new commitment (commit_signed)
      kCheckReveal,  // its reveal: AwaitingReveal again, its window read under way (checked)
    };
    JobId id{};
    What what{};
    bool operator==(const Superseded&) const = default;
  };
  /// None when `tx` is no job's commitment while AwaitingCommit nor its
  /// reveal while Revealed.
  std::optional<Superseded> superseded(const Bytes32& tx);

  /// A JobCancel for the job's assignment (§10.5).
  enum class Cancel : std::uint8_t {
    kUnknown,   // not held: refused
    kDropped,   // Verifying: the job leaves
    kStopping,  // Running: its task is told to stop; it leaves when the task returns
    kKept,      // committed or revealed: it still reveals
  };
  Cancel cancel(const JobId& id);

  /// Where a job owed from before a restart resumes (journal.h).
  enum class Resumed : std::uint8_t {
    kNothingOwed,  // its reveal was included: not held, its obligation can go
    kAwaitingCommit,
    kAwaitingReveal,
    kRevealed,
    kAlreadyHeld,  // refused: one obligation per job
  };
  /// `owed` holds the obligation's runners, result, salt and transactions;
  /// `retained` the transactions the journal still holds (no receipt seen).
  Resumed resume(const JobId& id, JobState owed, const std::set<Bytes32>& retained);

  bool holds(const JobId& id) const { return jobs_.contains(id); }
  /// The job's state; null when not held.
  const JobState* find(const JobId& id) const;
  std::uint32_t running() const { return count(JobPhase::kRunning); }
  std::uint32_t verifying() const { return count(JobPhase::kVerifying); }
  std::size_t size() const { return jobs_.size(); }

 private:
  std::uint32_t count(JobPhase phase) const;
  JobState* in(const JobId& id, JobPhase phase);

  std::map<JobId, JobState> jobs_;
};

}  // namespace cowboy::cip11
