// The malleated twin of a secp256k1 recoverable signature: (r, n - s, v ^ 1)
// verifies under the same key, so a low-S-only verifier must refuse it.
#pragma once

#include <cstdint>
#include <span>

#include "common/bytes.h"

namespace cowboy::testing {

/// `sig` is r (32) || s (32) || v (1), in place.
inline void make_high_s_twin(std::span<std::uint8_t, 65> sig) {
  static const Bytes n = *from_hex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141");
  int borrow = 0;
  for (int i = 31; i >= 0; --i) {
    int d = n[i] - sig[32 + i] - borrow;
    borrow = d < 0;
    sig[32 + i] = static_cast<std::uint8_t>(d + (borrow ? 256 : 0));
  }
  sig[64] ^= 1;
}

}  // namespace cowboy::testing
