#include "cip11/chain/state.h"

namespace cowboy::cip11::chain {

void DueIndex::set(const JobId& job, std::optional<Height> height, std::optional<Height> pending_since) {
  const std::optional<Due> due = height ? std::optional<Due>(Due{*height, pending_since}) : std::nullopt;
  if (auto it = of_job_.find(job); it != of_job_.end()) {
    if (due == it->second) return;
    by_height_.erase({it->second.height, job});
    if (const auto& s = it->second.pending_since; s && --pending_[*s] == 0) pending_.erase(*s);
    of_job_.erase(it);
  }
  if (!due) return;
  of_job_.emplace(job, *due);
  by_height_.emplace(due->height, job);
  if (due->pending_since) ++pending_[*due->pending_since];
}

std::vector<JobId> DueIndex::due_by(Height height) const {
  std::vector<JobId> out;
  for (auto it = by_height_.begin(); it != by_height_.end() && it->first <= height; ++it) out.push_back(it->second);
  return out;
}

std::vector<Height> DueIndex::pending_submissions() const {
  std::vector<Height> out;
  out.reserve(pending_.size());
  for (const auto& [submitted_at, n] : pending_) out.push_back(submitted_at);
  return out;
}

void State::commit() {
  runners.commit();
  jobs.commit();
  mru.commit();
  presence.commit();
  committed_registry_size_ = index.size();
  committed_jobs_submitted_ = jobs_submitted;
}

void State::rollback() {
  runners.rollback();
  jobs.rollback();
  mru.rollback();
  presence.rollback();
  if (index.size() != committed_registry_size_) {  // the index only grows: keep its committed prefix
    ActiveRunners kept;
    for (std::uint32_t i = 0; i < committed_registry_size_; ++i) kept.register_runner(index.at(i));
    index = std::move(kept);
  }
  jobs_submitted = committed_jobs_submitted_;
}

bool State::operator==(const State& other) const {
  return runners == other.runners && index == other.index && jobs == other.jobs && mru == other.mru &&
         presence == other.presence &&
         jobs_submitted == other.jobs_submitted;
}

}  // namespace cowboy::cip11::chain
