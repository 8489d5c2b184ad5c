#include "common/codec.h"

#include <gtest/gtest.h>

namespace cowboy::codec {

TEST(Writer, IntegersAreBigEndianFixedWidth) {
  Writer w;
  w.u8(0x01);
  w.u16(0x0203);
  w.u32(0x04050607);
  w.u64(0x08090a0b0c0d0e0fULL);
  w.u128((cowboy::u128{0x1011121314151617ULL} << 64) | 0x18191a1b1c1d1e1fULL);
  Bytes expected;
  for (int i = 1; i <= 0x1f; ++i) expected.push_back(static_cast<std::uint8_t>(i));
  EXPECT_EQ(w.data(), expected);
}

TEST(Writer, BytesCarryAU32LengthAndOptionsAOneByteTag) {
  Writer w;
  w.bytes(Bytes{0xaa, 0xbb});
  w.option(std::optional<std::uint16_t>{}, [&](auto v) { w.u16(v); });
  w.option(std::optional<std::uint16_t>{0x0102}, [&](auto v) { w.u16(v); });
  EXPECT_EQ(w.data(), (Bytes{0, 0, 0, 2, 0xaa, 0xbb, 0, 1, 0x01, 0x02}));
}

TEST(Reader, FirstFailureSticksAndLaterReadsReturnZero) {
  Bytes in{0x00, 0x01};
  Reader r(in);
  EXPECT_EQ(r.u32(), 0u);
  EXPECT_EQ(r.error(), DecodeError::kTruncated);
  EXPECT_EQ(r.u8(), 0u);  // nothing consumed after the failure
  EXPECT_EQ(r.position(), 0u);
}

TEST(Reader, RejectsBoolAndOptionTagsOtherThanZeroOrOne) {
  Bytes two{2};
  Reader b(two);
  b.boolean();
  EXPECT_EQ(b.error(), DecodeError::kBadBool);
  Reader o(two);
  o.option_tag();
  EXPECT_EQ(o.error(), DecodeError::kBadOptionTag);
}

TEST(Reader, RefusesADeclaredLengthAboveItsCapBeforeAllocating) {
  Bytes in{0xff, 0xff, 0xff, 0xff, 0x00};  // declares 4 GiB with one byte present
  Reader capped(in);
  EXPECT_TRUE(capped.bytes(1024).empty());
  EXPECT_EQ(capped.error(), DecodeError::kLengthOverCap);

  Reader uncapped(in);  // a cap above the declared length still cannot read past the input
  EXPECT_TRUE(uncapped.bytes(SIZE_MAX).empty());
  EXPECT_EQ(uncapped.error(), DecodeError::kTruncated);
}

TEST(Reader, RefusesACountTheRemainingInputCannotHold) {
  Bytes in{0x00, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 1};  // 3 u64s declared, one present
  Reader r(in);
  EXPECT_EQ(r.count(256, 8), 0u);
  EXPECT_EQ(r.error(), DecodeError::kTruncated);
}

TEST(Reader, FinishRejectsTrailingBytes) {
  Bytes in{0x01, 0x02};
  Reader r(in);
  r.u8();
  r.finish();
  EXPECT_EQ(r.error(), DecodeError::kTrailingBytes);
}

TEST(Reader, VersionMismatchIsTyped) {
  Bytes in{0x01};
  Reader r(in);
  r.version(2);
  EXPECT_EQ(r.error(), DecodeError::kBadVersion);
}

}  // namespace cowboy::codec
