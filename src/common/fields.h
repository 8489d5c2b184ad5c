// One field list per type, walked twice (common/codec.h encoding rules).
//
// A type lists its fields once, in wire order:
//
//   COWBOY_FIELDS(Point) {
//     v.version();
//     v(x.id), v(x.key), v(x.note);                 // integers, bool, BytesN, optionals, nested types
//     v.bytes(x.payload, kMaxPayloadBytes);          // every length and count names its cap
//     v.list(x.tags, kMaxTags, 4, [&](auto& t) { v.text(t, kMaxTagBytes); });
//     v.check([&] { return x.id != 0; }, codec::DecodeError::kInvalidValue);
//   }
//
// codec::Put<Scope> writes the fields in that order; codec::Get<Scope> reads them
// back, bounding every length and count before it allocates and failing with the
// codec's typed errors (the Reader is sticky: the first failure is the answer).
// check() runs on decode only, at its place in the list, so a refusal is found
// where the old hand-written decoders found it.
//
// Scope is a tag type of the codec's own translation unit: Scope::kVersion is the
// byte version() writes and requires, and because argument-dependent lookup looks
// into a template argument's namespace, a nested type's field list in that unit's
// unnamed namespace is found too. A nested type without a field list is walked by
// its public put(Writer&, const T&) / get(Reader&, T&), found the same way; a
// nested std::variant is a tagged union (variant() below).
#pragma once

#include <concepts>
#include <optional>
#include <ranges>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "common/codec.h"
#include "common/strong_id.h"

namespace cowboy::codec {

/// The field list of `Type`: a template over the walker V (Put or Get) and the
/// value x (const for Put). [[maybe_unused]] keeps empty lists warning-free.
#define COWBOY_FIELDS(Type)                             \
  template <typename V, typename T>                     \
    requires std::same_as<std::remove_const_t<T>, Type> \
  void fields([[maybe_unused]] V& v, [[maybe_unused]] T& x)

template <typename Scope>
struct Put {
  Writer& w;

  void version() { w.u8(Scope::kVersion); }
  void operator()(std::uint8_t v) { w.u8(v); }
  void operator()(std::uint16_t v) { w.u16(v); }
  void operator()(std::uint32_t v) { w.u32(v); }
  void operator()(std::uint64_t v) { w.u64(v); }
  void operator()(u128 v) { w.u128(v); }
  void operator()(bool v) { w.boolean(v); }
  template <std::size_t N>
  void operator()(const std::array<std::uint8_t, N>& v) { w.fixed(v); }
  template <typename T>
  void operator()(const std::optional<T>& v) { option(v, [&](const T& x) { (*this)(x); }); }
  template <typename Tag, typename Rep>
  void operator()(const StrongId<Tag, Rep>& v) { (*this)(v.value); }  // the wire value alone
  /// A nested type: its field list, a tagged union, else its public codec.
  template <typename T>
  void operator()(const T& v) {
    if constexpr (requires { fields(*this, v); }) fields(*this, v);
    else if constexpr (requires { variant(v); }) variant(v);
    else put(w, v);
  }

  /// A wider integer stored as u32.
  template <std::integral Int>
  void u32(Int v) { w.u32(static_cast<std::uint32_t>(v)); }
  template <typename T, typename F>
  void option(const std::optional<T>& v, F&& each) { w.option(v, each); }
  void bytes(const Bytes& v, std::size_t /*cap*/) { w.bytes(v); }
  void text(const std::string& v, std::size_t /*cap*/) { w.bytes(as_bytes(v)); }
  /// A one-byte enum; `valid` is the decoder's.
  template <typename Enum, typename Valid>
  void enumeration(Enum v, Valid&&, DecodeError) { w.u8(static_cast<std::uint8_t>(v)); }
  template <typename T, typename F>
  void list(const std::vector<T>& v, std::size_t /*cap*/, std::size_t /*min_bytes*/, F&& each) {
    w.count(v.size());
    for (const auto& x : v) each(x);
  }
  /// A map's entries in key order: a count, then each(key, value).
  template <typename Map, typename F>
  void map(const Map& m, std::size_t /*cap*/, std::size_t /*min_bytes*/, F&& each) {
    w.count(m.size());
    for (const auto& [key, value] : m) each(key, value);
  }
  /// A key that is not on the wire: the decoder takes it from the value.
  template <typename K>
  void derived(const K&, const K&) {}
  /// A value stored as its own encoding inside a Bytes field.
  template <typename T, typename Encode, typename Decode>
  void nested(const T& v, std::size_t /*cap*/, Encode&& encode, Decode&&) { w.bytes(encode(v)); }
  /// Tagged union: u8 tag (the alternative's kTag), then the alternative.
  template <typename... Ts>
  void variant(const std::variant<Ts...>& v) {
    std::visit(
        [&](const auto& alt) {
          w.u8(std::decay_t<decltype(alt)>::kTag);
          (*this)(alt);
        },
        v);
  }
  template <typename Pred>
  void check(Pred&&, DecodeError) {}
};

template <typename Scope>
struct Get {
  Reader& r;

