#include "cip11/runner/job_cycle.h"

namespace cowboy::cip11 {

JobCycle::Admit JobCycle::push(const JobId& id, Height assignment_height, std::uint32_t max_concurrent) {
  if (holds(id)) return Admit::kAlreadyHeld;
  if (running() + verifying() >= max_concurrent) return Admit::kAtCapacity;
  JobState& job = jobs_[id];
  job.phase = JobPhase::kVerifying;
  job.assignment_height = assignment_height;
  return Admit::kTaken;
}

JobCycle::Admit JobCycle::polled(const JobId& id, std::uint32_t runners, std::uint32_t max_concurrent,
                                 Height assignment_height, Height final_at) {
  if (holds(id)) return Admit::kAlreadyHeld;
  if (assignment_height > final_at) return Admit::kNotFinal;  // §10.1: a fork may drop it; the next poll sees it again
  if (running() >= max_concurrent) return Admit::kAtCapacity;  // the next poll sees it again
  JobState& job = jobs_[id];
  job.phase = JobPhase::kRunning;
  job.runners = runners;
  return Admit::kTaken;
}

JobCycle::Verdict JobCycle::verified(const JobId& id, bool backed, std::uint32_t runners, Height final_at) {
  JobState* job = in(id, JobPhase::kVerifying);
  if (!job) return Verdict::kStale;
  if (job->assignment_height > final_at) {  // §10.1: not final in this view, backed or not
    job->held = true;
    return Verdict::kHeld;
  }
  if (!backed) {
    jobs_.erase(id);
    return Verdict::kRefused;
  }
  job->held = false;
  job->phase = JobPhase::kRunning;
  job->runners = runners;
  return Verdict::kRun;
}

std::vector<JobCycle::Due> JobCycle::block(Height final) {
  std::vector<Due> due;
  for (auto& [id, job] : jobs_) {
    if (job.phase == JobPhase::kAwaitingReveal && !job.checking) {
      job.checking = true;
      due.push_back({id, Due::What::kCheckReveal});
    }
    if (job.phase == JobPhase::kVerifying && job.held && final >= job.assignment_height) {
      job.held = false;
      due.push_back({id, Due::What::kVerifyAgain});
    }
  }
  return due;
}

JobCycle::Finish JobCycle::finished(const JobId& id, std::optional<Bytes> result, const Bytes32& salt) {
  JobState* job = in(id, JobPhase::kRunning);
  if (!job) return Finish::kStale;
  if (job->cancelled || !result) {  // §10.5: nothing committed yet, so no result frames after a cancel
    const Finish why = job->cancelled ? Finish::kDropped : Finish::kFailed;
    jobs_.erase(id);
    return why;
  }
  job->result = std::move(*result);
  job->salt = salt;
  if (job->runners <= 1) {
    job->phase = JobPhase::kAwaitingReveal;
    return Finish::kReveal;
  }
  job->phase = JobPhase::kAwaitingCommit;
  return Finish::kCommit;
}

bool JobCycle::commit_signed(const JobId& id, const Bytes32& tx) {
  JobState* job = in(id, JobPhase::kAwaitingCommit);
  if (!job) return false;
  job->commit_tx = tx;
  return true;
}

bool JobCycle::reveal_signed(const JobId& id, const Bytes32& tx) {
  JobState* job = in(id, JobPhase::kAwaitingReveal);
  if (!job) return false;
  job->reveal_tx = tx;
  job->phase = JobPhase::kRevealed;
  return true;
}

JobCycle::Check JobCycle::checked(const JobId& id, Window window) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || !it->second.checking) return Check::kStale;
  JobState& job = it->second;
  job.checking = false;
  switch (window) {
    case Window::kUnread: return Check::kWait;
    case Window::kSettled: jobs_.erase(it); return Check::kSettled;
    case Window::kClosed: return Check::kWait;
    case Window::kOpen: return job.phase == JobPhase::kAwaitingReveal ? Check::kReveal : Check::kWait;
  }
  return Check::kWait;
}

std::optional<JobCycle::Included> JobCycle::included(const Bytes32& tx) {
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
    JobState& job = it->second;
    if (job.commit_tx == tx && job.phase == JobPhase::kAwaitingCommit) {
      job.phase = JobPhase::kAwaitingReveal;
      job.checking = true;
      return Included{it->first, Included::What::kCommitment};
    }
    if (job.reveal_tx == tx && job.phase == JobPhase::kRevealed) {
      const JobId id = it->first;
      jobs_.erase(it);
      return Included{id, Included::What::kReveal};
    }
  }
  return std::nullopt;
}

std::optional<JobCycle::Superseded> JobCycle::superseded(const Bytes32& tx) {
  for (auto& [id, job] : jobs_) {
    if (job.commit_tx == tx && job.phase == JobPhase::kAwaitingCommit) return Superseded{id, Superseded::What::kCommitAgain};
    if (job.reveal_tx == tx && job.phase == JobPhase::kRevealed) {
      job.phase = JobPhase::kAwaitingReveal;  // it was never included: one reveal, signed again
      job.checking = true;
      return Superseded{id, Superseded::What::kCheckReveal};
    }
  }
  return std::nullopt;
}

JobCycle::Cancel JobCycle::cancel(const JobId& id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Cancel::kUnknown;
  JobState& job = it->second;
  job.cancelled = true;
  switch (job.phase) {
    case JobPhase::kVerifying: jobs_.erase(it); return Cancel::kDropped;
    case JobPhase::kRunning: return Cancel::kStopping;  // dropped when its task returns (finished)
    case JobPhase::kAwaitingCommit:
    case JobPhase::kAwaitingReveal:
    case JobPhase::kRevealed: return Cancel::kKept;  // a committed job still reveals (§10.5)
  }
  return Cancel::kKept;
}

JobCycle::Resumed JobCycle::resume(const JobId& id, JobState owed, const std::set<Bytes32>& retained) {
  if (holds(id)) return Resumed::kAlreadyHeld;
  if (owed.reveal_tx && !retained.contains(*owed.reveal_tx)) return Resumed::kNothingOwed;  // its reveal was included
  owed.held = owed.checking = owed.cancelled = false;
  Resumed where;
  if (owed.reveal_tx) {
    owed.phase = JobPhase::kRevealed, where = Resumed::kRevealed;
  } else if (owed.commit_tx && retained.contains(*owed.commit_tx)) {
    owed.phase = JobPhase::kAwaitingCommit, where = Resumed::kAwaitingCommit;
  } else {
    owed.phase = JobPhase::kAwaitingReveal, where = Resumed::kAwaitingReveal;  // the next block reads its window
  }
  jobs_[id] = std::move(owed);
  return where;
}

const JobState* JobCycle::find(const JobId& id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

std::uint32_t JobCycle::count(JobPhase phase) const {
  std::uint32_t n = 0;
  for (const auto& [id, job] : jobs_) n += job.phase == phase ? 1 : 0;
  return n;
}

JobState* JobCycle::in(const JobId& id, JobPhase phase) {
  auto it = jobs_.find(id);
  return it == jobs_.end() || it->second.phase != phase ? nullptr : &it->second;
}

}  // namespace cowboy::cip11
