// Shared by the fuzz targets that load a stream's stored keys: fuzz bytes
// become the values of a list of keys, each as one length byte, then that
// many bytes.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "cbqs/store/store.h"
#include "common/bytes.h"

namespace cowboy::cbqs::fuzz {

inline std::string be64(std::uint64_t v) {
  std::string s;
  for (int i = 7; i >= 0; --i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}

/// "s/<sid>/", the stream's key prefix.
inline std::string stream_prefix(const Bytes32& sid) {
  return "s/" + std::string(reinterpret_cast<const char*>(sid.data()), sid.size()) + "/";
}

/// Puts a value under each key in turn while the input lasts.
inline store::WriteBatch stored_values(const std::vector<std::string>& keys, const std::uint8_t* data, std::size_t size) {
  store::WriteBatch w;
  std::size_t at = 0;
  for (const auto& key : keys) {
    if (at >= size) break;
    std::size_t n = data[at];
    ++at;
    n = std::min(n, size - at);
    w.put(key, std::string(reinterpret_cast<const char*>(data + at), n));
    at += n;
  }
  return w;
}

}  // namespace cowboy::cbqs::fuzz
