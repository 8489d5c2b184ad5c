// The runner's spread of its epoch-(E+1) links over the first blocks of an
// overlap (cip11/runner/epoch_spread.h, docs/cip11.md choice 163): at an
// activation only the runners whose phase is 0 move, each bucket of the
// spread holds some, and every runner holds the new epoch's links by
// activation + spread, well before the cutoff.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "cip11/runner/epoch_spread.h"
#include "handshake_fakes.h"
#include "samples.h"

namespace cowboy::cip11 {
namespace {

using chain::ValidatorSnapshots;

crypto::Ed25519Public peer(std::uint8_t n) {
  crypto::Ed25519Seed seed;
  seed.fill(n);
  return crypto::ed25519_from_seed(seed).public_key;
}

Address runner(std::uint32_t n) {
  Address a{};
  for (int i = 0; i < 4; ++i) a[16 + i] = static_cast<std::uint8_t>(n >> (24 - 8 * i));
  return a;
}

constexpr std::uint64_t kChain = 31337;
constexpr Height kActivation{100};

ValidatorSnapshots four_then_three(std::uint64_t overlap) {
  std::vector<crypto::Ed25519Public> e0{peer(1), peer(2), peer(3), peer(4)}, e1{peer(1), peer(2), peer(3)};
  std::sort(e0.begin(), e0.end());
  std::sort(e1.begin(), e1.end());
  auto s = ValidatorSnapshots::genesis(e0, overlap);
  s.add(Epoch{1}, kActivation, e1);
  return s;
}

TEST(Cip11EpochSpread, AtAnActivationOnlyOneRunnerInSixteenTakesUpTheNewEpochAndAllHaveBySixteenBlocks) {
  const auto snaps = four_then_three(chain::kOverlapBlocks);
  constexpr std::uint32_t kRunners = 2000;
  std::array<std::size_t, kEpochSpreadBlocks> by_phase{};
  std::size_t moved_at_activation = 0;
  for (std::uint32_t n = 0; n < kRunners; ++n) {
    const Address r = runner(n);
    // Before the activation the height is its own; so it is from activation + spread on.
    EXPECT_EQ(link_height(snaps, kChain, r, Height{kActivation.value - 1}), Height{kActivation.value - 1});
    EXPECT_EQ(link_height(snaps, kChain, r, kActivation + kEpochSpreadBlocks), kActivation + kEpochSpreadBlocks);
    const std::uint64_t phase = epoch_switch_phase(kChain, r, chain::kOverlapBlocks);
    ASSERT_LT(phase, kEpochSpreadBlocks);
    ++by_phase[phase];
    // Inside the spread: the links of activation - 1 until its phase, the new epoch's from it.
    for (std::uint64_t d = 0; d < kEpochSpreadBlocks; ++d) {
      const Height h = kActivation + d;
      EXPECT_EQ(link_height(snaps, kChain, r, h), d < phase ? Height{kActivation.value - 1} : h) << n << " " << d;
    }
    if (link_height(snaps, kChain, r, kActivation) == kActivation) ++moved_at_activation;
  }
  // 2,000 runners over 16 buckets: 125 expected in each.
  EXPECT_LT(moved_at_activation, kRunners / 8);
  for (std::size_t b = 0; b < by_phase.size(); ++b) EXPECT_GT(by_phase[b], 60u) << "bucket " << b;
}

TEST(Cip11EpochSpread, TheSpreadIsAtMostHalfTheOverlapAndNoneBelowTwoBlocks) {
  for (std::uint32_t n = 0; n < 200; ++n) {
    EXPECT_LT(epoch_switch_phase(kChain, runner(n), 10), 5u);
    EXPECT_EQ(epoch_switch_phase(kChain, runner(n), 3), 0u);
    const auto snaps = four_then_three(3);
    EXPECT_EQ(link_height(snaps, kChain, runner(n), kActivation), kActivation);
  }
}

TEST(Cip11EpochSpread, AnActivationInsideItsPredecessorsOverlapIsNotSpread) {
  std::vector<crypto::Ed25519Public> e0{peer(1), peer(2), peer(3), peer(4)}, e1{peer(1), peer(2), peer(3)},
      e2{peer(1), peer(2), peer(5)};
  for (auto* v : {&e0, &e1, &e2}) std::sort(v->begin(), v->end());
  auto snaps = ValidatorSnapshots::genesis(e0, chain::kOverlapBlocks);
  snaps.add(Epoch{1}, kActivation, e1);
  snaps.add(Epoch{2}, kActivation + 50, e2);  // epoch 0 still counts at 149
  for (std::uint32_t n = 0; n < 200; ++n)
    EXPECT_EQ(link_height(snaps, kChain, runner(n), kActivation + 50), kActivation + 50);
}

// Inside its phase a runner still holds its epoch-E links, but the validators
// answer with their offer at the real height, {E+1, overlap E}: each link's
// offer must accept that Hello, and the validator must admit its pair. With
// the offer taken at activation - 1 ({E, no overlap}) every such link was
// refused NotInSubset until the phase passed (choice 163).
TEST(Cip11EpochSpread, InsideItsPhaseARunnersEpochLinksAreAdmittedByValidatorsPastTheActivation) {
  const auto snaps = four_then_three(chain::kOverlapBlocks);
  const auto& p = testing::party();
  std::size_t inside_phase = 0;
  for (std::uint32_t n = 0; n < 64; ++n) {
    const Address r = runner(n);
    crypto::Secp256k1Compressed key{};
    key.fill(static_cast<std::uint8_t>(n + 1));
    key[0] = 0x02;
    for (std::uint64_t d = 0; d <= kEpochSpreadBlocks; ++d) {
      const Height h = kActivation + d;
      const auto held = held_links(snaps, kChain, r, key, h, {});
      ASSERT_FALSE(held.empty());
      if (link_height(snaps, kChain, r, h) != h) ++inside_phase;
      for (const auto& l : held) {
        EXPECT_EQ(admit_epoch_paired(snaps, l.link.validator, key, l.link.pair, h, {}), std::nullopt);
        EXPECT_EQ((EpochPair{l.offer.subset_epoch, l.offer.validator_set_hash}), l.link.pair);
        testing::CountingEntropy entropy;
        testing::FixedAdmission runner_admission, validator_admission;
        Handshake runner_end(p.runner, l.offer, testing::filled(0x80), runner_admission, entropy);
        Handshake validator_end(p.validator, chain::offer_at(snaps, kChain, h), testing::filled(0x80), validator_admission,
                                entropy);
        const auto at_validator = validator_end.on_frame(runner_end.hello());
        EXPECT_FALSE(at_validator.refuse) << n << " " << d;
        const auto at_runner = runner_end.on_frame(validator_end.hello());
        EXPECT_FALSE(at_runner.refuse) << n << " " << d << " epoch " << l.link.pair.subset_epoch.value;
      }
    }
  }
  EXPECT_GT(inside_phase, 0u);  // some runners were inside their phase
}

}  // namespace
}  // namespace cowboy::cip11
