// scripts/two-providers.sh (docs/quickstart.md section 6), run end to end on
// free loopback ports: one devchain, two providers each with its own cbqsd and
// stream, a client finding each stream's endpoint on the chain.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "../support/ports.h"
#include "../support/run.h"
#include "../support/temp_dir.h"

namespace cowboy {
namespace {

// A free port whose next port is free too (a broker's admin listener).
std::uint16_t free_pair() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::uint16_t port = testing::free_port();
    if (port != 0 && port < 65535 && testing::bindable(port + 1)) return port;
  }
  return 0;
}

TEST(TwoProviders, EachStreamIsServedByItsOwnProviderFoundOnTheChain) {
  testing::TempDir dir;
  std::uint16_t chain = free_pair(), p1 = free_pair(), p2 = free_pair();
  ASSERT_TRUE(chain && p1 && p2);
  auto r = testing::run("cd " + std::string(COWBOY_SOURCE_DIR) + " && BIN=" + std::string(COWBOY_BIN_DIR) +
                        " CHAIN_PORT=" + std::to_string(chain) + " P1_PORT=" + std::to_string(p1) +
                        " P2_PORT=" + std::to_string(p2) + " timeout 120 scripts/two-providers.sh " +
                        (dir.path() / "work").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("#1 lane 1: hello from p1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#1 lane 1: hello from p2\n"), std::string::npos) << r.out;
  std::regex served(R"(is served by (0x[0-9a-f]{40}) at wss://127\.0\.0\.1:(\d+)/)");
  std::set<std::string> providers, ports;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), served); it != std::sregex_iterator(); ++it) {
    providers.insert((*it)[1]);
    ports.insert((*it)[2]);
  }
  EXPECT_EQ(providers.size(), 2u) << r.out;
  EXPECT_EQ(ports, (std::set<std::string>{std::to_string(p1), std::to_string(p2)})) << r.out;
}

}  // namespace
}  // namespace cowboy
