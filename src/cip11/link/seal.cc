#include "cip11/link/seal.h"

#include <cstring>

namespace cowboy::cip11 {

bool placement_allowed(FrameType type, Role sender, StreamKind stream, bool first_on_stream) {
  const bool control = stream == StreamKind::kControl, runner = sender == Role::kRunner;
  switch (type) {
    case FrameType::kHello:
    case FrameType::kHelloAck:
    case FrameType::kGoodbye: return control;
    case FrameType::kHeartbeatPing:
    case FrameType::kBackpressureSignal:
    case FrameType::kCapabilityDelta: return control && runner;
    case FrameType::kHeartbeatPong:
    case FrameType::kPresenceReceipt: return control && !runner;
    case FrameType::kJobAssignment: return !control && !runner && first_on_stream;
    case FrameType::kJobCancel: return !control && !runner && !first_on_stream;
    case FrameType::kJobAck:
    case FrameType::kJobProgress:
    case FrameType::kJobResult:
    case FrameType::kJobResultCommit: return !control && runner && !first_on_stream;
  }
  return false;
}

namespace {

template <std::size_t N>
void put(std::array<std::uint8_t, N>& out, const Bytes& signature) {
  std::memcpy(out.data(), signature.data(), N);  // the signer's scheme gives exactly N bytes
}

// The preimage a signed frame's signature covers, with the sender's role as
// its signer; nullopt for frames without one (and JobAssignment, below).
std::optional<Preimage> preimage_of(const Frame& frame, Role sender, const BoundConnection& c) {
  const ConnectionBinding& b = c.binding;
  const Bytes32& id = c.id;
  const PubKey &runner = b.runner, &validator = b.validator;
  if (const auto* f = std::get_if<HeartbeatPing>(&frame)) return heartbeat_ping_preimage(id, runner, validator, *f);
  if (const auto* f = std::get_if<HeartbeatPong>(&frame)) return heartbeat_pong_preimage(id, validator, runner, *f);
  if (const auto* f = std::get_if<BackpressureSignal>(&frame)) return control_preimage(id, runner, validator, *f);
  if (const auto* f = std::get_if<CapabilityDelta>(&frame)) return control_preimage(id, runner, validator, *f);
  if (const auto* f = std::get_if<JobAck>(&frame)) return job_ack_preimage(id, runner, validator, *f);
  if (const auto* f = std::get_if<JobCancel>(&frame)) return job_cancel_preimage(id, validator, runner, *f);
  if (const auto* f = std::get_if<Goodbye>(&frame))
    return goodbye_preimage(id, sender, key_of(b, sender), key_of(b, peer_role(sender)), *f);
  return std::nullopt;
}

Preimage assignment_preimage(const JobAssignment& a, const ConnectionBinding& b) {
  return job_assignment_preimage(b.chain_id, a.job_id, a.job_spec_hash, a.assignment_height, a.deadline_block, b.runner,
                                 b.validator);
}

// The signature a signed frame carries, as bytes.
ByteView signature_of(const Frame& frame) {
  return std::visit(
      [](const auto& f) -> ByteView {
        using F = std::decay_t<decltype(f)>;
        if constexpr (requires { f.signed_.size(); }) return ByteView(f.signed_);
        else if constexpr (requires { f.validator_signed.size(); }) return ByteView(f.validator_signed);
        else if constexpr (std::is_same_v<F, Goodbye>) return f.signed_ ? ByteView(f.signed_->bytes) : ByteView();
        else return ByteView();
      },
      frame);
}

}  // namespace

Preimage fill_assignment(JobAssignment& a, const ConnectionBinding& binding) {
  a.job_spec_hash = job_spec_hash(a.job_spec);
  a.runner_pubkey = binding.runner;
  a.validator_pubkey = binding.validator;
  Preimage pre = assignment_preimage(a, binding);
  a.assignment_hash = pre.digest();
  return pre;
}

/// A receipt names the connection's two keys and offer; the chain, not the
/// connection, is in its preimage (§8.3: the network's chain_id).
void bind_receipt(PresenceReceipt& r, const ConnectionBinding& b) {
  r.validator_pubkey = b.validator;
  r.runner_pubkey = b.runner;
  r.subset_epoch = b.subset_epoch;
  r.validator_set_hash = b.validator_set_hash;
}

void seal(Frame& frame, const Signer& me, const BoundConnection& connection) {
  if (auto* r = std::get_if<PresenceReceipt>(&frame)) {
    bind_receipt(*r, connection.binding);
    *r = sign_receipt(me, connection.binding.chain_id, std::move(*r));
    return;
  }
  if (auto* a = std::get_if<JobAssignment>(&frame)) {
    put(a->validator_signed, me.sign(fill_assignment(*a, connection.binding)));
    return;
  }
  auto pre = preimage_of(frame, me.role(), connection);
  if (!pre) return;
  const Bytes signature = me.sign(*pre);
  std::visit(
      [&](auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, Goodbye>) f.signed_ = Sig{signature};
        else if constexpr (requires { f.signed_.size(); }) put(f.signed_, signature);
        else if constexpr (requires { f.validator_signed.size(); }) put(f.validator_signed, signature);
      },
      frame);
}

Res<Unit> check_seal(const Frame& frame, Role sender, const BoundConnection& connection) {
  const ConnectionBinding& binding = connection.binding;
  const PubKey& signer = key_of(binding, sender);
  if (const auto* r = std::get_if<PresenceReceipt>(&frame)) {
    PresenceReceipt bound = *r;
    bind_receipt(bound, binding);
    if (bound != *r) return Err{Errc::kReceiptMismatch};
    return verify_receipt(binding.chain_id, *r);
  }
  if (const auto* a = std::get_if<JobAssignment>(&frame)) {
    if (a->runner_pubkey != binding.runner || a->validator_pubkey != binding.validator ||
        a->job_spec_hash != job_spec_hash(a->job_spec))
      return Err{Errc::kAssignmentMismatch};
    const Preimage pre = assignment_preimage(*a, binding);
    if (a->assignment_hash != pre.digest()) return Err{Errc::kAssignmentMismatch};
    return verify(pre, signer, ByteView(a->validator_signed));
  }
  auto pre = preimage_of(frame, sender, connection);
  if (!pre) return Unit{};
  return verify(*pre, signer, signature_of(frame));
}

}  // namespace cowboy::cip11
