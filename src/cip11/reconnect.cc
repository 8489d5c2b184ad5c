#include "cip11/reconnect.h"

#include <algorithm>
#include <array>

#include "common/codec.h"

namespace cowboy::cip11 {

std::chrono::milliseconds ReconnectBackoff::nominal(unsigned attempt) {
  // 100 ms x 2^9 = 51.2 s is past the cap already: no overflow for any attempt.
  if (attempt >= 9) return kCap;
  return std::min(kBase * (1u << attempt), kCap);
}

std::chrono::milliseconds ReconnectBackoff::next(std::optional<std::chrono::milliseconds> retry_after) {
  const auto centre = nominal(attempt_);
  ++attempt_;
  std::array<std::uint8_t, 4> r;
  entropy_.fill(r);
  const std::uint32_t u = codec::Reader(r).u32();
  // A factor uniform in [0.75, 1.25], in integer milliseconds.
  const std::int64_t span = centre.count() / 2;  // 50 % of the centre
  const std::int64_t wait = centre.count() - span / 2 + static_cast<std::int64_t>((static_cast<std::uint64_t>(u) * (span + 1)) >> 32);
  // The cap bounds the wait itself: at the cap the window is 22.5-30 s, so a
  // runner is back within 30 s of its last attempt whatever the draw.
  std::chrono::milliseconds out = std::min(std::chrono::milliseconds(wait), kCap);
  if (retry_after && *retry_after > out) out = *retry_after;  // the validator's word is a floor
  return out;
}

}  // namespace cowboy::cip11
