// The drift check: the schema generated from the field lists must equal the
// checked-in schema/transit-v1.schema.json (regenerate it with
// `build/bin/transit schema > schema/transit-v1.schema.json`).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "transit/contract/codec.h"
#include "transit/contract/schema.h"

namespace cowboy::transit {
namespace {

std::string checked_in() {
  std::ifstream in(std::string(COWBOY_SOURCE_DIR) + "/schema/transit-v1.schema.json");
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

}  // namespace
}  // namespace cowboy::transit
