// Signing preimages, identifiers and digests (§4.2, §7, §10, §11.1;
// docs/protocol.md §B). Each preimage is
//     domain_string || canonical(object) without its trailing `signature` field
// and each id is keccak256 of the preimage.
#pragma once

#include "cbqs/wire/frames.h"
#include "cbqs/wire/verbs.h"
#include "common/crypto.h"
#include "common/result.h"

namespace cowboy::cbqs {

inline constexpr std::string_view kStreamIdDomain = "cbqs/stream-id/v2";
inline constexpr std::string_view kGrantDomain = "cbqs/stream-grant/v2";
inline constexpr std::string_view kCheckpointDomain = "cbqs/checkpoint/v2";
inline constexpr std::string_view kSessionProofDomain = "cbqs/session-proof/v2";
inline constexpr std::string_view kRecordDomain = "cbqs/record/v2";
inline constexpr std::string_view kRecordsDigestDomain = "cbqs/records-digest/v2";
inline constexpr std::string_view kRoomLaneDomain = "cowboy/room-lane/v1";

Bytes stream_grant_signing_bytes_v2(const StreamGrantV2& grant);
Bytes checkpoint_signing_bytes_v2(const CheckpointReceiptV2& receipt);
Bytes session_proof_signing_bytes_v2(const SessionProofV2& proof);

Bytes32 stream_id(const Bytes32& chain_instance_id, const Address& owner, std::uint64_t owner_nonce);
Bytes32 grant_id(const StreamGrantV2& grant);
Bytes32 checkpoint_id(const CheckpointReceiptV2& receipt);

Bytes32 record_digest(const RecordHeaderV2& header, ByteView payload);
struct RecordView {
  RecordHeaderV2 header;
  ByteView payload;
};
/// record_digest of each record; hashed together (crypto::keccak256_many), so
/// a batch costs a fraction of hashing its records one by one.
std::vector<Bytes32> record_digests(std::span<const RecordView> records);
/// keccak256("cbqs/records-digest/v2" || count_u32_be || digest...)
Bytes32 records_digest(std::span<const Bytes32> record_digests);

/// commitment = keccak256(domain || room_id || u8(kind) [|| seat_id])
Bytes32 room_lane_commitment(const RoomLaneV2& room);
/// lane_id = u64_be(commitment[0..8])
LaneId room_lane_id(const RoomLaneV2& room);

// ---- signing and verification (Ed25519) -------------------------------------
Signature sign_ed25519(const crypto::Ed25519Seed& seed, ByteView message);
bool verify(const SigningPublicKey& key, ByteView message, const Signature& sig);
SigningPublicKey ed25519_public_key(const crypto::Ed25519Seed& seed);

void sign_grant(StreamGrantV2& grant, const crypto::Ed25519Seed& admin_seed);

/// What a stream's admin grants a holder (the fields of a StreamGrantV2 that
/// are not the stream's): every verb on every lane and group, 1 MiB messages
/// and 256 MiB/s unless set otherwise.
struct GrantTerms {
  std::uint16_t verbs = verb::kAll;
  LaneScope lanes = LaneScopeAny{};
  GroupScope groups = GroupScopeAny{};
  std::uint64_t not_before_ms = 0;
  std::uint64_t expires_at_ms = 0;
  std::uint32_t max_message_bytes = 1'048'576;
  std::uint64_t max_append_bytes_per_sec = 268'435'456;
  Bytes32 nonce{};
};
/// The one way a grant is made (the CLI's mint-grant, cbqsd --dev, the
/// testbed): `stream`'s chain, id and generation, the holder's key, the terms,
/// signed by the admin seed.
StreamGrantV2 mint_grant(const StreamRecordV2& stream, const SigningPublicKey& holder, GrantTerms terms,
                         const crypto::Ed25519Seed& admin_seed);
void sign_proof(SessionProofV2& proof, const crypto::Ed25519Seed& holder_seed);
void sign_checkpoint(CheckpointReceiptV2& receipt, const crypto::Ed25519Seed& provider_seed);

// ---- §10 checkpoint verification: three verdicts ----------------------------
enum class CheckpointVerdict : std::uint8_t { kValid, kInvalid, kUnverifiable };

/// The key a receipt at `snapshot_height` resolves to under the provider record,
/// or nullopt when none does (the receipt predates the rotation before last).
std::optional<SigningPublicKey> resolve_checkpoint_key(const ProviderRecordV2& provider,
                                                       std::uint64_t snapshot_height);
/// kInvalid also covers a receipt whose provider is not `provider.provider`.
CheckpointVerdict verify_checkpoint(const CheckpointReceiptV2& receipt, const ProviderRecordV2& provider);

}  // namespace cowboy::cbqs
