// §11.3 reconnect backoff: the nominal doubling and cap, the +-25 % window at
// its edges (clipped at the cap), the reset after admission and
// retry_after_blocks as a floor.
#include "cip11/reconnect.h"

#include <gtest/gtest.h>

namespace cowboy::cip11 {
namespace {

using std::chrono::milliseconds;

class FixedEntropy final : public Entropy {
 public:
  std::uint8_t byte = 0;
  void fill(std::span<std::uint8_t> out) override {
    for (auto& b : out) b = byte;
  }
};

TEST(Cip11Reconnect, NominalDoublesFrom100MsToTheThirtySecondCap) {
  EXPECT_EQ(ReconnectBackoff::nominal(0), milliseconds(100));
  EXPECT_EQ(ReconnectBackoff::nominal(1), milliseconds(200));
  EXPECT_EQ(ReconnectBackoff::nominal(8), milliseconds(25'600));
  EXPECT_EQ(ReconnectBackoff::nominal(9), milliseconds(30'000));
  EXPECT_EQ(ReconnectBackoff::nominal(4'000'000'000u), milliseconds(30'000));
}

TEST(Cip11Reconnect, EachWaitIsWithinAQuarterOfItsNominalAndTheAttemptsReset) {
  FixedEntropy low, high;
  low.byte = 0x00;   // the smallest draw
  high.byte = 0xff;  // the largest
  ReconnectBackoff a(low), b(high);
  for (unsigned i = 0; i < 12; ++i) {
    auto n = ReconnectBackoff::nominal(i).count();
    EXPECT_EQ(a.next().count(), n - n / 4) << i;   // 0.75 x
    EXPECT_EQ(b.next().count(), std::min<long>(n + n / 4, 30'000)) << i;  // 1.25 x, never above the cap
  }
  EXPECT_EQ(a.attempt(), 12u);
  a.reset();
  EXPECT_EQ(a.next(), milliseconds(75));  // back to 100 ms x 0.75
}

TEST(Cip11Reconnect, RetryAfterBlocksIsAFloor) {
  FixedEntropy e;
  ReconnectBackoff b(e);
  EXPECT_EQ(b.next(milliseconds(5'000)), milliseconds(5'000));  // the validator asked for 5 s
  EXPECT_EQ(b.next(milliseconds(10)), milliseconds(150));        // a smaller ask changes nothing
}

}  // namespace
}  // namespace cowboy::cip11
