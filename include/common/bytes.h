// Byte containers shared by every codec and crypto routine.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cowboy {

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;
using Bytes32 = std::array<std::uint8_t, 32>;
using Address = std::array<std::uint8_t, 20>;
using u128 = unsigned __int128;

/// Lower-case hex without a prefix.
std::string to_hex(ByteView bytes);
/// Lower-case hex with the "0x" prefix (how addresses, ids and keys are shown).
inline std::string to_hex0x(ByteView bytes) { return "0x" + to_hex(bytes); }
/// Accepts an optional "0x" prefix; nullopt on odd length or a non-hex digit.
std::optional<Bytes> from_hex(std::string_view hex);
/// Standard base64 with padding (RFC 4648 §4).
std::string to_base64(ByteView bytes);
/// Well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF).
bool is_utf8(ByteView bytes);

template <std::size_t N>
std::optional<std::array<std::uint8_t, N>> fixed_from_hex(std::string_view hex) {
  auto bytes = from_hex(hex);
  if (!bytes || bytes->size() != N) return std::nullopt;
  std::array<std::uint8_t, N> out{};
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return out;
}

inline ByteView as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

inline Bytes concat(std::initializer_list<ByteView> parts) {
  Bytes out;
  std::size_t total = 0;
  for (auto p : parts) total += p.size();
  out.reserve(total);
  for (auto p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

/// Decimal rendering of a u128 (fmt and iostreams have none).
std::string u128_to_string(u128 value);
std::optional<u128> u128_from_string(std::string_view text);

}  // namespace cowboy
