// Canonical binary encoding primitives (docs/protocol.md §A "Encoding").
//
//   integers   fixed width, big-endian: u8 u16 u32 u64 u128
//   bool       u8, 0 or 1; any other byte is an error
//   Bytes      u32 length, then the bytes
//   Vec<T>     u32 count, then each T
//   BytesN     N raw bytes (Bytes32, Address = 20)
//   Option<T>  u8 tag 0 = None, 1 = Some then T; any other tag is an error
//
// Reader is sticky: the first failure is recorded, every later read returns a
// zero value and does nothing, so decoders read straight through and check
// ok() once. No read ever goes past the input, and every length is checked
// against its cap and against the bytes remaining before anything is allocated.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"

namespace cowboy::codec {

enum class DecodeError : std::uint8_t {
  kNone = 0,
  kTruncated,        // input ended inside a value
  kTrailingBytes,    // a complete value followed by more bytes
  kBadVersion,       // a version byte other than the one the object requires
  kUnknownVariant,   // an enum / union tag outside the listed variants
  kBadBool,          // a bool byte other than 0 or 1
  kBadOptionTag,     // an Option tag other than 0 or 1
  kLengthOverCap,    // a declared length or count above its codec cap
  kInvalidValue,     // a structurally invalid value (e.g. an unknown key algorithm)
};

std::string_view to_string(DecodeError e);

class Writer {
 public:
  Writer() = default;
  explicit Writer(std::size_t reserve) { out_.reserve(reserve); }

  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { put_be(v, 2); }
  void u32(std::uint32_t v) { put_be(v, 4); }
  void u64(std::uint64_t v) { put_be(v, 8); }
  void u128(cowboy::u128 v) {
    put_be(static_cast<std::uint64_t>(v >> 64), 8);
    put_be(static_cast<std::uint64_t>(v), 8);
  }
  void boolean(bool v) { out_.push_back(v ? 1 : 0); }
  void raw(ByteView bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
  void raw(std::string_view text) { raw(as_bytes(text)); }
  /// Bytes: u32 length prefix then the bytes.
  void bytes(ByteView bytes) {
    u32(static_cast<std::uint32_t>(bytes.size()));
    raw(bytes);
  }
  template <std::size_t N>
  void fixed(const std::array<std::uint8_t, N>& a) { raw(ByteView(a)); }
  void count(std::size_t n) { u32(static_cast<std::uint32_t>(n)); }

  template <typename T, typename F>
  void option(const std::optional<T>& v, F&& put) {
    if (!v) { u8(0); return; }
    u8(1);
    put(*v);
  }

  const Bytes& data() const& { return out_; }
  Bytes take() && { return std::move(out_); }
  std::size_t size() const { return out_.size(); }

 private:
  void put_be(std::uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  Bytes out_;
};

class Reader {
 public:
  explicit Reader(ByteView in) : in_(in) {}

  bool ok() const { return error_ == DecodeError::kNone; }
  DecodeError error() const { return error_; }
  std::size_t remaining() const { return in_.size() - pos_; }
  std::size_t position() const { return pos_; }

  /// Records the first failure only.
  void fail(DecodeError e) {
    if (ok()) error_ = e;
  }

  std::uint8_t u8() { return static_cast<std::uint8_t>(get_be(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(get_be(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(get_be(4)); }
  std::uint64_t u64() { return get_be(8); }
  cowboy::u128 u128() {
    cowboy::u128 hi = get_be(8);
    cowboy::u128 lo = get_be(8);
    return hi << 64 | lo;
  }
  bool boolean();
  /// Reads a version byte and fails with kBadVersion unless it equals `expected`.
  void version(std::uint8_t expected);

  template <std::size_t N>
  std::array<std::uint8_t, N> fixed() {
    std::array<std::uint8_t, N> out{};
    if (take(N)) std::copy_n(in_.data() + pos_ - N, N, out.begin());
    return out;
  }
  /// Bytes with a u32 length, refused above `cap` before allocating.
  Bytes bytes(std::size_t cap);
  /// A u32 element count, refused above `cap` or when the remaining input cannot
  /// hold `count * min_element_bytes`. Returns 0 after a failure.
  std::uint32_t count(std::size_t cap, std::size_t min_element_bytes);
  /// Option tag: true for Some.
  bool option_tag();

  /// Succeeds only when every byte was consumed.
  void finish() {
    if (ok() && pos_ != in_.size()) fail(DecodeError::kTrailingBytes);
  }

 private:
  bool take(std::size_t n) {
    if (!ok()) return false;
    if (remaining() < n) {
      fail(DecodeError::kTruncated);
      return false;
    }
    pos_ += n;
    return true;
  }
  std::uint64_t get_be(int width) {
    if (!take(static_cast<std::size_t>(width))) return 0;
    std::uint64_t v = 0;
    for (int i = 0; i < width; ++i) v = v << 8 | in_[pos_ - width + i];
    return v;
  }

  ByteView in_;
  std::size_t pos_ = 0;
  DecodeError error_ = DecodeError::kNone;
};

}  // namespace cowboy::codec
