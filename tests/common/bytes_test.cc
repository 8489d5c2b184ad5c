#include "common/bytes.h"

#include <gtest/gtest.h>

namespace cowboy {

TEST(Hex, RoundTripsAndAcceptsPrefix) {
  Bytes b{0x00, 0x7f, 0x80, 0xff};
  EXPECT_EQ(to_hex(b), "007f80ff");
  EXPECT_EQ(from_hex("0x007F80ff"), b);
  EXPECT_FALSE(from_hex("abc"));   // odd length
  EXPECT_FALSE(from_hex("zz"));    // not hex
  EXPECT_FALSE((fixed_from_hex<20>("00")));
}

TEST(U128Text, RendersAndParsesTheExtremes) {
  EXPECT_EQ(u128_to_string(0), "0");
  EXPECT_EQ(u128_to_string(~u128{0}), "340282366920938463463374607431768211455");
  EXPECT_EQ(u128_from_string("340282366920938463463374607431768211455"), ~u128{0});
  EXPECT_FALSE(u128_from_string("340282366920938463463374607431768211456"));  // one above the max
  EXPECT_FALSE(u128_from_string(""));
  EXPECT_FALSE(u128_from_string("-1"));
}

}  // namespace cowboy
