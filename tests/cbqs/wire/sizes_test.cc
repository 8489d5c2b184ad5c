// The encoded sizes the seed's §6 and §13 arithmetic pins (cbqs-wire-facts §1).
#include "cbqs/wire/sizes.h"

#include <gtest/gtest.h>

#include "cbqs/chain/params.h"
#include "cbqs/wire/codec.h"
#include "samples.h"

namespace cowboy::cbqs {
namespace {

using testing::filled32;

class SizesForPayload : public ::testing::TestWithParam<std::size_t> {};

TEST_P(SizesForPayload, AppendRequestIsTwelvePlusN) {
  std::size_t n = GetParam();
  AppendRequestV2 a{LaneId{7}, Bytes(n, 0xab)};
  EXPECT_EQ(encode(a).size(), 12 + n);
  EXPECT_EQ(sizes::append_request_bytes(n), 12 + n);
}

TEST_P(SizesForPayload, LeasedDeliveryFrameIs152PlusN) {
  std::size_t n = GetParam();
  Delivery d{filled32(1), filled32(2), filled32(3), RecordHeaderV2{filled32(4), LaneId{9}}, Sequence{77}, Bytes(n, 0xcd)};
  EXPECT_EQ(encode(CbqsServerFrameV2{d}).size(), 152 + n);
  EXPECT_EQ(sizes::delivery_frame_bytes(n, true), 152 + n);
  d.lease.reset();
  EXPECT_EQ(encode(CbqsServerFrameV2{d}).size(), 120 + n);
  EXPECT_EQ(sizes::delivery_frame_bytes(n, false), 120 + n);
}

// encode() takes a frame's room at once, so an Append or a Delivery of any
// payload is written without growing its buffer.
TEST_P(SizesForPayload, TheRoomEncodeTakesHoldsTheWholeFrame) {
  std::size_t n = GetParam();
  CbqsClientFrameV2 append{Request{filled32(1), filled32(2), req::Append{{LaneId{7}, Bytes(n, 0xab)}}}};
  EXPECT_GE(encoded_room(append), encode(append).size());
  Delivery d{filled32(1), filled32(2), filled32(3), RecordHeaderV2{filled32(4), LaneId{9}}, Sequence{77}, Bytes(n, 0xcd)};
  EXPECT_GE(encoded_room(CbqsServerFrameV2{d}), encode(CbqsServerFrameV2{d}).size());
  EXPECT_EQ(encoded_room(CbqsServerFrameV2{d}), 256 + n);
}

INSTANTIATE_TEST_SUITE_P(SeedPayloads, SizesForPayload, ::testing::Values(0, 1, 127, 128, 65535));

TEST(Sizes, OkResponseIs35AndAppendedIs43) {
  EXPECT_EQ(encode(CbqsServerFrameV2{Response{filled32(1), resp::Ok{}}}).size(), 35u);
  EXPECT_EQ(encode(CbqsServerFrameV2{Response{filled32(1), resp::Appended{Sequence{1}}}}).size(), 43u);
  EXPECT_EQ(sizes::ok_response_bytes, 35u);
  EXPECT_EQ(sizes::appended_response_bytes, 43u);
}

TEST(SeedArithmetic, Section6RateDerivedLeaseFigureIs827823) {
  // "4,194,304 B/s sustained over a 30-second max_visibility_ms, divided by a
  // 152-byte delivery frame, is about 828,000"
  EXPECT_EQ(4'194'304ULL * 30 / 152, 827'823ULL);
  Params defaults;
  EXPECT_EQ(sizes::rate_derived_lease_bound(defaults.max_delivered_bytes_per_sec, defaults.visibility_ms), 827'823ULL);
}

TEST(SeedArithmetic, Section6LeaseCeilingAtDefaultsIs16777216) {
  Params defaults;
  EXPECT_EQ(defaults.max_groups_per_stream * defaults.max_in_flight_per_group, 16'777'216ULL);
  EXPECT_LT(sizes::rate_derived_lease_bound(defaults.max_delivered_bytes_per_sec, defaults.visibility_ms),
            defaults.max_groups_per_stream * defaults.max_in_flight_per_group);
}

TEST(SeedArithmetic, AtTheMaximumsTheRateDerivedFigureIsLarger) {
  auto max_of = [](std::string_view name) { return find_param(name)->maximum; };
  std::uint64_t ceiling = max_of("max_groups_per_stream") * max_of("max_in_flight_per_group");
  std::uint64_t rate = sizes::rate_derived_lease_bound(max_of("max_delivered_bytes_per_sec"), max_of("visibility_ms"));
  EXPECT_GT(rate, ceiling);
}

TEST(SeedArithmetic, Section13DeliveredRateBound) {
  // One group, 256-byte payloads, 1 MiB/s of appends: every append costs one
  // 408-byte delivery, one 35-byte Ack answer and one 43-byte Appended answer.
  EXPECT_EQ(sizes::required_delivered_bytes_per_sec(1, 256, 268), 486u);
  // At the defaults, one group of 1 KiB records fits the default delivered rate.
  Params p;
  EXPECT_LE(sizes::required_delivered_bytes_per_sec(1, 1024, p.max_append_bytes_per_sec),
            p.max_delivered_bytes_per_sec);
}

}  // namespace
}  // namespace cowboy::cbqs
