// The body codec shared by frames and the other CIP-11 records keyed 0..n-1
// (frames.h describes the shape). A record type lists its fields once, as
//   template <typename V> void fields(V& v, Record& r) { v(r.a), v(r.b), ...; }
// and Encoder, Decoder and Counter each walk that list. Internal to src/cip11.
#pragma once

#include <algorithm>
#include <limits>
#include <type_traits>

#include "cip11/cbor.h"
#include "cip11/frames.h"
#include "common/strong_id.h"

namespace cowboy::cip11::body {

struct Counter {
  std::uint64_t n = 0;
  template <typename T> Counter& operator()(const T&) { return ++n, *this; }
};

template <typename Body> std::uint64_t field_count() {
  static const std::uint64_t n = [] {
    Body body{};
    Counter c;
    fields(c, body);
    return c.n;
  }();
  return n;
}

// Enum discriminant bytes are the CBOR unsigned integer of the §12.6 byte.
template <typename E> constexpr bool kIsWireEnum =
    std::is_same_v<E, Role> || std::is_same_v<E, CancelReason> || std::is_same_v<E, GoodbyeReason>;

inline bool known(Role r) { return r == Role::kRunner || r == Role::kValidator; }
// Each table runs from 0x00 to its last variant with no gaps.
template <typename E> bool up_to(E value, E last) { return static_cast<std::uint8_t>(value) <= static_cast<std::uint8_t>(last); }
inline bool known(CancelReason r) { return up_to(r, CancelReason::kFailed); }
inline bool known(GoodbyeReason r) { return up_to(r, GoodbyeReason::kShutdown); }
inline bool known(RejectReason r) { return up_to(r, RejectReason::kOther); }

class Encoder {
 public:
  /// `limit` fields are written (canonical_frame_body leaves out the last one).
  explicit Encoder(std::uint64_t limit) : limit_(limit) { w_.map(limit); }

  template <typename T> Encoder& operator()(const T& value) {
    if (key_ < limit_) {
      w_.uint(key_);
      put(value);
    }
    ++key_;
    return *this;
  }
  Bytes take() { return w_.take(); }

 private:
  void put(std::uint64_t v) { w_.uint(v); }
  void put(std::uint32_t v) { w_.uint(v); }
  void put(std::uint16_t v) { w_.uint(v); }
  void put(std::uint8_t v) { w_.uint(v); }
  void put(bool v) { w_.boolean(v); }
  template <std::size_t N> void put(const std::array<std::uint8_t, N>& v) { w_.bytes(v); }
  void put(const Bytes& v) { w_.bytes(v); }
  void put(const std::string& v) { w_.text(v); }
  void put(const PubKey& v) { w_.bytes(v.wire()); }
  void put(const Sig& v) { w_.bytes(v.bytes); }
  template <typename E> requires kIsWireEnum<E> void put(E v) { w_.uint(static_cast<std::uint8_t>(v)); }
  void put(const AckStatus& v) {
    if (v.kind != AckStatus::Kind::kReject) return w_.uint(static_cast<std::uint8_t>(v.kind));
    w_.array(2);
    w_.uint(static_cast<std::uint8_t>(v.kind));
    w_.uint(static_cast<std::uint8_t>(v.reason));
  }
  template <typename Tag, typename Rep> void put(const StrongId<Tag, Rep>& v) { put(v.value); }  // its wire value alone
  template <typename T> void put(const std::optional<T>& v) {
    if (v) return put(*v);
    w_.null();
  }
  template <typename T> void put(const std::vector<T>& v) {
    w_.array(v.size());
    for (const auto& item : v) put(item);
  }

  cbor::Writer w_;
  std::uint64_t limit_;
  std::uint64_t key_ = 0;
};

class Decoder {
 public:
  Decoder(ByteView payload, std::uint64_t count) : r_(payload) {
    if (r_.map() != count && r_.ok()) fail(Errc::kWrongFieldCount);
  }

  template <typename T> Decoder& operator()(T& value) {
    if (!ok()) return *this;
    if (r_.uint() != key_ && r_.ok()) fail(Errc::kWrongKey);
    ++key_;
    if (ok()) get(value);
    return *this;
  }

