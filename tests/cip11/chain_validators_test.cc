// Four validators of one devchain as four `cip11d --genesis` processes over
// 127.0.0.1 (docs/devchain.md "Several validators"): each with its own chain
// store, QUIC listener and peer key, proposing in rotation and re-executing
// the others' blocks, and gossiping their local presence (§8.2) so that each
// proposer's PresenceInput holds every runner present anywhere, those whose
// Sub(R) excludes it included. Waits are on conditions with generous deadlines.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "../support/run.h"
#include "cip11/chain/codec.h"
#include "cip11/chain/consumed_seeds.h"
#include "cip11/chain/rounds.h"
#include "devchain/fork.h"
#include "validator_processes.h"

namespace cowboy::cip11 {
namespace {

using namespace std::chrono_literals;
using namespace cip11::testing;

TEST_F(Cip11Validators, FourProcessesProposeInRotationAndHoldTheSameBlocks) {
  const std::vector<std::size_t> all{0, 1, 2, 3};
  ASSERT_TRUE(eventually([&] { return all_at_least(all, 12); }, 60s));
  // A transaction sent to one validator is included whoever leads: forwarded to all.
  auto api = chain(1);
  devchain::Wallet wallet(api, submitter);
  auto receipt = wallet.send_and_wait(devchain::Transfer{Address{}, 5});
  ASSERT_TRUE(receipt.ok()) << receipt.error().message;
  ASSERT_TRUE(eventually([&] { return all_at_least(all, receipt->height); }, 30s));
  for (std::size_t i : all) {
    auto r = chain(i).receipt(receipt->tx_hash);
    ASSERT_TRUE(r.ok() && *r) << "validator " << i;
    EXPECT_EQ((*r)->height, receipt->height);
  }
  const std::uint64_t to = std::min({height(0), height(1), height(2), height(3)});
  expect_same_blocks(all, to);
  // Proposers in rotation: each block's proposer leads its view, and all four proposed.
  std::set<std::uint32_t> proposers;
  for (std::uint64_t h = 1; h <= to; ++h) {
    auto b = chain(0).block_at(h);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->block.proposer, devchain::leader_of(b->block.view, kValidators));
    proposers.insert(b->block.proposer);
  }
  EXPECT_EQ(proposers.size(), kValidators);
  // Each block's seed_evidence is its proposer's proof under the vrf_key the
  // genesis names (choice 100): the rounds replay against those keys, and
  // the first proof is refused against the peer keys.
  auto genesis = devchain::genesis_from_json(nlohmann::json::parse(std::ifstream(genesis_path)));
  ASSERT_TRUE(genesis.ok());
  const Bytes32 chain_id = devchain::chain_instance_id_of(*genesis);
  auto leaders = [](std::vector<crypto::ecvrf::PublicKey> keys) -> chain::LeaderOf {
    return [keys](chain::Round r) -> std::optional<crypto::ecvrf::PublicKey> { return keys[r.view.value % keys.size()]; };
  };
  chain::SeedChain by_vrf(chain_id, chain::devchain_schedule(), leaders(devchain::canonical_vrf_keys(*genesis->cip11)));
  chain::SeedChain by_peer(chain_id, chain::devchain_schedule(), leaders(canonical));
  for (std::uint64_t h = 1; h <= to; ++h) {
    auto b = chain(0).block_at(h);
    ASSERT_TRUE(b.ok());
    auto proof = crypto::ecvrf::decode_proof(b->block.seed_evidence);
    ASSERT_TRUE(proof.ok()) << "block " << h;
    ASSERT_TRUE(by_vrf.take(chain::devchain_round(b->block.view), *proof).ok()) << "block " << h;
    if (h == 1) {
      auto refused = by_peer.take(chain::devchain_round(b->block.view), *proof);
      ASSERT_FALSE(refused.ok());
      EXPECT_EQ(refused.error().error, chain::SeedError::kProofRefused);
    }
  }
}

TEST_F(Cip11Validators, AForgedBlockIsRefusedByTheOtherThree) {
  const std::vector<std::size_t> all{0, 1, 2, 3};
  ASSERT_TRUE(eventually([&] { return all_at_least(all, 3); }, 60s));
  // Each forgery is sealed by the leader of the next view on the receiver's own head (refusal_of).
  for (const auto& c : forgeries())
    for (std::size_t i : all) {
      const std::string refused = refusal_of(i, c);
      EXPECT_TRUE(refused.starts_with(std::string(c.reason) + ":")) << "validator " << i << ": " << refused;
    }
  // Each counted the refusals in its metrics, and they go on agreeing.
  for (std::size_t i : all)
    for (const auto& c : forgeries())
      EXPECT_EQ(processes[i]->metric("devchain_blocks_refused_total{reason=\"" + std::string(c.reason) + "\"}"), 1.0)
          << "validator " << i << " " << c.reason;
  const std::uint64_t h = std::max({height(0), height(1), height(2), height(3)}) + 3;
  ASSERT_TRUE(eventually([&] { return all_at_least(all, h); }, 60s));
  expect_same_blocks(all, h);
}

TEST_F(Cip11Validators, ASigkilledValidatorIsSkippedLosesNoJobAndCatchesUpAfterARestart) {
  const std::vector<std::size_t> all{0, 1, 2, 3}, others{0, 1, 3};
  ASSERT_TRUE(eventually([&] { return all_at_least(all, 4); }, 60s));
  processes[2]->kill9();
  const std::uint64_t killed_at = std::max({height(0), height(1), height(3)});
  // A transaction sent meanwhile is included by the three.
  auto api = chain(0);
  devchain::Wallet wallet(api, submitter);
  auto receipt = wallet.send_and_wait(devchain::Transfer{Address{}, 7});
  ASSERT_TRUE(receipt.ok()) << receipt.error().message;
  ASSERT_TRUE(eventually([&] { return all_at_least(others, killed_at + 10); }, 60s));
  expect_same_blocks(others, killed_at + 10);
  // Its views were nullified: no block after the kill (and the one it may
  // have been sending) names it as proposer.
  for (std::uint64_t h = killed_at + 2; h <= killed_at + 10; ++h)
    EXPECT_NE(chain(0).block_at(h)->block.proposer, index_of(2)) << h;
  // Restarted on its store, it catches up to the same blocks and leads again.
  processes[2] = start(2);
  ASSERT_TRUE(processes[2]->up());
  const std::uint64_t target = height(0) + 2;
  ASSERT_TRUE(eventually([&] { return all_at_least(all, target); }, 60s));
  expect_same_blocks(all, target);
  auto r = chain(2).receipt(receipt->tx_hash);
  ASSERT_TRUE(r.ok() && *r);
  ASSERT_TRUE(eventually(
      [&] {
        auto b = chain(2).block_at(height(2));
        return b.ok() && b->block.proposer == index_of(2);
      },
      60s));
}

// A fork forced with the test hook (docs/devchain.md D11): validator kLate
// holds the first block it proposes from kHoldFromView on - neither sent nor
// written - until a peer has committed a block at its height (the others
// nullify that view and the next leader proposes), then sends and writes it.
// Every validator must end on the higher view's branch, the late one by
// rolling its block back, with the same blocks (so the same state roots) and
// every job that was sent through the late validator held alike.
struct Cip11Forks : Cip11Validators {
  static constexpr std::size_t kLate = 1;  // genesis order
  static constexpr int kHoldMs = 30'000;  // at most; the hook ends at the peers' block
  std::uint64_t hold_from_view = 16;
  std::vector<std::string> extra_args(std::size_t i) const override {
    if (i != kLate) return {};
    return {"--test-hold-view", std::to_string(hold_from_view), "--test-hold-ms", std::to_string(kHoldMs)};
  }
  /// The view whose block is held: the first the late validator leads from hold_from_view on.
  std::uint64_t held_view() const {
    std::uint64_t v = hold_from_view;
    while (devchain::leader_of(View{v}, kValidators) != index_of(kLate)) ++v;
    return v;
  }
  bool rolled_back() const { return processes[kLate]->metric("devchain_blocks_rolled_back_total").value_or(0) >= 1; }
  /// Sends `spec` jobs through the late validator every 150 ms until it has
  /// rolled its held block back, then one more; their transaction hashes.
  std::vector<Bytes32> send_jobs_across_the_fork(const std::string& spec) {
    auto api = chain(kLate);
    devchain::Wallet wallet(api, submitter);
    std::vector<Bytes32> sent;
    const auto send = [&] {
      // 80 blocks (40 before pushes waited F blocks for finality, and a runner
      // reading through the late validator for its view to make them final).
      chain::SubmitJob job{JobKind::kCustom, Bytes(spec.begin(), spec.end()), 80, 1, 0};
      auto h = wallet.send(devchain::Cip11Call{chain::encode_instruction(job)});
      EXPECT_TRUE(h.ok()) << h.error().message;
      if (h) sent.push_back(*h);
    };
    const auto deadline = std::chrono::steady_clock::now() + 90s;
    while (!rolled_back() && std::chrono::steady_clock::now() < deadline) {
      send();
      std::this_thread::sleep_for(150ms);
    }
    EXPECT_TRUE(rolled_back()) << "the late validator never rolled its held block back";
    send();  // one after the fork was resolved
    return sent;
  }
  /// Every transaction has its receipt at every validator, at one height, and
  /// its job the same record everywhere; the validators hold the same blocks
  /// (so the same state roots, which the digests cover), none the held one.
  void expect_one_chain_with(const std::vector<Bytes32>& sent) {
    const std::vector<std::size_t> all{0, 1, 2, 3};
    ASSERT_TRUE(eventually(
        [&] {
          for (const auto& tx : sent)
            for (std::size_t i : all)
              if (auto r = chain(i).receipt(tx); !r.ok() || !r->has_value()) return false;
          return true;
        },
        60s));
    const std::uint64_t to = std::max({height(0), height(1), height(2), height(3)}) + 2;
    ASSERT_TRUE(eventually([&] { return all_at_least(all, to); }, 60s));
    expect_same_blocks(all, to);
    for (const auto& tx : sent) {
      auto first = *chain(0).receipt(tx);
      ASSERT_TRUE(first && first->job_id);
      auto job = chain(0).job(*first->job_id);
      ASSERT_TRUE(job.ok());
      for (std::size_t i : all) {
        EXPECT_EQ((*chain(i).receipt(tx))->height, first->height) << "validator " << i;
        auto j = chain(i).job(*first->job_id);
        ASSERT_TRUE(j.ok()) << "validator " << i;
        EXPECT_EQ(chain::encode_job(*j), chain::encode_job(*job)) << "validator " << i;
      }
    }
    for (std::uint64_t at = 1; at <= to; ++at) EXPECT_NE(chain(kLate).block_at(at)->block.view, View{held_view()}) << at;
    EXPECT_GE(processes[kLate]->metric("devchain_blocks_rolled_back_total").value_or(0), 1.0);
  }
};

TEST_F(Cip11Forks, ABlockHeldPastAViewTimeoutForksTheChainAndEveryValidatorConvergesWithNoJobLost) {
  const auto sent = send_jobs_across_the_fork("job");
  ASSERT_FALSE(HasFailure());
  expect_one_chain_with(sent);
}

// The same with runners executing the jobs: an assignment the dropped block
// made was never pushed (not final, docs/devchain.md D12) and the job is
// assigned again on the winning branch; every job completes. The block is held
// later, once the runners are connected.
struct Cip11ForksWithRunners : Cip11Forks {
  Cip11ForksWithRunners() {
    runner_count = 4;
    hold_from_view = 120;
  }
  std::vector<std::unique_ptr<RunnerProcess>> runners;
};

TEST_F(Cip11ForksWithRunners, EveryJobSentAcrossTheForkCompletesOnEveryValidator) {
  for (std::size_t r = 0; r < runner_count; ++r) runners.push_back(start_runner(r));
  for (std::size_t r = 0; r < runner_count; ++r)
    ASSERT_TRUE(runners[r]->wait_count("event=connected", kValidators - 1, 60s)) << "runner " << r;
  const auto sent = send_jobs_across_the_fork(R"({"sleep_ms":100})");
  ASSERT_FALSE(HasFailure());
  expect_one_chain_with(sent);
  for (const auto& tx : sent) {
    const cip11::JobId id = *(*chain(0).receipt(tx))->job_id;
    ASSERT_TRUE(eventually(
        [&] {
          for (std::size_t i : {0, 1, 2, 3}) {
            auto j = chain(i).job(id);
            if (!j.ok() || !chain::terminal(j->state)) return false;
          }
          return true;
        },
        90s))
        << to_hex0x(id.value);
    for (std::size_t i : {0, 1, 2, 3}) EXPECT_EQ(chain(i).job(id)->state, chain::JobState::kCompleted) << to_hex0x(id.value) << " at " << i;
  }
}

// §5.3 with real processes (docs/cip11.md choices 79-82, docs/devchain.md
// D9): the genesis schedules ValidatorSetSnapshot(1) at kActivation without
// genesis validator 3, so |V| goes from 4 (k = 3) to 3 (k = 3: all of them).
// Runners open their epoch-1 connections at activation, within the window;
// validator 3 tells its runners Goodbye{OverlapExpired} at the cutoff and
// admits none again; jobs running across the boundary all complete.
struct Cip11Reconfiguration : Cip11Validators {
  static constexpr std::uint64_t kActivation = 120, kOverlap = 60, kCutoff = kActivation + kOverlap;
  static constexpr std::size_t kRunners = 6, kLeaving = 3;
  std::vector<crypto::Secp256k1Secret> runner_keys;
  std::vector<std::unique_ptr<cowboy::testing::RunnerProcess>> runners;

