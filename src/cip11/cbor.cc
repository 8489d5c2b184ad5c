#include "cip11/cbor.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>

namespace cowboy::cip11::cbor {

// ---- Writer ----------------------------------------------------------------

void Writer::head(Major major, std::uint64_t argument) {
  const auto m = static_cast<std::uint8_t>(static_cast<std::uint8_t>(major) << 5);
  auto put_be = [this](std::uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  if (argument < 24) {
    out_.push_back(static_cast<std::uint8_t>(m | argument));
  } else if (argument <= 0xff) {
    out_.push_back(m | 24);
    put_be(argument, 1);
  } else if (argument <= 0xffff) {
    out_.push_back(m | 25);
    put_be(argument, 2);
  } else if (argument <= 0xffffffff) {
    out_.push_back(m | 26);
    put_be(argument, 4);
  } else {
    out_.push_back(m | 27);
    put_be(argument, 8);
  }
}

void Writer::integer(std::int64_t v) {
  if (v >= 0) {
    uint(static_cast<std::uint64_t>(v));
  } else {
    negative(static_cast<std::uint64_t>(-(v + 1)));
  }
}

void Writer::bytes(ByteView b) {
  head(Major::kBytes, b.size());
  raw(b);
}

void Writer::text(std::string_view t) {
  head(Major::kText, t.size());
  raw(as_bytes(t));
}

void Writer::float64(double v) {
  assert(std::isfinite(v));
  const auto bits = std::bit_cast<std::uint64_t>(v);
  out_.push_back(0xfb);
  for (int i = 7; i >= 0; --i) out_.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
}

// ---- Reader ----------------------------------------------------------------

ByteView Reader::take(std::uint64_t n) {
  if (!ok()) return {};
  if (n > in_.size() - at_) {
    fail(Errc::kCborTruncated);
    return {};
  }
  ByteView out = in_.subspan(at_, static_cast<std::size_t>(n));
  at_ += static_cast<std::size_t>(n);
  return out;
}

std::optional<Reader::Head> Reader::head() {
  ByteView first = take(1);
  if (first.empty()) return std::nullopt;
  const auto major = static_cast<Major>(first[0] >> 5);
  const std::uint8_t ai = first[0] & 0x1f;
  if (ai == 31) {
    fail(Errc::kIndefiniteLength);  // also a stray "break" (0xff)
    return std::nullopt;
  }
  if (ai >= 28) {
    fail(Errc::kReservedEncoding);
    return std::nullopt;
  }
  if (ai < 24) return Head{major, ai, ai};
  const int n = 1 << (ai - 24);  // 1, 2, 4, 8 argument bytes
  ByteView arg = take(static_cast<std::uint64_t>(n));
  if (arg.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (auto b : arg) v = (v << 8) | b;
  if (major == Major::kSimple) return Head{major, ai, v};  // floats and simple(n): checked by the caller
  // Shortest form: each width is used only for values the narrower one cannot hold.
  const std::uint64_t floor = ai == 24 ? 24 : ai == 25 ? 0x100 : ai == 26 ? 0x10000 : 0x100000000ULL;
  if (v < floor) {
    fail(Errc::kNonShortestInteger);
    return std::nullopt;
  }
  return Head{major, ai, v};
}

std::optional<Major> Reader::peek() const {
  if (!ok() || at_end()) return std::nullopt;
  return static_cast<Major>(in_[at_] >> 5);
}

bool Reader::next_is_null() const { return ok() && !at_end() && in_[at_] == 0xf6; }

void Reader::expect_end() {
  if (ok() && !at_end()) fail(Errc::kTrailingBytes);
}

std::optional<Reader::Head> Reader::expect(Major major) {
  auto p = peek();
  if (!p) {
    if (ok()) fail(Errc::kCborTruncated);
    return std::nullopt;
  }
  if (*p != major) {
    fail(Errc::kUnexpectedType);
    return std::nullopt;
  }
  return head();
}

std::uint64_t Reader::uint() {
  auto h = expect(Major::kUnsigned);
  return h ? h->argument : 0;
}

std::uint64_t Reader::negative() {
  auto h = expect(Major::kNegative);
  return h ? h->argument : 0;
}

ByteView Reader::bytes() {
  auto h = expect(Major::kBytes);
  return h ? take(h->argument) : ByteView{};
}

std::string_view Reader::text() {
  auto h = expect(Major::kText);
  if (!h) return {};
  ByteView t = take(h->argument);
  if (!ok()) return {};
  if (!valid_utf8(t)) {
    fail(Errc::kInvalidUtf8);
    return {};
  }
  return {reinterpret_cast<const char*>(t.data()), t.size()};
}

std::uint64_t Reader::array() {
  auto h = expect(Major::kArray);
  if (!h) return 0;
  if (h->argument > in_.size() - at_) {  // every element takes at least one byte
    fail(Errc::kCborTruncated);
    return 0;
  }
  return h->argument;
}

std::uint64_t Reader::map() {
  auto h = expect(Major::kMap);
  if (!h) return 0;
  if (h->argument > (in_.size() - at_) / 2) {  // every pair takes at least two bytes
    fail(Errc::kCborTruncated);
    return 0;
  }
  return h->argument;
}

std::uint64_t Reader::tag() {
  auto h = expect(Major::kTag);
  return h ? h->argument : 0;
}

namespace {
// The simple-type item kinds the profile admits.
enum class Simple { kFalse, kTrue, kNull, kFloat };

std::optional<Simple> classify_simple(std::uint8_t ai, std::uint64_t argument, Errc& error) {
  switch (ai) {
    case 20: return Simple::kFalse;
    case 21: return Simple::kTrue;
    case 22: return Simple::kNull;
    case 25:
    case 26: error = Errc::kNotFloat64; return std::nullopt;
    case 27: {
      if (!std::isfinite(std::bit_cast<double>(argument))) {
        error = Errc::kNonFiniteFloat;
        return std::nullopt;
      }
      return Simple::kFloat;
    }
    default: error = Errc::kUnsupportedSimple; return std::nullopt;  // undefined, simple(n)
  }
}
}  // namespace

bool Reader::boolean() {
  auto h = expect(Major::kSimple);
  if (!h) return false;
  if (h->ai != 20 && h->ai != 21) {
    fail(Errc::kUnexpectedType);
    return false;
  }
  return h->ai == 21;
}

void Reader::null() {
  auto h = expect(Major::kSimple);
  if (h && h->ai != 22) fail(Errc::kUnexpectedType);
}

double Reader::float64() {
  auto h = expect(Major::kSimple);
  if (!h) return 0;
  Errc e{};
  auto kind = classify_simple(h->ai, h->argument, e);
  if (!kind) {
    fail(e);
    return 0;
  }
  if (*kind != Simple::kFloat) {
    fail(Errc::kUnexpectedType);
    return 0;
  }
  return std::bit_cast<double>(h->argument);
}

// ---- generic tree ----------------------------------------------------------

namespace {

int compare_bytes(ByteView a, ByteView b) {
  const auto n = std::min(a.size(), b.size());
  if (n) {
    if (int c = std::memcmp(a.data(), b.data(), n)) return c;
  }
  return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

class TreeDecoder {
 public:
  TreeDecoder(Reader& r, ByteView input, Limits limits) : r_(r), input_(input), limits_(limits) {}

  /// Decodes one item into `out`, checking it against the profile.
  void item(unsigned depth_left, Value& out) {
    if (!r_.ok()) return;
    if (++items_ > limits_.max_items) return r_.fail(Errc::kTooManyItems);
    auto major = r_.peek();
    if (!major) return r_.fail(Errc::kCborTruncated);
    switch (*major) {
      case Major::kUnsigned: out.kind = Value::Kind::kUnsigned; out.number = r_.uint(); return;
      case Major::kNegative: out.kind = Value::Kind::kNegative; out.number = r_.negative(); return;
      case Major::kBytes: {
        out.kind = Value::Kind::kBytes;
        ByteView b = r_.bytes();
        out.data.assign(b.begin(), b.end());
        return;
      }
      case Major::kText: {
        out.kind = Value::Kind::kText;
        auto t = r_.text();
        out.data.assign(t.begin(), t.end());
        return;
      }
      case Major::kArray: {
        out.kind = Value::Kind::kArray;
        if (depth_left == 0) return r_.fail(Errc::kTooDeep);
        const auto n = r_.array();
        for (std::uint64_t i = 0; i < n && r_.ok(); ++i) item(depth_left - 1, out.items.emplace_back());
        return;
      }
      case Major::kMap: {
        out.kind = Value::Kind::kMap;
        if (depth_left == 0) return r_.fail(Errc::kTooDeep);
        const auto n = r_.map();
        ByteView previous_key;
        for (std::uint64_t i = 0; i < n && r_.ok(); ++i) {
          const auto key_start = r_.position();
          item(depth_left - 1, out.items.emplace_back());
          if (!r_.ok()) return;
          // The input is canonical up to here, so a key's bytes are its deterministic encoding.
          ByteView key_bytes = input_.subspan(key_start, r_.position() - key_start);
          if (i > 0) {
            const int c = compare_bytes(previous_key, key_bytes);
            if (c == 0) return r_.fail(Errc::kDuplicateKey);
            if (c > 0) return r_.fail(Errc::kUnsortedKeys);
          }
          previous_key = key_bytes;
          item(depth_left - 1, out.items.emplace_back());
        }
        return;
      }
      case Major::kTag: {
        out.kind = Value::Kind::kTag;
        if (depth_left == 0) return r_.fail(Errc::kTooDeep);
        out.number = r_.tag();
        item(depth_left - 1, out.items.emplace_back());
        return;
      }
      case Major::kSimple: return simple(out);
    }
  }

 private:
  void simple(Value& v) {
    switch (input_[r_.position()] & 0x1f) {
      case 20: v.kind = Value::Kind::kFalse; r_.boolean(); return;
      case 21: v.kind = Value::Kind::kTrue; r_.boolean(); return;
      case 22: v.kind = Value::Kind::kNull; r_.null(); return;
      default:  // float64, or refused by float64() with the profile's error for this head
        v.kind = Value::Kind::kFloat;
        v.real = r_.float64();
        return;
    }
  }

  Reader& r_;
  ByteView input_;
  Limits limits_;
  std::size_t items_ = 0;
};

}  // namespace

Res<Value> decode(ByteView input, Limits limits) {
  Reader r(input);
  Value v;
  TreeDecoder(r, input, limits).item(limits.max_depth, v);
  r.expect_end();
  if (!r.ok()) return Err{r.error()};
  return v;
}

namespace {
void encode_into(Writer& w, const Value& v) {
  using K = Value::Kind;
  switch (v.kind) {
    case K::kUnsigned: w.uint(v.number); break;
    case K::kNegative: w.negative(v.number); break;
    case K::kBytes: w.bytes(v.data); break;
    case K::kText: w.text({reinterpret_cast<const char*>(v.data.data()), v.data.size()}); break;
    case K::kArray:
      w.array(v.items.size());
      for (const auto& item : v.items) encode_into(w, item);
      break;
    case K::kMap: {
      std::vector<std::pair<Bytes, const Value*>> entries;
      for (std::size_t i = 0; i + 1 < v.items.size(); i += 2) entries.emplace_back(encode(v.items[i]), &v.items[i + 1]);
      std::sort(entries.begin(), entries.end(),
                [](const auto& a, const auto& b) { return compare_bytes(a.first, b.first) < 0; });
      w.map(entries.size());
      for (const auto& [key, value] : entries) {
        w.raw(key);
        encode_into(w, *value);
      }
      break;
    }
    case K::kTag:
      w.tag(v.number);
      encode_into(w, v.items.at(0));
      break;
    case K::kFalse: w.boolean(false); break;
    case K::kTrue: w.boolean(true); break;
    case K::kNull: w.null(); break;
    case K::kFloat: w.float64(v.real); break;
  }
}
}  // namespace

Bytes encode(const Value& value) {
  Writer w;
  encode_into(w, value);
  return w.take();
}

// ---- UTF-8 -----------------------------------------------------------------

bool valid_utf8(ByteView s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const std::uint8_t c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    int extra;
    std::uint32_t cp;
    std::uint32_t min;
    if ((c & 0xe0) == 0xc0) {
      extra = 1, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      extra = 2, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      extra = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;  // a continuation byte first, or 0xf8..0xff
    }
    if (s.size() - i <= static_cast<std::size_t>(extra)) return false;
    for (int k = 1; k <= extra; ++k) {
      const std::uint8_t cc = s[i + k];
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min) return false;                       // overlong
    if (cp > 0x10ffff) return false;                  // beyond Unicode
    if (cp >= 0xd800 && cp <= 0xdfff) return false;   // UTF-16 surrogate
    i += static_cast<std::size_t>(extra) + 1;
  }
  return true;
}

}  // namespace cowboy::cip11::cbor
