#include "common/codec.h"

namespace cowboy::codec {

std::string_view to_string(DecodeError e) {
  switch (e) {
    case DecodeError::kNone: return "ok";
    case DecodeError::kTruncated: return "truncated input";
    case DecodeError::kTrailingBytes: return "trailing bytes after a complete value";
    case DecodeError::kBadVersion: return "unsupported version byte";
    case DecodeError::kUnknownVariant: return "unknown variant tag";
    case DecodeError::kBadBool: return "bool byte other than 0 or 1";
    case DecodeError::kBadOptionTag: return "option tag other than 0 or 1";
    case DecodeError::kLengthOverCap: return "declared length above its cap";
    case DecodeError::kInvalidValue: return "invalid value";
  }
  return "unknown decode error";
}

bool Reader::boolean() {
  std::uint8_t b = u8();
  if (b > 1) fail(DecodeError::kBadBool);
  return b == 1;
}

void Reader::version(std::uint8_t expected) {
  std::uint8_t v = u8();
  if (ok() && v != expected) fail(DecodeError::kBadVersion);
}

Bytes Reader::bytes(std::size_t cap) {
  std::uint32_t len = u32();
  if (!ok()) return {};
  if (len > cap) {
    fail(DecodeError::kLengthOverCap);
    return {};
  }
  if (len > remaining()) {
    fail(DecodeError::kTruncated);
    return {};
  }
  Bytes out(in_.begin() + static_cast<std::ptrdiff_t>(pos_),
            in_.begin() + static_cast<std::ptrdiff_t>(pos_ + len));
  pos_ += len;
  return out;
}

std::uint32_t Reader::count(std::size_t cap, std::size_t min_element_bytes) {
  std::uint32_t n = u32();
  if (!ok()) return 0;
  if (n > cap) {
    fail(DecodeError::kLengthOverCap);
    return 0;
  }
  if (static_cast<std::uint64_t>(n) * min_element_bytes > remaining()) {
    fail(DecodeError::kTruncated);
    return 0;
  }
  return n;
}

bool Reader::option_tag() {
  std::uint8_t tag = u8();
  if (tag > 1) fail(DecodeError::kBadOptionTag);
  return ok() && tag == 1;
}

}  // namespace cowboy::codec
