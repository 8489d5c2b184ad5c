#include "cbqs/wire/ids.h"

#include "cbqs/wire/codec.h"

namespace cowboy::cbqs {

namespace {
constexpr std::size_t kSignatureBytes = 1 + 64;

// The signature is the last field of every signed object, fixed at 65 bytes,
// so "canonical without signature" is the canonical encoding minus its tail.
template <typename Signed>
Bytes signing_bytes(std::string_view domain, const Signed& object) {
  Bytes body = encode(object);
  std::size_t signed_bytes = body.size() - kSignatureBytes;
  Bytes out(domain.size() + signed_bytes);
  std::copy(domain.begin(), domain.end(), out.begin());
  std::copy_n(body.begin(), signed_bytes, out.begin() + static_cast<std::ptrdiff_t>(domain.size()));
  return out;
}

std::array<std::uint8_t, 8> be64(std::uint64_t v) {
  std::array<std::uint8_t, 8> out;
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
  return out;
}
}  // namespace

Bytes stream_grant_signing_bytes_v2(const StreamGrantV2& grant) { return signing_bytes(kGrantDomain, grant); }
Bytes checkpoint_signing_bytes_v2(const CheckpointReceiptV2& receipt) {
  return signing_bytes(kCheckpointDomain, receipt);
}
Bytes session_proof_signing_bytes_v2(const SessionProofV2& proof) {
  return signing_bytes(kSessionProofDomain, proof);
}

Bytes32 stream_id(const Bytes32& chain_instance_id, const Address& owner, std::uint64_t owner_nonce) {
  auto nonce = be64(owner_nonce);
  return crypto::keccak256({as_bytes(kStreamIdDomain), chain_instance_id, owner, nonce});
}
Bytes32 grant_id(const StreamGrantV2& grant) { return crypto::keccak256(stream_grant_signing_bytes_v2(grant)); }
Bytes32 checkpoint_id(const CheckpointReceiptV2& receipt) {
  return crypto::keccak256(checkpoint_signing_bytes_v2(receipt));
}

namespace {
// record_digest = keccak256(domain || canonical(header) || keccak256(payload))
void put_record_preimage(codec::Writer& w, const RecordHeaderV2& header, const Bytes32& payload_hash) {
  w.raw(kRecordDomain);
  put(w, header);
  w.fixed(payload_hash);
}
}  // namespace

Bytes32 record_digest(const RecordHeaderV2& header, ByteView payload) {
  codec::Writer w;
  put_record_preimage(w, header, crypto::keccak256(payload));
  return crypto::keccak256(w.data());
}

std::vector<Bytes32> record_digests(std::span<const RecordView> records) {
  std::vector<ByteView> views;
  views.reserve(records.size());
  for (const auto& r : records) views.push_back(r.payload);
  std::vector<Bytes32> hashes(records.size());
  crypto::keccak256_many(views, hashes);

  // Every preimage into one buffer, then a view of each.
  codec::Writer preimages;
  std::vector<std::size_t> ends;
  ends.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    put_record_preimage(preimages, records[i].header, hashes[i]);
    ends.push_back(preimages.size());
  }
  for (std::size_t i = 0, begin = 0; i < records.size(); begin = ends[i++])
    views[i] = ByteView(preimages.data()).subspan(begin, ends[i] - begin);
  crypto::keccak256_many(views, hashes);
  return hashes;
}

Bytes32 records_digest(std::span<const Bytes32> record_digests) {
  std::uint32_t n = static_cast<std::uint32_t>(record_digests.size());
  std::array<std::uint8_t, 4> count{static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
                                    static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
  Bytes preimage = concat({as_bytes(kRecordsDigestDomain), count});
  preimage.reserve(preimage.size() + 32 * record_digests.size());
  for (const auto& d : record_digests) preimage.insert(preimage.end(), d.begin(), d.end());
  return crypto::keccak256(preimage);
}

Bytes32 room_lane_commitment(const RoomLaneV2& room) {
  return std::visit(
      [](const auto& r) {
        std::array<std::uint8_t, 1> kind{std::decay_t<decltype(r)>::kTag};
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, RoomInbox>) {
          return crypto::keccak256({as_bytes(kRoomLaneDomain), r.room_id, kind, r.seat_id});
        } else {
          return crypto::keccak256({as_bytes(kRoomLaneDomain), r.room_id, kind});
        }
      },
      room);
}

