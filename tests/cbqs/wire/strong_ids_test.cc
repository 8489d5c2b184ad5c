// Lanes, groups and sequences are u64 on the wire and distinct types in the
// code (common/strong_id.h): one passed where another is expected does not
// compile. The static assertions are the test; the TEST shows the wire value
// is what each carries.
#include <gtest/gtest.h>

#include <type_traits>

#include "cbqs/client.h"
#include "cbqs/wire/codec.h"
#include "support/distinct_ids.h"

namespace cowboy::cbqs {
namespace {

static_assert(testing::kDistinctIds<LaneId, GroupId, Sequence>);
static_assert(testing::kNoArithmetic<LaneId> && testing::kNoArithmetic<GroupId>);

// The wire objects take only their own id.
using testing::kTakes;
static_assert(kTakes<decltype(GroupConfigV2::group_id), GroupId>);
static_assert(!kTakes<decltype(GroupConfigV2::group_id), LaneId>);
static_assert(!kTakes<decltype(GroupConfigV2::lane_id), GroupId>);
static_assert(!kTakes<decltype(SourceGroup::group_id), LaneId>);
static_assert(!kTakes<decltype(req::GetGroup::group_id), std::uint64_t>);
static_assert(!kTakes<decltype(resp::Appended::sequence), LaneId>);

// The SDK's calls: a lane where a group is expected is ill-formed, the right id is well-formed.
template <typename Id>
concept DeletesGroup = requires(sdk::Client& c, Id id) { c.delete_group(id); };
static_assert(DeletesGroup<GroupId>);
static_assert(!DeletesGroup<LaneId>);
static_assert(!DeletesGroup<std::uint64_t>);

template <typename Id>
concept GetsGroup = requires(sdk::Client& c, Id id) { c.get_group(id); };
static_assert(GetsGroup<GroupId>);
static_assert(!GetsGroup<LaneId>);

template <typename Id>
concept AppendsTo = requires(sdk::Client& c, Id id) { c.append(id, Bytes{}); };
static_assert(AppendsTo<LaneId>);
static_assert(!AppendsTo<GroupId>);
static_assert(!AppendsTo<Sequence>);
static_assert(!AppendsTo<std::uint64_t>);

template <typename Id>
concept ClosesLane = requires(sdk::Client& c, Id id) { c.close_lane(id); };
static_assert(ClosesLane<LaneId>);
static_assert(!ClosesLane<GroupId>);

template <typename Id>
concept CheckpointCovers = requires(sdk::Client& c, Id id) { c.checkpoint(id); };
static_assert(CheckpointCovers<Sequence>);
static_assert(!CheckpointCovers<LaneId>);

// A consumer's options: the lane and the group cannot be swapped.
static_assert(!kTakes<decltype(sdk::ConsumerOptions::group), LaneId>);
static_assert(!kTakes<decltype(sdk::ConsumerOptions::lane), GroupId>);
static_assert(std::is_same_v<decltype(std::declval<sdk::Client&>().create_lane()), sdk::Outcome<LaneId>>);
static_assert(std::is_same_v<decltype(std::declval<sdk::Client&>().create_group(GroupConfigV2{})), sdk::Outcome<GroupId>>);

TEST(StrongIds, EachIsItsU64OnTheWire) {
  // Group = tag 2 || lane_id u64 || group_id u64, big-endian, in that order.
  SubscriptionSourceV2 source = SourceGroup{LaneId{0x0102030405060708}, GroupId{0x1112131415161718}};
  EXPECT_EQ(encode(source), (Bytes{2, 1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}));
  auto back = decode<SubscriptionSourceV2>(encode(source));
  ASSERT_TRUE(back);
  EXPECT_EQ(std::get<SourceGroup>(*back).lane_id, LaneId{0x0102030405060708});
  EXPECT_EQ(std::get<SourceGroup>(*back).group_id, GroupId{0x1112131415161718});
}

}  // namespace
}  // namespace cowboy::cbqs
