// The §12.6 deterministic CBOR profile: RFC 8949 Appendix A's examples that
// are deterministic under the profile decode and re-encode to the same bytes;
// every rule of the profile has inputs that break it and the error they get.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cip11/cbor.h"
#include "cip11/json_cbor.h"

namespace cowboy::cip11::cbor {
namespace {

Bytes hex(std::string_view h) { return *from_hex(h); }

Res<Value> decode_hex(std::string_view h, Limits limits = {}) { return decode(hex(h), limits); }

// RFC 8949 Appendix A, the examples whose encoding is already deterministic
// under the profile (floats only as float64, no undefined/simple(n), no indefinite lengths).
TEST(Cbor, Rfc8949AppendixADeterministicExamplesRoundTrip) {
  const char* examples[] = {
      "00", "01", "0a", "17", "1818", "1819", "1864", "1903e8", "1a000f4240", "1b000000e8d4a51000",
      "1bffffffffffffffff", "c249010000000000000000", "3bffffffffffffffff", "c349010000000000000000", "20", "29",
      "3863", "3903e7",
      // float64 examples
      "fb3ff199999999999a", "fb7e37e43c8800759c", "fbc010666666666666",
      "f4", "f5", "f6",
      // tags
      "c074323031332d30332d32315432303a30343a30305a", "c11a514b67b0", "c1fb41d452d9ec200000", "d74401020304",
      "d818456449455446", "d82076687474703a2f2f7777772e6578616d706c652e636f6d",
      // strings
      "40", "4401020304", "60", "6161", "6449455446", "62225c", "62c3bc", "63e6b0b4", "64f0908591",
      // arrays and maps
      "80", "83010203", "8301820203820405", "98190102030405060708090a0b0c0d0e0f101112131415161718181819", "a0",
      "a201020304", "a26161016162820203", "826161a161626163", "a56161614161626142616361436164614461656145"};
  for (const char* e : examples) {
    auto v = decode_hex(e);
    ASSERT_TRUE(v.ok()) << e << ": " << to_string(v.error());
    EXPECT_EQ(to_hex(encode(*v)), e);
  }
}

TEST(Cbor, AppendixAValuesDecodeToWhatTheyMean) {
  EXPECT_EQ(decode_hex("1bffffffffffffffff")->number, 0xffffffffffffffffULL);
  auto minus_1000 = decode_hex("3903e7");
  EXPECT_EQ(minus_1000->kind, Value::Kind::kNegative);
  EXPECT_EQ(minus_1000->number, 999u);  // -1 - 999
  EXPECT_DOUBLE_EQ(decode_hex("fbc010666666666666")->real, -4.1);
  auto water = decode_hex("63e6b0b4");
  EXPECT_EQ(std::string(water->data.begin(), water->data.end()), "\xe6\xb0\xb4");
  auto map = decode_hex("a26161016162820203");
  ASSERT_EQ(map->items.size(), 4u);
  EXPECT_EQ(map->items[3].items.size(), 2u);  // "b": [2, 3]
  auto tagged = decode_hex("c11a514b67b0");
  EXPECT_EQ(tagged->kind, Value::Kind::kTag);
  EXPECT_EQ(tagged->number, 1u);
  EXPECT_EQ(tagged->items[0].number, 1363896240u);
}

TEST(Cbor, WriterEmitsShortestHeadsAndSortsMapKeysByEncodedBytes) {
  Writer w;
  w.integer(-1);
  w.integer(-24);
  w.integer(-25);
  w.uint(255);
  w.uint(256);
  w.uint(65536);
  w.uint(0x100000000ULL);
  EXPECT_EQ(to_hex(w.take()), "2037381818ff1901001a000100001b0000000100000000");

  // Bytewise order of the encoded keys: 10 (0a), 100 (1864), -1 (20), "z" (617a), "aa" (626161).
  auto text = [](std::string_view s) { return Value{Value::Kind::kText, 0, 0, Bytes(s.begin(), s.end()), {}}; };
  auto uint = [](std::uint64_t n) { return Value{Value::Kind::kUnsigned, n, 0, {}, {}}; };
  Value m{Value::Kind::kMap, 0, 0, {}, {text("aa"), uint(5), uint(100), uint(2), text("z"), uint(4),
                                         Value{Value::Kind::kNegative, 0, 0, {}, {}}, uint(3), uint(10), uint(1)}};
  EXPECT_EQ(to_hex(encode(m)), "a50a01186402200361""7a04626161""05");
}

struct Refused {
  const char* hex;
  Errc error;
};

TEST(Cbor, EveryProfileRuleRefusesItsViolations) {
  const Refused cases[] = {
      // indefinite lengths (RFC 8949 Appendix A's indefinite examples, and a stray break)
      {"5f42010243030405ff", Errc::kIndefiniteLength},
      {"7f657374726561646d696e67ff", Errc::kIndefiniteLength},
      {"9fff", Errc::kIndefiniteLength},
      {"bf61610161629f0203ffff", Errc::kIndefiniteLength},
      {"ff", Errc::kIndefiniteLength},
      // non-shortest heads, for integers and for lengths
      {"1817", Errc::kNonShortestInteger},
      {"190017", Errc::kNonShortestInteger},
      {"1900ff", Errc::kNonShortestInteger},
      {"1a0000ffff", Errc::kNonShortestInteger},
      {"1b00000000ffffffff", Errc::kNonShortestInteger},
      {"3817", Errc::kNonShortestInteger},
      {"5800", Errc::kNonShortestInteger},
      {"780161", Errc::kNonShortestInteger},
      {"9800", Errc::kNonShortestInteger},
      {"b800", Errc::kNonShortestInteger},
      {"d80100", Errc::kNonShortestInteger},
      // reserved additional information
      {"1c", Errc::kReservedEncoding},
      {"5d", Errc::kReservedEncoding},
      {"fe", Errc::kReservedEncoding},
      // unsorted and duplicate map keys
      {"a203040102", Errc::kUnsortedKeys},
      {"a2616202616101", Errc::kUnsortedKeys},
      {"a2616101186401", Errc::kUnsortedKeys},  // "a" (61..) after 100 (18..) is fine; 100 after "a" is not
      {"a201010102", Errc::kDuplicateKey},
      {"a2616101616102", Errc::kDuplicateKey},
      // invalid UTF-8: bad continuation, overlong, surrogate, beyond U+10FFFF, lone continuation, truncated sequence
      {"62c328", Errc::kInvalidUtf8},
      {"62c080", Errc::kInvalidUtf8},
      {"63eda080", Errc::kInvalidUtf8},
      {"64f4908080", Errc::kInvalidUtf8},
      {"6180", Errc::kInvalidUtf8},
      {"62e6b0", Errc::kInvalidUtf8},
      {"61ff", Errc::kInvalidUtf8},
      // floats: only finite float64
      {"f90000", Errc::kNotFloat64},
      {"f93c00", Errc::kNotFloat64},
      {"fa47c35000", Errc::kNotFloat64},
      {"f97c00", Errc::kNotFloat64},
      {"fb7ff0000000000000", Errc::kNonFiniteFloat},
      {"fbfff0000000000000", Errc::kNonFiniteFloat},
      {"fb7ff8000000000000", Errc::kNonFiniteFloat},
      // simple values other than false/true/null
      {"f7", Errc::kUnsupportedSimple},
      {"f0", Errc::kUnsupportedSimple},
      {"f8ff", Errc::kUnsupportedSimple},
      // truncation and trailing bytes
      {"", Errc::kCborTruncated},
      {"1901", Errc::kCborTruncated},
      {"440102", Errc::kCborTruncated},
      {"83010203" "04", Errc::kTrailingBytes},
      {"0000", Errc::kTrailingBytes},
      {"8301", Errc::kCborTruncated},
      {"a101", Errc::kCborTruncated},
      // a huge declared length is refused before anything is allocated
      {"5bffffffffffffffff", Errc::kCborTruncated},
      {"9bffffffffffffffff00", Errc::kCborTruncated},
      {"bbffffffffffffffff0000", Errc::kCborTruncated},
  };
  for (const auto& c : cases) {
    auto bytes = from_hex(c.hex);
    ASSERT_TRUE(bytes) << c.hex;
    auto v = decode(*bytes);
    ASSERT_FALSE(v.ok()) << c.hex << " decoded";
    EXPECT_EQ(v.error(), c.error) << c.hex << ": got " << to_string(v.error()) << ", want " << to_string(c.error);
  }
}

TEST(Cbor, DepthAndItemLimitsBoundTheTree) {
  std::string nested(16 * 2, '8');
  for (std::size_t i = 1; i < nested.size(); i += 2) nested[i] = '1';  // 16 x 0x81
  EXPECT_TRUE(decode_hex(nested + "00").ok());
  auto too_deep = decode_hex("81" + nested + "00");
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.error(), Errc::kTooDeep);

