// Strict decoding: every malformed input gets a typed error, never a crash,
// and no declared length is allocated before it is checked.
#include <gtest/gtest.h>

#include "samples.h"

namespace cowboy::cbqs {
namespace {

using testing::filled32;

template <typename T>
DecodeError decode_error(const Bytes& b) {
  auto r = decode<T>(b);
  return r.ok() ? DecodeError::kNone : r.error();
}

Bytes with_byte(Bytes b, std::size_t at, std::uint8_t value) {
  b.at(at) = value;
  return b;
}

TEST(Reject, VersionByteOtherThanTwoOnEveryVersionedObject) {
  const std::set<std::string> unversioned{"append_request", "group_ceilings", "subscription_source_cursor",
                                          "subscription_source_group", "delivery_state_body"};
  int checked = 0;
  for (const auto& s : testing::all_samples()) {
    if (unversioned.contains(s.name)) continue;
    ASSERT_EQ(s.encoded[0], 2) << s.name;
    for (std::uint8_t v : {0, 1, 3, 255}) {
      EXPECT_FALSE(s.reencode(with_byte(s.encoded, 0, v))) << s.name << " accepted version " << int(v);
    }
    ++checked;
  }
  EXPECT_GE(checked, 55);
}

TEST(Reject, BadVersionIsReportedAsSuch) {
  EXPECT_EQ(decode_error<StreamGrantV2>(with_byte(encode(testing::sample_grant()), 0, 1)), DecodeError::kBadVersion);
  EXPECT_EQ(decode_error<CheckpointReceiptV2>(with_byte(encode(testing::sample_checkpoint()), 0, 3)),
            DecodeError::kBadVersion);
  // A nested object: the grant inside OpenSession starts after version, tag and request_id.
  Bytes open = encode(CbqsClientFrameV2{OpenSession{filled32(1), testing::sample_grant()}});
  EXPECT_EQ(decode_error<CbqsClientFrameV2>(with_byte(open, 34, 1)), DecodeError::kBadVersion);
  // §18 rule 2: the SYS_CBQS payload.
  Bytes payload = encode(CbqsInstructionV2{CloseStreamV2{filled32(3)}});
  EXPECT_EQ(decode_error<CbqsInstructionV2>(with_byte(payload, 0, 1)), DecodeError::kBadVersion);
}

TEST(Reject, UnknownVariantTags) {
  Bytes client = encode(CbqsClientFrameV2{Request{filled32(1), filled32(2), req::CloseSession{}}});
  for (std::uint8_t tag : {0, 4, 255}) EXPECT_EQ(decode_error<CbqsClientFrameV2>(with_byte(client, 1, tag)), DecodeError::kUnknownVariant);
  for (std::uint8_t tag : {0, 20, 255}) EXPECT_EQ(decode_error<CbqsClientFrameV2>(with_byte(client, 66, tag)), DecodeError::kUnknownVariant);

  Bytes server = encode(CbqsServerFrameV2{Response{filled32(1), resp::Ok{}}});
  for (std::uint8_t tag : {0, 7}) EXPECT_EQ(decode_error<CbqsServerFrameV2>(with_byte(server, 1, tag)), DecodeError::kUnknownVariant);
  for (std::uint8_t tag : {0, 10}) EXPECT_EQ(decode_error<CbqsServerFrameV2>(with_byte(server, 34, tag)), DecodeError::kUnknownVariant);

  Bytes payload = encode(CbqsInstructionV2{CloseStreamV2{filled32(3)}});
  for (std::uint8_t tag : {0, 9}) EXPECT_EQ(decode_error<CbqsInstructionV2>(with_byte(payload, 1, tag)), DecodeError::kUnknownVariant);

  // Key algorithm, lane scope, group scope and start tags.
  Bytes grant = encode(testing::sample_grant());
  constexpr std::size_t kHolderKeyAlg = 1 + 32 + 32 + 8 + 32;
  EXPECT_EQ(decode_error<StreamGrantV2>(with_byte(grant, kHolderKeyAlg, 2)), DecodeError::kUnknownVariant);
  constexpr std::size_t kLaneScopeTag = kHolderKeyAlg + 33 + 2;
  EXPECT_EQ(decode_error<StreamGrantV2>(with_byte(grant, kLaneScopeTag, 4)), DecodeError::kUnknownVariant);
  Bytes group = encode(testing::sample_group_config());
  EXPECT_EQ(decode_error<GroupConfigV2>(with_byte(group, 17, 3)), DecodeError::kUnknownVariant);
  // Room-lane kind 2 is not a kind (the §11.1 derivation uses 1 and 3).
  Bytes room = encode(RoomLaneV2{RoomMessages{filled32(1)}});
  EXPECT_EQ(decode_error<RoomLaneV2>(with_byte(room, 0, 2)), DecodeError::kUnknownVariant);
  // Status enums.
  Bytes lane = encode(LaneRecordV2{filled32(3), LaneId{1}, LaneStatusV2::kActive});
  EXPECT_EQ(decode_error<LaneRecordV2>(with_byte(lane, 41, 3)), DecodeError::kUnknownVariant);
}

TEST(Reject, BoolsAndOptionTagsOutsideZeroOrOne) {
  CbqsAccountV2 account{};
  Bytes a = encode(account);
  EXPECT_EQ(decode_error<CbqsAccountV2>(with_byte(a, a.size() - 1, 2)), DecodeError::kBadBool);
  Bytes get_checkpoint = encode(CbqsClientFrameV2{Request{filled32(1), filled32(2), req::GetCheckpoint{}}});
  EXPECT_EQ(decode_error<CbqsClientFrameV2>(with_byte(get_checkpoint, 67, 2)), DecodeError::kBadOptionTag);
}

TEST(Reject, EveryStrictPrefixOfEverySampleIsRefused) {
  for (const auto& s : testing::all_samples()) {
    for (std::size_t len = 0; len < s.encoded.size(); ++len) {
      Bytes prefix(s.encoded.begin(), s.encoded.begin() + static_cast<std::ptrdiff_t>(len));
      ASSERT_FALSE(s.reencode(prefix)) << s.name << " accepted a " << len << "-byte prefix";
    }
  }
}

TEST(Reject, TrailingBytesAreRefused) {
  for (const auto& s : testing::all_samples()) {
    Bytes longer = s.encoded;
    longer.push_back(0);
    EXPECT_FALSE(s.reencode(longer)) << s.name;
  }
  Bytes ok = encode(CbqsServerFrameV2{Response{filled32(1), resp::Ok{}}});
  ok.push_back(0);
  EXPECT_EQ(decode_error<CbqsServerFrameV2>(ok), DecodeError::kTrailingBytes);
}

TEST(Reject, DeclaredLengthFarAboveTheInputFailsWithoutAllocating) {
  // Append with a payload declared at 0xFFFFFFFF bytes in a 15-byte frame body:
  // refused by its cap before any allocation. If the decoder allocated the
  // declared size this test would need 4 GiB.
  Bytes frame = encode(CbqsClientFrameV2{Request{filled32(1), filled32(2), req::Append{{LaneId{3}, Bytes{}}}}});
  std::size_t len_at = frame.size() - 4;
  for (int i = 0; i < 4; ++i) frame[len_at + i] = 0xff;
  EXPECT_EQ(decode_error<CbqsClientFrameV2>(frame), DecodeError::kLengthOverCap);

  // Exactly at the 16 MiB cap but absent from the input: truncated, not allocated.
  std::uint32_t at_cap = 16'777'216;
  for (int i = 0; i < 4; ++i) frame[len_at + i] = static_cast<std::uint8_t>(at_cap >> (24 - 8 * i));
  EXPECT_EQ(decode_error<CbqsClientFrameV2>(frame), DecodeError::kTruncated);

  // A lane-id Set declaring 2^32-1 ids, and a Lanes page declaring 2^32-1 records.
  Bytes source = encode(SubscriptionSourceV2{SourceCursor{LaneScopeSet{{LaneId{1}, LaneId{2}}}, StartHead{}}});
  for (int i = 0; i < 4; ++i) source[2 + i] = 0xff;
  EXPECT_EQ(decode_error<SubscriptionSourceV2>(source), DecodeError::kLengthOverCap);
  Bytes lanes = encode(CbqsServerFrameV2{Response{filled32(1), resp::Lanes{}}});
  for (int i = 0; i < 4; ++i) lanes[35 + i] = 0xff;
  EXPECT_EQ(decode_error<CbqsServerFrameV2>(lanes), DecodeError::kLengthOverCap);
}

TEST(Reject, CodecCapsAreTheParameterMaxima) {
  // 257 lane ids exceed cbqs.max_lane_ids_per_grant = 256; 9 endpoints exceed 8;
  // a 257-byte URI exceeds 256.
  StreamGrantV2 g = testing::sample_grant();
  LaneScopeSet set;
  for (std::uint64_t i = 0; i < 257; ++i) set.lane_ids.push_back(LaneId{i});
  g.lane_scope = set;
  EXPECT_EQ(decode_error<StreamGrantV2>(encode(g)), DecodeError::kLengthOverCap);

  RegisterProviderV2 r;
  r.endpoints.assign(9, Bytes{'w', 's', 's', ':', '/', '/', 'a'});
  EXPECT_EQ(decode_error<CbqsInstructionV2>(encode(CbqsInstructionV2{r})), DecodeError::kLengthOverCap);
  r.endpoints = {Bytes(257, 'a')};
  EXPECT_EQ(decode_error<CbqsInstructionV2>(encode(CbqsInstructionV2{r})), DecodeError::kLengthOverCap);
}

TEST(Reject, EmptyInputIsTruncated) {
  EXPECT_EQ(decode_error<CbqsClientFrameV2>({}), DecodeError::kTruncated);
  EXPECT_EQ(decode_error<CbqsServerFrameV2>({}), DecodeError::kTruncated);
}

}  // namespace
}  // namespace cowboy::cbqs
