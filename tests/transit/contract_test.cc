// The contract: byte-exact canonical bytes, digests and signatures, every
// refusal of the strict decoder, and the two signing domains.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "samples.h"
#include "transit/contract/envelope.h"

namespace cowboy::transit {
namespace {

using testing::replace;
using testing::sample_query;
using testing::sample_request;
using testing::seed_of;

// Fixtures are written with this definition, so that they stay fixed when the
// schema (and with it this build's definition) changes.
const std::string kFixtureDefinition = "transit.v1:fixture";

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(COWBOY_FIXTURE_DIR) + "/transit/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

Request fixture_request() {
  Request r = sample_request();
  r.definition.value = kFixtureDefinition;
  return r;
}
Query fixture_query() {
  Query q = sample_query();
  q.definition.value = kFixtureDefinition;
  return q;
}

// A canonical signed request of this build, as text, for the refusal tests.
std::string signed_text() { return to_json(sign(sample_request(), seed_of(0))); }

std::string refusal(std::string_view body) {
  auto r = decode_signed_request(body);
  return r.ok() ? "accepted" : std::string(name_of(r.error().reason));
}

class ContractTest : public ::testing::Test {
 protected:
  void SetUp() override { crypto::init(); }
};

TEST_F(ContractTest, CanonicalBytesDigestAndSignatureMatchTheFixtures) {
  const Request r = fixture_request();
  EXPECT_EQ(to_json(r), read_fixture("request.json"));
  EXPECT_EQ(to_hex(request_digest(r)), read_fixture("request.digest.hex"));
  EXPECT_EQ(to_hex(sign(r, seed_of(0)).signature), read_fixture("request.signature.hex"));
  const Query q = fixture_query();
  EXPECT_EQ(to_json(q), read_fixture("query.json"));
  EXPECT_EQ(to_hex(query_digest(q)), read_fixture("query.digest.hex"));
  EXPECT_EQ(to_hex(sign(q, seed_of(0)).signature), read_fixture("query.signature.hex"));
}

// The effect fixtures (also the fuzz seeds, scripts/fuzz-seeds.sh) are the
// canonical spelling of these values: a turn carrying an intent with its
// observation budget, an observation, a filtered listing's continuation.
TEST_F(ContractTest, TheEffectFixturesAreTheCanonicalSpellingOfTheirValues) {
  const auto request = [](PrincipalId principal, Id sequence, Command op) {
    return Request{Version{}, Definition{kFixtureDefinition}, {"dev"}, principal, sequence, std::move(op)};
  };
  Turn turn{Pid{7}, 2, 1, ResourceId{1}, Revision{1}, {}, {}, {}, {}, std::nullopt};
  turn.mutations.items = {EntryMutation{{{'k'}}, EntryValue{{'v'}}}, EntryMutation{{{'g', 'o', 'n', 'e'}}, std::nullopt}};
  turn.views.items = {ResourceId{1}};
  turn.outputs.items = {OutputProposal{Pid{8}, {{'o'}}}};
  turn.effect = EffectIntent{PrincipalId{5}, TrustedMs{1'800'000'000'000}, {{0xab}}, 2};
  const std::vector<std::pair<std::string, Request>> requests = {
      {"turn.json", request(PrincipalId{5}, 3, turn)},
      {"observe_effect.json", request(PrincipalId{5}, 4, ObserveEffect{3, {{0x00, 0xff}}, true})},
  };
  // As the seeds are: with this build's definition, which the decoder requires.
  const auto as_built = [](std::string text) {
    return text.replace(text.find(kFixtureDefinition), kFixtureDefinition.size(), definition());
  };
  for (const auto& [name, expected] : requests) {
    EXPECT_EQ(to_json(expected), read_fixture(name)) << name;
    auto decoded = from_json<Request>(as_built(read_fixture(name)), kMaxRequestBytes);
    ASSERT_TRUE(decoded.ok()) << name << ": " << decoded.error().message();
    EXPECT_EQ(decoded->op, expected.op) << name;
  }
  const Query listing{Version{}, Definition{kFixtureDefinition}, {"dev"}, PrincipalId{5},
                      ListEffects{Pid{7}, EffectFilter::kOverdue, Cursor{Position{9}, 3}}};
  EXPECT_EQ(to_json(listing), read_fixture("list_effects.json"));
  auto decoded = from_json<Query>(as_built(read_fixture("list_effects.json")), kMaxRequestBytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  EXPECT_EQ(decoded->op, listing.op);
}

TEST_F(ContractTest, TheDigestIsSha256OfDomainNulJson) {
  const Request r = fixture_request();
  const std::string text = std::string(kRequestDomain) + '\0' + to_json(r);
  EXPECT_EQ(request_digest(r), crypto::sha256(as_bytes(text)));
}

TEST_F(ContractTest, ValuesAreSpelledCanonically) {
  // Defaults and nulls included, declaration order, single-key unions, fixed arrays as JSON arrays.
  const std::string json = to_json(sample_request());
  EXPECT_NE(json.find(R"("pid_scope":null,"expected_revision":1)"), std::string::npos);
  EXPECT_NE(json.find(R"("scope":{"realm":{}})"), std::string::npos);
  EXPECT_NE(json.find(R"("public_key":[)"), std::string::npos);
  EXPECT_EQ(json.find(' '), std::string::npos);
  // Only ", \ and U+0000..U+001F are escaped; other UTF-8 passes through.
  std::string out;
  json::write_string(out, std::string("a\"b\\c\n\x01\x7f\xc3\xa9", 10));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001\x7f\xc3\xa9\"");
  Hex<4> hex{{0xab, 0x01}};
  EXPECT_EQ(to_json(hex), "\"ab01\"");
}

TEST_F(ContractTest, EveryTypeRoundTrips) {
  const auto s = sign(sample_request(), seed_of(0));
  Digest digest{};
  auto back = decode_signed_request(to_json(s), &digest);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(digest, request_digest(s.request));  // hashed from the body's own inner text
  EXPECT_EQ(to_json(*back), to_json(s));
  EXPECT_EQ(back->request.op, s.request.op);
  Receipt receipt{Version{}, Definition{definition()}, {"dev"}, Position{7}, PrincipalId{1}, 3, request_digest(s.request), TrustedMs{1700000000000},
                  PrincipalCreated{PrincipalId{2}, 2, 2, 2}};
  auto r = from_json<Receipt>(to_json(receipt), kMaxAnswerBytes);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(*r, receipt);
  Response response{Version{}, Definition{definition()}, {"dev"}, Position{9}, Identity{PrincipalId{1}, Permissions{kReadOnly}, Pid{5}, 4, 3}};
  auto p = from_json<Response>(to_json(response), kMaxAnswerBytes);
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(*p, response);
}

TEST_F(ContractTest, UnknownVersionsAreRefused) {
  EXPECT_EQ(refusal(replace(signed_text(), R"("version":1)", R"("version":2)")), "unknown_version");
  EXPECT_EQ(refusal(replace(signed_text(), R"("version":1)", R"("version":0)")), "unknown_version");
  EXPECT_EQ(refusal(replace(signed_text(), R"("version":1)", R"("version":"1")")), "unknown_version");
}

TEST_F(ContractTest, AMissingOrForeignDefinitionIsRefusedInEverySpelling) {
  const std::string text = signed_text();
  const std::string field = "\"definition\":\"" + definition() + "\",";
  EXPECT_EQ(refusal(replace(text, field, "")), "missing_definition");
  const std::string zeros = "transit.v1:" + std::string(64, '0');
  std::string upper = definition();
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& spelling : {std::string("\"" + zeros + "\""), std::string("1"), std::string("null"),
                                      std::string("\"1\""), std::string("\"\""), "\"" + upper + "\"",
                                      "\"" + definition() + " \"", std::string("\"transit.v1\"")})
    EXPECT_EQ(refusal(replace(text, field, "\"definition\":" + spelling + ",")), "foreign_definition") << spelling;
}

TEST_F(ContractTest, IntegersAreDecimalSafeAndWhole) {
  const std::string text = signed_text();
  const std::string seq = R"("sequence":1)";
  EXPECT_EQ(refusal(replace(text, seq, R"("sequence":9007199254740992)")), "integer_too_large");  // 2^53
  EXPECT_EQ(refusal(replace(text, seq, R"("sequence":18446744073709551616)")), "integer_too_large");  // 2^64
  EXPECT_EQ(refusal(replace(text, seq, R"("sequence":1.0)")), "not_integer");
  EXPECT_EQ(refusal(replace(text, seq, R"("sequence":1e0)")), "not_integer");
  EXPECT_EQ(refusal(replace(text, seq, R"("sequence":-1)")), "negative_integer");
  EXPECT_EQ(refusal(replace(text, seq, R"("sequence":"1")")), "wrong_type");
  EXPECT_EQ(refusal(replace(text, seq, R"("sequence":0)")), "zero_sequence");
  // 2^53 - 1 is the largest accepted (the signature no longer matches, but decoding passes).
  EXPECT_EQ(refusal(replace(text, seq, R"("sequence":9007199254740991)")), "accepted");
}

TEST_F(ContractTest, KeysAreUniqueKnownPresentAndInOrder) {
  const std::string text = signed_text();
  EXPECT_EQ(refusal(replace(text, R"("sequence":1,)", R"("sequence":1,"sequence":1,)")), "duplicate_key");
  EXPECT_EQ(refusal(replace(text, R"("sequence":1,)", R"("sequence":1,"nonce":1,)")), "unknown_field");
  EXPECT_EQ(refusal(replace(text, R"("sequence":1,)", "")), "missing_field");
  EXPECT_EQ(refusal(replace(text, R"("principal":1,"sequence":1,)", R"("sequence":1,"principal":1,)")), "field_order");
  EXPECT_EQ(refusal(replace(text, R"({"create_principal":)", R"({"make_principal":)")), "unknown_variant");
  EXPECT_EQ(refusal(replace(text, R"("scope":{"realm":{}})", R"("scope":{"realm":{},"pid":{"pid":1}})")), "wrong_type");
}

TEST_F(ContractTest, MalformedValuesAreRefused) {
  const std::string text = signed_text();
  EXPECT_EQ(refusal(replace(text, R"("permissions":3)", R"("permissions":512)")), "unknown_permission");
  EXPECT_EQ(refusal(replace(text, R"("public_key":[)", R"("public_key":[1,)")), "bad_length");
  EXPECT_EQ(refusal(replace(text, R"("public_key":[)", R"("public_key":[256,)").substr(0)), "bad_length");
  EXPECT_EQ(refusal(replace(text, R"("realm":"dev")", R"("realm":"")")), "bad_length");
  EXPECT_EQ(refusal(replace(text, R"("realm":"dev")", "\"realm\":\"d\xff\"")), "syntax");  // not UTF-8
  EXPECT_EQ(refusal(text.substr(0, text.size() - 1)), "syntax");
  EXPECT_EQ(refusal(text + " "), "non_canonical");
  EXPECT_EQ(refusal(replace(text, R"("realm":"dev")", R"("realm":"\u0064ev")")), "non_canonical");
  EXPECT_EQ(refusal(replace(text, R"({"request":)", R"({ "request":)")), "non_canonical");
  std::string deep = std::string(40, '[') + std::string(40, ']');
  EXPECT_EQ(refusal(deep), "too_deep");
}

TEST_F(ContractTest, SizesAreBoundedBeforeParsing) {
  std::string big = replace(signed_text(), R"("realm":"dev")", "\"realm\":\"" + std::string(kMaxEnvelopeBytes, 'a') + "\"");
  EXPECT_EQ(refusal(big), "too_large");
}

TEST_F(ContractTest, ACommandSignatureNeverVerifiesAsAQuerySignatureNorTheReverse) {
  const Request r = sample_request();
  const SignedRequest s = sign(r, seed_of(0));
  const auto key = testing::key_of(seed_of(0));
  EXPECT_TRUE(verify(s, key));
  const std::string json = to_json(r);
  const std::uint8_t nul = 0;
  const Digest as_query = crypto::sha256({as_bytes(kQueryDomain), ByteView(&nul, 1), as_bytes(json)});
  EXPECT_FALSE(verify_digest(as_query, s.signature, key));
  const SignedQuery q = sign(sample_query(), seed_of(0));
  const std::string qjson = to_json(q.query);
  const Digest as_request = crypto::sha256({as_bytes(kRequestDomain), ByteView(&nul, 1), as_bytes(qjson)});
  EXPECT_TRUE(verify(q, key));
  EXPECT_FALSE(verify_digest(as_request, q.signature, key));
}

// Refusals name a Reason, never a string (node::Refusal, DecodeError), and a
// Rejection's reason is that enum on the wire: nothing outside the catalogue
// can be emitted, and a client's strict decoder refuses a name outside it.
TEST_F(ContractTest, EveryRejectionReasonIsCataloguedOnceWithOneCodeAndMeaning) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < std::size(kReasons); ++i) {
    const auto& r = kReasons[i];
    EXPECT_EQ(static_cast<std::size_t>(r.reason), i) << r.name;  // the enum's order is the catalogue's
    EXPECT_TRUE(names.insert(r.name).second) << r.name << " twice";
    EXPECT_FALSE(r.name.empty());
    EXPECT_EQ(r.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string_view::npos) << r.name;
    EXPECT_FALSE(r.meaning.empty()) << r.name;
    EXPECT_NE(http_status(r.code), 500) << r.name;
    // Each reason travels under its own name and decodes back to itself.
    const Rejection rejection{Version{}, Definition{}, {"dev"}, r.code, r.reason, {"m"}};
    const std::string text = to_json(rejection);
    EXPECT_NE(text.find("\"reason\":\"" + std::string(r.name) + "\""), std::string::npos) << text;
    auto back = from_json<Rejection>(text, kMaxAnswerBytes);
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(back->reason, r.reason);
  }
  const std::string known =
      to_json(Rejection{Version{}, Definition{}, {"dev"}, RejectionCode::kDenied, Reason::kNotPermitted, {""}});
  auto unknown = from_json<Rejection>(replace(known, "not_permitted", "not_permited"), kMaxAnswerBytes);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().reason, Reason::kUnknownVariant);
}

