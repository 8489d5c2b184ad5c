// Mode A (§8.3) through a validator-set change (§5.3), all real processes
// over QUIC (docs/cip11.md choice 124): four `cip11d --genesis` validators
// with PRESENCE_HARD_EXCLUDE_ENABLED and t_hard = 3, and `cip11-runner`
// processes that ask each validator of their subset for PresenceReceipts and
// certify them. The genesis schedules ValidatorSetSnapshot(1) without genesis
// validator 3 (k = 3 of 4 becomes k = 3 of 3). Each runner's proof, read over
// GET /v1/cip11/runners/<address>/presence-proof, is anchored by epoch-0
// receipts before the activation, moves on inside the overlap, and moves on
// after the cutoff, where no epoch-0 receipt counts any more: t_hard = 3 of a
// three-validator set is then met only by the epoch-1 receipts of all three,
// each sealed on its epoch-1 connection.
#include <cstdio>
#include <set>
#include <thread>

#include "validator_processes.h"

namespace cowboy::cip11::testing {
namespace {

struct Cip11ModeAAcrossEpochs : Cip11Validators {
  static constexpr std::uint64_t kActivation = 150, kOverlap = 100, kCutoff = kActivation + kOverlap;
  static constexpr std::size_t kRunners = 4, kLeaving = 3;
  std::vector<crypto::Secp256k1Secret> keys;
  std::vector<std::unique_ptr<RunnerProcess>> runners;

  void configure(devchain::Cip11Genesis& c) override {
    c.params.presence_hard_exclude_enabled = true;
    c.params.t_hard = 3;  // every validator of Sub(R): k = 3 in both epochs
    keys = register_runners(c, kRunners);
    schedule_without(c, kLeaving, kActivation, kOverlap);
  }
  Address address(std::size_t runner) const { return *crypto::secp256k1_address(keys[runner]); }
};

TEST_F(Cip11ModeAAcrossEpochs, EachRunnersProofMovesOnBeforeTheChangeInsideTheOverlapAndAfterTheCutoff) {
  for (std::size_t i = 0; i < kRunners; ++i)
    runners.push_back(std::make_unique<RunnerProcess>(std::vector<std::string>{
        "--chain-url", url(i % 3), "--key", (dir.path() / "runners" / (std::to_string(i) + ".key")).string(),
        "--state-dir", (dir.path() / "runners" / ("state-" + std::to_string(i))).string(), "--block-ms", "100",
        "--height-poll-ms", "20"}));
  for (auto& r : runners) ASSERT_TRUE(r->wait_count("event=connected", 3, 60s));
  ASSERT_LT(height(0), kActivation) << "the runners came up after the change; raise kActivation";

  // Every anchor each runner's proof takes, as validator 0 serves it, until
  // every runner holds one past the cutoff.
  std::vector<std::set<std::uint64_t>> anchors(kRunners);
  auto api = chain(0);
  ASSERT_TRUE(eventually(
      [&] {
        bool all_past = true;
        for (std::size_t i = 0; i < kRunners; ++i) {
          auto p = api.presence_proof(address(i));
          if (p.ok()) {
            EXPECT_EQ(p->proven_until, p->anchor + chain::kPresenceProofTtlBlocks) << i;
            anchors[i].insert(p->anchor.value);
          } else {
            EXPECT_EQ(p.error().code, devchain::ApiErrorCode::kNotFound) << p.error().message;
          }
          all_past = all_past && !anchors[i].empty() && *anchors[i].rbegin() >= kCutoff;
        }
        // An anchor lasts ~30 blocks (3 s): a read every 50 ms sees each one.
        if (!all_past) std::this_thread::sleep_for(50ms);
        return all_past;
      },
      120s))
      << "a runner's proof never moved past the cutoff at " << kCutoff << "; chain at " << height(0);

  for (std::size_t i = 0; i < kRunners; ++i) {
    std::string seen;
    for (auto a : anchors[i]) seen += " " + std::to_string(a);
    std::printf("runner %zu: anchors%s (activation %llu, cutoff %llu)\n", i, seen.c_str(),
                static_cast<unsigned long long>(kActivation), static_cast<unsigned long long>(kCutoff));
    // Epoch-0 receipts of its three of Sub_0(R), then the overlap (epoch-1
    // receipts of validators 0-2, validator 3's epoch-0 ones), then only epoch 1.
    EXPECT_LT(*anchors[i].begin(), kActivation) << "runner " << i << ":" << seen;
    EXPECT_NE(anchors[i].lower_bound(kActivation), anchors[i].lower_bound(kCutoff)) << "runner " << i << ":" << seen;
    EXPECT_GE(*anchors[i].rbegin(), kCutoff) << "runner " << i << ":" << seen;
    // Each certificate the runner sent was applied: it logs one per anchor.
    auto certified = runners[i]->wait_for({"event=certificate", std::to_string(*anchors[i].rbegin())}, 10s);
    EXPECT_TRUE(certified) << "runner " << i;
  }
  // Every validator holds the same blocks, and the three that stay sent receipts after the cutoff.
  expect_same_blocks({0, 1, 2, 3}, kCutoff);
  for (std::size_t v = 0; v < kValidators; ++v)
    EXPECT_GE(processes[v]->metric("cip11d_presence_receipts_total").value_or(0), 1.0) << v;
}

}  // namespace
}  // namespace cowboy::cip11::testing
