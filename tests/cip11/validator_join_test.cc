// docs/cip11.md choice 130 with real processes: a validator that joins by a
// governance change is reached through what the change names. Four `cip11d`
// of a genesis and eight `cip11-runner` processes run; a fifth `cip11d`, with
// a key no genesis names and that no genesis validator's --peers lists,
// starts following the chain, and the admin's change schedules epoch 1 with
// the five, naming the fifth's QUIC endpoint and chain API. Then the runners
// whose Sub_1(R) holds it learn where it listens from the chain
// (GET /v1/cip11/validators), connect and are admitted; the four learn its
// chain API and send it their presence views (§8.2); it proposes in its turns
// (docs/devchain.md D2), and its blocks' PresenceInput marks every runner
// present, those whose subset leaves it out (held only by the others) too.
#include "validator_processes.h"

namespace cowboy::cip11::testing {
namespace {

struct Cip11JoinedValidatorReach : Cip11Validators {
  static constexpr std::uint64_t kActivation = 70, kOverlap = 20;
  static constexpr std::size_t kFifth = kValidators;  // its index in processes and chain_ports
  std::uint16_t fifth_chain_port = 0, fifth_quic_port = 0;
  std::vector<chain::ValidatorEntry> genesis_validators;
  std::vector<std::unique_ptr<RunnerProcess>> runners;
  Cip11JoinedValidatorReach() { runner_count = 8; }
  void configure(devchain::Cip11Genesis& c) override {
    c.overlap_blocks = kOverlap;
    genesis_validators = c.validators;
    fifth_chain_port = cowboy::testing::free_ports(SOCK_STREAM, 1).at(0);
    fifth_quic_port = cowboy::testing::free_ports(SOCK_DGRAM, 1).at(0);
    // more_peers stays empty: no genesis validator's --peers names the fifth.
  }
};

TEST_F(Cip11JoinedValidatorReach, RunnersConnectToAJoinedValidatorItGossipsWithThePeersAndProposesWithEveryRunnerPresent) {
  const std::vector<std::size_t> genesis{0, 1, 2, 3}, all{0, 1, 2, 3, 4};
  ASSERT_TRUE(eventually([&] { return all_at_least(genesis, 2); }, 60s));
  // The runners first, each admitted by the three validators of its Sub_0(R).
  for (std::size_t r = 0; r < runner_count; ++r) runners.push_back(start_runner(r));
  for (std::size_t r = 0; r < runner_count; ++r)
    ASSERT_TRUE(runners[r]->wait_count("event=connected", kValidators - 1, 60s)) << "runner " << r;

  // The fifth's key, chosen so that the Sub_1(R) of some runners holds it and
  // of some does not (k = 4 of 5; the genesis keys are new each run).
  for (std::uint8_t n = 1;; ++n) {
    ASSERT_NE(n, 0) << "no fifth key splits the runners";
    crypto::Ed25519Seed candidate{};
    candidate[0] = 0x5f;
    candidate[31] = n;
    std::vector<crypto::Ed25519Public> five{crypto::ed25519_from_seed(candidate).public_key};
    for (const auto& v : genesis_validators) five.push_back(v.peer_key);
    std::sort(five.begin(), five.end());
    const auto held = std::count_if(runner_keys.begin(), runner_keys.end(), [&](const auto& k) {
      return in_subset(k.pub, five, crypto::ed25519_from_seed(candidate).public_key);
    });
    if (held == 0 || held == static_cast<std::ptrdiff_t>(runner_count)) continue;
    const auto path = dir.path() / "keys" / "fifth";
    std::ofstream(path) << to_hex(candidate) << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    break;
  }
  // The fifth: its own keys, listening where its change will say, its --peers the four.
  const chain::ValidatorEntry entry = start_fifth(fifth_quic_port, fifth_chain_port, true);
  const auto fifth = entry.peer_key;
  ASSERT_TRUE(processes.back()->up());

  devchain::ScheduleValidatorSet change{1, kActivation, genesis_validators};
  for (auto& v : change.validators) v.vrf_key = devchain::vrf_key_of(v);
  change.validators.push_back(entry);
  std::uint64_t included = 0;
  ASSERT_NO_FATAL_FAILURE(schedule(change, kOverlap, included));
  // Every node answers where the fifth listens (what the runners read).
  ASSERT_TRUE(eventually([&] { return all_at_least(all, included); }, 60s));
  for (std::size_t i : all) {
    auto named = chain(i).validators();
    ASSERT_TRUE(named.ok()) << i << ": " << named.error().message;
    ASSERT_EQ(named->size(), kValidators + 1) << i;
    EXPECT_EQ(named->back(), entry) << i;
  }

  // Sub_1(R) over the five (k = 4): the runners that hold the fifth, and those that do not.
  const std::vector<crypto::Ed25519Public> epoch1 = devchain::as_change(change).peer_keys;
  std::vector<std::size_t> holding;
  for (std::size_t r = 0; r < runner_count; ++r)
    if (in_subset(runner_keys[r].pub, epoch1, fifth)) holding.push_back(r);
  ASSERT_FALSE(holding.empty()) << "no runner's Sub_1(R) holds the fifth: choose other keys";
  ASSERT_LT(holding.size(), runner_count) << "every runner's Sub_1(R) holds the fifth: choose other keys";

  // From the activation, each of those connects to the fifth under epoch 1 and is admitted by it.
  for (std::size_t r : holding) {
    auto line = runners[r]->wait_for({"event=connected", entry.endpoint + " epoch 1"}, 60s);
    ASSERT_TRUE(line) << "runner " << r << " never connected to the joined validator";
  }
  ASSERT_TRUE(eventually(
      [&] { return processes[kFifth]->metric("cip11d_connected_runners") == static_cast<double>(holding.size()); }, 30s));

  // Gossip both ways: the fifth hears the four's views, and each of the four hears the fifth's.
  ASSERT_TRUE(eventually([&] { return processes[kFifth]->metric("cip11d_presence_views_fresh") == static_cast<double>(kValidators); }, 30s))
      << processes[kFifth]->metric("cip11d_presence_views_fresh").value_or(-1);
  for (std::size_t i : genesis)
    ASSERT_TRUE(eventually([&] { return processes[i]->metric("cip11d_presence_views_fresh") == static_cast<double>(kValidators); }, 30s))
        << i << ": " << processes[i]->metric("cip11d_presence_views_fresh").value_or(-1);

  // The blocks from here: the fifth proposes some, every node holds the same,
  // and every block marks every runner present, the fifth's included.
  const std::uint64_t from = std::max({height(0), height(1), height(2), height(3), height(kFifth)}) + 3;
  const std::uint64_t to = from + 19;
  ASSERT_TRUE(eventually([&] { return all_at_least(all, to); }, 60s));
  expect_same_blocks(all, to);
  const auto fifth_index = static_cast<std::uint32_t>(std::find(epoch1.begin(), epoch1.end(), fifth) - epoch1.begin());
  std::size_t by_fifth = 0;
  for (std::uint64_t h = from; h <= to; ++h) {
    auto b = chain(kFifth).block_at(h);
    ASSERT_TRUE(b.ok()) << h;
    ASSERT_EQ(b->block.epoch, 1u) << h;
    by_fifth += b->block.proposer == fifth_index;
    auto set = presence_at(kFifth, h);
    ASSERT_TRUE(set) << h;
    EXPECT_EQ(set->count(), runner_count) << "block " << h << " proposed by " << b->block.proposer;
  }
  EXPECT_GT(by_fifth, 0u) << "the fifth proposed none of blocks " << from << "-" << to;
  for (std::size_t i : all)
    EXPECT_EQ(processes[i]->metric("devchain_blocks_refused_total{reason=\"WrongProposer\"}").value_or(0), 0.0) << i;
}

}  // namespace
}  // namespace cowboy::cip11::testing
