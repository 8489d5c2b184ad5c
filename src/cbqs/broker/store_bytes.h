// The byte helpers of the broker's store values (stream.h has the layout):
// big-endian u64s in keys and values, and views between std::string (what the
// store holds) and bytes (what the codec reads).
#pragma once

#include <string>
#include <string_view>

#include "common/bytes.h"

namespace cowboy::cbqs::broker {

inline void put_be64(std::string& out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
}
inline std::uint64_t get_be64(std::string_view s) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8 && i < s.size(); ++i) v = v << 8 | static_cast<std::uint8_t>(s[i]);
  return v;
}
inline std::string be64_string(std::uint64_t v) {
  std::string out;
  put_be64(out, v);
  return out;
}
inline std::string as_string(ByteView b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }
inline ByteView as_view(std::string_view s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }

}  // namespace cowboy::cbqs::broker
