// Counted points (common/strong_id.h): moved by a count, differing by one,
// never added to each other; an id has none of it (support/distinct_ids.h).
#include <gtest/gtest.h>

#include <cstdint>

#include "common/strong_id.h"
#include "support/distinct_ids.h"

namespace cowboy {
namespace {

struct TestHeightTag {
  static constexpr bool kCounted = true;
};
using TestHeight = StrongId<TestHeightTag, std::uint64_t>;
using TestLane = StrongId<struct TestLaneTag, std::uint64_t>;

static_assert(testing::kDistinctIds<TestHeight, TestLane>);
static_assert(testing::kCountedPoint<TestHeight>);
static_assert(testing::kNoArithmetic<TestLane>);
static_assert(!testing::kCountedPoint<TestLane>);

TEST(StrongId, ACountedPointMovesByACountAndTwoDifferByOne) {
  TestHeight h{10};
  EXPECT_EQ(h + 5, TestHeight{15});
  EXPECT_EQ(h - 3, TestHeight{7});
  EXPECT_EQ(TestHeight{15} - h, 5u);
  EXPECT_EQ(++h, TestHeight{11});
  h += 4;
  EXPECT_EQ(h, TestHeight{15});
  EXPECT_LT(TestHeight{3}, TestHeight{4});
}

}  // namespace
}  // namespace cowboy
