// The runner's deduplication of pushed assignments (§10.1, §10.2): at most one
// accepted assignment per job_id. A later valid push with byte-identical
// assignment fields is a Duplicate; one whose fields differ is
// Reject(UnverifiableAssignment), never a harmless duplicate.
#pragma once

#include <map>

#include "cip11/frames.h"

namespace cowboy::cip11 {

enum class PushVerdict : std::uint8_t {
  kNew,        // no assignment for this job_id yet: verify it, then accept or reject
  kDuplicate,  // identical to the one already taken
  kDiffers,    // same job_id, different assignment fields
};

/// The §10.1 byte-identical set, less assignment_hash: its §12.6 preimage
/// holds validator_pubkey, so it differs between validators by construction
/// (docs/cip11.md, "Services"). check_seal has recomputed it from the fields
/// compared here and the connection's validator key.
bool same_assignment(const JobAssignment& a, const JobAssignment& b);

class JobBook {
 public:
  PushVerdict classify(const JobAssignment& a) const;
  /// Takes `a` for its job_id (the one later pushes are compared with).
  void take(const JobAssignment& a) { taken_[a.job_id] = a; }
  /// Forgets a job_id whose verification failed, or that ended.
  void forget(const JobId& job_id) { taken_.erase(job_id); }
  bool holds(const JobId& job_id) const { return taken_.contains(job_id); }
  /// Forgets the assignments whose deadline_block is below `height`: the
  /// chain has moved on from them, and so have later pushes.
  void forget_ended(Height height) {
    std::erase_if(taken_, [&](const auto& e) { return e.second.deadline_block < height; });
  }

 private:
  std::map<JobId, JobAssignment> taken_;
};

}  // namespace cowboy::cip11
