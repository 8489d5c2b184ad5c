#include "common/bytes.h"

#include <sodium.h>

#include <algorithm>

namespace cowboy {

std::string to_hex(ByteView bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (auto b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 0x0f]);
  }
  return out;
}

std::string to_base64(ByteView bytes) {
  std::string out(sodium_base64_encoded_len(bytes.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), bytes.data(), bytes.size(), sodium_base64_VARIANT_ORIGINAL);
  out.pop_back();  // the terminating NUL
  return out;
}

bool is_utf8(ByteView b) {
  for (std::size_t i = 0; i < b.size();) {
    const std::uint8_t c = b[i];
    std::size_t n;          // continuation bytes
    std::uint8_t lo = 0x80, hi = 0xbf;  // the range of the first continuation byte
    if (c < 0x80) n = 0;
    else if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c == 0xe0) lo = 0xa0;  // overlong
      if (c == 0xed) hi = 0x9f;  // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c == 0xf0) lo = 0x90;  // overlong
      if (c == 0xf4) hi = 0x8f;  // past U+10FFFF
    } else {
      return false;
    }
    if (b.size() - i <= n) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const std::uint8_t x = b[i + k];
      if (x < (k == 1 ? lo : 0x80) || x > (k == 1 ? hi : 0xbf)) return false;
    }
    i += n + 1;
  }
  return true;
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<Bytes> from_hex(std::string_view hex) {
  if (hex.starts_with("0x") || hex.starts_with("0X")) hex.remove_prefix(2);
  if (hex.size() % 2 != 0) return std::nullopt;
  Bytes out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

std::string u128_to_string(u128 value) {
  if (value == 0) return "0";
  std::string out;
  while (value != 0) {
    out.push_back(static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::optional<u128> u128_from_string(std::string_view text) {
  if (text.empty() || text.size() > 39) return std::nullopt;
  u128 value = 0;
  const u128 max = ~u128{0};
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    unsigned digit = static_cast<unsigned>(c - '0');
    if (value > (max - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace cowboy
