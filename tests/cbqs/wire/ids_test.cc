// Identifiers, digests, signing preimages and the §10 checkpoint verdicts.
#include "cbqs/wire/ids.h"

#include <gtest/gtest.h>

#include "samples.h"

namespace cowboy::cbqs {
namespace {

using testing::filled20;
using testing::filled32;

Bytes be64(std::uint64_t v) {
  Bytes b(8);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
  return b;
}

TEST(Ids, StreamIdIsKeccakOfDomainChainOwnerNonce) {
  Bytes32 chain = filled32(0x10);
  Address owner = filled20(0x11);
  Bytes preimage = concat({as_bytes("cbqs/stream-id/v2"), chain, owner, be64(42)});
  EXPECT_EQ(preimage.size(), 17u + 32 + 20 + 8);
  EXPECT_EQ(stream_id(chain, owner, 42), crypto::keccak256(preimage));
  EXPECT_NE(stream_id(chain, owner, 42), stream_id(chain, owner, 43));
}

TEST(Ids, GrantPreimageIsDomainThenCanonicalGrantWithoutSignature) {
  StreamGrantV2 g = testing::sample_grant();
  Bytes canonical = encode(g);
  Bytes expected = concat({as_bytes("cbqs/stream-grant/v2"), ByteView(canonical).first(canonical.size() - 65)});
  EXPECT_EQ(stream_grant_signing_bytes_v2(g), expected);
  EXPECT_EQ(grant_id(g), crypto::keccak256(expected));
  // The signature is not part of its own preimage: re-signing keeps the id.
  StreamGrantV2 resigned = g;
  resigned.signature.bytes[0] ^= 1;
  EXPECT_EQ(grant_id(resigned), grant_id(g));
  // Every signed field is: changing one changes the id.
  StreamGrantV2 other = g;
  other.verbs ^= 1;
  EXPECT_NE(grant_id(other), grant_id(g));
}

TEST(Ids, GrantSignatureVerifiesUnderTheAdminKeyOnly) {
  StreamGrantV2 g = testing::sample_grant();
  auto admin = ed25519_public_key(filled32(0x90));
  EXPECT_TRUE(verify(admin, stream_grant_signing_bytes_v2(g), g.signature));
  EXPECT_FALSE(verify(g.holder_signing_key, stream_grant_signing_bytes_v2(g), g.signature));
  g.expires_at_ms += 1;
  EXPECT_FALSE(verify(admin, stream_grant_signing_bytes_v2(g), g.signature));
}

TEST(Ids, DistinctDomainsSeparateThePreimages) {
  EXPECT_EQ(session_proof_signing_bytes_v2(SessionProofV2{}).size(), 21u + 1 + 5 * 32);
  EXPECT_EQ(checkpoint_signing_bytes_v2(CheckpointReceiptV2{}).size(), 18u + 1 + 32 + 32 + 20 + 8 + 8 + 32 + 32 + 8 + 8);
  for (auto a : {kGrantDomain, kCheckpointDomain, kSessionProofDomain})
    for (auto b : {kGrantDomain, kCheckpointDomain, kSessionProofDomain})
      if (a != b) {
        EXPECT_FALSE(a.starts_with(b)) << a << " has prefix " << b;
      }
}

TEST(Ids, SessionProofSignsUnderTheHolderKey) {
  SessionProofV2 p;
  p.grant_id = filled32(1);
  p.session_id = filled32(2);
  p.challenge = filled32(3);
  sign_proof(p, filled32(0x70));
  auto holder = ed25519_public_key(filled32(0x70));
  EXPECT_TRUE(verify(holder, session_proof_signing_bytes_v2(p), p.signature));
  p.challenge[0] ^= 1;
  EXPECT_FALSE(verify(holder, session_proof_signing_bytes_v2(p), p.signature));
}

TEST(Ids, RecordDigestAndRecordsDigest) {
  RecordHeaderV2 h{filled32(0x30), LaneId{3}};
  Bytes payload{'h', 'i'};
  Bytes32 expected = crypto::keccak256(
      concat({as_bytes("cbqs/record/v2"), encode(h), crypto::keccak256(payload)}));
  EXPECT_EQ(record_digest(h, payload), expected);

  Bytes32 d1 = record_digest(h, payload), d2 = record_digest(RecordHeaderV2{filled32(0x30), LaneId{4}}, payload);
  Bytes32 digests[] = {d1, d2};
  Bytes preimage = concat({as_bytes("cbqs/records-digest/v2"), Bytes{0, 0, 0, 2}, d1, d2});
  EXPECT_EQ(records_digest(digests), crypto::keccak256(preimage));
  Bytes32 reversed[] = {d2, d1};
  EXPECT_NE(records_digest(reversed), records_digest(digests));
}

TEST(Ids, RecordDigestsOfABatchEqualEachRecordsDigest) {
  // 19 records: two full 8-lane passes and a partial one; payloads of mixed
  // sizes (the first pass mixes one- and three-block payloads) and lanes.
  std::vector<Bytes> payloads;
  for (std::size_t i = 0; i < 19; ++i) payloads.push_back(Bytes(i % 3 == 0 ? 300 : 17 * i, static_cast<std::uint8_t>(i)));
  std::vector<RecordView> batch;
  for (std::size_t i = 0; i < payloads.size(); ++i) batch.push_back({RecordHeaderV2{filled32(0x30), LaneId{i % 4}}, payloads[i]});
  auto digests = record_digests(batch);
  ASSERT_EQ(digests.size(), batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i)
    EXPECT_EQ(digests[i], record_digest(batch[i].header, batch[i].payload)) << "record " << i;
  EXPECT_TRUE(record_digests({}).empty());
}

TEST(Ids, RoomLaneIdsFollowTheSection11_1Derivation) {
  Bytes32 room = filled32(0x33), seat = filled32(0x55);
  auto first8 = [](const Bytes32& c) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | c[i];
    return v;
  };
  Bytes one{1}, three{3};
  EXPECT_EQ(room_lane_id(RoomMessages{room}).value,
            first8(crypto::keccak256(concat({as_bytes("cowboy/room-lane/v1"), room, one}))));
  EXPECT_EQ(room_lane_id(RoomInbox{room, seat}).value,
            first8(crypto::keccak256(concat({as_bytes("cowboy/room-lane/v1"), room, three, seat}))));
  EXPECT_NE(room_lane_id(RoomInbox{room, seat}), room_lane_id(RoomInbox{room, filled32(0x56)}));
}

class CheckpointVerdicts : public ::testing::Test {
 protected:
  // Provider rotated from the previous key (since 1,000) to the current (since 4,000).
  ProviderRecordV2 provider = testing::sample_provider();
  CheckpointReceiptV2 receipt_at(std::uint64_t height, std::uint8_t key_seed) {
    CheckpointReceiptV2 r = testing::sample_checkpoint();
    r.provider = provider.provider;
    r.snapshot_height = height;
    sign_checkpoint(r, filled32(key_seed));
    return r;
  }
};

TEST_F(CheckpointVerdicts, CurrentKeyWindowIsValid) {
  EXPECT_EQ(verify_checkpoint(receipt_at(4'000, 0xc0), provider), CheckpointVerdict::kValid);
  EXPECT_EQ(verify_checkpoint(receipt_at(9'999, 0xc0), provider), CheckpointVerdict::kValid);
}

TEST_F(CheckpointVerdicts, PreviousKeyWindowIsEquallyValid) {
  EXPECT_EQ(verify_checkpoint(receipt_at(1'000, 0xd0), provider), CheckpointVerdict::kValid);
  EXPECT_EQ(verify_checkpoint(receipt_at(3'999, 0xd0), provider), CheckpointVerdict::kValid);
}

TEST_F(CheckpointVerdicts, WrongKeyForTheWindowIsInvalid) {
  EXPECT_EQ(verify_checkpoint(receipt_at(4'000, 0xd0), provider), CheckpointVerdict::kInvalid);
  EXPECT_EQ(verify_checkpoint(receipt_at(2'000, 0xc0), provider), CheckpointVerdict::kInvalid);
}

TEST_F(CheckpointVerdicts, BelowThePreviousKeyIsUnverifiableNotInvalid) {
  EXPECT_EQ(verify_checkpoint(receipt_at(999, 0xd0), provider), CheckpointVerdict::kUnverifiable);
  provider.previous_signing_key.reset();
  EXPECT_EQ(verify_checkpoint(receipt_at(3'999, 0xd0), provider), CheckpointVerdict::kUnverifiable);
}

TEST_F(CheckpointVerdicts, AReceiptFromAnotherProviderIsRejected) {
  auto r = receipt_at(4'000, 0xc0);
  r.provider = filled20(0x01);
  sign_checkpoint(r, filled32(0xc0));
  EXPECT_EQ(verify_checkpoint(r, provider), CheckpointVerdict::kInvalid);
}

}  // namespace
}  // namespace cowboy::cbqs