  void configure(devchain::Cip11Genesis& c) override {
    runner_keys = register_runners(c, kRunners);
    schedule_without(c, kLeaving, kActivation, kOverlap);
  }
  void start_runners() {
    for (std::size_t i = 0; i < kRunners; ++i) {
      const auto state = dir.path() / "runners" / ("state-" + std::to_string(i));
      runners.push_back(std::make_unique<cowboy::testing::RunnerProcess>(std::vector<std::string>{
          "--chain-url", url(i % 3), "--key", (dir.path() / "runners" / (std::to_string(i) + ".key")).string(),
          "--state-dir", state.string(), "--block-ms", "100", "--height-poll-ms", "20"}));
    }
  }
  crypto::Secp256k1Compressed raw_key(std::size_t runner) const {
    return *crypto::secp256k1_public_key(runner_keys[runner]);
  }
  std::vector<crypto::Ed25519Public> epoch0() const {
    std::vector<crypto::Ed25519Public> v;
    for (const auto& s : seeds) v.push_back(crypto::ed25519_from_seed(s).public_key);
    return v;  // genesis order: ValidatorSetSnapshot(0)'s snapshot order
  }
  std::optional<JobId> submit(const std::string& spec, std::uint32_t committee = 1, std::uint64_t timeout_blocks = 80) {
    auto api = chain(0);
    devchain::Wallet wallet(api, submitter);
    chain::SubmitJob job{JobKind::kCustom, Bytes(spec.begin(), spec.end()), timeout_blocks, committee, 0};
    auto receipt = wallet.send_and_wait(devchain::Cip11Call{chain::encode_instruction(job)});
    if (!receipt || !receipt->ok()) return std::nullopt;
    return receipt->job_id;
  }
  static std::uint64_t height_of(const std::string& line) { return field_of(line, " height="); }
  /// The test below from the runners' start (unless they are up): each
  /// runner's epoch-1 subset inside the window, Goodbye{OverlapExpired} at
  /// the cutoff, no job lost.
  void run_reconfiguration();
  static std::uint64_t field_of(const std::string& line, const std::string& name) {
    const auto at = line.find(name);
    return at == std::string::npos ? 0 : std::stoull(line.substr(at + name.size()));
  }
};

TEST_F(Cip11Reconfiguration, EveryRunnerReconnectsWithinTheOverlapOverlapExpiredAtTheCutoffAndNoJobIsLost) {
  run_reconfiguration();
}

void Cip11Reconfiguration::run_reconfiguration() {
  const std::vector<std::size_t> all{0, 1, 2, 3};
  if (runners.empty()) start_runners();
  const std::string leaving = endpoints.at(kLeaving);
  // Before the change each runner is admitted by its three of Sub_0(R).
  for (auto& r : runners) ASSERT_TRUE(r->wait_count("event=connected", 3, 60s));
  ASSERT_LT(height(0), kActivation) << "the runners came up after the change; raise kActivation";

  // Jobs across the whole window: before activation, inside the overlap, and
  // running while the cutoff closes validator 3's connections.
  std::vector<JobId> jobs;
  auto submit_at = [&](std::uint64_t h, int n, int sleep_ms) {
    ASSERT_TRUE(eventually([&] { return height(0) >= h; }, 60s));
    for (int i = 0; i < n; ++i) {
      auto id = submit(R"({"sleep_ms":)" + std::to_string(sleep_ms) + "}");
      ASSERT_TRUE(id);
      jobs.push_back(*id);
    }
  };
  submit_at(kActivation - 8, 3, 1500);
  // An M = 2 job at the end of epoch 0: its r_seed = advance_round(r_submit,
  // K) lies past epoch 0's last view when S is one of its last blocks, so it
  // is drawn in epoch 1 once epoch 0 closed (docs/cip11.md choice 140).
  ASSERT_TRUE(eventually([&] { return height(0) >= kActivation - 2; }, 60s));
  // Drawn once S and epoch 0's last block are final (choice 153): its
  // deadline, counted from S, that many blocks later.
  const auto pair = submit(R"({"sleep_ms":300})", 2, 80 + devchain::kMaxRollbackDepth);
  ASSERT_TRUE(pair);
  jobs.push_back(*pair);
  submit_at(kActivation + 5, 3, 800);
  submit_at(kCutoff - 6, 4, 2000);
  ASSERT_TRUE(eventually([&] { return all_at_least(all, kCutoff + 30); }, 120s));

  // Blocks name the epoch active at their height, and every validator holds them alike.
  EXPECT_EQ(chain(0).block_at(kActivation - 1)->block.epoch, 0u);
  EXPECT_EQ(chain(0).block_at(kActivation)->block.epoch, 1u);
  // Views restart in epoch 1 (choice 140): its first block's view is a
  // count of timeouts, below epoch 0's last block's (which is over 100).
  const View last_view = chain(0).block_at(kActivation - 1)->block.view;
  EXPECT_LT(chain(0).block_at(kActivation)->block.view, last_view);
  expect_same_blocks(all, kCutoff + 30);

  std::size_t expected_expired = 0;
  // From the runner's reading of the activation block (its first retired
  // epoch-0 link) to its last epoch-1 admission: a figure, not a bound.
  std::uint64_t slowest_us = 0;
  const auto e0 = epoch0();
  for (std::size_t i = 0; i < kRunners; ++i) {
    auto& r = *runners[i];
    // Its three epoch-1 validators admitted it inside the window.
    auto retired = r.wait_for({"event=disconnected", "retired:", "epoch 0"}, 10s);
    ASSERT_TRUE(retired) << "runner " << i;  // each had an epoch-0 link to a validator of both epochs
    for (std::size_t v = 0; v < kValidators; ++v) {
      if (v == kLeaving) continue;
      auto line = r.wait_for({"event=connected", endpoints.at(v) + " epoch 1"}, 30s);
      ASSERT_TRUE(line) << "runner " << i << " validator " << v;
      EXPECT_LT(height_of(*line), kCutoff) << *line;
      const std::uint64_t t0 = field_of(*retired, " at_us="), t1 = field_of(*line, " at_us=");
      if (t1 > t0) slowest_us = std::max(slowest_us, t1 - t0);
    }
    // Validator 3, if in its Sub_0(R): told OverlapExpired, never again admitted.
    const bool had_leaving = in_subset(raw_key(i), e0, e0[kLeaving]);
    expected_expired += had_leaving ? 1 : 0;
    if (had_leaving) {
      auto bye = r.wait_for({"event=disconnected", "Goodbye OverlapExpired", leaving + " epoch 0"}, 10s);
      ASSERT_TRUE(bye) << "runner " << i;
      // At the cutoff block exactly, as the validator's Goodbye says (the
      // line's own height is the runner's last read, which may lag).
      EXPECT_NE(bye->find("the overlap window ended at block " + std::to_string(kCutoff)), std::string::npos) << *bye;
    }
    auto late = r.wait_for({"event=connected", leaving}, 0ms);
    if (late) {
      EXPECT_LT(height_of(*late), kActivation) << *late;
    }
  }
  ASSERT_GT(expected_expired, 0u) << "no runner had validator 3 in its subset: choose other keys";
  RecordProperty("reconnect_ms", static_cast<int>(slowest_us / 1000));
  std::printf("reconfiguration: every runner held its epoch-1 subset %.1f ms after it read the activation block\n",
              static_cast<double>(slowest_us) / 1000.0);
  EXPECT_EQ(processes[kLeaving]->metric("cip11d_overlap_expired_total"), static_cast<double>(expected_expired));
  EXPECT_EQ(processes[kLeaving]->metric("cip11d_connected_runners"), 0.0);
  for (std::size_t v : all) EXPECT_EQ(processes[v]->metric("cip11d_subset_epoch"), 1.0) << v;

  // No job lost: every one completed.
  for (const auto& id : jobs) {
    ASSERT_TRUE(eventually(
        [&] {
          auto j = chain(0).job(id);
          return j.ok() && chain::terminal(j->state);
        },
        60s));
    EXPECT_EQ(chain(0).job(id)->state, chain::JobState::kCompleted) << to_hex0x(id.value);
  }
  // The M = 2 job was drawn from exactly advance_round(r_submit, K) over
  // epoch 0's views 0..last_view: the round its assignment block consumed.
  const auto drawn = chain(0).job(*pair);
  ASSERT_TRUE(drawn.ok());
  const std::uint64_t s = drawn->submitted_at.value;
  const auto at_s = chain(0).block_at(s);
  ASSERT_TRUE(at_s.ok());
  const chain::Round r_submit{RoundEpoch{at_s->block.epoch}, at_s->block.view};
  const chain::EpochSchedule closed{{last_view.value + 1}};
  const auto r_seed = chain::advance_round(closed, r_submit, kSeedDelay);
  ASSERT_TRUE(r_seed);
  const auto assigning = chain(0).block_at(drawn->assignment_height.value);
  ASSERT_TRUE(assigning.ok());
  auto consumed = chain::decode_consumed_seeds(assigning->block.consumed_seeds);
  ASSERT_TRUE(consumed.ok());
  bool found = false;
  for (const auto& c : *consumed) found = found || (chain::Round{c.epoch, c.view} == *r_seed);
  EXPECT_TRUE(found) << "S " << s << " in view " << r_submit.view.value << ", epoch 0 ended at view " << last_view.value;
  std::printf("reconfiguration: the M = 2 job submitted at %llu (view %llu of epoch %llu) was drawn from Round(%llu, %llu)\n",
              static_cast<unsigned long long>(s), static_cast<unsigned long long>(r_submit.view.value),
              static_cast<unsigned long long>(r_submit.epoch.value), static_cast<unsigned long long>(r_seed->epoch.value),
              static_cast<unsigned long long>(r_seed->view.value));
}

// docs/devchain.md D10 with real processes: the same change as above, not in
// the genesis but scheduled by the governance admin's transaction sent to one
// validator a few blocks in. Every validator holds it (GET
// /v1/cip11/validator-sets), one SIGKILLed and restarted after it reloads it
// from its store (else it would refuse the epoch-1 blocks: WrongEpoch), a
// second change while it is pending is refused by name, and the cip11d and
// cip11-runner processes, running since before it with no change scheduled,
// re-read it from the chain: the same reconnection within the window, no job lost.
struct Cip11GovernanceReconfiguration : Cip11Reconfiguration {
  chain::ValidatorSetChange scheduled;
  std::vector<chain::ValidatorEntry> genesis_validators;
  void configure(devchain::Cip11Genesis& c) override {
    Cip11Reconfiguration::configure(c);
    scheduled = c.validator_set_changes.at(0);
    c.validator_set_changes.clear();  // nothing scheduled at genesis
    genesis_validators = c.validators;
  }
  devchain::ScheduleValidatorSet change(std::uint64_t epoch, std::vector<std::size_t> members) const {
    devchain::ScheduleValidatorSet s{epoch, kActivation, {}};
    for (std::size_t i : members) s.validators.push_back(genesis_validators[i]);
    return s;
  }
};

TEST_F(Cip11GovernanceReconfiguration, ASetChangedByTransactionReachesEveryProcessSurvivesARestartAndLosesNoJob) {
  const std::vector<std::size_t> all{0, 1, 2, 3};
  ASSERT_TRUE(eventually([&] { return all_at_least(all, 2); }, 60s));
  // The runners first, each admitted by its three of Sub_0(R) with nothing scheduled.
  start_runners();
  for (auto& r : runners) ASSERT_TRUE(r->wait_count("event=connected", 3, 60s));
  for (std::size_t i : all) {
    auto none = chain(i).validator_set_changes();
    ASSERT_TRUE(none.ok()) << none.error().message;
    EXPECT_TRUE(none->empty());
  }
  auto api = chain(2);
  devchain::Wallet admin(api, submitter);  // the genesis governance_admin
  auto receipt = admin.send_and_wait(
      devchain::ValidatorSetCall{devchain::encode_schedule_validator_set(change(1, {0, 1, 2}))});
  ASSERT_TRUE(receipt.ok()) << receipt.error().message;
  ASSERT_TRUE(receipt->ok()) << *receipt->error;
  ASSERT_LE(receipt->height + kOverlap, kActivation);
  // Pending until kActivation: a second change is refused, and nothing else scheduled.
  auto pending = admin.send_and_wait(
      devchain::ValidatorSetCall{devchain::encode_schedule_validator_set(change(2, {0, 1, 2, 3}))});
  ASSERT_TRUE(pending.ok()) << pending.error().message;
  EXPECT_EQ(pending->error.value_or(""), "ChangePending");
  ASSERT_TRUE(eventually([&] { return all_at_least(all, pending->height); }, 60s));
  for (std::size_t i : all) EXPECT_EQ(*chain(i).validator_set_changes(), std::vector{scheduled}) << i;

  // A validator restarted after the transaction reads it back from its own store.
  processes[1]->kill9();
  processes[1] = start(1);
  ASSERT_TRUE(processes[1]->up());
  ASSERT_TRUE(eventually([&] { return all_at_least(all, pending->height + 2); }, 60s));
  EXPECT_EQ(*chain(1).validator_set_changes(), std::vector{scheduled});
  // Each runner read it while running (its validator_set event), before the activation.
  for (std::size_t i = 0; i < kRunners; ++i) {
    auto read = runners[i]->wait_for({"event=validator_set", "epoch 1 from block " + std::to_string(kActivation)}, 30s);
    ASSERT_TRUE(read) << "runner " << i;
    EXPECT_LT(height_of(*read), kActivation) << *read;
  }

  run_reconfiguration();
}

// docs/devchain.md D2, D10 with real processes: a fifth `cip11d` with a key
// no genesis names starts beside the four, following the chain, and the
// governance admin's transaction schedules epoch 1 with it in and genesis
// validator 3 out. Every node, the leaving one included, holds the same
// blocks; before the activation the newcomer proposes nothing, from it on it
// proposes in its turns and validator 3 never, and the five agree on the head.
struct Cip11ValidatorJoins : Cip11Validators {
  static constexpr std::uint64_t kActivation = 70, kOverlap = 20, kLeaving = 3;
  std::uint16_t fifth_chain_port = 0, fifth_quic_port = 0;
  std::vector<chain::ValidatorEntry> genesis_validators;
  void configure(devchain::Cip11Genesis& c) override {
    c.overlap_blocks = kOverlap;
    genesis_validators = c.validators;
    fifth_chain_port = cowboy::testing::free_ports(SOCK_STREAM, 1).at(0);
    fifth_quic_port = cowboy::testing::free_ports(SOCK_DGRAM, 1).at(0);
    more_peers.push_back("http://127.0.0.1:" + std::to_string(fifth_chain_port));
  }
};

TEST_F(Cip11ValidatorJoins, AFifthValidatorJoinsByTransactionAndProposesAndALeavingOneStopsWithEveryHeadAlike) {
  const std::vector<std::size_t> genesis{0, 1, 2, 3};
  ASSERT_TRUE(eventually([&] { return all_at_least(genesis, 2); }, 60s));
  // The newcomer: its own keys, listening where its change will say, following from height 0.
  const chain::ValidatorEntry entry = start_fifth(fifth_quic_port, fifth_chain_port, false);
  const auto newcomer = entry.peer_key;
  ASSERT_TRUE(processes.back()->up());
  const std::vector<std::size_t> all{0, 1, 2, 3, 4};

  devchain::ScheduleValidatorSet change{1, kActivation, {}};
  for (std::size_t i = 0; i < kValidators; ++i)
    if (i != kLeaving) change.validators.push_back(genesis_validators[i]);
  change.validators.push_back(entry);
  std::uint64_t included = 0;
  ASSERT_NO_FATAL_FAILURE(schedule(change, kOverlap, included));

  const std::uint64_t until = kActivation + 30;
  ASSERT_TRUE(eventually([&] { return all_at_least(all, until); }, 120s));
  expect_same_blocks(all, until);
  std::vector<crypto::Ed25519Public> epoch1 = devchain::as_change(change).peer_keys;  // canonical order
  std::size_t by_newcomer = 0;
  for (std::uint64_t h = 1; h <= until; ++h) {
    auto b = chain(4).block_at(h);
    ASSERT_TRUE(b.ok()) << h;
    const auto& producers = h < kActivation ? canonical : epoch1;
    ASSERT_LT(b->block.proposer, producers.size()) << h;
    const auto signer = producers[b->block.proposer];
    EXPECT_TRUE(crypto::ed25519_verify(signer, b->digest, b->signature)) << h;
    EXPECT_EQ(b->block.epoch, h < kActivation ? 0u : 1u) << h;
    if (h < kActivation) {
      EXPECT_NE(signer, newcomer) << h;
    } else {
      EXPECT_NE(signer, genesis_validators[kLeaving].peer_key) << "validator 3 proposed block " << h;
      by_newcomer += signer == newcomer;
    }
  }
  EXPECT_GT(by_newcomer, 0u) << "the newcomer proposed no block in " << until - kActivation + 1 << " blocks";
  // One head: each node's block at the lowest head among them is the same.
  std::uint64_t lowest = UINT64_MAX;
  for (std::size_t i : all) lowest = std::min(lowest, height(i));
  expect_same_blocks(all, lowest);
  for (std::size_t i : all) EXPECT_EQ(processes[i]->metric("cip11d_subset_epoch"), 1.0) << i;
  for (std::size_t i : all)
    EXPECT_EQ(processes[i]->metric("devchain_blocks_refused_total{reason=\"WrongProposer\"}").value_or(0), 0.0) << i;
}

struct Cip11PresenceGossipProcesses : Cip11Validators {
  Cip11PresenceGossipProcesses() { runner_count = 12; }
  std::vector<std::unique_ptr<RunnerProcess>> runners;
};

TEST_F(Cip11PresenceGossipProcesses, EveryRunnerIsPresentInTheBlocksOfEveryProposerAndAForgedViewIsRefused) {
  const std::vector<std::size_t> all{0, 1, 2, 3};
  ASSERT_TRUE(eventually([&] { return all_at_least(all, 3); }, 60s));
  // Forged views, before any runner is up: each refused by name, counted, and without effect.
  const std::uint64_t head = height(0);
  PresenceView v;
  v.subset_epoch = Epoch{0};
  {
    std::vector<crypto::Ed25519Public> genesis_order;
    for (const auto& s : seeds) genesis_order.push_back(crypto::ed25519_from_seed(s).public_key);
    v.validator_set_hash = validator_set_hash(genesis_order);
  }
  v.height = Height{head};
  v.registry_size = static_cast<std::uint32_t>(runner_count);
  PresentSet everyone(v.registry_size);
  for (std::uint32_t j = 0; j < v.registry_size; ++j) everyone.add(j);
  v.presence = encode_presence(everyone);
  const std::uint64_t chain_id = 11;
  PresenceView tampered = sign_view(Signer::validator(seeds[1]), chain_id, v);
  tampered.height += 1;  // after signing
  crypto::Ed25519Seed stranger{};
  stranger[0] = 0x99;
  const std::vector<std::pair<std::string, Bytes>> forged = {
      {"signature does not verify", encode_view(tampered)},
      {"a presence view from a key outside the validator set", encode_view(sign_view(Signer::validator(stranger), chain_id, v))},
      {"a presence view under this validator's own key", encode_view(sign_view(Signer::validator(seeds[0]), chain_id, v))},
      {"signature does not verify", encode_view(sign_view(Signer::validator(seeds[1]), chain_id + 1, v))},
      {"body without exactly its fields", Bytes{0xa0}},
  };
  for (const auto& [why, bytes] : forged) EXPECT_EQ(post_view(0, bytes), why);
  // A view from well above the receiver's head says the receiver lags, not that the view is forged: counted apart.
  PresenceView ahead = v;
  ahead.height = Height{height(0) + 1000};
  EXPECT_EQ(post_view(0, encode_view(sign_view(Signer::validator(seeds[1]), chain_id, ahead))),
            "a presence view above the receiver's head");
  EXPECT_GE(processes[0]->metric("cip11d_presence_views_ahead_total").value_or(0), 1.0);
  EXPECT_EQ(processes[0]->metric("cip11d_presence_views_refused_total"), static_cast<double>(forged.size()));
  // The next blocks, whoever proposes them, mark no runner present: none is connected, and no forgery counted.
  ASSERT_TRUE(eventually([&] { return all_at_least(all, head + 6); }, 60s));
  for (std::uint64_t h = head + 1; h <= head + 6; ++h) {
    auto set = presence_at(0, h);
    ASSERT_TRUE(set) << h;
    EXPECT_EQ(set->count(), 0u) << h;
  }
  // A view that verifies, from validator 1, naming every runner: validator 0's
  // blocks take from it only the runners whose Sub(R) holds validator 1, the
  // ones it could have seen (choice 151). Posted again at each head, above
  // validator 1's own views, so that it is the one validator 0 holds.
  PresentSet seen_by_1(v.registry_size);
  for (std::uint32_t j = 0; j < v.registry_size; ++j)
    if (excluded[j] != 1) seen_by_1.add(j);
  ASSERT_LT(seen_by_1.count(), runner_count);
  std::uint64_t posted_at = UINT64_MAX;
  const auto overreach = [&] {
    const std::uint64_t now = height(0);
    if (now == posted_at) return now;
    PresenceView at_head = v;
    at_head.height = Height{now + kViewMaxAgeBlocks};
    EXPECT_EQ(post_view(0, encode_view(sign_view(Signer::validator(seeds[1]), chain_id, at_head))), "");
    posted_at = now;
    return now;
  };
  std::size_t by_0 = 0;
  const std::uint64_t first = overreach() + 2;  // a block after the first post
  for (std::uint64_t h = first; h < first + 16;) {
    if (overreach() < h) {
      std::this_thread::sleep_for(5ms);
      continue;
    }
    auto b = chain(0).block_at(h);
    ASSERT_TRUE(b.ok()) << h;
    auto set = presence_at(0, h);
    ASSERT_TRUE(set) << h;
    if (b->block.proposer == index_of(0)) {
      EXPECT_EQ(set->indices(), seen_by_1.indices()) << "block " << h;
      ++by_0;
    } else {
      EXPECT_EQ(set->count(), 0u) << "block " << h << " proposed by " << b->block.proposer;
    }
    ++h;
  }
  EXPECT_GT(by_0, 0u);

  // The runners: each admitted by the three validators of its Sub(R).
  for (std::size_t r = 0; r < runner_count; ++r) runners.push_back(start_runner(r));
  for (std::size_t r = 0; r < runner_count; ++r)
    ASSERT_TRUE(runners[r]->wait_count("event=connected", kValidators - 1, 60s)) << "runner " << r;
  // Each validator holds the runners whose subset names it, and hears the other three's views.
  for (std::size_t i : all) {
    const double holds = static_cast<double>(std::count_if(excluded.begin(), excluded.end(), [&](std::size_t e) { return e != i; }));
    ASSERT_TRUE(eventually([&] { return processes[i]->metric("cip11d_present_runners") == holds; }, 60s)) << i;
    ASSERT_TRUE(eventually([&] { return processes[i]->metric("cip11d_presence_views_fresh") == kValidators - 1.0; }, 60s)) << i;
  }
  // From here on every block, whichever validator proposes it, marks every
  // runner present, though each proposer holds only three quarters of them.
  // (Two blocks on, so that every view a proposer holds was taken after the counts above.)
  const std::uint64_t from = std::max({height(0), height(1), height(2), height(3)}) + 3;
  const std::uint64_t to = from + 11;
  // Final everywhere first: below F a validator may still hold a fork's losing block.
  expect_same_blocks(all, to);
  std::map<std::uint32_t, std::size_t> blocks_of;
  for (std::uint64_t h = from; h <= to; ++h) {
    auto b = chain(0).block_at(h);
    ASSERT_TRUE(b.ok()) << h;
    auto set = presence_at(0, h);
    ASSERT_TRUE(set) << h;
    EXPECT_EQ(set->count(), runner_count) << "block " << h << " proposed by " << b->block.proposer;
    ++blocks_of[b->block.proposer];
  }
  EXPECT_EQ(blocks_of.size(), kValidators);  // each validator proposed some of them
  for (std::size_t i : all) {
    EXPECT_GT(processes[i]->metric("cip11d_presence_views_sent_total").value_or(0), 0.0) << i;
    EXPECT_GT(processes[i]->metric("cip11d_presence_views_kept_total").value_or(0), 0.0) << i;
  }
}

// §5.3 point 3 for the §8.2 gossip (docs/cip11.md choice 90), through the
// reconfiguration above with its six runners: validators 0-2 state their
// views under epoch 1 from the activation, validator 3 under epoch 0 until
// the cutoff and then none; no gossiped view is refused on either side of
// the change; every block marks every runner present whoever proposes it,
// validator 3's past the cutoff (it holds no runner then) from the epoch-1
// views alone; and a receiver takes a pair only while it is current.
struct Cip11PresenceAcrossEpochs : Cip11Reconfiguration {
  /// Validator `from` (genesis order)'s view at `at` under `pair`, marking every runner present.
  Bytes view_of(std::size_t from, const EpochPair& pair, std::uint64_t at) const {
    PresenceView v;
    v.subset_epoch = pair.subset_epoch;
    v.validator_set_hash = pair.validator_set_hash;
    v.height = Height{at};
    v.registry_size = static_cast<std::uint32_t>(kRunners);
    PresentSet everyone(v.registry_size);
    for (std::uint32_t j = 0; j < v.registry_size; ++j) everyone.add(j);
    v.presence = encode_presence(everyone);
    return encode_view(sign_view(Signer::validator(seeds[from]), 11, v));
  }
  /// Views refused by any validator, and the pair each states its own under.
  double refused_anywhere() const {
    double n = 0;
    for (const auto& p : processes) n += p->metric("cip11d_presence_views_refused_total").value_or(-1);
    return n;
  }
};

TEST_F(Cip11PresenceAcrossEpochs, ViewsNameTheirSendersSnapshotAndEveryProposerMarksEveryRunnerAcrossTheChange) {
  const std::vector<std::size_t> all{0, 1, 2, 3};
  const auto e0 = epoch0();
  const EpochPair old_pair{Epoch{0}, validator_set_hash(e0)};
  std::vector<crypto::Ed25519Public> next;
  for (std::size_t i = 0; i < kValidators; ++i)
    if (i != kLeaving) next.push_back(e0[i]);
  std::sort(next.begin(), next.end());
  const EpochPair new_pair{Epoch{1}, validator_set_hash(next)};
  const auto registry = static_cast<std::uint32_t>(kRunners);
  const auto accepted = [](const std::string& answer) { return answer.empty() || answer == "not newer"; };
  const auto settled = [&] { return std::max({height(0), height(1), height(2), height(3)}) + 3; };

  // Before the change: each validator holds the runners of its Sub_0(R) present.
  start_runners();
  for (auto& r : runners) ASSERT_TRUE(r->wait_count("event=connected", 3, 60s));
  for (std::size_t v : all) {
    double holds = 0;
    for (std::size_t i = 0; i < kRunners; ++i) holds += in_subset(raw_key(i), e0, e0[v]) ? 1 : 0;
    ASSERT_TRUE(eventually([&] { return processes[v]->metric("cip11d_present_runners") == holds; }, 60s)) << v;
  }
  const std::uint64_t before = settled();
  ASSERT_LT(before + 4, kActivation) << "the runners came up too close to the change; raise kActivation";
  for (std::size_t v : all) EXPECT_EQ(processes[v]->metric("cip11d_presence_view_epoch"), 0.0) << v;

  // Inside the overlap: validators 0-2 state epoch 1, validator 3 epoch 0; a
  // receiver takes an epoch-1 view from a member of epoch 1, an epoch-0 view
  // from validator 3, and no epoch-1 view from validator 3.
  ASSERT_TRUE(eventually([&] { return all_at_least(all, kActivation + 5); }, 60s));
  for (std::size_t v : all)
    EXPECT_EQ(processes[v]->metric("cip11d_presence_view_epoch"), v == kLeaving ? 0.0 : 1.0) << v;
  {
    const std::uint64_t head = height(0);
    EXPECT_PRED1(accepted, post_view(0, view_of(1, new_pair, head)));
    EXPECT_PRED1(accepted, post_view(0, view_of(kLeaving, old_pair, head)));
    EXPECT_PRED1(accepted, post_view(0, view_of(1, old_pair, head)));  // a member of both may name either
    EXPECT_EQ(post_view(0, view_of(kLeaving, new_pair, head)), "a presence view from a key outside the validator set");
    EXPECT_EQ(post_view(0, view_of(1, EpochPair{Epoch{1}, old_pair.validator_set_hash}, head)),
              "a presence view under another validator set or epoch");
  }
  // Each runner readmitted under epoch 1 by validators 0-2, and present there again.
  for (std::size_t i = 0; i < kRunners; ++i)
    for (std::size_t v = 0; v < kValidators; ++v) {
      if (v == kLeaving) continue;
      ASSERT_TRUE(runners[i]->wait_for({"event=connected", endpoints.at(v) + " epoch 1"}, 30s)) << i << " " << v;
    }
  for (std::size_t v : {0, 1, 2})
    ASSERT_TRUE(eventually([&] { return processes[v]->metric("cip11d_present_runners") == static_cast<double>(kRunners); }, 30s)) << v;
  const std::uint64_t after = settled();
  ASSERT_LT(after + 2, kCutoff) << "the runners were readmitted too close to the cutoff; raise kOverlap";

  // Past the cutoff: epoch 0 is refused whoever signs it, and validator 3,
  // in no current snapshot, holds no runner and states no view.
  ASSERT_TRUE(eventually([&] { return all_at_least(all, kCutoff + 3); }, 60s));
  {
    const std::uint64_t head = height(0);
    EXPECT_EQ(post_view(0, view_of(kLeaving, old_pair, head)), "a presence view under another validator set or epoch");
    EXPECT_EQ(post_view(0, view_of(1, old_pair, head)), "a presence view under another validator set or epoch");
    EXPECT_PRED1(accepted, post_view(0, view_of(2, new_pair, head)));
  }
  EXPECT_EQ(processes[0]->metric("cip11d_presence_views_refused_total"), 4.0);  // the four posted above
  // No view the validators gossiped each other was refused, on either side of the change.
  EXPECT_EQ(refused_anywhere(), 4.0);
  EXPECT_GT(processes[kLeaving]->metric("cip11d_presence_views_unstated_total").value_or(0), 0.0);
  for (std::size_t v : {0, 1, 2}) EXPECT_EQ(processes[v]->metric("cip11d_presence_views_unstated_total"), 0.0) << v;
  EXPECT_EQ(processes[kLeaving]->metric("cip11d_connected_runners"), 0.0);

  // Every runner present in every block, whoever proposed it: before the
  // change, and from its settling after the readmissions (a runner whose
  // three links all moved to epoch 1 at once is briefly held by no one) to
  // past the cutoff. From kActivation the producers are epoch 1's three
  // (docs/devchain.md D2: validator 3, in no active snapshot, proposes
  // nothing), so a block's proposer there is an index into `next`.
  const std::uint64_t to = kCutoff + 16;
  // Final everywhere first: below F a validator may still hold a fork's losing block.
  expect_same_blocks(all, to);
  std::set<std::uint32_t> proposers_after_cutoff;
  for (std::uint64_t h = before; h <= to; ++h) {
    if (h >= kActivation && h < after) continue;
    auto b = chain(0).block_at(h);
    ASSERT_TRUE(b.ok()) << h;
    auto set = presence_at(0, h, registry);
    ASSERT_TRUE(set) << h;
    EXPECT_EQ(set->count(), kRunners) << "block " << h << " proposed by " << b->block.proposer;
    if (h >= kCutoff) proposers_after_cutoff.insert(b->block.proposer);
  }
  EXPECT_EQ(proposers_after_cutoff, (std::set<std::uint32_t>{0, 1, 2})) << "each of epoch 1's validators proposes";
}

// docs/cip11.md choice 158 (§10.1 "finalized and applied (never
// speculative)"): each validator pushes a block's assignment once that block
// is final in its own view, F = 4 blocks deep here. Polled: a validator's
// push count is read before its head, so a push seen with a head below
// H + F was sent before H was final there.
struct Cip11FinalPushes : Cip11Validators {
  Cip11FinalPushes() { runner_count = 4; }  // balanced keys; one runs, so every job is its
};

TEST_F(Cip11FinalPushes, AValidatorPushesAnAssignmentOnlyOnceItsBlockIsFinal) {
  const std::uint64_t f = kFinalityDepth;
  auto runner = start_runner(0);
  ASSERT_TRUE(runner->wait_count("event=connected", kValidators - 1, 60s));
  auto api = chain(0);
  devchain::Wallet wallet(api, submitter);
  const std::string spec = R"({"sleep_ms":10})";
  chain::SubmitJob job{JobKind::kCustom, Bytes(spec.begin(), spec.end()), 200, 1, 0};
  auto receipt = wallet.send_and_wait(devchain::Cip11Call{chain::encode_instruction(job)});
  ASSERT_TRUE(receipt.ok()) << receipt.error().message;
  ASSERT_TRUE(receipt->ok() && receipt->job_id);
  const std::uint64_t h = receipt->height;  // M = 1: assigned in S
  std::size_t pushed_by = 0;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (pushed_by < kValidators - 1 && std::chrono::steady_clock::now() < deadline) {
    pushed_by = 0;
    for (std::size_t i = 0; i < kValidators; ++i) {
      const double pushes = processes[i]->metric("cip11d_pushes_total").value_or(0);
      const std::uint64_t head = height(i);
      if (pushes == 0) continue;
      ++pushed_by;
      EXPECT_GE(head, h + f) << "validator " << i << " pushed block " << h << "'s assignment at head " << head;
    }
    if (HasFailure()) break;
    std::this_thread::sleep_for(5ms);
  }
  // The validators that hold the runner (k = 3 of 4) each pushed it once.
  EXPECT_EQ(pushed_by, kValidators - 1);
  ASSERT_TRUE(eventually(
      [&] {
        auto record = chain(0).job(*receipt->job_id);
        return record.ok() && record->state == chain::JobState::kCompleted;
      },
      60s));
}

// docs/cip11.md choice 164 (§10.1, choice 158): a validator restarted while
// a block it applied is not yet final pushes that block's assignment once the
// block is final after the restart; the blocks waiting for finality are read
// again from the chain at open (they were in memory only, and the old code
// never pushed them). Two of the four are killed first, so that blocks come
// in only two views of four (a view timeout in each other): the kill of
// validator V lands between the assignment block S and S + F, and the runner,
// reconnected at the next block it sees (a Ping answered by V's stateless
// reset), is back before S is final at V. With V down, W alone proposes one
// block in four views (three view timeouts, 9 s), so V's restart costs the
// chain a block or two at most even on loaded cores; the test checks that
// the runner was back at V before S + F, and says so when it was not.
struct Cip11RestartPushes : Cip11FinalPushes {
  Cip11RestartPushes() { view_timeout_ms = 3000; }
};

TEST_F(Cip11RestartPushes, AValidatorRestartedBeforeItsAssignmentBlockIsFinalPushesItOnceFinal) {
  const std::uint64_t f = kFinalityDepth;
  // V and W: two validators of runner 0's Sub(R); the other two are killed.
  std::vector<std::size_t> sub;
  for (std::size_t i = 0; i < kValidators; ++i)
    if (i != excluded[0]) sub.push_back(i);
  const std::size_t v = sub[0], w = sub[1];
  auto runner = start_runner(0, w);
  ASSERT_TRUE(runner->wait_count("event=connected", kValidators - 1, 60s));
  for (std::size_t i = 0; i < kValidators; ++i)
    if (i != v && i != w) processes[i]->kill9();
  const std::uint64_t from = std::max(height(v), height(w));
  ASSERT_TRUE(eventually([&] { return all_at_least({v, w}, from + 2); }, 60s));

  auto api = chain(w);
  devchain::Wallet wallet(api, submitter);
  const std::string spec = R"({"sleep_ms":10})";
  chain::SubmitJob job{JobKind::kCustom, Bytes(spec.begin(), spec.end()), 400, 1, 0};
  auto tx = wallet.send(devchain::Cip11Call{chain::encode_instruction(job)});
  ASSERT_TRUE(tx.ok()) << tx.error().message;
  // As soon as V and W both hold S (M = 1: assigned in S), V is killed: S
  // not final there, nothing pushed. (Both: with V killed right after it
  // proposed S, W would have to take S from V's store once it is back.)
  std::optional<devchain::TxReceipt> receipt;
  ASSERT_TRUE(eventually(
      [&] {
        auto at_v = chain(v).receipt(*tx);
        auto at_w = chain(w).receipt(*tx);
        if (at_v.ok() && *at_v && at_w.ok() && *at_w && (*at_v)->height == (*at_w)->height) receipt = **at_v;
        return receipt.has_value();
      },
      60s));
  const double pushed_before = processes[v]->metric("cip11d_pushes_total").value_or(-1);
  const std::uint64_t head_before = height(v);
  processes[v]->kill9();
  ASSERT_TRUE(receipt->ok() && receipt->job_id);
  const std::uint64_t s = receipt->height;
  ASSERT_EQ(pushed_before, 0.0);
  // Killed with S not final at V: two blocks to spare below S + F.
  ASSERT_LE(head_before + 3, s + f) << "validator " << v << " was killed at head " << head_before << ", S = " << s;
  auto record = chain(w).job(*receipt->job_id);
  ASSERT_TRUE(record.ok());
  ASSERT_NE(record->assignment_of(runner_keys[0].address), nullptr) << "the job went to another runner";

  processes[v] = start(v);
  ASSERT_TRUE(processes[v]->up());
  // The test's premise: the runner is back at V while S is not yet final
  // there (the count read before the head, so a head below S + F read after
  // it was below S + F when the runner was back). Not a push's failure when
  // it does not hold: the restart was slower than the chain.
  ASSERT_TRUE(eventually([&] { return processes[v]->metric("cip11d_connected_runners") == 1.0; }, 60s))
      << "the runner did not reconnect to validator " << v;
  const std::uint64_t head_at_reconnect = height(v);
  ASSERT_LT(head_at_reconnect, s + f) << "the runner was back at validator " << v << " only at head " << head_at_reconnect
                                      << ", S + F = " << s + f << ": the restart outlasted the blocks to spare";
  // Once S is final at V, V pushes its assignment to the runner (which acks
  // it, or answers Duplicate when W's push came first). Polled as in
  // Cip11FinalPushes: the push count read before the head, so a push seen
  // with a head below S + F was sent before S was final at V.
  bool pushed = false;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!pushed && std::chrono::steady_clock::now() < deadline) {
    pushed = processes[v]->metric("cip11d_pushes_total").value_or(0) >= 1;
    const std::uint64_t head = height(v);
    if (pushed) EXPECT_GE(head, s + f) << "validator " << v << " pushed block " << s << "'s assignment at head " << head;
    else std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(pushed) << "validator " << v << " at head " << height(v) << " (S + F = " << s + f
                      << "), not pushed (runner absent) "
                      << processes[v]->metric("cip11d_assignments_not_pushed_total").value_or(-1);
  EXPECT_EQ(processes[v]->metric("cip11d_assignments_not_pushed_total"), 0.0);
  ASSERT_TRUE(eventually(
      [&] {
        auto done = chain(w).job(*receipt->job_id);
        return done.ok() && done->state == chain::JobState::kCompleted;
      },
      60s));
}

// docs/cip11.md choice 157: cip11d refuses to start on a genesis with several
// validators whose K is not above the finality depth (here K = 3 with the
// default F = 64), saying which rule failed.
TEST(Cip11GenesisRefusal, Cip11dRefusesAGenesisWhoseSeedDelayIsNotAboveTheFinalityDepth) {
  crypto::init();
  cowboy::testing::TempDir dir;
  devchain::Cip11Genesis c;
  c.params.chain_id = 11;
  for (std::uint8_t i = 0; i < 2; ++i) {
    crypto::Ed25519Seed seed;
    seed.fill(static_cast<std::uint8_t>(0x60 + i));
    c.validators.push_back({crypto::ed25519_from_seed(seed).public_key, "127.0.0.1:" + std::to_string(7100 + i)});
  }
  devchain::GenesisSpec g;
  g.chain_name = "refused";
  g.cip11 = c;
  const auto genesis = dir.path() / "genesis.json";
  std::ofstream(genesis) << devchain::genesis_to_json(g).dump();
  const auto key = dir.path() / "key";
  ASSERT_TRUE(load_or_create_secret(key).ok());
  auto refused = cowboy::testing::run("timeout -s KILL 30 " + std::string(COWBOY_BIN_DIR) + "/cip11d --data-dir " +
                                      (dir.path() / "v").string() + " --genesis " + genesis.string() + " --key " +
                                      key.string() + " --chain-listen 127.0.0.1:0 --admin-listen 127.0.0.1:0");
  EXPECT_EQ(refused.status, 1) << refused.out;
  EXPECT_NE(refused.out.find("selection_seed_delay_views (K = 3) must be at least finality_depth + 1 (65)"),
            std::string::npos)
      << refused.out;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "v" / "chain"));
}

}  // namespace
}  // namespace cowboy::cip11
