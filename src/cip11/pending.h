// PendingSelectionV1 (§9.2): the record an M > 1 job leaves in its submission
// block until the seed for its absolute round r_seed is committed. Stored as
// deterministic CBOR with unsigned keys 0..10 in declaration order, under
//   pending_by_job_key          = keccak256("cip11:pending-selection:v1:job" || job_id)
//   pending_due_round_index_key = "cip11:pending-selection:v1:due-round" || seed_epoch_be8 ||
//                                 seed_view_be8 || submitted_at_be8 || job_id
#pragma once

#include "cip11/errc.h"
#include "cip11/ids.h"
#include "common/bytes.h"

namespace cowboy::cip11 {

struct PendingSelectionV1 {
  std::uint8_t version = 1;
  JobId job_id{};
  Height submitted_at{};                     // S
  Height selection_state_height{};           // T = S
  std::uint32_t committee_size = 0;          // M
  RoundEpoch submission_epoch{};             // r_S = Round(submission_epoch, submission_view)
  View submission_view{};
  RoundEpoch seed_epoch{};                   // r_seed = advance_round(r_S, K)
  View seed_view{};
  std::uint64_t seed_delay_views = 0;        // K
  Bytes32 candidates_snapshot_root{};
  bool operator==(const PendingSelectionV1&) const = default;
};

Bytes encode(const PendingSelectionV1& record);
/// Strict: the CBOR profile, exactly keys 0..10, version 1.
Res<PendingSelectionV1> decode_pending_selection(ByteView stored);

Bytes32 pending_by_job_key(const JobId& job_id);
Bytes pending_due_round_index_key(const PendingSelectionV1& record);

}  // namespace cowboy::cip11