TEST_F(ContractTest, QuotedInputBecomesValidUtf8CutBetweenCharacters) {
  EXPECT_EQ(json::valid_utf8("plain \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 100), "plain \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(json::valid_utf8("d\xffv", 100), "d\\xffv");
  EXPECT_EQ(json::valid_utf8("\xc0\x80", 100), "\\xc0\\x80");          // overlong
  EXPECT_EQ(json::valid_utf8("\xed\xa0\x80", 100), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(json::valid_utf8("\xf4\x90\x80\x80", 100), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(json::valid_utf8("a\xe2\x82", 100), "a\\xe2\\x82");        // a sequence cut short
  EXPECT_EQ(json::valid_utf8("ab\xc3\xa9", 3), "ab");                    // never half a character
  EXPECT_EQ(json::valid_utf8("ab\xff", 5), "ab");                         // nor half an escape
  EXPECT_EQ(json::valid_utf8("ab\xff", 6), "ab\\xff");
  // A Rejection built from any bytes decodes strictly.
  const std::string noise = "\xc3" + std::string(600, '\xa9');
  const Rejection r = make_rejection({"dev"}, Reason::kSyntax, noise);
  EXPECT_EQ(r.code, RejectionCode::kInvalidRequest);
  auto back = from_json<Rejection>(to_json(r), kMaxAnswerBytes);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_LE(back->message.value.size(), 512u);
}

// The largest canonical spelling of a T: every integer at 2^53 - 1, every
// text at its byte bound in characters written \u00XX (six bytes each), every
// list full, every optional present, the longest enum name and union
// alternative. Unions pick their longest alternative.
template <typename T> T maximal();

template <typename T> struct Maximal {
  static T get() {
    if constexpr (std::is_same_v<T, std::uint64_t>) return kMaxSafeInteger;
    else if constexpr (std::is_same_v<T, bool>) return false;
    else if constexpr (std::is_same_v<T, Version> || std::is_same_v<T, Definition>) return T{};
    else if constexpr (std::is_same_v<T, Permissions>) return Permissions{kAllPermissions};
    else if constexpr (requires { EnumTraits<T>::kNames; }) {
      std::size_t longest = 0;
      for (std::size_t i = 0; i < EnumTraits<T>::kNames.size(); ++i)
        if (EnumTraits<T>::kNames[i].size() > EnumTraits<T>::kNames[longest].size()) longest = i;
      return static_cast<T>(longest);
    } else {
      T value{};
      Fill fill;
      fields(fill, value);
      return value;
    }
  }
  struct Fill {
    template <typename F> Fill& operator()(std::string_view, F& field) {
      field = maximal<F>();
      return *this;
    }
  };
};
template <typename Tag, typename Rep> struct Maximal<StrongId<Tag, Rep>> {
  static StrongId<Tag, Rep> get() { return StrongId<Tag, Rep>{maximal<Rep>()}; }
};
template <std::size_t Lo, std::size_t Hi> struct Maximal<Text<Lo, Hi>> {
  static Text<Lo, Hi> get() { return {std::string(Hi, '\x01')}; }
};
template <std::size_t N, std::size_t M> struct Maximal<Hex<N, M>> {
  static Hex<N, M> get() { return {std::vector<std::uint8_t>(N, 0xff)}; }
};
template <std::size_t N> struct Maximal<Fixed<N>> {
  static Fixed<N> get() {
    Fixed<N> f;
    f.fill(255);
    return f;
  }
};
template <typename T> struct Maximal<std::optional<T>> {
  static std::optional<T> get() { return maximal<T>(); }  // present is never shorter than null here
};
template <typename T, std::size_t N> struct Maximal<List<T, N>> {
  static List<T, N> get() { return {std::vector<T>(N, maximal<T>())}; }
};
template <typename T, std::size_t N> struct Maximal<Slots<T, N>> {
  static Slots<T, N> get() {
    Slots<T, N> s;
    s.items.fill(maximal<T>());
    return s;
  }
};
template <typename... A> struct Maximal<std::variant<A...>> {
  static std::variant<A...> get() {
    std::variant<A...> best;
    std::size_t best_size = 0;
    ((to_json(std::variant<A...>{maximal<A>()}).size() > best_size
          ? (best = maximal<A>(), best_size = to_json(best).size(), 0)
          : 0),
     ...);
    return best;
  }
};
template <typename T> T maximal() { return Maximal<T>::get(); }

/// Calls f with the maximal value of each alternative of the union V.
template <typename V, typename F> void each_maximal(F f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(maximal<std::variant_alternative_t<I, V>>()), ...);
  }(std::make_index_sequence<std::variant_size_v<V>>{});
}

// Decision 22: the 16 KiB bound on the canonical request is the contract's
// ceiling; no request or query of any op can be spelled longer, so the bound
// refuses nothing the decoder would accept. A new field that breaks this fails here.
TEST_F(ContractTest, TheLargestRequestOfEveryOpFitsTheCanonicalBound) {
  std::size_t largest = 0;
  std::string which;
  const auto measure = [&](const auto& outer, std::string_view op) {
    const std::string text = to_json(outer);
    using Outer = std::decay_t<decltype(outer)>;
    auto decoded = from_json<Outer>(text, 4 * kMaxRequestBytes);  // a spelling the strict decoder takes
    EXPECT_TRUE(decoded.ok()) << op << ": " << decoded.error().message();
    EXPECT_LE(text.size(), kMaxRequestBytes) << op;
    if (text.size() > largest) largest = text.size(), which = op;
  };
  each_maximal<Command>([&](const auto& op) {
    measure(Request{Version{}, Definition{}, maximal<Text<1, 64>>(), PrincipalId{kMaxSafeInteger}, kMaxSafeInteger, op}, op.kName);
  });
  EXPECT_EQ(which, "prepared_turn");  // a turn with its storage basis (decision 143)
  const std::size_t largest_request = largest;
  largest = 0;
  each_maximal<QueryOp>([&](const auto& op) {
    measure(Query{Version{}, Definition{}, maximal<Text<1, 64>>(), PrincipalId{kMaxSafeInteger}, op}, op.kName);
  });
  std::cout << "largest canonical request: " << largest_request << " bytes (a prepared turn); largest query: " << largest
            << " bytes (" << which << ")\n";
}

TEST_F(ContractTest, TheDefinitionIsTheSchemasHash) {
  EXPECT_TRUE(definition().starts_with("transit.v1:"));
  EXPECT_EQ(definition().size(), std::string("transit.v1:").size() + 64);
}

}  // namespace
}  // namespace cowboy::transit