  auto many = decode_hex("83010203", Limits{16, 3});
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error(), Errc::kTooManyItems);  // the array and its three items are four
  EXPECT_TRUE(decode_hex("83010203", Limits{16, 4}).ok());
}

TEST(Cbor, ReaderGivesTypedErrorsForSchemaMismatches) {
  auto bytes = hex("6161");
  Reader r(bytes);
  r.uint();
  EXPECT_EQ(r.error(), Errc::kUnexpectedType);

  auto big = hex("1a00010000");
  Reader r2(big);
  EXPECT_EQ(r2.uint(), 65536u);
  r2.expect_end();
  EXPECT_TRUE(r2.ok());
}

TEST(Cbor, Utf8ValidatorAcceptsEveryEncodingLength) {
  EXPECT_TRUE(valid_utf8(as_bytes("plain ascii")));
  EXPECT_TRUE(valid_utf8(*from_hex("c3bc")));        // U+00FC
  EXPECT_TRUE(valid_utf8(*from_hex("e6b0b4")));      // U+6C34
  EXPECT_TRUE(valid_utf8(*from_hex("f0908591")));    // U+10151
  EXPECT_TRUE(valid_utf8(*from_hex("f48fbfbf")));    // U+10FFFF, the last code point
  EXPECT_TRUE(valid_utf8(*from_hex("ed9fbf")));      // U+D7FF, just below the surrogates
  EXPECT_FALSE(valid_utf8(*from_hex("e080af")));     // overlong three-byte '/'
  EXPECT_FALSE(valid_utf8(*from_hex("f8888080")));   // five-byte lead
}

