#include "cip11/preimages.h"

#include "cip11/cbor.h"
#include "common/codec.h"
#include "common/crypto.h"

namespace cowboy::cip11 {
namespace {

Bytes32 text_hash_or_empty(const std::optional<std::string>& text) {
  cbor::Writer w;
  w.text(text ? *text : std::string_view{});  // None collapses to "" (0x60)
  return crypto::keccak256(w.bytes_so_far());
}

std::uint8_t byte(auto e) { return static_cast<std::uint8_t>(e); }

}  // namespace

Bytes32 connection_id(const ConnectionBinding& c) {
  codec::Writer w;
  w.raw("cowboy-cip11-connection-v1");
  w.u64(c.chain_id);
  w.u16(c.version);
  w.raw(c.runner.wire());
  w.raw(c.validator.wire());
  w.raw(c.validator_set_hash);
  w.u64(c.subset_epoch.value);
  w.raw(c.channel_binding);
  return crypto::keccak256(w.data());
}

Preimage hello_ack_preimage(std::uint64_t chain_id, std::uint16_t version, Role sender_role, const PubKey& sender,
                            Role recipient_role, const PubKey& recipient, const Bytes32& validator_set_hash,
                            Epoch subset_epoch, const Bytes32& peer_challenge_nonce,
                            const Bytes32& channel_binding) {
  codec::Writer w;
  w.u64(chain_id);
  w.u16(version);
  w.u8(byte(sender_role));
  w.raw(sender.wire());
  w.u8(byte(recipient_role));
  w.raw(recipient.wire());
  w.raw(validator_set_hash);
  w.u64(subset_epoch.value);
  w.raw(peer_challenge_nonce);
  w.raw(channel_binding);
  return {"cowboy-cip11-hello-ack-v1", sender_role, std::move(w).take()};
}

Preimage heartbeat_ping_preimage(const Bytes32& connection_id, const PubKey& runner, const PubKey& validator,
                                 const HeartbeatPing& ping) {
  codec::Writer w;
  w.raw(connection_id);
  w.raw(runner.wire());
  w.raw(validator.wire());
  w.u64(ping.block_height.value);
  w.u64(ping.nonce);
  return {"cowboy-cip11-heartbeat-ping-v1", Role::kRunner, std::move(w).take()};
}

Preimage heartbeat_pong_preimage(const Bytes32& connection_id, const PubKey& validator, const PubKey& runner,
                                 const HeartbeatPong& pong) {
  codec::Writer w;
  w.raw(connection_id);
  w.raw(validator.wire());
  w.raw(runner.wire());
  w.u64(pong.block_height.value);
  w.u64(pong.nonce_echo);
  w.boolean(pong.accepting_new);
  return {"cowboy-cip11-heartbeat-pong-v1", Role::kValidator, std::move(w).take()};
}

Preimage presence_receipt_preimage(std::uint64_t chain_id, const PresenceReceipt& r) {
  codec::Writer w;
  w.u64(chain_id);
  w.raw(r.validator_pubkey.wire());
  w.raw(r.runner_pubkey.wire());
  w.u64(r.subset_epoch.value);
  w.raw(r.validator_set_hash);
  w.u64(r.block_height.value);
  w.u64(r.nonce_echo);
  w.boolean(r.accepting_new);
  return {"cowboy-cip11-presence-receipt-v1", Role::kValidator, std::move(w).take()};
}

Preimage presence_view_preimage(std::uint64_t chain_id, const PresenceView& v) {
  codec::Writer w;
  w.u64(chain_id);
  w.raw(v.validator_pubkey.wire());
  w.u64(v.subset_epoch.value);
  w.raw(v.validator_set_hash);
  w.u64(v.height.value);
  w.u32(v.registry_size);
  w.u32(static_cast<std::uint32_t>(v.presence.size()));  // bounded by kMaxViewBytes
  w.raw(v.presence);
  return {"cowboy-cip11-presence-view-v1", Role::kValidator, std::move(w).take()};
}

namespace {
Preimage control(const Bytes32& connection_id, const PubKey& runner, const PubKey& validator, FrameType type,
                 Height block_height, const Bytes& canonical_body) {
  codec::Writer w;
  w.raw(connection_id);
  w.raw(runner.wire());
  w.raw(validator.wire());
  w.u8(byte(type));
  w.u64(block_height.value);
  w.raw(crypto::keccak256(canonical_body));
  return {"cowboy-cip11-control-v1", Role::kRunner, std::move(w).take()};
}
}  // namespace

Preimage control_preimage(const Bytes32& connection_id, const PubKey& runner, const PubKey& validator,
                          const BackpressureSignal& frame) {
  return control(connection_id, runner, validator, FrameType::kBackpressureSignal, frame.block_height,
                 canonical_frame_body(frame));
}

Preimage control_preimage(const Bytes32& connection_id, const PubKey& runner, const PubKey& validator,
                          const CapabilityDelta& frame) {
  return control(connection_id, runner, validator, FrameType::kCapabilityDelta, frame.block_height,
                 canonical_frame_body(frame));
}

Bytes32 job_spec_hash(ByteView job_spec) {
  const std::uint8_t version[1] = {kJobSpecVersion};
  return crypto::keccak256({as_bytes("cowboy/jobspec-hash/v1"), version, job_spec});
}

Preimage job_assignment_preimage(std::uint64_t chain_id, const JobId& job_id, const Bytes32& spec_hash,
                                 Height assignment_height, Height deadline_block,
                                 const PubKey& runner, const PubKey& validator) {
  codec::Writer w;
  w.u64(chain_id);
  w.raw(job_id.value);
  w.raw(spec_hash);
  w.u64(assignment_height.value);
  w.u64(deadline_block.value);
  w.raw(runner.wire());
  w.raw(validator.wire());
  return {"cowboy-cip11-job-assignment-v1", Role::kValidator, std::move(w).take()};
}

Preimage job_ack_preimage(const Bytes32& connection_id, const PubKey& runner, const PubKey& validator,
                          const JobAck& ack) {
  codec::Writer w;
  w.raw(connection_id);
  w.raw(ack.job_id.value);
  w.raw(ack.assignment_hash);
  w.raw(runner.wire());
  w.raw(validator.wire());
  w.u8(byte(ack.status.kind));
  w.u8(ack.status.kind == AckStatus::Kind::kReject ? byte(ack.status.reason) : kRejectReasonNotApplicable);
  w.raw(text_hash_or_empty(ack.reason));
  return {"cowboy-cip11-job-ack-v1", Role::kRunner, std::move(w).take()};
}

Preimage job_cancel_preimage(const Bytes32& connection_id, const PubKey& validator, const PubKey& runner,
                             const JobCancel& cancel) {
  codec::Writer w;
  w.raw(connection_id);
  w.raw(cancel.job_id.value);
  w.raw(cancel.assignment_hash);
  w.raw(validator.wire());
  w.raw(runner.wire());
  w.u8(byte(cancel.reason));
  return {"cowboy-cip11-job-cancel-v1", Role::kValidator, std::move(w).take()};
}

Preimage goodbye_preimage(const Bytes32& connection_id, Role sender_role, const PubKey& sender,
                          const PubKey& recipient, const Goodbye& goodbye) {
  codec::Writer w;
  w.raw(connection_id);
  w.raw(sender.wire());
  w.raw(recipient.wire());
  w.u8(byte(goodbye.reason));
  w.u64(goodbye.retry_after_blocks.value_or(0));  // None == Some(0)
  w.raw(text_hash_or_empty(goodbye.detail));
  return {"cowboy-cip11-goodbye-v1", sender_role, std::move(w).take()};
}

}  // namespace cowboy::cip11
