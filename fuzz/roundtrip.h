// Shared fuzz property: decoding never crashes or reads out of bounds (ASan),
// and any accepted input is canonical (re-encoding reproduces it exactly).
#pragma once

#include <cstdlib>
#include <cstring>

#include "cbqs/wire/codec.h"

namespace cowboy::cbqs::fuzz {

template <typename T>
void check_roundtrip(const std::uint8_t* data, std::size_t size) {
  auto decoded = decode<T>(ByteView(data, size));
  if (!decoded) return;
  Bytes again = encode(*decoded);
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
}

}  // namespace cowboy::cbqs::fuzz
