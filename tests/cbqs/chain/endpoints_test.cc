// §4.1: every row of the seed's ACCEPT / REJECT table, plus the count and length rules.
#include "cbqs/chain/endpoints.h"

#include <gtest/gtest.h>

namespace cowboy::cbqs {
namespace {

Bytes b(std::string_view s) { return Bytes(s.begin(), s.end()); }
std::optional<EndpointError> check(std::string_view uri) { return check_endpoint(b(uri), 256); }

TEST(Endpoints, SeedAcceptRows) {
  EXPECT_FALSE(check("wss://cbqs.example/ws"));
  EXPECT_FALSE(check("wss://cbqs.example:8443/ws"));
  EXPECT_FALSE(check("wss://[2606:4700:4700::1111]/ws"));
  EXPECT_FALSE(check("wss://198.51.100.7:8443/ws"));
  EXPECT_FALSE(check("wss://cbqs.example/~a!b"));  // 0x21 and 0x7E both admitted
}

TEST(Endpoints, SeedRejectRows) {
  EXPECT_EQ(check("https://cbqs.example/ws"), EndpointError::kBadScheme);
  EXPECT_EQ(check("WSS://cbqs.example/ws"), EndpointError::kBadScheme);
  EXPECT_EQ(check("wss://cbqs.example/a\tb"), EndpointError::kBadByte);
  EXPECT_EQ(check("wss://cbqs.example/a b"), EndpointError::kBadByte);
  EXPECT_EQ(check("wss://169\u3002254\u3002169\u3002254/ws"), EndpointError::kBadByte);  // ideographic full stop
  EXPECT_EQ(check("wss://good.example\uff0fevil/ws"), EndpointError::kBadByte);          // fullwidth solidus
}

TEST(Endpoints, BoundaryBytes) {
  EXPECT_EQ(check("wss://a\x7f"), EndpointError::kBadByte);
  EXPECT_EQ(check(std::string_view("wss://a\0", 8)), EndpointError::kBadByte);
  EXPECT_EQ(check("wss:/"), EndpointError::kBadScheme);
}

TEST(Endpoints, ListRules) {
  EXPECT_EQ(check_endpoints({}, 8, 256), EndpointError::kEmptyList);
  std::vector<Bytes> nine(9, b("wss://a"));
  EXPECT_EQ(check_endpoints(nine, 8, 256), EndpointError::kTooMany);
  std::vector<Bytes> eight(8, b("wss://a"));
  EXPECT_FALSE(check_endpoints(eight, 8, 256));
  std::string at_limit = "wss://" + std::string(250, 'a');
  EXPECT_FALSE(check_endpoints({b(at_limit)}, 8, 256));
  EXPECT_EQ(check_endpoints({b(at_limit + "a")}, 8, 256), EndpointError::kTooLong);
  EXPECT_EQ(check_endpoints({b("wss://ok"), b("https://no")}, 8, 256), EndpointError::kBadScheme);
}

}  // namespace
}  // namespace cowboy::cbqs
