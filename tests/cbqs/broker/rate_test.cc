#include "cbqs/broker/rate.h"

#include <gtest/gtest.h>

namespace cowboy::cbqs::broker {
namespace {

TEST(TokenBucket, RefillsAtTheRateAndHoldsOneSecond) {
  TokenBucket b(1'000, 0);
  EXPECT_TRUE(b.take(1'000, 0));
  EXPECT_FALSE(b.take(1, 0));
  EXPECT_EQ(b.wait_ms(10, 0), 10u);
  EXPECT_TRUE(b.take(10, 10));
  EXPECT_TRUE(b.take(1'000, 5'000));  // a long idle stores no more than a second's worth
  EXPECT_FALSE(b.take(1, 5'000));
}

TEST(TokenBucket, LowRatesAreNotRoundedAwayByFrequentCalls) {
  TokenBucket b(10, 0);  // 10 tokens/s: one every 100 ms
  EXPECT_TRUE(b.take(10, 0));
  for (std::uint64_t t = 1; t < 100; ++t) EXPECT_FALSE(b.take(1, t));
  EXPECT_TRUE(b.take(1, 100));
}

TEST(TokenBucket, AnOversizeRequestPassesOnlyWhenFull) {
  TokenBucket b(100, 0);
  EXPECT_TRUE(b.take(500, 0));  // full bucket: passes, empties it
  EXPECT_FALSE(b.take(500, 500));
  EXPECT_TRUE(b.take(500, 1'000));
}

TEST(TokenBucket, AFirstRateStartsFull) {
  TokenBucket b(0, 0);
  b.set_rate(1'000);
  EXPECT_TRUE(b.take(1'000, 0));
  b.set_rate(10);  // lowering clamps what is left
  EXPECT_FALSE(b.take(1, 0));
}

}  // namespace
}  // namespace cowboy::cbqs::broker
