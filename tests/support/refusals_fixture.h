// A decoder's refusals as a fixture: which typed error it answers to every
// strict prefix of a valid encoding and to every byte of it overwritten with
// each of a few values. Kept as one line of text a sample, so a refactored
// decoder is shown to refuse exactly what the old one refused, with the same
// error, before any field of a malformed input is looked at differently.
#pragma once

#include <algorithm>
#include <string>

#include "common/codec.h"
#include "common/result.h"

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

}  // namespace cowboy::testing
