// The runner journal's stored entries (cip11/runner/journal.h) against byte
// fixtures: tests/fixtures/cip11/journal/<name>.hex, and refusals.txt for the
// error each decoder answers to every prefix and single-byte change of it
// (support/refusals_fixture.h). Regenerate deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/cip11_chain_codec_tests --gtest_filter='Cip11JournalFixtures.*'
#include <gtest/gtest.h>

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

template <typename T, typename Encode, typename Decode>
cowboy::testing::CodecSample sample(std::string name, const T& value, Encode encode, Decode decode) {
  return cowboy::testing::codec_sample(std::move(name), value, encode, decode, error_named_in);
}

std::vector<cowboy::testing::CodecSample> all_samples() {
  Obligation revealed{JobId{filled32(0x21)}, 3, Bytes{'4', '2'}, filled32(0x55), filled32(0xc0), filled32(0xd0)};
  Obligation direct{JobId{filled32(0x31)}, 1, Bytes{}, filled32(0x56), std::nullopt, std::nullopt};
  return {sample("retained_tx", RetainedTx{filled32(0x11), 0x0102, Bytes{0xab, 0xcd}}, encode_retained, decode_retained),
          sample("obligation_revealed", revealed, encode_obligation, decode_obligation),
          sample("obligation_direct", direct, encode_obligation, decode_obligation)};
}

std::string fixture_dir() { return std::string(COWBOY_FIXTURE_DIR) + "/cip11/journal/"; }

TEST(Cip11JournalFixtures, EveryEntryMatchesItsFileByteForByte) {
  cowboy::testing::expect_fixture_files(fixture_dir(), all_samples());
}

TEST(Cip11JournalFixtures, EveryPrefixAndByteChangeIsRefusedWithTheErrorOfItsFile) {
  cowboy::testing::expect_refusals_file(fixture_dir() + "refusals.txt", all_samples());
}

}  // namespace
}  // namespace cowboy::cip11
