// cip11d's hook into a devchain rollback (docs/devchain.md D11) for validator
// sets: a fork whose losing block scheduled one change and whose winning block
// schedules another for the same epoch. The validator service of the node
// that follows the winner must drop the snapshot the dropped block scheduled
// (SharedSnapshots::withdraw) and then hold the winning one; add-only, it kept
// the dropped one and ignored the winner's as a rewritten epoch. Four rotating
// devchain Nodes in this process, the test proposing and delivering each
// block; the service on node 0 with its real QUIC endpoint.
#include <gtest/gtest.h>

#include <mutex>

#include "chain_harness.h"
#include "cip11/runner.h"
#include "service_world.h"
#include "devchain/cip11_genesis.h"
#include "devchain/validator_set_tx.h"

namespace cowboy::cip11::testing {
namespace {

constexpr std::size_t kNodes = 4;

struct Cip11ValidatorSetRollback : ::testing::Test {
  cowboy::testing::TempDir dir;
  crypto::Secp256k1Secret admin{};
  std::vector<crypto::Ed25519Seed> seeds;  // canonical order: node i leads views i mod 4
  std::vector<devchain::Cip11Validator> entries;
  std::vector<std::unique_ptr<devchain::Node>> nodes;
  std::unique_ptr<devchain::Cip11Port> port;
  std::unique_ptr<ValidatorService> service;
  std::uint64_t admin_nonce = 0;
  const chain::testing::Key runner_key = chain::testing::key(1);
  static constexpr std::uint64_t kOverlap = 4;

  void SetUp() override {
    crypto::init();
    admin[31] = 0x41;
    const auto quic = cowboy::testing::free_ports(SOCK_DGRAM, kNodes);
    std::vector<std::pair<crypto::Ed25519Public, crypto::Ed25519Seed>> keys;
    for (std::uint8_t i = 0; i < kNodes; ++i) {
      crypto::Ed25519Seed s{};
      s[0] = 0x52;
      s[31] = i;
      keys.emplace_back(crypto::ed25519_from_seed(s).public_key, s);
    }
    std::sort(keys.begin(), keys.end());
    devchain::Cip11Genesis c;
    c.params.chain_id = 13;
    c.params.transport_enabled = true;
    c.params.multi_validator = true;
    c.overlap_blocks = kOverlap;
    c.finality_depth = 4;  // K = F + 1: the genesis §9.2 invariant (docs/cip11.md choice 157)
    c.params.selection_seed_delay_views = 5;
    for (std::size_t i = 0; i < kNodes; ++i) {
      seeds.push_back(keys[i].second);
      std::string endpoint = "127.0.0.1:";
      endpoint += std::to_string(quic[i]);
      c.validators.push_back({keys[i].first, std::move(endpoint), std::nullopt});
    }
    entries = c.validators;
    c.runners.push_back(chain::testing::registration(runner_key));  // the runner test's
    const Address a = *crypto::secp256k1_address(admin);
    const devchain::GenesisSpec genesis{"vset-rollback", a, {{a, 1'000'000}}, {}, c};
    for (std::size_t i = 0; i < kNodes; ++i) {
      devchain::NodeConfig config;
      config.data_dir = dir.path() / "v" / std::to_string(i);
      config.validator_key = seeds[i];
      config.rotating = true;
      auto node = devchain::Node::open(config, genesis);
      ASSERT_TRUE(node) << node.error();
      nodes.push_back(std::move(*node));
    }
    auto cert = net::ensure_dev_certificate(dir.path() / "tls");
    ASSERT_TRUE(cert);
    ValidatorServiceConfig sc;
    sc.key = seeds[0];
    sc.endpoint.port = quic[0];
    sc.endpoint.certificate = cert->certificate;
    sc.endpoint.private_key = cert->private_key;
    port = std::make_unique<devchain::Cip11Port>(*nodes[0], *nodes[0]);
    auto opened = ValidatorService::open(sc, *port);
    ASSERT_TRUE(opened) << opened.error();
    service = std::move(*opened);
    ValidatorService* s = service.get();
    nodes[0]->set_block_observer([s](const devchain::CommittedBlock& b) { s->on_block({Height{b.height}, b.effects}); });
    nodes[0]->set_rollback_observer([s](const devchain::RolledBack& r) { s->on_rollback(Height{r.height}); });
  }
  void TearDown() override { service.reset(); }

