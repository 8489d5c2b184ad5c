// Keccak-256 of up to eight independent inputs at once: the eight sponge
// states sit side by side in AVX-512 registers (lane i of every state in one
// register), so one pass of Keccak-f[1600] permutes all of them. Internal to
// crypto.cc; callers use crypto::keccak256_many.
#pragma once

#include <cstddef>

#include "common/bytes.h"

namespace cowboy::crypto::detail {

inline constexpr std::size_t kKeccakLanes = 8;

/// Whether this CPU (and its OS) can run keccak256_x8.
bool keccak_x8_available();

/// out[i] = keccak256(inputs[i]) for i < count <= kKeccakLanes. Only when
/// keccak_x8_available(). A pass costs as much as the longest input.
void keccak256_x8(const ByteView* inputs, std::size_t count, Bytes32* out);

}  // namespace cowboy::crypto::detail
