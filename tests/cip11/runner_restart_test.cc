// A runner library (include/cip11/runner.h) restarted against a devchain in
// this process: what it signed before the restart does not leave its nonces
// or its on-chain heartbeat stuck (§7.1, §10.3; docs/cip11.md choice 64).
#include <future>
#include <thread>

#include "cip11/runner.h"
#include "cip11/runner/journal.h"
#include "samples.h"
#include "service_world.h"

namespace cowboy::cip11 {
namespace {

using testing::eventually;

constexpr std::uint64_t kTimeoutBlocks = 20;  // HEARTBEAT_TIMEOUT_BLOCKS here: a cadence of 10 with the margin of 10

/// A chain with one registered runner, no validator (transport off: the
/// runner polls), not producing blocks until the test starts it.
testing::LocalChain quiet_chain() {
  testing::LocalChainOptions o;
  o.service = false;
  o.start = false;
  o.flags = [](chain::ChainParams& p) {
    p.transport_enabled = false;
    p.heartbeat_timeout_blocks = kTimeoutBlocks;
  };
  return testing::LocalChain(o);
}

RunnerOptions options_for(const testing::LocalChain& c, std::function<void(const RunnerEvent&)> on_event = {}) {
  RunnerOptions o;
  o.key = c.runner_keys[0];
  o.state_dir = c.dir.path() / "runner-state";
  o.block_time = std::chrono::milliseconds(100);
  o.height_poll = std::chrono::milliseconds(20);
  o.startup_timeout = std::chrono::seconds(5);
  o.on_event = std::move(on_event);
  return o;
}

std::unique_ptr<chain::ChainPort> port_of(testing::LocalChain& c) {
  return std::make_unique<devchain::Cip11Port>(*c.node, *c.node);
}

/// What a runner's earlier process signed: a reveal for a job the chain does
/// not know (included with an error, its nonce consumed all the same).
chain::SignedTx earlier_reveal(testing::LocalChain& c, std::uint64_t nonce) {
  const devchain::Cip11TxFormat format(*c.node->chain_instance_id());
  return format.sign(c.runner_keys[0], nonce,
                     chain::encode_instruction(chain::JobResultSubmit{JobId{testing::filled(0x77)}, Bytes{1}, testing::filled(0x78)}));
}

void past_the_cadence(testing::LocalChain& c) {  // genesis heartbeats at 0: overdue once a cadence has passed
  for (std::uint64_t h = 0; h <= kTimeoutBlocks; ++h) ASSERT_TRUE(c.node->produce_block());
}

Height last_heartbeat(testing::LocalChain& c) {
  return c.node->runner(*crypto::secp256k1_address(c.runner_keys[0]))->last_heartbeat;
}

// The restarted runner's journal is gone (a new state directory) while its
// earlier process's transaction is still pending: the chain's account nonce
// does not count it yet, so the runner's start heartbeat takes the same nonce
// and is refused. That heartbeat can never be included; the runner must see
// that the chain consumed its nonce, drop it and send another.
TEST(Cip11RunnerRestart, AHeartbeatWhoseNonceAnotherTransactionTookIsDroppedAndSentAgain) {
  auto c = quiet_chain();
  past_the_cadence(c);
  ASSERT_TRUE(c.node->submit(*devchain::decode_tx(earlier_reveal(c, 0).bytes)));  // pending, nonce 0
  std::promise<void> signed_one;
  std::atomic<bool> told{false};
  std::unique_ptr<Runner> runner;
  std::string refused;
  std::thread starting([&] {
    auto started = Runner::start(options_for(c,
                                             [&](const RunnerEvent& e) {
                                               if (e.kind == RunnerEvent::Kind::kHeartbeat && !told.exchange(true))
                                                 signed_one.set_value();
                                             }),
                                 port_of(c));
    if (started) runner = std::move(*started);
    else refused = started.error();
  });
  const bool signed_in_time = signed_one.get_future().wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  c.node->start();  // the earlier transaction takes nonce 0
  starting.join();
  ASSERT_TRUE(signed_in_time);
  ASSERT_TRUE(runner) << refused;
  EXPECT_TRUE(eventually([&] { return last_heartbeat(c) > Height{0}; }, std::chrono::seconds(20)))
      << "the refused heartbeat stayed in flight: " << runner->status().heartbeats << " heartbeat(s) signed";
  EXPECT_GE(c.node->account_info(*crypto::secp256k1_address(c.runner_keys[0]))->next_nonce, 2u);
}

// The earlier process recorded a transaction and was killed before it sent
// it. The restarted runner sends what its journal holds before its start
// heartbeat, which would otherwise wait behind the missing nonce: started
// means its heartbeat is included.
TEST(Cip11RunnerRestart, AJournaledUnsentTransactionGoesOutBeforeTheStartHeartbeat) {
  auto c = quiet_chain();
  past_the_cadence(c);
  {
    auto journal = TxJournal::open(c.dir.path() / "runner-state", *c.node->chain_instance_id(),
                                   *crypto::secp256k1_address(c.runner_keys[0]));
    ASSERT_TRUE(journal) << journal.error();
    const chain::SignedTx tx = earlier_reveal(c, 0);
    ASSERT_TRUE((*journal)->record(RetainedTx{tx.hash, tx.nonce, tx.bytes}, 1, std::nullopt));
  }
  c.node->start();
  auto runner = Runner::start(options_for(c), port_of(c));
  ASSERT_TRUE(runner) << runner.error();
  EXPECT_GT((*runner)->status().last_heartbeat, Height{0}) << "started before its heartbeat was included";
  EXPECT_GT(last_heartbeat(c), Height{0});
}

}  // namespace
}  // namespace cowboy::cip11