  /// The admin's change to members `who` from `activation`, signed on nonce `nonce`.
  devchain::Transaction change(std::vector<std::size_t> who, std::uint64_t activation, std::uint64_t nonce) const {
    devchain::ScheduleValidatorSet s{1, activation, {}};
    for (std::size_t i : who) {
      auto e = entries[i];
      e.vrf_key = devchain::vrf_key_of(e);  // a change names each validator's VRF key
      s.validators.push_back(std::move(e));
    }
    devchain::Transaction tx{*nodes[0]->chain_instance_id(), nonce,
                             devchain::ValidatorSetCall{devchain::encode_schedule_validator_set(s)}, {}};
    EXPECT_TRUE(devchain::sign_tx(tx, admin));
    return tx;
  }
  /// Height 2, two branches: view 2 (node 2) schedules {0,1,2} from height 20
  /// and reaches node 0; view 3 (node 3) will schedule {0,1,3} from height 30
  /// with the same nonce. Returns the losing branch's change.
  devchain::Transaction fork_at_two() {
    propose(1, 1, {0, 2, 3});
    const auto lost = change({0, 1, 2}, 20, admin_nonce);
    EXPECT_TRUE(nodes[2]->submit(lost).ok());
    EXPECT_TRUE(nodes[3]->submit(change({0, 1, 3}, 30, admin_nonce)).ok());
    propose(2, 2, {0});
    return lost;
  }
  /// View 3 (node 3, its leader saw view 2 time out) reaches node 1, and node
  /// 0 follows node 3: the higher view wins at height 2 (D11).
  void follow_the_winner() {
    propose(3, 3, {1});
    auto followed = nodes[0]->follow(*nodes[3]);
    ASSERT_TRUE(followed) << followed.error().message;
    EXPECT_EQ(followed->dropped, 1u);
    EXPECT_EQ(followed->accepted, 1u);
  }
  /// Node `leader` proposes `view`; each of `to` accepts it.
  devchain::SignedBlock propose(std::size_t leader, std::uint64_t view, std::vector<std::size_t> to) {
    auto b = nodes[leader]->propose_block(cip11::View{view});
    EXPECT_TRUE(b) << b.error().message;
    for (std::size_t i : to) {
      auto ok = nodes[i]->accept_block(*b);
      EXPECT_TRUE(ok) << "node " << i << ": " << ok.error().message;
    }
    return *b;
  }
};

TEST_F(Cip11ValidatorSetRollback, TheServiceWithdrawsTheSnapshotADroppedBlockScheduledAndHoldsTheWinners) {
  const auto lost = fork_at_two();
  auto receipt = nodes[0]->receipt(devchain::tx_hash(lost));
  ASSERT_TRUE(receipt && *receipt);
  ASSERT_EQ((*receipt)->error.value_or(""), "");
  ASSERT_TRUE(eventually([&] { return service->snapshots()->epochs().size() == 2; }, std::chrono::seconds(10)));
  EXPECT_EQ(service->snapshots()->epochs()[1].activation_height, Height{20});
  ASSERT_NO_FATAL_FAILURE(follow_the_winner());
  auto held = nodes[0]->validator_set_changes();
  ASSERT_TRUE(held);
  ASSERT_EQ(held->size(), 1u);
  EXPECT_EQ(held->front().activation_height, Height{30});
  // The service holds the winner's snapshot, not the dropped block's.
  const auto snapshots = service->snapshots();
  ASSERT_EQ(snapshots->epochs().size(), 2u);
  EXPECT_EQ(snapshots->epochs()[1].activation_height, Height{30});
  EXPECT_EQ(snapshots->epochs()[1].peers, held->front().peer_keys);
  EXPECT_TRUE(snapshots->epochs()[0].has(entries[2].peer_key));
  EXPECT_FALSE(snapshots->epochs()[1].has(entries[2].peer_key));
}

// The same fork at a runner (cip11-runner's snapshots, docs/cip11.md choice
// 122): a runner in this process reading node 0 took the change the dropped
// block scheduled; once node 0 follows the winner and the chain moves on, it
// says it withdrew that epoch and holds the winner's. Add-only, it kept the
// dropped change and ignored the winner's as a rewritten epoch.
TEST_F(Cip11ValidatorSetRollback, TheRunnerWithdrawsTheSnapshotADroppedBlockScheduledAndHoldsTheWinners) {
  std::mutex mu;
  std::vector<std::string> sets;  // its validator_set events, in order
  RunnerOptions ro;
  ro.key = runner_key.secret;
  ro.state_dir = dir.path() / "runner-state";
  ro.block_time = std::chrono::milliseconds(100);
  ro.height_poll = std::chrono::milliseconds(20);
  ro.on_event = [&](const RunnerEvent& e) {
    std::lock_guard lock(mu);
    if (e.kind == RunnerEvent::Kind::kValidatorSet) sets.push_back(e.detail);
  };
  auto runner = Runner::start(ro, std::make_unique<devchain::Cip11Port>(*nodes[0], *nodes[0]));
  ASSERT_TRUE(runner) << runner.error();
  const auto said = [&](const std::string& what) {
    std::lock_guard lock(mu);
    return std::find(sets.begin(), sets.end(), what) != sets.end();
  };
  fork_at_two();
  ASSERT_TRUE(eventually([&] { return said("epoch 1 from block 20"); }, std::chrono::seconds(10)));
  ASSERT_NO_FATAL_FAILURE(follow_the_winner());
  // Height 3 on the winning branch (node 0 leads view 4): the runner reads the changes again.
  propose(0, 4, {1, 3});
  ASSERT_TRUE(eventually([&] { return said("epoch 1 from block 30"); }, std::chrono::seconds(10)));
  std::lock_guard lock(mu);
  EXPECT_EQ(sets, (std::vector<std::string>{"epoch 1 from block 20",
                                            "withdrawn: the chain holds no epoch after 0 alike",
                                            "epoch 1 from block 30"}));
}

// SharedSnapshots::withdraw alone: it keeps epoch 0 and every epoch the
// chain still holds alike, and drops from the first that differs.
TEST(Cip11SharedSnapshots, WithdrawDropsFromTheFirstEpochTheChainNoLongerHolds) {
  crypto::init();
  std::vector<crypto::Ed25519Public> peers;
  for (std::uint8_t i = 0; i < 4; ++i) {
    crypto::Ed25519Seed s{};
    s[31] = i;
    peers.push_back(crypto::ed25519_from_seed(s).public_key);
  }
  std::sort(peers.begin(), peers.end());
  const chain::ValidatorSetChange one{Height{10}, {peers[0], peers[1], peers[2]}}, two{Height{20}, peers};
  chain::SharedSnapshots shared(chain::ValidatorSnapshots::genesis(peers, 4));
  ASSERT_TRUE(shared.update({one, two}));
  EXPECT_FALSE(shared.withdraw({one, two}));  // nothing dropped
  EXPECT_EQ(shared.get()->epochs().size(), 3u);
  EXPECT_TRUE(shared.withdraw({one}));
  EXPECT_EQ(shared.get()->epochs().size(), 2u);
  EXPECT_EQ(shared.get()->overlap_blocks(), 4u);
  const chain::ValidatorSetChange other{Height{12}, {peers[1], peers[2], peers[3]}};
  EXPECT_TRUE(shared.withdraw({other}));  // epoch 1 rewritten: dropped
  EXPECT_EQ(shared.get()->epochs().size(), 1u);
  EXPECT_TRUE(shared.update({other}));
  EXPECT_EQ(shared.get()->epochs()[1].activation_height, Height{12});
}

}  // namespace
}  // namespace cowboy::cip11::testing
