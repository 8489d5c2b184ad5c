#include "cip11/pending.h"

#include "cip11/body_codec.h"
#include "common/codec.h"
#include "common/crypto.h"

namespace cowboy::cip11 {

template <typename V> void fields(V& v, PendingSelectionV1& r) {
  v(r.version), v(r.job_id), v(r.submitted_at), v(r.selection_state_height), v(r.committee_size),
      v(r.submission_epoch), v(r.submission_view), v(r.seed_epoch), v(r.seed_view), v(r.seed_delay_views),
      v(r.candidates_snapshot_root);
}

Bytes encode(const PendingSelectionV1& record) { return body::encode(record); }

Res<PendingSelectionV1> decode_pending_selection(ByteView stored) {
  auto record = body::decode<PendingSelectionV1>(stored);
  if (record && record->version != 1) return Err{Errc::kUnknownVariant};
  return record;
}

Bytes32 pending_by_job_key(const JobId& job_id) {
  return crypto::keccak256({as_bytes("cip11:pending-selection:v1:job"), job_id.value});
}

Bytes pending_due_round_index_key(const PendingSelectionV1& r) {
  codec::Writer w;
  w.raw("cip11:pending-selection:v1:due-round");
  w.u64(r.seed_epoch.value);
  w.u64(r.seed_view.value);
  w.u64(r.submitted_at.value);
  w.raw(r.job_id.value);
  return std::move(w).take();
}

}  // namespace cowboy::cip11
