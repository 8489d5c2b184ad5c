// Every CIP-11 signed or hashed preimage of §12.6, in one place.
//
// A signature covers keccak256(domain || signer_role || scheme_id || fields)
// (identity.h Preimage); the functions here build `fields` for each domain.
// Scalars are big-endian (chain_id, heights, nonces, epochs u64; version u16);
// bools and enum discriminants one byte; *_pubkey the tagged wire bytes;
// optional strings the deterministic-CBOR text of the value, "" when absent.
#pragma once

#include <optional>
#include <string>

#include "cip11/frames.h"
#include "cip11/identity.h"
#include "cip11/presence_gossip.h"
#include "cip11/receipt.h"

namespace cowboy::cip11 {

/// The identities a connection is bound to once Hello/HelloAck succeed (§6.2).
struct ConnectionBinding {
  std::uint64_t chain_id = 0;
  std::uint16_t version = kProtocolVersion;
  PubKey runner;
  PubKey validator;
  Bytes32 validator_set_hash{};
  Epoch subset_epoch{};
  Bytes32 channel_binding{};  // TLS-Exporter("cowboy-cip11-handshake-v1", "", 32)
};

/// The bound key of the party with `role`.
inline const PubKey& key_of(const ConnectionBinding& c, Role role) { return role == Role::kRunner ? c.runner : c.validator; }
inline PubKey& key_of(ConnectionBinding& c, Role role) { return role == Role::kRunner ? c.runner : c.validator; }

/// keccak256("cowboy-cip11-connection-v1" || chain_id || version || runner_pubkey ||
///           validator_pubkey || validator_set_hash || subset_epoch || channel_binding)
Bytes32 connection_id(const ConnectionBinding& c);

/// Signed by the HelloAck's sender over the peer's challenge.
Preimage hello_ack_preimage(std::uint64_t chain_id, std::uint16_t version, Role sender_role, const PubKey& sender,
                            Role recipient_role, const PubKey& recipient, const Bytes32& validator_set_hash,
                            Epoch subset_epoch, const Bytes32& peer_challenge_nonce,
                            const Bytes32& channel_binding);

Preimage heartbeat_ping_preimage(const Bytes32& connection_id, const PubKey& runner, const PubKey& validator,
                                 const HeartbeatPing& ping);
Preimage heartbeat_pong_preimage(const Bytes32& connection_id, const PubKey& validator, const PubKey& runner,
                                 const HeartbeatPong& pong);

/// Mode A; no channel binding, so the chain can verify it. chain_id is the executing network's.
Preimage presence_receipt_preimage(std::uint64_t chain_id, const PresenceReceipt& receipt);

/// §8.2 Mode B presence gossip between validators (presence_gossip.h): every
/// field of the view but the signature, with the chain's chain_id first.
Preimage presence_view_preimage(std::uint64_t chain_id, const PresenceView& view);

/// The shared "cowboy-cip11-control-v1" domain; frame_type keeps the two frames apart.
Preimage control_preimage(const Bytes32& connection_id, const PubKey& runner, const PubKey& validator,
                          const BackpressureSignal& frame);
Preimage control_preimage(const Bytes32& connection_id, const PubKey& runner, const PubKey& validator,
                          const CapabilityDelta& frame);

/// JOB_SPEC_VERSION of the cowboy-protocol-codec encoding the `job_spec` bytes carry.
constexpr std::uint8_t kJobSpecVersion = 1;
/// keccak256("cowboy/jobspec-hash/v1" || JOB_SPEC_VERSION || job_spec), over the bytes as carried.
Bytes32 job_spec_hash(ByteView job_spec);

/// chain_id and the two keys are the connection's (§12.6 field origins).
/// assignment_hash = the digest of this preimage.
Preimage job_assignment_preimage(std::uint64_t chain_id, const JobId& job_id, const Bytes32& job_spec_hash,
                                 Height assignment_height, Height deadline_block,
                                 const PubKey& runner, const PubKey& validator);

Preimage job_ack_preimage(const Bytes32& connection_id, const PubKey& runner, const PubKey& validator,
                          const JobAck& ack);
Preimage job_cancel_preimage(const Bytes32& connection_id, const PubKey& validator, const PubKey& runner,
                             const JobCancel& cancel);
Preimage goodbye_preimage(const Bytes32& connection_id, Role sender_role, const PubKey& sender,
                          const PubKey& recipient, const Goodbye& goodbye);

}  // namespace cowboy::cip11
