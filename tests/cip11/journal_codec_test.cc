// The runner journal's stored entries (cip11/runner/journal.h) against byte
// fixtures: tests/fixtures/cip11/journal/<name>.hex, and refusals.txt for the
// error each decoder answers to every prefix and single-byte change of it
// (support/refusals_fixture.h). Regenerate deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/cip11_chain_codec_tests --gtest_filter='Cip11JournalFixtures.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>

#include "../support/hex_fixture.h"
#include "../support/refusals_fixture.h"
#include "cip11/runner/journal.h"

namespace cowboy::cip11 {
namespace {

Bytes32 filled32(std::uint8_t first) {
  Bytes32 out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(first + i);
  return out;
}

/// The journal's errors are text ending in the codec's name of the error.
codec::DecodeError error_named_in(const std::string& text) {
  for (int e = 1; e <= static_cast<int>(codec::DecodeError::kInvalidValue); ++e) {
    const std::string_view name = codec::to_string(static_cast<codec::DecodeError>(e));
    if (text.ends_with(name)) return static_cast<codec::DecodeError>(e);
  }
  ADD_FAILURE() << "no codec error named in: " << text;
  return codec::DecodeError::kNone;
}

struct Sample {
  std::string name;
  Bytes encoded;
  std::function<bool(ByteView)> decodes_to_sample;
  std::function<Result<Bytes, codec::DecodeError>(ByteView)> roundtrip;
};

template <typename T, typename Encode, typename Decode>
Sample sample(std::string name, const T& value, Encode encode, Decode decode) {
  return {std::move(name), encode(value),
          [value, decode](ByteView b) {
            auto back = decode(b);
            return back.ok() && *back == value;
          },
          [encode, decode](ByteView b) -> Result<Bytes, codec::DecodeError> {
            auto back = decode(b);
            if (!back) return Err{error_named_in(back.error())};
            return encode(*back);
          }};
}

std::vector<Sample> all_samples() {
  Obligation revealed{filled32(0x21), 3, Bytes{'4', '2'}, filled32(0x55), filled32(0xc0), filled32(0xd0)};
  Obligation direct{filled32(0x31), 1, Bytes{}, filled32(0x56), std::nullopt, std::nullopt};
  return {sample("retained_tx", RetainedTx{filled32(0x11), 0x0102, Bytes{0xab, 0xcd}}, encode_retained, decode_retained),
          sample("obligation_revealed", revealed, encode_obligation, decode_obligation),
          sample("obligation_direct", direct, encode_obligation, decode_obligation)};
}

std::string fixture_dir() { return std::string(COWBOY_FIXTURE_DIR) + "/cip11/journal/"; }

TEST(Cip11JournalFixtures, EveryEntryMatchesItsFileByteForByte) {
  const bool write = std::getenv("COWBOY_WRITE_FIXTURES") != nullptr;
  for (const auto& s : all_samples()) {
    const std::string path = fixture_dir() + s.name + ".hex";
    if (write)
      cowboy::testing::write_hex_fixture(path, s.name + ": " + std::to_string(s.encoded.size()) + " bytes", s.encoded);
    auto expected = cowboy::testing::read_hex_fixture(path);
    ASSERT_TRUE(expected) << "missing or unreadable fixture " << path;
    EXPECT_EQ(to_hex(s.encoded), to_hex(*expected)) << s.name;
    EXPECT_TRUE(s.decodes_to_sample(*expected)) << s.name;
  }
}

TEST(Cip11JournalFixtures, EveryPrefixAndByteChangeIsRefusedWithTheErrorOfItsFile) {
  const std::string path = fixture_dir() + "refusals.txt";
  if (std::getenv("COWBOY_WRITE_FIXTURES")) {
    std::ofstream out(path);
    for (const auto& s : all_samples()) out << s.name << " " << cowboy::testing::refusals(s.encoded, s.roundtrip) << "\n";
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::map<std::string, std::string> expected;
  std::string name, prefixes, changes;
  while (in >> name >> prefixes >> changes) expected[name] = prefixes + " " + changes;
  for (const auto& s : all_samples()) {
    ASSERT_TRUE(expected.contains(s.name)) << s.name;
    EXPECT_EQ(cowboy::testing::refusals(s.encoded, s.roundtrip), expected[s.name]) << s.name;
  }
}

}  // namespace
}  // namespace cowboy::cip11
