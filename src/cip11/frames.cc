#include "cip11/frames.h"

#include "cip11/body_codec.h"
#include "common/codec.h"

namespace cowboy::cip11 {

std::string_view goodbye_reason_name(GoodbyeReason r) {
  switch (r) {
    case GoodbyeReason::kUnsupportedVersion: return "UnsupportedVersion";
    case GoodbyeReason::kWrongChain: return "WrongChain";
    case GoodbyeReason::kAuthFailed: return "AuthFailed";
    case GoodbyeReason::kNotInSubset: return "NotInSubset";
    case GoodbyeReason::kOverlapExpired: return "OverlapExpired";
    case GoodbyeReason::kRateLimited: return "RateLimited";
    case GoodbyeReason::kProtocolError: return "ProtocolError";
    case GoodbyeReason::kDraining: return "Draining";
    case GoodbyeReason::kShutdown: return "Shutdown";
  }
  return "Unknown";
}

// Each body's schema is written once, as the list of its fields in declaration
// order; the encoder, the decoder and the field counter all walk that list.
template <typename V> void fields(V& v, Hello& f) {
  v(f.version), v(f.chain_id), v(f.validator_set_hash), v(f.subset_epoch), v(f.party_pubkey), v(f.party_role),
      v(f.block_height), v(f.challenge_nonce);
}
template <typename V> void fields(V& v, HelloAck& f) {
  v(f.version), v(f.chain_id), v(f.validator_set_hash), v(f.subset_epoch), v(f.party_pubkey), v(f.party_role),
      v(f.block_height), v(f.signed_challenge);
}
template <typename V> void fields(V& v, HeartbeatPing& f) { v(f.block_height), v(f.nonce), v(f.signed_); }
template <typename V> void fields(V& v, HeartbeatPong& f) {
  v(f.block_height), v(f.nonce_echo), v(f.accepting_new), v(f.validator_signed);
}
template <typename V> void fields(V& v, BackpressureSignal& f) {
  v(f.block_height), v(f.active_jobs), v(f.max_concurrent), v(f.accepting_new), v(f.reason), v(f.signed_);
}
template <typename V> void fields(V& v, CapabilityDelta& f) {
  v(f.block_height), v(f.added_capabilities), v(f.removed_capabilities), v(f.added_entitlements),
      v(f.removed_entitlements), v(f.signed_);
}
template <typename V> void fields(V& v, JobAssignment& f) {
  v(f.job_id), v(f.job_spec), v(f.job_spec_hash), v(f.assignment_height), v(f.assignment_hash), v(f.deadline_block),
      v(f.runner_pubkey), v(f.validator_pubkey), v(f.validator_signed);
}
template <typename V> void fields(V& v, JobAck& f) {
  v(f.job_id), v(f.assignment_hash), v(f.status), v(f.reason), v(f.signed_);
}
template <typename V> void fields(V& v, JobProgress& f) { v(f.job_id), v(f.fraction), v(f.detail); }
template <typename V> void fields(V& v, JobResult& f) { v(f.job_id), v(f.tx_bytes); }
template <typename V> void fields(V& v, JobCancel& f) {
  v(f.job_id), v(f.assignment_hash), v(f.reason), v(f.validator_signed);
}
template <typename V> void fields(V& v, JobResultCommit& f) { v(f.job_id), v(f.tx_bytes); }
template <typename V> void fields(V& v, Goodbye& f) {
  v(f.reason), v(f.detail), v(f.retry_after_blocks), v(f.signed_);
}
template <typename V> void fields(V& v, PresenceReceipt& f) {
  v(f.validator_pubkey), v(f.runner_pubkey), v(f.subset_epoch), v(f.validator_set_hash), v(f.block_height),
      v(f.nonce_echo), v(f.accepting_new), v(f.validator_signed);
}

namespace {

// Rules that span fields: the role, the key scheme and the signature length agree.
Res<Unit> check(const Hello& f) { return check_role(f.party_pubkey, f.party_role); }
Res<Unit> check(const HelloAck& f) {
  if (auto ok = check_role(f.party_pubkey, f.party_role); !ok) return ok;
  if (f.signed_challenge.bytes.size() != signature_bytes(scheme_of(f.party_role))) return Err{Errc::kBadSignatureLength};
  return Unit{};
}
Res<Unit> check(const JobAssignment& f) {
  if (auto ok = check_role(f.runner_pubkey, Role::kRunner); !ok) return ok;
  return check_role(f.validator_pubkey, Role::kValidator);
}
Res<Unit> check(const PresenceReceipt& f) {
  if (auto ok = check_role(f.validator_pubkey, Role::kValidator); !ok) return ok;
  return check_role(f.runner_pubkey, Role::kRunner);
}
Res<Unit> check(const JobProgress& f) {
  if (f.fraction > 100) return Err{Errc::kOutOfRange};
  return Unit{};
}
template <typename Body> Res<Unit> check(const Body&) { return Unit{}; }

template <typename Body> Res<Frame> decode_as(ByteView payload) {
  auto body = body::decode<Body>(payload);
  if (!body) return Err{body.error()};
  if (auto ok = check(*body); !ok) return Err{ok.error()};
  return Frame{std::move(*body)};
}

constexpr FrameType kTypes[] = {
    FrameType::kHello,          FrameType::kHelloAck,  FrameType::kHeartbeatPing,   FrameType::kHeartbeatPong,
    FrameType::kBackpressureSignal, FrameType::kCapabilityDelta, FrameType::kJobAssignment, FrameType::kJobAck,
    FrameType::kJobProgress,    FrameType::kJobResult, FrameType::kJobCancel,       FrameType::kJobResultCommit,
    FrameType::kGoodbye,        FrameType::kPresenceReceipt};
static_assert(std::size(kTypes) == std::variant_size_v<Frame>, "one type byte per Frame alternative, in order");

}  // namespace

FrameType type_of(const Frame& frame) { return kTypes[frame.index()]; }

Bytes encode_body(const Frame& frame) {
  return std::visit([](const auto& b) {
    return body::encode(b);
  }, frame);
}

Bytes encode_frame(const Frame& frame) {
  const Bytes body = encode_body(frame);
  const std::uint32_t length = static_cast<std::uint32_t>(1 + body.size());
  codec::Writer w(5 + body.size());
  w.u32(length);
  w.u8(static_cast<std::uint8_t>(type_of(frame)));
  w.raw(body);
  return std::move(w).take();
}

Res<Frame> decode_body(FrameType type, ByteView payload) {
  switch (type) {
    case FrameType::kHello: return decode_as<Hello>(payload);
    case FrameType::kHelloAck: return decode_as<HelloAck>(payload);
    case FrameType::kHeartbeatPing: return decode_as<HeartbeatPing>(payload);
    case FrameType::kHeartbeatPong: return decode_as<HeartbeatPong>(payload);
    case FrameType::kBackpressureSignal: return decode_as<BackpressureSignal>(payload);
    case FrameType::kCapabilityDelta: return decode_as<CapabilityDelta>(payload);
    case FrameType::kJobAssignment: return decode_as<JobAssignment>(payload);
    case FrameType::kJobAck: return decode_as<JobAck>(payload);
    case FrameType::kJobProgress: return decode_as<JobProgress>(payload);
    case FrameType::kJobResult: return decode_as<JobResult>(payload);
    case FrameType::kJobCancel: return decode_as<JobCancel>(payload);
    case FrameType::kJobResultCommit: return decode_as<JobResultCommit>(payload);
    case FrameType::kGoodbye: return decode_as<Goodbye>(payload);
    case FrameType::kPresenceReceipt: return decode_as<PresenceReceipt>(payload);
  }
  return Err{Errc::kUnknownFrameType};
}

Res<DecodedFrame> decode_frame(ByteView input) {
  if (input.size() < 4) return Err{Errc::kFrameTruncated};
  const std::uint32_t length = codec::Reader(input).u32();
  if (length == 0) return Err{Errc::kFrameEmpty};
  if (length > kMaxFrameBytes) return Err{Errc::kFrameTooLarge};
  if (input.size() - 4 < length) return Err{Errc::kFrameTruncated};
  // decode_body refuses a type byte outside the §12.2 table.
  auto frame = decode_body(static_cast<FrameType>(input[4]), input.subspan(5, length - 1));
  if (!frame) return Err{frame.error()};
  return DecodedFrame{std::move(*frame), 4 + static_cast<std::size_t>(length)};
}

Bytes canonical_frame_body(const BackpressureSignal& frame) {
  return body::encode(frame, body::field_count<BackpressureSignal>() - 1);  // `signed` is the last field
}

Bytes canonical_frame_body(const CapabilityDelta& frame) {
  return body::encode(frame, body::field_count<CapabilityDelta>() - 1);
}

}  // namespace cowboy::cip11
