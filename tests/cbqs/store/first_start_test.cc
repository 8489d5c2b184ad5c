// The first start of a store, killed at random moments (slow: up to 1,000 kills in a 150 s budget).
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "../../support/process.h"
#include "../../support/run.h"
#include "../../support/temp_dir.h"
#include "cbqs/store/store.h"

namespace cowboy::cbqs::store {
namespace {

// §18 rule 4 made crash-safe: killed at any moment of a first open, a store
// opens at the next start (it was refused for its missing marker, 10 times in 12).
TEST(Store, AKillAtAnyMomentOfTheFirstOpenLeavesAStoreThatOpens) {
  testing::TempDir dir;
  const std::string probe = std::string(COWBOY_BIN_DIR) + "/cbqs_store_probe";
  auto open_to_the_end = [&](const std::filesystem::path& path) {
    std::string command = probe;
    command += ' ';
    command += path.string();
    return testing::run(command);
  };
  // How long a first open takes here, started the way the kills start it
  // (no shell): the kill points are spread over that.
  auto first = std::chrono::steady_clock::now();
  {
    testing::ChildProcess timed({probe, (dir.path() / "timed").string()});
    ASSERT_TRUE(timed.wait_for_line("open"));
  }
  auto open_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - first).count();
  std::mt19937 rng(20261201);  // fixed: the same kill points (as fractions of one open) every run
  std::uniform_int_distribution<long> at(0, open_us);
  // Up to 1,000 kills, but within a time budget: each trial is two process
  // starts, so on a loaded machine 1,000 of them outran ctest's 300 s limit.
  // At least kMinKills run whatever the pace, so the trial keeps its teeth.
  constexpr int kMaxKills = 1'000;
  constexpr int kMinKills = 200;
  const auto budget_end = std::chrono::steady_clock::now() + std::chrono::seconds(150);
  int kills = 0;
  int before_open = 0;
  for (int i = 0; i < kMaxKills && (i < kMinKills || std::chrono::steady_clock::now() < budget_end); ++i) {
    ++kills;
    auto path = dir.path() / "s";
    path += std::to_string(i);
    {
      testing::ChildProcess child({probe, path.string()});
      ASSERT_TRUE(child.started());
      std::this_thread::sleep_for(std::chrono::microseconds(at(rng)));
      child.kill(SIGKILL);
      before_open += !child.wait_for_line("open", std::chrono::milliseconds(100));  // dead: EOF at once
    }
    auto again = open_to_the_end(path);
    ASSERT_EQ(again.status, 0) << "kill " << i << ": " << again.out;
    std::filesystem::remove_all(path);
  }
  std::printf("figure: %d kills during a first open (%ld us each), %d before the store was open; every one reopened\n",
              kills, static_cast<long>(open_us), before_open);
  // The kills did land inside the creation. How many depends on the machine's
  // pace from one open to the next, so the bound is loose: a tenth.
  EXPECT_GT(before_open, kills / 10);
}

}  // namespace
}  // namespace cowboy::cbqs::store
