// The CIP-11 deterministic CBOR profile (§12.6): RFC 8949 §4.2.1 deterministic
// encoding, plus
//   - definite lengths only (no indefinite strings, arrays or maps);
//   - every head in its shortest form;
//   - map keys strictly ascending by their encoded bytes (so no duplicates);
//   - text strings valid UTF-8, kept exactly as supplied;
//   - floats only as finite float64 (no float16/float32 forms, no NaN/Inf);
//   - of the simple values only false, true and null (docs/cip11.md §CBOR).
//
// Writer emits that profile. Reader is a strict pull decoder that refuses any
// input outside it; it never allocates (strings come back as views into the
// input) and checks every declared length against the bytes left, so a decoder
// built on it is bounded by its input. Frame bodies (frames.h) read straight
// from a Reader; decode() builds a generic Value tree for everything else.
//
// Head layout (one byte, then 0/1/2/4/8 argument bytes, big-endian):
//   +-------+-----------------+
//   | major | additional info |   ai 0..23 = the argument itself
//   | 3 bits|      5 bits     |   ai 24/25/26/27 = 1/2/4/8 argument bytes follow
//   +-------+-----------------+   ai 28..30 reserved, 31 indefinite: refused
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cip11/errc.h"
#include "common/bytes.h"

namespace cowboy::cip11::cbor {

enum class Major : std::uint8_t {
  kUnsigned = 0,
  kNegative = 1,
  kBytes = 2,
  kText = 3,
  kArray = 4,
  kMap = 5,
  kTag = 6,
  kSimple = 7,  // false/true/null and float64
};

class Writer {
 public:
  void uint(std::uint64_t v) { head(Major::kUnsigned, v); }
  /// The integer -1 - n (CBOR's major type 1 argument).
  void negative(std::uint64_t n) { head(Major::kNegative, n); }
  void integer(std::int64_t v);
  void bytes(ByteView b);
  void text(std::string_view t);
  void array(std::uint64_t count) { head(Major::kArray, count); }
  /// Callers write `count` key/value pairs next, keys already in ascending encoded order.
  void map(std::uint64_t count) { head(Major::kMap, count); }
  void tag(std::uint64_t number) { head(Major::kTag, number); }
  void boolean(bool v) { out_.push_back(v ? 0xf5 : 0xf4); }
  void null() { out_.push_back(0xf6); }
  /// Precondition: finite (the profile has no NaN/Inf).
  void float64(double v);
  void raw(ByteView encoded) { out_.insert(out_.end(), encoded.begin(), encoded.end()); }

  const Bytes& bytes_so_far() const { return out_; }
  Bytes take() { return std::move(out_); }

 private:
  void head(Major major, std::uint64_t argument);
  Bytes out_;
};

/// Strict pull decoder. Sticky: the first error is kept, later reads return
/// empty values, so a schema reader reads straight through and checks ok() once.
class Reader {
 public:
  explicit Reader(ByteView input) : in_(input) {}

  bool ok() const { return error_ == Errc{}; }
  Errc error() const { return error_; }
  void fail(Errc e) {
    if (ok()) error_ = e;
  }
  bool at_end() const { return at_ == in_.size(); }
  std::size_t position() const { return at_; }
  /// Fails with kTrailingBytes unless everything was read.
  void expect_end();

  /// The major type of the next item without consuming it; nullopt at the end or after an error.
  std::optional<Major> peek() const;
  bool next_is_null() const;

  std::uint64_t uint();
  std::uint64_t negative();  // returns n of the integer -1 - n
  ByteView bytes();
  std::string_view text();
  std::uint64_t array();  // the element count, checked against the bytes left
  std::uint64_t map();    // the pair count, checked against the bytes left
  std::uint64_t tag();
  bool boolean();
  void null();
  double float64();

 private:
  struct Head {
    Major major;
    std::uint8_t ai;
    std::uint64_t argument;
  };
  std::optional<Head> head();
  std::optional<Head> expect(Major major);
  ByteView take(std::uint64_t n);

  ByteView in_;
  std::size_t at_ = 0;
  Errc error_{};
};

bool valid_utf8(ByteView text);

/// A generic decoded item, for inputs without a fixed schema (tests, tools).
struct Value {
  enum class Kind : std::uint8_t { kUnsigned, kNegative, kBytes, kText, kArray, kMap, kTag, kFalse, kTrue, kNull, kFloat };
  Kind kind = Kind::kNull;
  std::uint64_t number = 0;  // kUnsigned value, kNegative's n (value -1 - n), kTag number
  double real = 0;           // kFloat
  Bytes data;                // kBytes, and kText's UTF-8
  std::vector<Value> items;  // kArray items; kMap keys and values alternating; kTag's one item

  bool operator==(const Value&) const = default;
};

struct Limits {
  unsigned max_depth = 16;
  std::size_t max_items = 65536;  // caps the tree's size whatever the input claims
};

/// Decodes exactly one item spanning all of `input`.
Res<Value> decode(ByteView input, Limits limits = {});
/// Deterministic encoding; map entries are sorted by encoded key here.
/// Precondition: no duplicate map keys, every float finite.
Bytes encode(const Value& value);

}  // namespace cowboy::cip11::cbor
