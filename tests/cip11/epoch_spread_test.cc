// The runner's spread of its epoch-(E+1) links over the first blocks of an
// overlap (cip11/runner/epoch_spread.h, docs/cip11.md choice 163): at an
// activation only the runners whose phase is 0 move, each bucket of the
// spread holds some, and every runner holds the new epoch's links by
// activation + spread, well before the cutoff.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "cip11/runner/epoch_spread.h"

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

}  // namespace
}  // namespace cowboy::cip11
