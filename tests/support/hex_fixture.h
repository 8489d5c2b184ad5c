// Byte-exact fixture files: hex digits, whitespace ignored, '#' starts a
// comment line. The files are the contract a codec is checked against.
#pragma once

#include <cctype>
#include <fstream>
#include <optional>
#include <string>

#include "common/bytes.h"

namespace cowboy::testing {

inline std::optional<Bytes> read_hex_fixture(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line, hex;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '#') continue;
    for (char c : line)
      if (!std::isspace(static_cast<unsigned char>(c))) hex.push_back(c);
  }
  return from_hex(hex);
}

/// `comment` becomes the first line; the hex follows at 32 bytes a line.
inline void write_hex_fixture(const std::string& path, const std::string& comment, ByteView bytes) {
  std::ofstream out(path);
  out << "# " << comment << "\n";
  const std::string hex = to_hex(bytes);
  for (std::size_t i = 0; i < hex.size(); i += 64) out << hex.substr(i, 64) << "\n";
}

}  // namespace cowboy::testing
