// The rules every CIP-11 frame obeys after admission, in one place: which
// stream it travels on and in which direction (§6.1, §12.2), and its
// signature (§12.6), made by seal() and checked by check_seal() over the
// connection's bound identities.
#pragma once

#include "cip11/frames.h"
#include "cip11/preimages.h"
#include "cip11/receipt.h"

namespace cowboy::cip11 {

enum class StreamKind : std::uint8_t { kControl, kJob };

/// An admitted connection's identities and its §12.6 connection_id, which
/// every seal covers: hashed once at admission, not once per frame.
struct BoundConnection {
  explicit BoundConnection(const ConnectionBinding& b) : binding(b), id(connection_id(b)) {}
  ConnectionBinding binding;
  Bytes32 id;
};

/// §12.2 placement: Hello, HelloAck and Goodbye go both ways on the control
/// stream; Ping, Backpressure and CapabilityDelta go runner to validator on
/// it, Pong and PresenceReceipt the other way. A job stream opens with the validator's
/// JobAssignment and then carries the runner's JobAck, JobProgress,
/// JobResultCommit and JobResult, and the validator's JobCancel.
/// Anything else is Goodbye{ProtocolError}.
bool placement_allowed(FrameType type, Role sender, StreamKind stream, bool first_on_stream);

/// A JobAssignment's derived fields over the connection (§10.1): job_spec_hash,
/// the two keys and assignment_hash; returns the preimage it signs.
Preimage fill_assignment(JobAssignment& assignment, const ConnectionBinding& binding);

/// Fills the signature (and, for a JobAssignment, its derived fields:
/// job_spec_hash, assignment_hash, the two keys; for a PresenceReceipt, the
/// two keys and the connection's epoch and set hash) of a frame `me` sends on
/// the connection. Frames without a signature are left as they are.
void seal(Frame& frame, const Signer& me, const BoundConnection& connection);

/// Checks the signature of a frame the peer (of role `sender`) sent on the
/// connection; frames without one pass. A JobAssignment must also carry the
/// connection's two keys and the job_spec_hash and assignment_hash its
/// fields give (§10.1); the runner answers a failure with
/// JobAck{Reject(UnverifiableAssignment)}, every other failure drops the frame.
Res<Unit> check_seal(const Frame& frame, Role sender, const BoundConnection& connection);

}  // namespace cowboy::cip11
