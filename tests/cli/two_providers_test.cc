// scripts/two-providers.sh (docs/quickstart.md section 6), run end to end on
// free loopback ports: one devchain, two providers each with its own cbqsd and
// stream, a client finding each stream's endpoint on the chain.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
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

// Issue 25, broken item 5: with a port taken (as `make run` takes 7545) the
// script said nothing and exited 1 in 0.1 s, after talking to the wrong chain.
TEST(TwoProviders, APortInUseIsNamedBeforeAnythingStarts) {
  testing::TempDir dir;
  int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(holder, 4), 0);
  ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::uint16_t taken = ntohs(a.sin_port);
  std::uint16_t p1 = free_pair(), p2 = free_pair();
  auto r = testing::run("cd " + std::string(COWBOY_SOURCE_DIR) + " && BIN=" + std::string(COWBOY_BIN_DIR) +
                        " CHAIN_PORT=" + std::to_string(taken) + " P1_PORT=" + std::to_string(p1) +
                        " P2_PORT=" + std::to_string(p2) + " timeout 60 scripts/two-providers.sh " +
                        (dir.path() / "work").string());
  ::close(holder);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("127.0.0.1:" + std::to_string(taken) + " is in use"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CHAIN_PORT"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "work" / "devchain.log"));  // nothing was started
}

}  // namespace
}  // namespace cowboy
