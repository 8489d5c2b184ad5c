// The §14 table in code and in docs/protocol.md must agree, row for row.
#include "cbqs/wire/errors.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace cowboy::cbqs {
namespace {

std::map<int, std::string> code_table() {
  return {
#define X(num, name, text) {num, #name},
      CBQS_ERROR_CODES(X)
#undef X
  };
}

TEST(ErrorCodes, NumbersRoundTripAndUnknownNumbersAreRefused) {
  for (const auto& [num, name] : code_table()) {
    auto code = error_from_u16(static_cast<std::uint16_t>(num));
    ASSERT_TRUE(code) << num;
    EXPECT_EQ(error_name(*code), name);
    EXPECT_FALSE(error_description(*code).empty());
  }
  EXPECT_FALSE(error_from_u16(0));
  EXPECT_FALSE(error_from_u16(999));
}

TEST(ErrorCodes, SeedNamedCodesExist) {
  for (auto name : {"ChainStateStale", "GrantExpired", "LaneScopeTooNarrow", "GroupScopeTooNarrow", "LeaseStale",
                    "DeliveryTerminal", "Backpressure"}) {
    bool found = false;
    for (const auto& [num, n] : code_table()) found |= n == name;
    EXPECT_TRUE(found) << name;
  }
}

TEST(ErrorCodes, ProtocolDocumentListsExactlyThisTable) {
  std::ifstream in(std::string(COWBOY_SOURCE_DIR) + "/docs/protocol.md");
  ASSERT_TRUE(in) << "docs/protocol.md missing";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  std::regex row(R"(\|\s*(\d{3})\s*\|\s*`?([A-Za-z]+)`?\s*\|)");
  std::map<int, std::string> documented;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator(); ++it)
    documented[std::stoi((*it)[1])] = (*it)[2];
  EXPECT_EQ(documented, code_table());
}

}  // namespace
}  // namespace cowboy::cbqs
