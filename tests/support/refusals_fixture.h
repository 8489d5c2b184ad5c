// A decoder's refusals as a fixture: which typed error it answers to every
// strict prefix of a valid encoding and to every byte of it overwritten with
// each of a few values. Kept as one line of text a sample, so a refactored
// decoder is shown to refuse exactly what the old one refused, with the same
// error, before any field of a malformed input is looked at differently.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/codec.h"
#include "common/result.h"
#include "hex_fixture.h"

namespace cowboy::testing {

/// One character an input: '.' decodes and encodes back to the same bytes, '~'
/// decodes to a value that encodes otherwise, else the DecodeError's number; the
/// prefixes first, then each position with 0x00, 0x01, 0x02, 0x05 and 0xff
/// ('-' where the byte already had that value).
/// `roundtrip(ByteView)` decodes and encodes again: Result<Bytes, codec::DecodeError>.
template <typename Roundtrip>
std::string refusals(ByteView valid, Roundtrip roundtrip) {
  auto mark = [&](ByteView input) {
    auto again = roundtrip(input);
    if (!again) return static_cast<char>('0' + static_cast<int>(again.error()));
    return std::equal(again->begin(), again->end(), input.begin(), input.end()) ? '.' : '~';
  };
  std::string out;
  for (std::size_t n = 0; n < valid.size(); ++n) out.push_back(mark(valid.subspan(0, n)));
  out.push_back(' ');
  Bytes copy(valid.begin(), valid.end());
  for (std::size_t i = 0; i < copy.size(); ++i) {
    const std::uint8_t was = copy[i];
    for (std::uint8_t b : {0x00, 0x01, 0x02, 0x05, 0xff}) {
      if (b == was) {
        out.push_back('-');
        continue;
      }
      copy[i] = b;
      out.push_back(mark(copy));
    }
    copy[i] = was;
  }
  return out;
}

/// A codec as the fixture tests see it: its encoding of the sample, whether some
/// bytes decode to the sample, and its decode-then-encode of any input.
struct CodecSample {
  std::string name;  // also the fixture file's name
  Bytes encoded;
  std::function<bool(ByteView)> decodes_to_sample;
  std::function<Result<Bytes, codec::DecodeError>(ByteView)> roundtrip;
};

/// `decode` answers Result<T, E>; `to_error` turns an E into the codec's error.
template <typename T, typename Encode, typename Decode, typename ToError>
CodecSample codec_sample(std::string name, const T& value, Encode encode, Decode decode, ToError to_error) {
  return {std::move(name), encode(value),
          [value, decode](ByteView b) {
            auto back = decode(b);
            return back.ok() && *back == value;
          },
          [encode, decode, to_error](ByteView b) -> Result<Bytes, codec::DecodeError> {
            auto back = decode(b);
            if (!back) return Err{to_error(back.error())};
            return encode(*back);
          }};
}
template <typename T, typename Encode, typename Decode>
CodecSample codec_sample(std::string name, const T& value, Encode encode, Decode decode) {
  return codec_sample(std::move(name), value, encode, decode, [](codec::DecodeError e) { return e; });
}

/// Each sample against `dir`/<name>.hex, byte for byte, and decoded back; the
/// files are written first when COWBOY_WRITE_FIXTURES is set.
inline void expect_fixture_files(const std::string& dir, const std::vector<CodecSample>& samples) {
  const bool write = std::getenv("COWBOY_WRITE_FIXTURES") != nullptr;
  for (const auto& s : samples) {
    const std::string path = dir + s.name + ".hex";
    if (write) write_hex_fixture(path, s.name + ": " + std::to_string(s.encoded.size()) + " bytes", s.encoded);
    auto expected = read_hex_fixture(path);
    ASSERT_TRUE(expected) << "missing or unreadable fixture " << path;
    EXPECT_EQ(to_hex(s.encoded), to_hex(*expected)) << s.name;
    EXPECT_TRUE(s.decodes_to_sample(*expected)) << s.name;
  }
}

/// Each sample's refusals against `path`, a "name refusals" line each.
inline void expect_refusals_file(const std::string& path, const std::vector<CodecSample>& samples) {
  if (std::getenv("COWBOY_WRITE_FIXTURES")) {
    std::ofstream out(path);
    for (const auto& s : samples) out << s.name << " " << refusals(s.encoded, s.roundtrip) << "\n";
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::map<std::string, std::string> expected;
  std::string name, prefixes, changes;
  while (in >> name >> prefixes >> changes) expected[name] = prefixes + " " + changes;
  for (const auto& s : samples) {
    ASSERT_TRUE(expected.contains(s.name)) << s.name;
    EXPECT_EQ(refusals(s.encoded, s.roundtrip), expected[s.name]) << s.name;
  }
}

}  // namespace cowboy::testing
