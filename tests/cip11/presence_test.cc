// §7.2 PresenceInputV1 and the §8.5 registry index basis.
#include <gtest/gtest.h>

#include "cip11/presence.h"

namespace cowboy::cip11 {
namespace {

PresentSet set_of(std::uint32_t n, std::initializer_list<std::uint32_t> indices) {
  PresentSet s(n);
  for (auto i : indices) s.add(i);
  return s;
}

Bytes hex(std::string_view h) { return *from_hex(h); }

TEST(Cip11Presence, BitmapIsLsbFirstAndExactlyCeilNOver8Bytes) {
  const PresentSet s = set_of(10, {0, 3, 9});
  EXPECT_EQ(to_hex(encode_presence(s, PresenceKind::kBitmap)), "0100" "09" "02");
  EXPECT_EQ(to_hex(encode_presence(PresentSet(0), PresenceKind::kBitmap)), "0100");
  EXPECT_EQ(to_hex(encode_presence(PresentSet(8), PresenceKind::kBitmap)), "010000");
}

TEST(Cip11Presence, SparseIsCountThenAscendingBigEndianIndices) {
  const PresentSet s = set_of(70000, {5, 65536});
  EXPECT_EQ(to_hex(encode_presence(s, PresenceKind::kSparse)), "0101" "00000002" "00000005" "00010000");
  EXPECT_EQ(to_hex(encode_presence(PresentSet(3), PresenceKind::kSparse)), "0101" "00000000");
}

TEST(Cip11Presence, BothKindsDecodeToTheSameSet) {
  const PresentSet s = set_of(5000, {0, 7, 8, 4095, 4999});
  for (auto kind : {PresenceKind::kBitmap, PresenceKind::kSparse}) {
    auto decoded = decode_presence(encode_presence(s, kind), 5000);
    ASSERT_TRUE(decoded.ok()) << to_string(decoded.error());
    EXPECT_EQ(decoded->indices(), (std::vector<std::uint32_t>{0, 7, 8, 4095, 4999}));
    EXPECT_TRUE(decoded->contains(4095));
    EXPECT_FALSE(decoded->contains(4096));
    EXPECT_FALSE(decoded->contains(999999));
  }
  // ~5,000 runners: the bitmap is 625 bytes (§7.2); with 5 present the sparse form is smaller and is chosen.
  EXPECT_EQ(encode_presence(s, PresenceKind::kBitmap).size(), 2u + 625);
  EXPECT_EQ(encode_presence(s)[1], 0x01);
  EXPECT_EQ(encode_presence(set_of(16, {1}))[1], 0x00);  // 2 bitmap bytes beat 8 sparse bytes
}

TEST(Cip11Presence, ValidEmptySetInBothKinds) {
  for (const char* h : {"0100" "0000", "0101" "00000000"}) {
    auto decoded = decode_presence(hex(h), 16);
    ASSERT_TRUE(decoded.ok()) << h;
    EXPECT_EQ(decoded->count(), 0u);
  }
}

TEST(Cip11Presence, EveryMalformedCaseIsRefused) {
  struct Case {
    const char* what;
    const char* hex;
    std::uint32_t registry;
    Errc error;
  } cases[] = {
      {"empty input", "", 10, Errc::kBadPresenceVersion},
      {"version 0", "0000" "0000", 10, Errc::kBadPresenceVersion},
      {"version 2", "0200" "0000", 10, Errc::kBadPresenceVersion},
      {"no kind", "01", 10, Errc::kUnknownPresenceKind},
      {"kind 2", "0102" "0000", 10, Errc::kUnknownPresenceKind},
      {"bitmap one byte short", "0100" "ff", 10, Errc::kBadBitmapLength},
      {"bitmap one byte long", "0100" "000000", 10, Errc::kBadBitmapLength},
      {"bit 10 set with 10 runners", "0100" "0004", 10, Errc::kBitBeyondRegistry},
      {"bit 15 set with 10 runners", "0100" "0080", 10, Errc::kBitBeyondRegistry},
      {"bitmap for an empty registry", "0100" "00", 0, Errc::kBadBitmapLength},
      {"sparse without a count", "0101" "000000", 10, Errc::kBadSparseLength},
      {"sparse count 2, one index", "0101" "00000002" "00000001", 10, Errc::kBadSparseLength},
      {"sparse count 1, two indices", "0101" "00000001" "00000001" "00000002", 10, Errc::kBadSparseLength},
      {"sparse count near 2^32", "0101" "ffffffff" "00000001", 10, Errc::kBadSparseLength},
      {"sparse descending", "0101" "00000002" "00000003" "00000001", 10, Errc::kSparseNotAscending},
      {"sparse duplicate", "0101" "00000002" "00000003" "00000003", 10, Errc::kSparseNotAscending},
      {"sparse index == n", "0101" "00000001" "0000000a", 10, Errc::kIndexBeyondRegistry},
      {"sparse index huge", "0101" "00000001" "ffffffff", 10, Errc::kIndexBeyondRegistry},
  };
  for (const auto& c : cases) {
    auto r = decode_presence(hex(c.hex), c.registry);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.error(), c.error) << c.what << ": got " << to_string(r.error());
  }
}

Address address(std::uint8_t b) {
  Address a;
  a.fill(b);
  return a;
}

// §7.2 pin: [A, B, C] keep indices 0/1/2 when one is marked unhealthy/stale
// (the list is not rewritten), and D then gets index 3 - through the same
// stored ACTIVE_RUNNERS_KEY value that registration writes and presence reads.
TEST(Cip11Presence, RegistryIndexBasisPin) {
  ActiveRunners registry;
  const Address A = address(0xaa), B = address(0xbb), C = address(0xcc), D = address(0xdd);
  EXPECT_EQ(registry.register_runner(A), 0u);
  EXPECT_EQ(registry.register_runner(B), 1u);
  EXPECT_EQ(registry.register_runner(C), 2u);
  const Bytes stored = registry.encode();

  // B goes stale: health lives outside the list, so the stored value is untouched.
  std::map<Address, bool> healthy{{A, true}, {B, false}, {C, true}};
  auto reloaded = ActiveRunners::decode(stored);
  ASSERT_TRUE(reloaded.ok());
  EXPECT_EQ(reloaded->at(0), A);
  EXPECT_EQ(reloaded->at(1), B);
  EXPECT_EQ(reloaded->at(2), C);
  EXPECT_FALSE(healthy[B]);

  EXPECT_EQ(reloaded->register_runner(D), 3u);
  EXPECT_EQ(reloaded->register_runner(B), 1u);  // re-registering keeps the index
  auto again = ActiveRunners::decode(reloaded->encode());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->size(), 4u);
  EXPECT_EQ(again->index_of(D), 3u);

  // The presence index domain follows the list: bit 3 is D.
  auto present = decode_presence(hex("0100" "08"), again->size());
  ASSERT_TRUE(present.ok());
  EXPECT_EQ(again->at(present->indices().at(0)), D);
}

TEST(Cip11Presence, StoredRegistryListIsDecodedStrictly) {
  EXPECT_EQ(ActiveRunners::decode(hex("81" "53" + std::string(38, 'a'))).error(), Errc::kWrongLength);
  const std::string a = "54" + std::string(40, 'a');
  EXPECT_EQ(ActiveRunners::decode(hex("82" + a + a)).error(), Errc::kDuplicateKey);
  EXPECT_EQ(ActiveRunners::decode(hex("9f" + a + "ff")).error(), Errc::kIndefiniteLength);
  EXPECT_TRUE(ActiveRunners::decode(hex("80")).ok());
}

}  // namespace
}  // namespace cowboy::cip11
