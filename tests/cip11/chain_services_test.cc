// The services against the chain's registry, with real `cip11d --dev` and
// `cip11-runner` processes over QUIC on 127.0.0.1: a deregistration counts
// from the block that applies it (§6.2), and a runner keeps itself above the
// eligibility floor with its on-chain heartbeats (§6.6, §7.1).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../support/cip11_processes.h"
#include "../support/poll.h"
#include "../support/temp_dir.h"

namespace cowboy::cip11 {
namespace {

using testing::Cip11dProcess;
using testing::eventually;
using testing::RunnerProcess;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Signs and submits `instruction` with a dev key; the receipt once included.
/// The runner process of that key may take the same nonce for a heartbeat
/// first: then it is signed again with the next one.
std::optional<devchain::TxReceipt> send(devchain::ChainApi& chain, const std::filesystem::path& key_file,
                                        const chain::Instruction& instruction) {
  auto key = devchain::load_key(key_file);
  if (!key) return std::nullopt;
  for (int attempt = 0; attempt < 3; ++attempt) {
    devchain::Wallet wallet(chain, *key);
    auto receipt = wallet.send_and_wait(devchain::Cip11Call{chain::encode_instruction(instruction)});
    if (receipt) return *receipt;
    if (receipt.error().code != devchain::ApiErrorCode::kBadNonce) return std::nullopt;
  }
  return std::nullopt;
}

/// `cip11d --dev` with two dev runners and 500 ms blocks, its log in a file:
/// before this fix the registry was read again every 10 blocks, so with
/// 500 ms blocks a refusal seen here does not come from a periodic refresh.
struct RegistryWorld {
  cowboy::testing::TempDir dir;
  std::filesystem::path data = dir.path() / "data", log = dir.path() / "cip11d.log";
  Cip11dProcess validator{data, {"--dev-runners", "2", "--block-ms", "500"}, 0, 0, log.string()};
  devchain::HttpClient chain = validator.chain();
  std::string address(unsigned i) const { return validator.manifest()["runners"][i]["address"]; }
  std::optional<devchain::TxReceipt> deregister(unsigned i) {
    return send(chain, data / "keys" / ("runner-" + std::to_string(i) + ".key"), chain::DeregisterRunner{});
  }
};

TEST(Cip11Registry, ADeregisteredRunnersConnectionIsClosedAtTheBlockThatAppliesIt) {
  RegistryWorld w;
  ASSERT_TRUE(w.validator.up());
  RunnerProcess connected(w.data, 0);
  ASSERT_TRUE(connected.wait_for({"event=connected"}));
  ASSERT_TRUE(eventually([&] { return w.validator.metric("cip11d_connected_runners") == 1; }));
  auto receipt = w.deregister(0);
  ASSERT_TRUE(receipt && receipt->ok()) << (receipt ? receipt->error.value_or("") : "not sent");
  ASSERT_TRUE(connected.wait_for({"event=disconnected", "Goodbye AuthFailed"}));
  EXPECT_TRUE(eventually([&] { return w.validator.metric("cip11d_connected_runners") == 0; }));
  EXPECT_NE(read_file(w.log).find("event=runner_deregistered runner=" + w.address(0) +
                                  " height=" + std::to_string(receipt->height)),
            std::string::npos)
      << "the Goodbye follows the block that applied the deregistration";
  // The runner tries again (it backs off and reconnects) and is refused each time.
  EXPECT_FALSE(connected.wait_count("event=connected", 2, std::chrono::seconds(2)));
}

TEST(Cip11Registry, ARunnerDeregisteredWhileAwayIsRefusedAtItsVeryNextAdmission) {
  RegistryWorld w;
  ASSERT_TRUE(w.validator.up());
  auto receipt = w.deregister(1);
  ASSERT_TRUE(receipt && receipt->ok()) << (receipt ? receipt->error.value_or("") : "not sent");
  RunnerProcess away(w.data, 1);
  ASSERT_TRUE(away.wait_for({"started"}));
  const std::uint64_t from = *w.chain.height();
  ASSERT_TRUE(eventually([&] { return *w.chain.height() >= from + 3; }, std::chrono::seconds(20)));  // time to try
  EXPECT_FALSE(away.saw({"event=connected"}, std::chrono::milliseconds(500)));  // every line so far, read
  const std::string log = read_file(w.log);
  EXPECT_EQ(log.find("event=runner_admitted runner=" + w.address(1)), std::string::npos);
  EXPECT_NE(log.find("event=goodbye_sent reason=AuthFailed"), std::string::npos);
  EXPECT_EQ(w.validator.metric("cip11d_connected_runners"), 0);
}

TEST(Cip11Registry, AfterTwiceTheEligibilityWindowANewJobStillGetsACommittee) {
  cowboy::testing::TempDir dir;
  const auto data = dir.path() / "data";
  Cip11dProcess validator(data, {"--dev-runners", "2", "--block-ms", "50"});
  ASSERT_TRUE(validator.up());
  auto chain = validator.chain();
  const auto window = chain.cip11_genesis()->params.heartbeat_timeout_blocks;  // HEARTBEAT_TIMEOUT_BLOCKS, 100
  RunnerProcess steady(data, 0);
  ASSERT_TRUE(steady.wait_for({"event=connected"}));
  ASSERT_TRUE(eventually([&] { return *chain.height() > 2 * window; }, std::chrono::seconds(120)));
  // Runner 0 ran throughout: its staggered heartbeats kept it above the floor.
  EXPECT_TRUE(steady.wait_count("event=heartbeat", 2));
  auto r0 = chain.runner(*fixed_from_hex<20>(validator.manifest()["runners"][0]["address"].get<std::string>()));
  ASSERT_TRUE(r0);
  EXPECT_LE(Height{*chain.height()} - r0->last_heartbeat, window);

  // Runner 1 was away for two windows: once it says started it is above the floor again.
  RunnerProcess late(data, 1);
  ASSERT_TRUE(late.wait_for({"started"}));
  const Address a1 = *fixed_from_hex<20>(validator.manifest()["runners"][1]["address"].get<std::string>());
  auto r1 = chain.runner(a1);
  ASSERT_TRUE(r1);
  EXPECT_LE(Height{*chain.height()} - r1->last_heartbeat, window) << "started before its heartbeat was included";
  // So a job for two runners submitted now draws both.
  auto id = testing::submit_job(chain, data / "keys" / "submitter.key", R"({"echo":"two"})", 50, 2);
  ASSERT_TRUE(id);
  ASSERT_TRUE(eventually([&] { return chain.job(*id)->state != chain::JobState::kPendingSelection; }));
  EXPECT_EQ(chain.job(*id)->committee.size(), 2u);
}

}  // namespace
}  // namespace cowboy::cip11
