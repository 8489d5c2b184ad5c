#include "cip11/runner/job_book.h"

namespace cowboy::cip11 {

bool same_assignment(const JobAssignment& a, const JobAssignment& b) {
  return a.job_id == b.job_id && a.job_spec == b.job_spec && a.job_spec_hash == b.job_spec_hash &&
         a.assignment_height == b.assignment_height &&
         a.deadline_block == b.deadline_block && a.runner_pubkey == b.runner_pubkey;
}

PushVerdict JobBook::classify(const JobAssignment& a) const {
  auto it = taken_.find(a.job_id);
  if (it == taken_.end()) return PushVerdict::kNew;
  return same_assignment(it->second, a) ? PushVerdict::kDuplicate : PushVerdict::kDiffers;
}

}  // namespace cowboy::cip11
