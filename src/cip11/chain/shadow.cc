#include "cip11/chain/shadow.h"

namespace cowboy::cip11::chain {
namespace {

std::tuple<RoundEpoch, View, JobId> pending_key(const JobId& job, const ShadowPending& p) {
  return {p.seed_epoch, p.seed_view, job};
}

}  // namespace

const ShadowRecord* ShadowBook::find(const JobId& job) const {
  auto it = records_.find(job);
  return it == records_.end() ? nullptr : &it->second;
}

std::vector<JobId> ShadowBook::pending_before(Round round) const {
  std::vector<JobId> out;
  for (const auto& [epoch, seed_view, job] : pending_) {
    // Named at S with its epoch open, a round is never after the one it maps
    // to once that epoch closed early: every job that may be due is here.
    if (!(Round{epoch, seed_view} < round)) break;
    out.push_back(job);
  }
  return out;
}

std::optional<Round> ShadowBook::oldest_pending_submission() const {
  std::optional<Round> out;
  for (const auto& [epoch, seed_view, job] : pending_) {
    const ShadowPending& p = *records_.at(job).pending;
    if (const Round r{p.submission_epoch, p.submission_view}; !out || r < *out) out = r;
  }
  return out;
}

void ShadowBook::apply(const std::vector<ShadowWrite>& writes) {
  for (const auto& w : writes) {
    if (auto it = records_.find(w.job_id); it != records_.end()) {
      if (it->second.pending) pending_.erase(pending_key(w.job_id, *it->second.pending));
      records_.erase(it);
    }
    if (!w.record) continue;
    if (w.record->pending) pending_.insert(pending_key(w.job_id, *w.record->pending));
    records_.emplace(w.job_id, *w.record);
  }
}

void ShadowBook::clear() {
  records_.clear();
  pending_.clear();
}

}  // namespace cowboy::cip11::chain
