// Counted points (common/strong_id.h): moved by a count, differing by one,
// never added to each other; an id has none of it (support/distinct_ids.h).
// A tag may name its count's type: the point then moves only by that type.
#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>

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

// A point whose tag names its count: a test clock's instant and its span.
using TestSpan = StrongId<struct TestSpanTag, std::uint64_t>;
struct TestInstantTag {
  static constexpr bool kCounted = true;
  using Count = TestSpan;
};
using TestInstant = StrongId<TestInstantTag, std::uint64_t>;

static_assert(testing::kDistinctIds<TestHeight, TestLane, TestSpan, TestInstant>);
static_assert(testing::kCountedPoint<TestInstant>);
static_assert(testing::kNoArithmetic<TestSpan>);
static_assert(std::is_same_v<CountOf<TestInstantTag, std::uint64_t>, TestSpan>);
static_assert(std::is_same_v<CountOf<TestHeightTag, std::uint64_t>, std::uint64_t>);
// Moved by its span only: not by a bare count, nor by ++, nor by another point's count.
template <typename P, typename N>
concept MovesBy = requires(P p, N n) { p + n; } || requires(P p, N n) { { p - n } -> std::same_as<P>; } || requires(P p, N n) { p += n; };
template <typename P>
concept Steps = requires(P p) { ++p; };
static_assert(MovesBy<TestInstant, TestSpan> && MovesBy<TestHeight, std::uint64_t>);
static_assert(!MovesBy<TestInstant, std::uint64_t> && !Steps<TestInstant> && Steps<TestHeight>);
static_assert(!MovesBy<TestInstant, TestHeight> && !MovesBy<TestHeight, TestSpan>);

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

TEST(StrongId, APointWhoseTagNamesItsCountMovesByThatType) {
  TestInstant t{1'000};
  EXPECT_EQ(t + TestSpan{250}, TestInstant{1'250});
  EXPECT_EQ(t - TestSpan{1'000}, TestInstant{0});
  EXPECT_EQ(TestInstant{1'250} - t, TestSpan{250});
  t += TestSpan{5};
  EXPECT_EQ(t, TestInstant{1'005});
  EXPECT_LT(TestSpan{1}, TestSpan{2});
}

}  // namespace
}  // namespace cowboy