  Res<Unit> finish() {
    r_.expect_end();
    if (!ok()) return Err{error()};
    return Unit{};
  }

 private:
  bool ok() const { return r_.ok(); }
  Errc error() const { return r_.error(); }
  void fail(Errc e) { r_.fail(e); }

  template <typename U> void get_uint(U& out) {
    const std::uint64_t v = r_.uint();
    if (v > std::numeric_limits<U>::max()) return fail(Errc::kOutOfRange);
    out = static_cast<U>(v);
  }
  void get(std::uint64_t& v) { v = r_.uint(); }
  void get(std::uint32_t& v) { get_uint(v); }
  void get(std::uint16_t& v) { get_uint(v); }
  void get(std::uint8_t& v) { get_uint(v); }
  void get(bool& v) { v = r_.boolean(); }
  template <std::size_t N> void get(std::array<std::uint8_t, N>& v) {
    ByteView b = r_.bytes();
    if (!ok()) return;
    if (b.size() != N) return fail(Errc::kWrongLength);
    std::copy(b.begin(), b.end(), v.begin());
  }
  void get(Bytes& v) {
    ByteView b = r_.bytes();
    v.assign(b.begin(), b.end());
  }
  void get(std::string& v) { v = r_.text(); }
  void get(PubKey& v) {
    ByteView b = r_.bytes();
    if (!ok()) return;
    auto key = PubKey::parse(b);
    if (!key) return fail(key.error());
    v = std::move(*key);
  }
  void get(Sig& v) {
    ByteView b = r_.bytes();
    if (!ok()) return;
    if (b.size() != 64 && b.size() != 65) return fail(Errc::kBadSignatureLength);
    v.bytes.assign(b.begin(), b.end());
  }
  template <typename E> requires kIsWireEnum<E> void get(E& v) {
    const std::uint64_t d = r_.uint();
    if (!ok()) return;
    if (d > 0xff || !known(static_cast<E>(d))) return fail(Errc::kUnknownVariant);
    v = static_cast<E>(d);
  }
  void get(AckStatus& v) {
    if (r_.peek() == cbor::Major::kArray) {
      if (r_.array() != 2 && ok()) return fail(Errc::kWrongFieldCount);
      if (r_.uint() != static_cast<std::uint8_t>(AckStatus::Kind::kReject) && ok())
        return fail(Errc::kUnknownVariant);  // only Reject carries a payload
      const std::uint64_t reason = r_.uint();
      if (!ok()) return;
      if (reason > 0xff || !known(static_cast<RejectReason>(reason))) return fail(Errc::kUnknownVariant);
      v = AckStatus::reject(static_cast<RejectReason>(reason));
      return;
    }
    const std::uint64_t d = r_.uint();
    if (!ok()) return;
    if (d == 0x00) {
      v = AckStatus::accepted();
    } else if (d == 0x01) {
      v = AckStatus::duplicate();
    } else {
      fail(Errc::kUnknownVariant);  // a bare 2 (Reject without its reason) included
    }
  }
  template <typename Tag, typename Rep> void get(StrongId<Tag, Rep>& v) { get(v.value); }
  template <typename T> void get(std::optional<T>& v) {
    if (r_.next_is_null()) {
      r_.null();
      v.reset();
      return;
    }
    get(v.emplace());
  }
  template <typename T> void get(std::vector<T>& v) {
    const std::uint64_t n = r_.array();  // bounded by the bytes left
    v.clear();
    for (std::uint64_t i = 0; i < n && ok(); ++i) get(v.emplace_back());
  }

  cbor::Reader r_;
  std::uint64_t key_ = 0;
};

template <typename Record> Bytes encode(const Record& record, std::uint64_t limit = field_count<Record>()) {
  Encoder e(limit);
  fields(e, const_cast<Record&>(record));  // the encoder only reads
  return e.take();
}

template <typename Record> Res<Record> decode(ByteView payload) {
  Record record{};
  Decoder d(payload, field_count<Record>());
  fields(d, record);
  if (auto ok = d.finish(); !ok) return Err{ok.error()};
  return record;
}

}  // namespace cowboy::cip11::body
