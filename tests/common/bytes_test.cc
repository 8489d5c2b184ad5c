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

// RFC 4648 §10's test vectors.
TEST(Base64, MatchesTheRfcVectors) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"}};
  for (const auto& [in, out] : vectors) EXPECT_EQ(to_base64(as_bytes(in)), out) << in;
  EXPECT_EQ(to_base64(Bytes{0xff, 0xfe}), "//4=");
}

TEST(Utf8, AcceptsWellFormedTextAndRefusesEachIllFormedKind) {
  auto ok = [](std::initializer_list<std::uint8_t> b) { return is_utf8(Bytes(b)); };
  EXPECT_TRUE(ok({}));
  EXPECT_TRUE(is_utf8(as_bytes("plain ascii")));
  EXPECT_TRUE(ok({0xc3, 0xa9}));              // é
  EXPECT_TRUE(ok({0xe2, 0x82, 0xac}));        // €
  EXPECT_TRUE(ok({0xf0, 0x9f, 0x98, 0x80}));  // U+1F600
  EXPECT_TRUE(ok({0xf4, 0x8f, 0xbf, 0xbf}));  // U+10FFFF, the last code point
  EXPECT_FALSE(ok({0xff}));                   // never in UTF-8
  EXPECT_FALSE(ok({0x80}));                   // a continuation byte alone
  EXPECT_FALSE(ok({0xc0, 0x80}));             // overlong NUL
  EXPECT_FALSE(ok({0xe0, 0x80, 0x80}));       // overlong three-byte form
  EXPECT_FALSE(ok({0xed, 0xa0, 0x80}));       // a surrogate, U+D800
  EXPECT_FALSE(ok({0xf4, 0x90, 0x80, 0x80})); // past U+10FFFF
  EXPECT_FALSE(ok({0xe2, 0x82}));             // cut short
  EXPECT_FALSE(ok({0x61, 0xc3}));             // cut short at the end
}

}  // namespace cowboy
