// The drift checks: the schema and the wire reference generated from the
// field lists must equal the checked-in schema/transit-v1.schema.json and
// docs/transit-reference.md (regenerate them with `build/bin/transit schema`
// and `build/bin/transit reference`); the reference's worked example must
// verify by an independent hash and signature check.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "transit/contract/codec.h"
#include "transit/contract/envelope.h"
#include "transit/contract/operations.h"
#include "transit/contract/reasons.h"
#include "transit/contract/reference.h"
#include "transit/contract/schema.h"

namespace cowboy::transit {
namespace {

std::string checked_in(const std::string& path = "schema/transit-v1.schema.json") {
  std::ifstream in(std::string(COWBOY_SOURCE_DIR) + "/" + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(TransitSchema, GeneratedSchemaEqualsTheCheckedInCopy) {
  EXPECT_EQ(schema_text(), checked_in())
      << "the types changed: regenerate with build/bin/transit schema > schema/transit-v1.schema.json";
}

TEST(TransitSchema, ItsDefinitionIsThisBuildsAndHashesTheRest) {
  const auto schema = nlohmann::json::parse(checked_in());
  EXPECT_EQ(schema["x-transit"]["definition"], definition());
  EXPECT_EQ(schema["x-transit"]["routes"]["POST /v1/command"]["request"], "SignedRequest");
  EXPECT_EQ(schema["x-transit"]["routes"]["POST /v1/query"]["response"], "Response");
  const auto& request = schema["$defs"]["Request"];
  EXPECT_EQ(request["additionalProperties"], false);
  EXPECT_EQ(request["required"], nlohmann::json::array({"version", "definition", "realm", "principal", "sequence", "op"}));
  EXPECT_EQ(request["properties"]["sequence"]["maximum"], 9007199254740991ull);
}

TEST(TransitReference, GeneratedReferenceEqualsTheCheckedInCopy) {
  EXPECT_EQ(reference_text(), checked_in("docs/transit-reference.md"))
      << "the contract changed: regenerate with build/bin/transit reference > docs/transit-reference.md";
}

template <typename... A> void expect_sections(const std::string& text, std::type_identity<std::variant<A...>>) {
  for (std::string_view name : {A::kName...}) {
    std::string heading = "### `";
    heading.append(name).append("`");
    EXPECT_NE(text.find(heading), std::string::npos) << name;
  }
}

TEST(TransitReference, ItNamesEveryOperationAnswerCodeAndCapability) {
  const std::string text = reference_text();
  expect_sections(text, std::type_identity<Command>{});
  expect_sections(text, std::type_identity<QueryOp>{});
  expect_sections(text, std::type_identity<Outcome>{});
  expect_sections(text, std::type_identity<QueryResult>{});
  for (auto name : capability::kSupported) EXPECT_NE(text.find("| `" + std::string(name) + "` |"), std::string::npos) << name;
  for (std::size_t i = 0; i < EnumTraits<RejectionCode>::kNames.size(); ++i)
    EXPECT_NE(text.find("| `" + std::string(EnumTraits<RejectionCode>::kNames[i]) + "` | " +
                        std::to_string(http_status(static_cast<RejectionCode>(i))) + " |"),
              std::string::npos)
        << EnumTraits<RejectionCode>::kNames[i];
  // A command's fields in declaration order, with their kinds.
  EXPECT_NE(text.find("| 1 | `pid` | integer 0..2^53-1 |\n| 2 | `name` | UTF-8 text, 1..32 bytes |\n| 3 | `resource` |"),
            std::string::npos);
  EXPECT_NE(text.find("| `public_key` | array of exactly 32 integers 0..255 |"), std::string::npos);
  EXPECT_NE(text.find("| `keys` | array of exactly 8 × (hex string, 1..32 bytes, or `null`) |"), std::string::npos);
}

// Every catalogued reason has its row - name, code, status and meaning - so a
// reason added to the catalogue cannot be left out of the reference.
TEST(TransitReference, ListsEveryRejectionReasonWithItsCodeAndStatus) {
  const std::string text = reference_text();
  for (const auto& r : kReasons) {
    const std::string row = "| `" + std::string(r.name) + "` | `" +
                            std::string(EnumTraits<RejectionCode>::kNames[static_cast<std::size_t>(r.code)]) + "` | " +
                            std::to_string(http_status(r.code)) + " | " + std::string(r.meaning) + " |\n";
    EXPECT_NE(text.find(row), std::string::npos) << row;
  }
  EXPECT_NE(text.find("| `not_permitted` | `Denied` | 403 | "), std::string::npos);  // one spelled out by hand
  EXPECT_EQ(text.find("<!--"), std::string::npos);  // no placeholder left
}

// The example is checked with the hash and signature primitives directly, not
// with the contract's signing code that produced it.
TEST(TransitReference, TheWorkedExampleVerifies) {
  crypto::init();
  const auto e = worked_example();
  EXPECT_EQ(e.public_key, crypto::ed25519_from_seed(e.seed).public_key);
  const std::string envelope = to_json(e.command);
  ASSERT_TRUE(envelope.starts_with("{\"request\":" + e.command_inner + ",\"signature\":["));
  EXPECT_NE(e.command_inner.find("\"definition\":\"" + definition() + "\""), std::string::npos);  // the real one
  const std::uint8_t nul = 0;
  const auto digest = crypto::sha256({as_bytes(std::string_view("transit.request.v1")), ByteView(&nul, 1), as_bytes(e.command_inner)});
  EXPECT_EQ(digest, e.command_digest);
  EXPECT_TRUE(crypto::ed25519_verify(e.public_key, digest, e.command.signature));
  EXPECT_EQ(e.command_body, envelope + "\n" + e.block);  // the envelope, the first newline, the block
  auto decoded = decode_command_body(e.command_body);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  ASSERT_EQ(decoded->blocks.size(), 1u);
  EXPECT_EQ(std::string(decoded->blocks[0].begin(), decoded->blocks[0].end()), e.block);

  const auto query_digest = crypto::sha256({as_bytes(std::string_view("transit.query.v1")), ByteView(&nul, 1), as_bytes(e.query_inner)});
  EXPECT_EQ(query_digest, e.query_digest);
  EXPECT_TRUE(crypto::ed25519_verify(e.public_key, query_digest, e.query.signature));
  EXPECT_TRUE(decode_signed_query(e.query_body).ok());

  const std::string text = reference_text();
  for (const std::string& shown : {e.command_inner, envelope, e.query_inner, e.query_body,
                                   to_hex(ByteView(e.command_digest)), to_hex(ByteView(e.command.signature)),
                                   to_hex(ByteView(e.query_digest)), to_hex(ByteView(e.query.signature))})
    EXPECT_NE(text.find(shown), std::string::npos) << shown;
}

}  // namespace
}  // namespace cowboy::transit