  void version() { r.version(Scope::kVersion); }
  void operator()(std::uint8_t& v) { v = r.u8(); }
  void operator()(std::uint16_t& v) { v = r.u16(); }
  void operator()(std::uint32_t& v) { v = r.u32(); }
  void operator()(std::uint64_t& v) { v = r.u64(); }
  void operator()(u128& v) { v = r.u128(); }
  void operator()(bool& v) { v = r.boolean(); }
  template <std::size_t N>
  void operator()(std::array<std::uint8_t, N>& v) { v = r.fixed<N>(); }
  template <typename T>
  void operator()(std::optional<T>& v) { option(v, [&](T& x) { (*this)(x); }); }
  template <typename Tag, typename Rep>
  void operator()(StrongId<Tag, Rep>& v) { (*this)(v.value); }
  template <typename T>
  void operator()(T& v) {
    if constexpr (requires { fields(*this, v); }) fields(*this, v);
    else if constexpr (requires { variant(v); }) variant(v);
    else get(r, v);
  }

  template <std::integral Int>
  void u32(Int& v) { v = r.u32(); }
  template <typename T, typename F>
  void option(std::optional<T>& v, F&& each) {
    if (!r.option_tag()) return;
    T x{};
    each(x);
    v = std::move(x);
  }
  void bytes(Bytes& v, std::size_t cap) { v = r.bytes(cap); }
  void text(std::string& v, std::size_t cap) {
    Bytes b = r.bytes(cap);
    v.assign(b.begin(), b.end());
  }
  /// Fails with `e` unless valid(byte).
  template <typename Enum, typename Valid>
  void enumeration(Enum& v, Valid&& valid, DecodeError e) {
    std::uint8_t b = r.u8();
    if (r.ok() && !valid(b)) r.fail(e);
    v = static_cast<Enum>(b);
  }
  /// At most `cap` elements, each at least `min_bytes` long on the wire; the
  /// vector holds the elements before the one `each` reads.
  template <typename T, typename F>
  void list(std::vector<T>& v, std::size_t cap, std::size_t min_bytes, F&& each) {
    std::uint32_t n = r.count(cap, min_bytes);
    v.clear();
    v.reserve(n);
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
      T x{};
      each(x);
      v.push_back(std::move(x));
    }
  }
  /// At most `cap` entries, each at least `min_bytes` long, in strictly ascending
  /// key order (else kInvalidValue): anything else is not the encoding of a map.
  template <typename Map, typename F>
  void map(Map& m, std::size_t cap, std::size_t min_bytes, F&& each) {
    using Entry = std::ranges::range_value_t<Map>;
    using Key = std::remove_const_t<typename Entry::first_type>;
    std::uint32_t n = r.count(cap, min_bytes);
    std::optional<Key> last;
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
      Key key{};
      typename Entry::second_type value{};
      each(key, value);
      if (!r.ok()) break;
      if (last && !(*last < key)) r.fail(DecodeError::kInvalidValue);
      last = key;
      m[key] = std::move(value);
    }
  }
  template <typename K>
  void derived(K& key, const K& from) { key = from; }
  /// `decode(ByteView)` returns Result<T, DecodeError>; its error is the answer.
  template <typename T, typename Encode, typename Decode>
  void nested(T& v, std::size_t cap, Encode&&, Decode&& decode) {
    Bytes b = r.bytes(cap);
    if (!r.ok()) return;
    auto decoded = decode(ByteView(b));
    if (!decoded) return r.fail(decoded.error());
    v = std::move(*decoded);
  }
  template <typename... Ts>
  void variant(std::variant<Ts...>& out) {
    std::uint8_t tag = r.u8();
    if (r.ok()) alternative(out, tag);
  }
  template <typename Pred>
  void check(Pred&& holds, DecodeError e) {
    if (r.ok() && !holds()) r.fail(e);
  }

 private:
  template <std::size_t I = 0, typename... Ts>
  void alternative(std::variant<Ts...>& out, std::uint8_t tag) {
    if constexpr (I < sizeof...(Ts)) {
      using Alt = std::variant_alternative_t<I, std::variant<Ts...>>;
      if (Alt::kTag == tag) {
        Alt alt{};
        (*this)(alt);
        out = std::move(alt);
        return;
      }
      alternative<I + 1>(out, tag);
    } else {
      r.fail(DecodeError::kUnknownVariant);
    }
  }
};

/// A whole value through its field list.
template <typename Scope, typename T>
Bytes encode_fields(const T& value) {
  Writer w;
  Put<Scope>{w}(value);
  return std::move(w).take();
}
/// Strict: the whole input is exactly one T.
template <typename Scope, typename T>
Result<T, DecodeError> decode_fields(ByteView input) {
  Reader r(input);
  T value{};
  Get<Scope>{r}(value);
  r.finish();
  if (!r.ok()) return Err{r.error()};
  return value;
}

}  // namespace cowboy::codec
