// The fork-choice rule and the undo record's codec (docs/devchain.md D11,
// src/devchain/fork.h). The nodes' rollback and follow: validators_test.cc.
#include <gtest/gtest.h>

#include "devchain/fork.h"

namespace cowboy::devchain {
namespace {

Bytes32 digest(std::uint8_t first) {
  Bytes32 d{};
  d[0] = first;
  return d;
}

TEST(DevchainForkRule, TheHigherViewWinsAndTheLowerDigestOnATie) {
  // The later leader saw the earlier view time out.
  EXPECT_TRUE(wins_at_height(cip11::View{8}, digest(0xff), cip11::View{7}, digest(0x00)));
  EXPECT_FALSE(wins_at_height(cip11::View{7}, digest(0x00), cip11::View{8}, digest(0xff)));
  // One view, two blocks (a leader that signed twice): the lower digest.
  EXPECT_TRUE(wins_at_height(cip11::View{7}, digest(0x01), cip11::View{7}, digest(0x02)));
  EXPECT_FALSE(wins_at_height(cip11::View{7}, digest(0x02), cip11::View{7}, digest(0x01)));
  // A strict order: a block never wins over itself, so a node never leaves its own chain for it.
  EXPECT_FALSE(wins_at_height(cip11::View{7}, digest(0x01), cip11::View{7}, digest(0x01)));
  // Decided on the whole digest, not only its first byte.
  Bytes32 a = digest(0x01), b = digest(0x01);
  a[31] = 0x02;
  b[31] = 0x03;
  EXPECT_TRUE(wins_at_height(cip11::View{7}, a, cip11::View{7}, b));
  EXPECT_FALSE(wins_at_height(cip11::View{7}, b, cip11::View{7}, a));
}

TEST(DevchainUndo, ARecordRoundTripsByteForByteAndMalformedOnesAreRefused) {
  UndoRecord record{{{"registry", std::string("\x03\x00\x01", 3)}, {"tx/abc", std::nullopt}, {"meta/height", ""}}};
  const Bytes bytes = encode_undo(record);
  auto back = decode_undo(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, record);
  EXPECT_EQ(encode_undo(*back), bytes);
  EXPECT_TRUE(decode_undo(encode_undo(UndoRecord{})).ok());
  // Another version, a cut, trailing bytes, an unknown option tag.
  Bytes other = bytes;
  other[0] = 2;
  EXPECT_EQ(decode_undo(other).error(), codec::DecodeError::kBadVersion);
  EXPECT_EQ(decode_undo(ByteView(bytes).first(bytes.size() - 1)).error(), codec::DecodeError::kTruncated);
  Bytes longer = bytes;
  longer.push_back(0);
  EXPECT_EQ(decode_undo(longer).error(), codec::DecodeError::kTrailingBytes);
  Bytes tag = encode_undo(UndoRecord{{{"k", std::nullopt}}});
  tag.back() = 2;
  EXPECT_EQ(decode_undo(tag).error(), codec::DecodeError::kBadOptionTag);
  // A count or a key length past its cap is refused before anything is allocated.
  codec::Writer many;
  many.u8(kUndoVersion);
  many.u32(0xffffffff);
  EXPECT_EQ(decode_undo(many.data()).error(), codec::DecodeError::kLengthOverCap);
  codec::Writer long_key;
  long_key.u8(kUndoVersion);
  long_key.u32(1);
  long_key.u32(kMaxUndoKeyBytes + 1);
  long_key.raw(Bytes(kMaxUndoKeyBytes + 1, 'k'));
  long_key.u8(0);
  EXPECT_EQ(decode_undo(long_key.data()).error(), codec::DecodeError::kLengthOverCap);
}

}  // namespace
}  // namespace cowboy::devchain
