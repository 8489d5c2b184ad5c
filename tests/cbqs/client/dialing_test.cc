// §11.4 and conformance clause 7: refused destinations for literals and for
// every resolved address; a refused destination is never connected to.
#include "cbqs/client/dialing.h"

#include <gtest/gtest.h>

#include "cbqs/client/wss_connection.h"

namespace cowboy::cbqs::client {
namespace {

TEST(Dialing, EveryRefusedIpv4RangeIncludingItsEdges) {
  for (auto [addr, range] : std::vector<std::pair<const char*, const char*>>{
           {"0.0.0.0", "0.0.0.0/8"},           {"10.255.255.255", "10.0.0.0/8"},   {"100.64.0.1", "100.64.0.0/10"},
           {"100.127.255.255", "100.64.0.0/10"}, {"127.0.0.1", "127.0.0.0/8"},    {"169.254.169.254", "169.254.0.0/16"},
           {"172.16.0.1", "172.16.0.0/12"},    {"172.31.255.255", "172.16.0.0/12"}, {"192.0.0.8", "192.0.0.0/24"},
           {"192.0.2.1", "192.0.2.0/24"},      {"192.88.99.1", "192.88.99.0/24"}, {"192.168.1.1", "192.168.0.0/16"},
           {"198.18.0.1", "198.18.0.0/15"},    {"198.19.255.255", "198.18.0.0/15"}, {"198.51.100.7", "198.51.100.0/24"},
           {"203.0.113.9", "203.0.113.0/24"},  {"224.0.0.1", "224.0.0.0/4"},      {"239.255.255.255", "224.0.0.0/4"},
           {"240.0.0.1", "240.0.0.0/4"},       {"255.255.255.255", "240.0.0.0/4"}}) {
    EXPECT_EQ(refused_range(addr), std::optional<std::string>(range)) << addr;
  }
  for (auto addr : {"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0",
                    "198.17.255.255", "198.20.0.0", "223.255.255.255"})
    EXPECT_EQ(refused_range(addr), std::nullopt) << addr;
}

TEST(Dialing, Ipv6RangesAndEmbeddedIpv4Forms) {
  EXPECT_EQ(refused_range("::"), "::/128");
  EXPECT_EQ(refused_range("::1"), "::1/128");
  EXPECT_EQ(refused_range("::ffff:127.0.0.1"), "127.0.0.0/8");  // v4-mapped, judged as IPv4
  EXPECT_EQ(refused_range("::ffff:8.8.8.8"), std::nullopt);
  EXPECT_EQ(refused_range("64:ff9b::a9fe:a9fe"), "169.254.0.0/16");  // NAT64 of 169.254.169.254
  EXPECT_EQ(refused_range("2002:c0a8:0101::1"), "192.168.0.0/16");   // 6to4 of 192.168.1.1
  EXPECT_EQ(refused_range("100::1"), "100::/64");
  EXPECT_EQ(refused_range("2001:db8::1"), "2001:db8::/32");
  EXPECT_EQ(refused_range("fd00::1"), "fc00::/7");
  EXPECT_EQ(refused_range("fe80::1"), "fe80::/10");
  EXPECT_EQ(refused_range("ff02::1"), "ff00::/8");
  EXPECT_EQ(refused_range("2606:4700:4700::1111"), std::nullopt);  // the §4.1 ACCEPT example
}

TEST(Dialing, EndpointsParseLikeTheSection4_1Examples) {
  auto a = parse_endpoint("wss://cbqs.example/ws");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "cbqs.example");
  EXPECT_EQ(a->port, 443);
  EXPECT_EQ(a->path, "/ws");
  auto b = parse_endpoint("wss://[2606:4700:4700::1111]/ws");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "2606:4700:4700::1111");
  auto c = parse_endpoint("wss://198.51.100.7:8443/ws");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->port, 8443);
  EXPECT_FALSE(parse_endpoint("https://cbqs.example/ws"));
  EXPECT_FALSE(parse_endpoint("wss://host:99999/"));
  EXPECT_FALSE(parse_endpoint("wss://[::1/"));
}

TEST(Dialing, EveryResolvedAddressIsCheckedNotOnlyTheFirst) {
  auto literal = resolve_checked("127.0.0.1", false);
  ASSERT_FALSE(literal.ok());
  EXPECT_NE(literal.error().find("127.0.0.0/8"), std::string::npos);
  auto name = resolve_checked("localhost", false);  // resolves to loopback addresses only
  EXPECT_FALSE(name.ok());
  auto allowed = resolve_checked("localhost", true);  // the explicit development opt-in
  ASSERT_TRUE(allowed.ok());
  EXPECT_FALSE(allowed->empty());
}

TEST(Dialing, TheClientRefusesBeforeConnecting) {
  ConnectOptions o;
  o.host = "127.0.0.1";
  o.port = 1;  // nothing listens; a refusal must come before any connect attempt
  auto c = WssConnection::connect(o);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().find("refused destination"), std::string::npos) << c.error();
}

}  // namespace
}  // namespace cowboy::cbqs::client