// §12.6: JSON converts recursively; objects sort their text keys, integral
// numbers in range become the shortest integer, everything else float64.
TEST(Cbor, JsonConvertsUnderTheProfile) {
  auto to_cbor = [](const nlohmann::json& j) { return to_hex(encode(*from_json(j))); };
  EXPECT_EQ(to_cbor(nlohmann::json::parse(R"({"b": [2, 3], "a": 1, "aa": null})")), "a3616101616282020362616" "1f6");
  EXPECT_EQ(to_cbor(nlohmann::json::parse("2.0")), "02");                 // integral: an integer
  EXPECT_EQ(to_cbor(nlohmann::json::parse("-1000.0")), "3903e7");
  EXPECT_EQ(to_cbor(nlohmann::json::parse("1.5")), "fb3ff8000000000000");
  EXPECT_EQ(to_cbor(nlohmann::json::parse("18446744073709551615")), "1bffffffffffffffff");
  EXPECT_EQ(to_cbor(nlohmann::json::parse("1e20")), "fb4415af1d78b58c40");  // integral but beyond 2^64
  EXPECT_EQ(to_cbor(nlohmann::json::parse("-18446744073709551616.0")), "3bffffffffffffffff");
  EXPECT_EQ(to_cbor(nlohmann::json::parse(R"(["ü", true, false])")), "8362c3bcf5f4");
  EXPECT_EQ(from_json(nlohmann::json(std::nan(""))).error(), Errc::kNonFiniteFloat);
  EXPECT_EQ(from_json(nlohmann::json(std::string("\xff"))).error(), Errc::kInvalidUtf8);
  nlohmann::json deep = 1;
  for (int i = 0; i < 17; ++i) deep = nlohmann::json::array({deep});
  EXPECT_EQ(from_json(deep).error(), Errc::kTooDeep);
}

}  // namespace
}  // namespace cowboy::cip11::cbor
