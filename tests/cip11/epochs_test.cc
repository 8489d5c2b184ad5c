// §5.3 reconfiguration as pure functions (chain/snapshots.h) and the
// epoch-paired §6.2 handshake (handshake.h): which snapshots are current at a
// height, the union a runner holds, epoch-paired admission never crossing
// epochs in either direction, the height-tied cutoff, and that nothing offered
// under an old hash is admitted past it (docs/cip11.md choices 79-82).
#include <gtest/gtest.h>

#include <algorithm>

#include "cip11/chain/snapshots.h"
#include "cip11/handshake.h"
#include "handshake_fakes.h"
#include "samples.h"

namespace cowboy::cip11 {
namespace {

using chain::EpochLink;
using chain::ValidatorSnapshots;
using testing::filled;
using testing::party;

crypto::Ed25519Public peer(std::uint8_t n) {
  crypto::Ed25519Seed seed;
  seed.fill(n);
  return crypto::ed25519_from_seed(seed).public_key;
}

std::vector<crypto::Ed25519Public> sorted(std::vector<crypto::Ed25519Public> v) {
  std::sort(v.begin(), v.end());
  return v;
}

crypto::Secp256k1Compressed runner_raw(std::uint32_t n) {
  crypto::Secp256k1Compressed out;
  const Signer signer = testing::runner_key(n);
  const auto raw = signer.pubkey().raw();
  std::copy(raw.begin(), raw.end(), out.begin());
  return out;
}

constexpr Height kActivation{40};
constexpr std::uint64_t kOverlap = 10;
constexpr Height kCutoff = kActivation + kOverlap;

// Epoch 0: four validators (k = 3); epoch 1 from height 40: three of them and
// a fifth (k = 3 of 4 again), so subsets move for most runners.
struct World {
  std::vector<crypto::Ed25519Public> e0 = sorted({peer(1), peer(2), peer(3), peer(4)});
  std::vector<crypto::Ed25519Public> e1 = sorted({peer(1), peer(2), peer(3), peer(5)});
  ValidatorSnapshots snaps = [this] {
    auto s = ValidatorSnapshots::genesis(e0, kOverlap);
    s.add(Epoch{1}, kActivation, e1);
    return s;
  }();
  EpochPair p0{Epoch{0}, validator_set_hash(e0)}, p1{Epoch{1}, validator_set_hash(e1)};
};

TEST(Cip11Epochs, TheActiveSnapshotAndTheOverlapWindowAreTiedToTheHeight) {
  World w;
  auto epochs = [&](Height h) {
    std::vector<Epoch> out;
    for (const auto* s : w.snaps.current(h)) out.push_back(s->epoch);
    return out;
  };
  EXPECT_EQ(epochs(Height{0}), (std::vector<Epoch>{Epoch{0}}));
  EXPECT_EQ(epochs(kActivation - 1), (std::vector<Epoch>{Epoch{0}}));
  EXPECT_EQ(epochs(kActivation), (std::vector<Epoch>{Epoch{1}, Epoch{0}}));  // the active one first
  EXPECT_EQ(epochs(kCutoff - 1), (std::vector<Epoch>{Epoch{1}, Epoch{0}}));
  EXPECT_EQ(epochs(kCutoff), (std::vector<Epoch>{Epoch{1}}));  // no grace past the cutoff
  EXPECT_EQ(w.snaps.cutoff(Epoch{0}), kCutoff);
  EXPECT_EQ(w.snaps.cutoff(Epoch{1}), std::nullopt);
  EXPECT_EQ(w.snaps.active(kActivation).hash, w.p1.validator_set_hash);
  EXPECT_NE(w.p0.validator_set_hash, w.p1.validator_set_hash);
}

// Point 1: during the window the runner holds Sub_E ∪ Sub_{E+1}, each
// connection under its own epoch's pair; before, Sub_E only; after, Sub_{E+1}.
TEST(Cip11Epochs, ARunnerHoldsTheUnionDuringTheWindowEachConnectionUnderItsOwnEpoch) {
  World w;
  int moved = 0;
  for (std::uint32_t n = 0; n < 40; ++n) {
    const auto key = runner_raw(n);
    std::vector<EpochLink> sub0, sub1;
    for (std::size_t i : subset_of(key, w.e0, {})) sub0.push_back({w.e0[i], w.p0});
    for (std::size_t i : subset_of(key, w.e1, {})) sub1.push_back({w.e1[i], w.p1});
    EXPECT_EQ(chain::runner_links(w.snaps, key, kActivation - 1, {}), sub0);
    auto both = sub1;
    both.insert(both.end(), sub0.begin(), sub0.end());
    EXPECT_EQ(chain::runner_links(w.snaps, key, kActivation, {}), both);
    EXPECT_EQ(chain::runner_links(w.snaps, key, kCutoff - 1, {}), both);
    EXPECT_EQ(chain::runner_links(w.snaps, key, kCutoff, {}), sub1);
    bool same = true;
    for (std::size_t i = 0; i < sub0.size(); ++i) same = same && sub0[i].validator == sub1[i].validator;
    moved += same ? 0 : 1;
  }
  EXPECT_GT(moved, 0);  // the change moves some runners' subsets
}

// Point 2: the pair selects one snapshot, and membership and Sub(runner) are
// checked in that one. A validator only in epoch 0 is admitted under p0
// until the cutoff, never under p1; one only in epoch 1 only under p1; a
// pair mixing epoch 1's number with epoch 0's hash (or the reverse) selects
// nothing.
TEST(Cip11Epochs, AdmissionIsEpochPairedAndNeverCrossesEpochs) {
  World w;
  const crypto::Ed25519Public leaving = peer(4), joining = peer(5);
  const EpochPair mixed_a{Epoch{1}, w.p0.validator_set_hash}, mixed_b{Epoch{0}, w.p1.validator_set_hash};
  int checked = 0;
  for (std::uint32_t n = 0; n < 60; ++n) {
    const auto key = runner_raw(n);
    const bool in0 = in_subset(key, w.e0, leaving, {}), in1 = in_subset(key, w.e1, joining, {});
    auto admit = [&](const crypto::Ed25519Public& me, const EpochPair& p, Height h) {
      return chain::admit_epoch_paired(w.snaps, me, key, p, h, {});
    };
    // Before the change only p0 is current.
    EXPECT_EQ(admit(leaving, w.p0, kActivation - 1), in0 ? std::nullopt : std::optional(GoodbyeReason::kNotInSubset));
    EXPECT_EQ(admit(joining, w.p1, kActivation - 1), GoodbyeReason::kNotInSubset);
    // In the window: each under its own epoch only.
    EXPECT_EQ(admit(leaving, w.p0, kActivation), in0 ? std::nullopt : std::optional(GoodbyeReason::kNotInSubset));
    EXPECT_EQ(admit(leaving, w.p1, kActivation), GoodbyeReason::kNotInSubset);  // not in epoch 1
    EXPECT_EQ(admit(joining, w.p1, kActivation), in1 ? std::nullopt : std::optional(GoodbyeReason::kNotInSubset));
    EXPECT_EQ(admit(joining, w.p0, kActivation), GoodbyeReason::kNotInSubset);  // not in epoch 0
    for (const auto& v : w.e1) {
      EXPECT_EQ(admit(v, mixed_a, kActivation), GoodbyeReason::kNotInSubset);
      EXPECT_EQ(admit(v, mixed_b, kActivation), GoodbyeReason::kNotInSubset);
      // A validator in both: its subset membership is the named epoch's.
      if (std::find(w.e0.begin(), w.e0.end(), v) == w.e0.end()) continue;
      EXPECT_EQ(admit(v, w.p0, kActivation).has_value(), !in_subset(key, w.e0, v, {}));
      EXPECT_EQ(admit(v, w.p1, kActivation).has_value(), !in_subset(key, w.e1, v, {}));
      ++checked;
    }
    // Past the cutoff the old hash admits no one.
    for (const auto& v : w.e0) EXPECT_EQ(admit(v, w.p0, kCutoff), GoodbyeReason::kNotInSubset);
  }
  EXPECT_GT(checked, 0);
}

// Point 4: connections under the old pair expire at the cutoff exactly.
TEST(Cip11Epochs, OldEpochConnectionsExpireAtTheHeightTiedCutoff) {
  World w;
  EXPECT_FALSE(chain::overlap_expired(w.snaps, w.p0, kActivation - 1));
  EXPECT_FALSE(chain::overlap_expired(w.snaps, w.p0, kCutoff - 1));
  EXPECT_TRUE(chain::overlap_expired(w.snaps, w.p0, kCutoff));
  EXPECT_FALSE(chain::overlap_expired(w.snaps, w.p1, kCutoff));
  EXPECT_TRUE(chain::overlap_expired(w.snaps, w.p1, kActivation - 1));  // not yet current
  EXPECT_TRUE(chain::overlap_expired(w.snaps, EpochPair{Epoch{1}, w.p0.validator_set_hash}, kActivation));
}

TEST(Cip11Epochs, AnEndOffersTheActivePairAndDuringTheWindowAlsoThePrevious) {
  World w;
  auto before = chain::offer_at(w.snaps, 7, kActivation - 1);
  EXPECT_EQ((EpochPair{before.subset_epoch, before.validator_set_hash}), w.p0);
  EXPECT_EQ(before.overlap, std::nullopt);
  auto during = chain::offer_at(w.snaps, 7, kActivation);
  EXPECT_EQ((EpochPair{during.subset_epoch, during.validator_set_hash}), w.p1);
  EXPECT_EQ(during.overlap, w.p0);
  auto after = chain::offer_at(w.snaps, 7, kCutoff);
  EXPECT_EQ((EpochPair{after.subset_epoch, after.validator_set_hash}), w.p1);
  EXPECT_EQ(after.overlap, std::nullopt);
}

// The handshake side of point 2. The runner chooses the connection's epoch;
// the validator, with both pairs current, binds to it, and its Admission sees
// that pair; both HelloAcks sign and repeat it.
LocalOffer pair_offer(const EpochPair& p, std::optional<EpochPair> overlap = std::nullopt) {
  return LocalOffer{7, kProtocolVersion, p.validator_set_hash, p.subset_epoch, Height{100}, overlap};
}

struct Exchange {
  testing::CountingEntropy entropy;
  testing::FixedAdmission runner_admission, validator_admission;
  Handshake runner, validator;
  Exchange(LocalOffer r, LocalOffer v)
      : runner(party().runner, r, filled(0x80), runner_admission, entropy),
        validator(party().validator, v, filled(0x80), validator_admission, entropy) {}
  // The whole exchange; the first refusal, or nullopt when both admitted.
  std::optional<GoodbyeReason> go() {
    auto s1 = validator.on_frame(runner.hello());
    if (s1.refuse) return s1.refuse;
    auto s2 = runner.on_frame(validator.hello());
    if (s2.refuse) return s2.refuse;
    auto s3 = validator.on_frame(s2.send.at(0));
    if (s3.refuse) return s3.refuse;
    auto s4 = runner.on_frame(s3.send.at(0));
    if (s4.refuse) return s4.refuse;
    return std::nullopt;
  }
};

TEST(Cip11Epochs, DuringTheOverlapAValidatorAdmitsEitherPairAndBindsTheRunnersChoice) {
  const EpochPair p0{Epoch{0}, filled(0x40)}, p1{Epoch{1}, filled(0x60)};
  // The validator's active pair is p1, p0 its overlap; a runner connects under each.
  for (const EpochPair& chosen : {p0, p1}) {
    const EpochPair other = chosen == p0 ? p1 : p0;
    Exchange r(pair_offer(chosen, other), pair_offer(p1, p0));
    ASSERT_EQ(r.go(), std::nullopt);
    EXPECT_TRUE(r.runner.admitted());
    EXPECT_TRUE(r.validator.admitted());
    EXPECT_EQ(r.validator.binding().subset_epoch, chosen.subset_epoch);
    EXPECT_EQ(r.validator.binding().validator_set_hash, chosen.validator_set_hash);
    EXPECT_EQ(connection_id(r.runner.binding()), connection_id(r.validator.binding()));
    ASSERT_EQ(r.validator_admission.seen.size(), 1u);  // it sees the pair it must check membership in
    EXPECT_EQ(r.validator_admission.seen[0].subset_epoch, chosen.subset_epoch);
  }
}

TEST(Cip11Epochs, APairThisEndDoesNotHoldCurrentIsNotInSubsetInBothDirections) {
  const EpochPair p0{Epoch{0}, filled(0x40)}, p1{Epoch{1}, filled(0x60)};
  // Past the cutoff: the validator holds only p1; a runner offering p0 is refused.
  EXPECT_EQ(Exchange(pair_offer(p0), pair_offer(p1)).go(), GoodbyeReason::kNotInSubset);
  // Mixed pairs: epoch 1 with epoch 0's hash and the reverse.
  EXPECT_EQ(Exchange(pair_offer({Epoch{1}, p0.validator_set_hash}), pair_offer(p1, p0)).go(), GoodbyeReason::kNotInSubset);
  EXPECT_EQ(Exchange(pair_offer({Epoch{0}, p1.validator_set_hash}), pair_offer(p1, p0)).go(), GoodbyeReason::kNotInSubset);
  // The runner's check of the validator's Hello: a runner past the cutoff
  // (p1 only) refuses a validator still offering p0 only.
  EXPECT_EQ(Exchange(pair_offer(p1), pair_offer(p0)).go(), GoodbyeReason::kNotInSubset);
  // A validator whose Admission refuses the chosen pair's membership.
  Exchange refused(pair_offer(p0, p1), pair_offer(p1, p0));
  refused.validator_admission.refuse = GoodbyeReason::kNotInSubset;
  EXPECT_EQ(refused.go(), GoodbyeReason::kNotInSubset);
}

// A HelloAck must repeat the connection's pair: a validator's HelloAck under
// its own active pair on a connection the runner opened under the other is
// refused, so no signature over one epoch stands for the other.
TEST(Cip11Epochs, AHelloAckUnderTheOtherPairOfTheOverlapIsRefused) {
  const EpochPair p0{Epoch{0}, filled(0x40)}, p1{Epoch{1}, filled(0x60)};
  Exchange r(pair_offer(p0, p1), pair_offer(p1, p0));
  ASSERT_FALSE(r.validator.on_frame(r.runner.hello()).refuse);
  auto from_runner = r.runner.on_frame(r.validator.hello());
  ASSERT_FALSE(from_runner.refuse);
  auto ack = std::get<HelloAck>(from_runner.send.at(0));
  ack.subset_epoch = p1.subset_epoch;
  ack.validator_set_hash = p1.validator_set_hash;
  EXPECT_EQ(r.validator.on_frame(ack).refuse, GoodbyeReason::kAuthFailed);
}

}  // namespace
}  // namespace cowboy::cip11