LaneId room_lane_id(const RoomLaneV2& room) {
  Bytes32 commitment = room_lane_commitment(room);
  std::uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id = id << 8 | commitment[i];
  return LaneId{id};
}

Signature sign_ed25519(const crypto::Ed25519Seed& seed, ByteView message) {
  return Signature{KeyAlg::kEd25519, crypto::ed25519_sign(seed, message)};
}

bool verify(const SigningPublicKey& key, ByteView message, const Signature& sig) {
  if (key.alg != KeyAlg::kEd25519 || sig.alg != KeyAlg::kEd25519) return false;
  return crypto::ed25519_verify(key.key, message, sig.bytes);
}

SigningPublicKey ed25519_public_key(const crypto::Ed25519Seed& seed) {
  return SigningPublicKey{KeyAlg::kEd25519, crypto::ed25519_from_seed(seed).public_key};
}

void sign_grant(StreamGrantV2& grant, const crypto::Ed25519Seed& admin_seed) {
  grant.signature = sign_ed25519(admin_seed, stream_grant_signing_bytes_v2(grant));
}

StreamGrantV2 mint_grant(const StreamRecordV2& stream, const SigningPublicKey& holder, GrantTerms terms,
                         const crypto::Ed25519Seed& admin_seed) {
  StreamGrantV2 g;
  g.chain_instance_id = stream.chain_instance_id;
  g.stream_id = stream.stream_id;
  g.authorization_generation = stream.authorization_generation;
  g.grant_nonce = terms.nonce;
  g.holder_signing_key = holder;
  g.verbs = terms.verbs;
  g.lane_scope = std::move(terms.lanes);
  g.group_scope = std::move(terms.groups);
  g.not_before_ms = terms.not_before_ms;
  g.expires_at_ms = terms.expires_at_ms;
  g.max_message_bytes = terms.max_message_bytes;
  g.max_append_bytes_per_sec = terms.max_append_bytes_per_sec;
  sign_grant(g, admin_seed);
  return g;
}
void sign_proof(SessionProofV2& proof, const crypto::Ed25519Seed& holder_seed) {
  proof.signature = sign_ed25519(holder_seed, session_proof_signing_bytes_v2(proof));
}
void sign_checkpoint(CheckpointReceiptV2& receipt, const crypto::Ed25519Seed& provider_seed) {
  receipt.signature = sign_ed25519(provider_seed, checkpoint_signing_bytes_v2(receipt));
}

std::optional<SigningPublicKey> resolve_checkpoint_key(const ProviderRecordV2& provider,
                                                       std::uint64_t snapshot_height) {
  if (snapshot_height >= provider.signing_key_since) return provider.signing_key;
  if (provider.previous_signing_key && snapshot_height >= provider.previous_signing_key_since)
    return provider.previous_signing_key;
  return std::nullopt;
}

CheckpointVerdict verify_checkpoint(const CheckpointReceiptV2& receipt, const ProviderRecordV2& provider) {
  if (receipt.provider != provider.provider || receipt.chain_instance_id != provider.chain_instance_id)
    return CheckpointVerdict::kInvalid;
  auto key = resolve_checkpoint_key(provider, receipt.snapshot_height);
  if (!key) return CheckpointVerdict::kUnverifiable;
  return verify(*key, checkpoint_signing_bytes_v2(receipt), receipt.signature) ? CheckpointVerdict::kValid
                                                                               : CheckpointVerdict::kInvalid;
}

}  // namespace cowboy::cbqs
