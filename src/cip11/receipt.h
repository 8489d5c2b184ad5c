// Mode A presence receipts (§8.3, §12.6): what a validator signs for a runner
// it holds a live connection to, and what a SubmitPresenceCertificate carries
// to the chain. No channel binding, so execution can verify it.
//
//   PresenceReceipt, deterministic CBOR (frames.h's body rules), a map keyed 0..7:
//     0 validator_pubkey    bytes(33)  Ed25519 wire PubKey (0x02 || key)
//     1 runner_pubkey       bytes(34)  secp256k1 wire PubKey (0x01 || compressed key)
//     2 subset_epoch        uint
//     3 validator_set_hash  bytes(32)
//     4 block_height        uint       the validator's head when it signed
//     5 nonce_echo          uint       the Ping's nonce it answers (signed, not checked on chain)
//     6 accepting_new       bool
//     7 validator_signed    bytes(64)  Ed25519 over the §12.6 presence-receipt domain
//
// The same bytes are the PresenceReceipt frame's body (type 0x14) and an
// entry of a certificate. The struct is with the other frame bodies (frames.h).
#pragma once

#include "cip11/frames.h"

namespace cowboy::cip11 {

/// The CapabilityDelta key by which a runner asks its validators for a
/// PresenceReceipt with each Pong (§8.3: "when a runner indicates it will seek
/// a Mode-A certificate"); removing it stops them (docs/cip11.md choice 73).
inline constexpr std::string_view kPresenceReceiptsCapability = "cip11/presence-receipts";

/// A receipt's encoding is at most this long (the largest is 208 bytes); a
/// decoder refuses a longer input before reading it.
inline constexpr std::size_t kMaxReceiptBytes = 256;

Bytes encode_receipt(const PresenceReceipt& receipt);
/// Strict: exactly the eight fields, in order, shortest forms. A
/// validator_pubkey that is not Ed25519 or a runner_pubkey that is not
/// secp256k1 is kRoleSchemeMismatch (§12.6: the role and the scheme agree).
Res<PresenceReceipt> decode_receipt(ByteView bytes);

/// `receipt` with validator_signed filled in by `validator` (whose key it must name).
PresenceReceipt sign_receipt(const Signer& validator, std::uint64_t chain_id, PresenceReceipt receipt);
/// The signature under receipt.validator_pubkey, with the executing network's chain_id.
Res<Unit> verify_receipt(std::uint64_t chain_id, const PresenceReceipt& receipt);

}  // namespace cowboy::cip11
