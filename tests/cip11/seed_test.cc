// The devchain's round seeds (cip11/chain/seed.h, docs/cip11.md choice 65).
#include "cip11/chain/seed.h"

#include <gtest/gtest.h>

#include "chain_harness.h"
#include "common/codec.h"

namespace cowboy::cip11::chain {
namespace {

namespace vrf = crypto::ecvrf;

vrf::Seed validator_seed(std::uint8_t n) {
  vrf::Seed s{};
  s.fill(n);
  return s;
}
vrf::PublicKey validator_key(std::uint8_t n) { return vrf::keypair_from_seed(validator_seed(n)).public_key; }

// Round(epoch, view) from the two numbers (each its own type in the code: cip11/ids.h).
constexpr Round round(std::uint64_t epoch, std::uint64_t view) { return Round{RoundEpoch{epoch}, View{view}}; }

Bytes32 chain_id() {
  Bytes32 c{};
  c[0] = 0xc1;
  c[31] = 0x11;
  return c;
}

// ---- advance_round ---------------------------------------------------------

TEST(Cip11AdvanceRound, InTheOpenEpochItAddsViews) {
  const EpochSchedule one_epoch;
  EXPECT_EQ(advance_round(one_epoch, round(0, 5), 3), round(0, 8));
  EXPECT_EQ(advance_round(one_epoch, round(0, 5), 0), round(0, 5));
  EXPECT_EQ(advance_round(one_epoch, round(0, ~0ull - 2), 2), round(0, ~0ull));
  EXPECT_EQ(advance_round(one_epoch, round(0, ~0ull - 2), 3), std::nullopt);  // no round to name: stay pending
}

TEST(Cip11AdvanceRound, ItCarriesAcrossEpochBoundaries) {
  const EpochSchedule schedule{{10, 5}};  // epoch 0: views 0..9, epoch 1: 0..4, epoch 2 open
  EXPECT_EQ(advance_round(schedule, round(0, 8), 1), round(0, 9));
  EXPECT_EQ(advance_round(schedule, round(0, 8), 2), round(1, 0));
  EXPECT_EQ(advance_round(schedule, round(0, 9), 5), round(1, 4));
  EXPECT_EQ(advance_round(schedule, round(0, 9), 6), round(2, 0));
  EXPECT_EQ(advance_round(schedule, round(0, 0), 3 + 15), round(2, 3));
  EXPECT_EQ(advance_round(schedule, round(1, 2), 3), round(2, 0));
  EXPECT_EQ(advance_round(schedule, round(2, 7), 3), round(2, 10));
}

TEST(Cip11AdvanceRound, ARoundOutsideTheScheduleHasNoSuccessor) {
  const EpochSchedule schedule{{10}};
  EXPECT_EQ(advance_round(schedule, round(0, 10), 0), std::nullopt);
  EXPECT_EQ(advance_round(schedule, round(0, 10), 1), std::nullopt);
}

// ---- one round's seed --------------------------------------------------------

TEST(Cip11RoundSeed, ItIsTheLeadersEcvrfOutputOverTheRoundAndThePreviousSeed) {
  const SeedOutput previous = genesis_seed(chain_id());
  const RoundSeed s = prove_round_seed(validator_seed(1), chain_id(), round(0, 1), previous);
  ASSERT_TRUE(s.proof.has_value());
  auto beta = vrf::verify(validator_key(1), *s.proof, seed_alpha(chain_id(), round(0, 1), previous));
  ASSERT_TRUE(beta.ok());
  EXPECT_EQ(s.output, *beta);
  // The message names the domain, the chain, the round (big-endian) and the previous output.
  const Bytes alpha = seed_alpha(chain_id(), round(2, 9), previous);
  const std::string domain = "cowboy/devchain-seed/v1";
  ASSERT_EQ(alpha.size(), domain.size() + 32 + 8 + 8 + 64);
  EXPECT_TRUE(std::equal(domain.begin(), domain.end(), alpha.begin()));
  EXPECT_EQ(alpha[domain.size() + 32 + 7], 2);
  EXPECT_EQ(alpha[domain.size() + 32 + 15], 9);
  EXPECT_TRUE(std::equal(previous.begin(), previous.end(), alpha.end() - 64));
}

TEST(Cip11RoundSeed, AnotherValidatorsKeyDoesNotVerifyIt) {
  const SeedOutput previous = genesis_seed(chain_id());
  const RoundSeed s = prove_round_seed(validator_seed(1), chain_id(), round(0, 1), previous);
  auto refused = verify_round_seed(validator_key(2), chain_id(), round(0, 1), previous, *s.proof);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), vrf::Error::kProofMismatch);
  auto accepted = verify_round_seed(validator_key(1), chain_id(), round(0, 1), previous, *s.proof);
  ASSERT_TRUE(accepted.ok());
  EXPECT_EQ(*accepted, s);
}

TEST(Cip11RoundSeed, AnotherPreviousSeedRoundOrChainDoesNotVerifyIt) {
  const SeedOutput previous = genesis_seed(chain_id());
  SeedOutput other_previous = previous;
  other_previous[63] ^= 1;
  const RoundSeed s = prove_round_seed(validator_seed(1), chain_id(), round(0, 1), previous);
  EXPECT_EQ(verify_round_seed(validator_key(1), chain_id(), round(0, 1), other_previous, *s.proof).error(),
            vrf::Error::kProofMismatch);
  EXPECT_EQ(verify_round_seed(validator_key(1), chain_id(), round(0, 2), previous, *s.proof).error(),
            vrf::Error::kProofMismatch);
  EXPECT_EQ(verify_round_seed(validator_key(1), chain_id(), round(1, 1), previous, *s.proof).error(),
            vrf::Error::kProofMismatch);
  EXPECT_EQ(verify_round_seed(validator_key(1), Bytes32{}, round(0, 1), previous, *s.proof).error(),
            vrf::Error::kProofMismatch);
}

TEST(Cip11RoundSeed, TheBeaconHashesTheUniqueOutputNotTheProof) {
  const RoundSeed proposed = prove_round_seed(validator_seed(1), chain_id(), round(0, 4), genesis_seed(chain_id()));
  const Beacon b = beacon_of(proposed);
  EXPECT_EQ(b.epoch, RoundEpoch{0});
  EXPECT_EQ(b.view, View{4});
  EXPECT_EQ(b.scheme_id, 0x10);
  EXPECT_EQ(b.signature, Bytes(proposed.output.begin(), proposed.output.end()));
  EXPECT_EQ(b.evidence, Bytes(proposed.proof->begin(), proposed.proof->end()));
  // seed_material_v1 with scheme 0x10 and a 64-byte signature; the evidence is not hashed.
  codec::Writer w;
  w.raw("cowboy-beacon-v1");
  w.u64(0);
  w.u64(4);
  w.u8(0x10);
  w.u16(64);
  w.fixed(proposed.output);
  EXPECT_EQ(*beacon_hash_v1(b), crypto::keccak256(w.data()));
  Beacon no_evidence = b;
  no_evidence.evidence.clear();
  EXPECT_EQ(*beacon_hash_v1(no_evidence), *beacon_hash_v1(b));

  const RoundSeed derived{round(0, 5), std::nullopt, nullified_seed(chain_id(), round(0, 5), proposed.output)};
  EXPECT_EQ(beacon_of(derived).scheme_id, 0x11);
  EXPECT_TRUE(beacon_of(derived).evidence.empty());
  EXPECT_TRUE(beacon_hash_v1(beacon_of(derived)).ok());
  EXPECT_EQ(beacon_hash_v1(Beacon{RoundEpoch{0}, View{5}, 0x10, Bytes(80, 1)}).error(), Errc::kWrongLength);
}

// ---- the chain of seeds --------------------------------------------------------

SeedChain one_leader_chain(std::uint8_t leader = 1, EpochSchedule schedule = {}) {
  return SeedChain(chain_id(), std::move(schedule),
                   [key = validator_key(leader)](Round) { return std::optional<vrf::PublicKey>(key); });
}

TEST(Cip11SeedChain, ItStartsFromTheConfiguredGenesisBeacon) {
  SeedChain seeds = one_leader_chain();
  EXPECT_EQ(seeds.last_round(), round(0, 0));
  EXPECT_EQ(seeds.last_output(), genesis_seed(chain_id()));
  EXPECT_NE(genesis_seed(chain_id()), genesis_seed(Bytes32{}));
}

TEST(Cip11SeedChain, EachProposedRoundChainsOnThePreviousOutput) {
  SeedChain seeds = one_leader_chain();
  for (std::uint64_t v = 1; v <= 3; ++v) {
    const SeedOutput previous = seeds.last_output();
    auto proof = seeds.prove(validator_seed(1), round(0, v));
    ASSERT_TRUE(proof.ok());
    ASSERT_TRUE(seeds.take(round(0, v), *proof).ok());
    EXPECT_EQ(*seeds.at(round(0, v)), *verify_round_seed(validator_key(1), chain_id(), round(0, v), previous, *proof));
  }
  EXPECT_EQ(seeds.last_round(), round(0, 3));
}

TEST(Cip11SeedChain, SkippedRoundsAreNullifiedAndDerivedByEveryone) {
  SeedChain seeds = one_leader_chain();
  ASSERT_TRUE(seeds.take(round(0, 1), *seeds.prove(validator_seed(1), round(0, 1))).ok());
  const SeedOutput out1 = seeds.last_output();
  auto proof4 = seeds.prove(validator_seed(1), round(0, 4));
  ASSERT_TRUE(proof4.ok());
  ASSERT_TRUE(seeds.take(round(0, 4), *proof4).ok());
  const SeedOutput out2 = nullified_seed(chain_id(), round(0, 2), out1);
  const SeedOutput out3 = nullified_seed(chain_id(), round(0, 3), out2);
  EXPECT_EQ(*seeds.at(round(0, 2)), (RoundSeed{round(0, 2), std::nullopt, out2}));
  EXPECT_EQ(*seeds.at(round(0, 3)), (RoundSeed{round(0, 3), std::nullopt, out3}));
  // Round 4's leader proved over the nullified round 3's output.
  EXPECT_TRUE(verify_round_seed(validator_key(1), chain_id(), round(0, 4), out3, *proof4).ok());
  EXPECT_FALSE(verify_round_seed(validator_key(1), chain_id(), round(0, 4), out1, *proof4).ok());
}

TEST(Cip11SeedChain, ARoundWithoutAProofIsDerivedAsANullifiedOne) {
  SeedChain seeds = one_leader_chain();
  ASSERT_TRUE(seeds.take(round(0, 1), std::nullopt).ok());
  const SeedOutput derived = nullified_seed(chain_id(), round(0, 1), genesis_seed(chain_id()));
  EXPECT_EQ(*seeds.at(round(0, 1)), (RoundSeed{round(0, 1), std::nullopt, derived}));
  EXPECT_EQ(seeds.last_round(), round(0, 1));
  // A chain whose rounds have no leader at all takes only proofless rounds.
  SeedChain leaderless(chain_id(), {}, [](Round) { return std::optional<vrf::PublicKey>(); });
  EXPECT_EQ(leaderless.take(round(0, 1), *one_leader_chain().prove(validator_seed(1), round(0, 1))).error().error,
            SeedError::kNoLeader);
  EXPECT_TRUE(leaderless.take(round(0, 1), std::nullopt).ok());
}

TEST(Cip11SeedChain, ARefusedProofChangesNothing) {
  SeedChain seeds = one_leader_chain(1);
  ASSERT_TRUE(seeds.take(round(0, 1), *seeds.prove(validator_seed(1), round(0, 1))).ok());
  const SeedOutput before = seeds.last_output();
  // Another validator's proof for round 3, and the right leader's for another round.
  for (auto proof : {*seeds.prove(validator_seed(2), round(0, 3)), *seeds.prove(validator_seed(1), round(0, 2))}) {
    auto refused = seeds.take(round(0, 3), proof);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().error, SeedError::kProofRefused);
    EXPECT_EQ(refused.error().vrf, vrf::Error::kProofMismatch);
    EXPECT_EQ(seeds.last_round(), round(0, 1));
    EXPECT_EQ(seeds.last_output(), before);
    EXPECT_FALSE(seeds.at(round(0, 2)).has_value());  // the gap was not taken either
  }
}

TEST(Cip11SeedChain, RoundsMustMoveForwardWithinTheScheduleAndABoundedGap) {
  SeedChain seeds = one_leader_chain(1, EpochSchedule{{3}});
  ASSERT_TRUE(seeds.take(round(0, 1), *seeds.prove(validator_seed(1), round(0, 1))).ok());
  const auto again = *seeds.prove(validator_seed(1), round(0, 2));
  EXPECT_EQ(seeds.take(round(0, 1), again).error().error, SeedError::kRoundNotAfter);
  EXPECT_EQ(seeds.take(round(0, 0), again).error().error, SeedError::kRoundNotAfter);
  EXPECT_EQ(seeds.take(round(0, 3), again).error().error, SeedError::kNotInSchedule);  // epoch 0 has views 0..2
  EXPECT_EQ(seeds.prove(validator_seed(1), round(1, SeedChain::kMaxNullifiedRun + 1)).error().error,
            SeedError::kGapTooLong);
  // Across the boundary: (0, 2) is nullified, (1, 0) proposed.
  ASSERT_TRUE(seeds.take(round(1, 0), *seeds.prove(validator_seed(1), round(1, 0))).ok());
  EXPECT_FALSE(seeds.at(round(0, 2))->proof.has_value());
  EXPECT_TRUE(seeds.at(round(1, 0))->proof.has_value());
}

TEST(Cip11SeedChain, EachRoundIsCheckedAgainstItsOwnLeader) {
  // Three validators in rotation: view mod 3.
  SeedChain seeds(chain_id(), {}, [](Round r) {
    return std::optional<vrf::PublicKey>(validator_key(static_cast<std::uint8_t>(1 + r.view.value % 3)));
  });
  for (std::uint64_t v = 1; v <= 4; ++v) {
    const auto leader = static_cast<std::uint8_t>(1 + v % 3);
    const auto not_leader = static_cast<std::uint8_t>(1 + (v + 1) % 3);
    EXPECT_EQ(seeds.take(round(0, v), *seeds.prove(validator_seed(not_leader), round(0, v))).error().error,
              SeedError::kProofRefused);
    ASSERT_TRUE(seeds.take(round(0, v), *seeds.prove(validator_seed(leader), round(0, v))).ok());
  }
}

TEST(Cip11SeedChain, ABlockReadsOnlyTheSeedsOfRoundsBeforeItsOwn) {
  SeedChain seeds = one_leader_chain();
  for (std::uint64_t v = 1; v <= 3; ++v)
    ASSERT_TRUE(seeds.take(round(0, v), *seeds.prove(validator_seed(1), round(0, v))).ok());
  const SeedsBefore block3(seeds, round(0, 3));
  EXPECT_FALSE(block3.seed(RoundEpoch{0}, View{3}).has_value());
  EXPECT_FALSE(block3.seed(RoundEpoch{0}, View{4}).has_value());
  ASSERT_TRUE(block3.seed(RoundEpoch{0}, View{2}).has_value());
  const SeedOutput out2 = seeds.at(round(0, 2))->output;
  EXPECT_EQ(block3.seed(RoundEpoch{0}, View{2})->signature, Bytes(out2.begin(), out2.end()));
  EXPECT_EQ(block3.seed(RoundEpoch{0}, View{0})->scheme_id, 0x11);  // genesis
  seeds.forget_before(round(0, 2));
  EXPECT_FALSE(block3.seed(RoundEpoch{0}, View{1}).has_value());
  EXPECT_TRUE(block3.seed(RoundEpoch{0}, View{2}).has_value());
}

TEST(Cip11SeedChain, ABlockAfterSkippedViewsReadsTheirDerivedSeedsButNotItsOwn) {
  SeedChain seeds = one_leader_chain();
  ASSERT_TRUE(seeds.take(round(0, 1), *seeds.prove(validator_seed(1), round(0, 1))).ok());
  // Views 2 and 3 had no block; the block of view 4 takes them nullified.
  auto advance = seeds.advance(round(0, 4), *seeds.prove(validator_seed(1), round(0, 4)));
  ASSERT_TRUE(advance.ok());
  ASSERT_EQ(advance->size(), 3u);
  const SeedsBefore without(seeds, round(0, 4));
  EXPECT_FALSE(without.seed(RoundEpoch{0}, View{3}).has_value());  // not committed yet
  const SeedsBefore block4(seeds, round(0, 4), *advance);
  const SeedOutput out2 = nullified_seed(chain_id(), round(0, 2), seeds.at(round(0, 1))->output);
  const SeedOutput out3 = nullified_seed(chain_id(), round(0, 3), out2);
  ASSERT_TRUE(block4.seed(RoundEpoch{0}, View{3}).has_value());
  EXPECT_EQ(block4.seed(RoundEpoch{0}, View{2})->signature, Bytes(out2.begin(), out2.end()));
  EXPECT_EQ(block4.seed(RoundEpoch{0}, View{3})->signature, Bytes(out3.begin(), out3.end()));
  EXPECT_EQ(block4.seed(RoundEpoch{0}, View{3})->scheme_id, 0x11);
  EXPECT_FALSE(block4.seed(RoundEpoch{0}, View{4}).has_value());  // its own round: never in that same round
  const SeedOutput out1 = seeds.at(round(0, 1))->output;
  EXPECT_EQ(block4.seed(RoundEpoch{0}, View{1})->signature, Bytes(out1.begin(), out1.end()));
}

// ---- the pending pass reads exactly the committed seed of r_seed ---------------

/// Applies each (sender, instruction) in one block, each under a transaction hash of its own.
std::vector<Outcome> apply_all(State& state, std::map<Address, u128>& balances, const BlockContext& context,
                               const std::vector<std::pair<Address, Instruction>>& instructions, std::uint32_t& txs,
                               Effects& effects) {
  std::vector<Outcome> out;
  for (const auto& [sender, ins] : instructions) {
    Bytes32 hash{};
    hash[0] = static_cast<std::uint8_t>(++txs);
    out.push_back(apply(state, balances, context, TxContext{sender, hash}, encode_instruction(ins), effects));
  }
  return out;
}

TEST(Cip11SeedChain, AnMGreaterThanOneCommitteeIsDrawnFromExactlyTheSeedOfItsSeedRound) {
  using namespace testing;
  SeedChain seeds = one_leader_chain();
  ChainParams params;
  params.present_first_enabled = true;  // CIP-11 selection: M > 1 waits for r_seed
  State state;
  std::map<Address, u128> balances;
  std::uint64_t height = 0;
  std::uint32_t txs = 0;
  Effects effects;
  const ValidatorSnapshots validators = ValidatorSnapshots::genesis({crypto::Ed25519Public{}});  // |V| = 1
  // One block: its leader's proof is taken (as the block carries it), then the
  // block runs against the seeds of the rounds before its own.
  auto block = [&](std::vector<std::pair<Address, Instruction>> instructions) {
    ++height;
    const Round r = round(0, height);
    EXPECT_TRUE(seeds.take(r, *seeds.prove(validator_seed(1), r)).ok());
    effects = {};
    PresentSet present(state.index.size());
    SeedsBefore beacon(seeds, r);
    BlockContext context{Height{height}, params, beacon, present, validators};
    begin_block(state, context, effects);
    auto out = apply_all(state, balances, context, instructions, txs, effects);
    return out;
  };
  const auto runners = keys(1, 4);
  for (const auto& k : runners) {
    balances[k.address] += 1'000'000;
    EXPECT_FALSE(block({{k.address, registration(k)}})[0].error);
  }
  const Key submitter = key(9);
  balances[submitter.address] += 1'000'000;
  const auto submitted = block({{submitter.address, job(2, 20)}});
  ASSERT_FALSE(submitted[0].error);
  const cip11::JobId id = *submitted[0].job_id;
  const std::uint64_t s = height;
  const JobRecord& pending = state.jobs.at(id);
  ASSERT_TRUE(pending.pending.has_value());
  const std::uint64_t seed_view = pending.pending->seed_view.value;
  EXPECT_EQ(pending.pending->seed_epoch, RoundEpoch{0});  // advance_round(Round(0, S), K) in the one open epoch
  EXPECT_EQ(seed_view, s + params.selection_seed_delay_views);
  while (height < seed_view) {
    block({});
    EXPECT_EQ(state.jobs.at(id).state, JobState::kPendingSelection);  // its seed round has not passed
  }
  block({});  // the first block after r_seed: the pass assigns
  const JobRecord& assigned = state.jobs.at(id);
  ASSERT_EQ(assigned.state, JobState::kAssigned);
  const Beacon committed = beacon_of(*seeds.at(round(0, seed_view)));
  ASSERT_EQ(effects.consumed_seeds.size(), 1u);
  EXPECT_EQ(effects.consumed_seeds[0],
            (ConsumedSeed{RoundEpoch{0}, View{seed_view}, committed.signature, committed.evidence}));
  EXPECT_EQ(effects.consumed_seeds[0].evidence.size(), vrf::kProofSize);
  EXPECT_EQ(assigned.selection_seed,
            selection_seed_v3(SelectionMode::kDelayed, *beacon_hash_v1(committed), id, s));
  EXPECT_TRUE(check_consumed(seeds, effects.consumed_seeds).ok());
  ConsumedSeed forged = effects.consumed_seeds[0];
  forged.evidence[40] ^= 1;
  EXPECT_EQ(check_consumed(seeds, std::vector{forged}).error(), SeedError::kConsumedMismatch);
  forged = effects.consumed_seeds[0];
  forged.signature[0] ^= 1;
  EXPECT_EQ(check_consumed(seeds, std::vector{forged}).error(), SeedError::kConsumedMismatch);
  forged = effects.consumed_seeds[0];
  forged.view = View{height + 5};
  EXPECT_EQ(check_consumed(seeds, std::vector{forged}).error(), SeedError::kUnknownRound);
  // The consumed entry alone lets anyone check the seed: its proof verifies
  // against the leader and the previous round's output.
  vrf::Proof proof;
  std::copy(committed.evidence.begin(), committed.evidence.end(), proof.begin());
  auto checked = verify_round_seed(validator_key(1), chain_id(), round(0, seed_view),
                                   seeds.at(round(0, seed_view - 1))->output, proof);
  ASSERT_TRUE(checked.ok());
  EXPECT_EQ(Bytes(checked->output.begin(), checked->output.end()), effects.consumed_seeds[0].signature);
}


// Choice 140: rounds numbered per epoch. A round epoch closes at its last
// block's view and the next one's views start at 0; a pending selection
// submitted near the end of epoch 0 whose advance_round(r_submit, K) lies past
// that last view cannot be mapped while epoch 0 is open, stays pending, and
// once epoch 0 closed is drawn from exactly the round the arithmetic carries
// it to in epoch 1 - never Round(0, view_S + K), which is no round. (With the
// record's round fixed at S, the code before, it waited for (0, 8) forever.)
TEST(Cip11SeedChain, ASeedRoundPastItsEpochsLastViewIsDrawnFromTheNextEpochOnceTheEpochCloses) {
  using namespace testing;
  SeedChain seeds = one_leader_chain();
  ChainParams params;
  params.present_first_enabled = true;
  State state;
  std::map<Address, u128> balances;
  std::uint64_t height = 0;
  std::uint32_t txs = 0;
  Effects effects;
  ValidatorSnapshots validators = ValidatorSnapshots::genesis({crypto::Ed25519Public{}});
  // One block in round `r`; a round in the epoch after the open one closes it
  // at the last round taken (its last block's view), as on the devchain.
  auto block = [&](Round r, std::vector<std::pair<Address, Instruction>> instructions) {
    ++height;
    auto advance = seeds.advance(r, *seeds.prove(validator_seed(1), r));
    EXPECT_TRUE(advance.ok());
    effects = {};
    PresentSet present(state.index.size());
    SeedsBefore beacon(seeds, r, *advance);
    const EpochSchedule schedule = seeds.schedule_at(r);
    BlockContext context{Height{height}, params, beacon, present, validators, r.view, nullptr, &schedule};
    EXPECT_EQ(context.round(), r);
    begin_block(state, context, effects);
    auto out = apply_all(state, balances, context, instructions, txs, effects);
    seeds.commit(std::move(*advance));
    return out;
  };
  const auto runners = keys(1, 4);
  for (std::uint64_t v = 1; const auto& k : runners) {
    balances[k.address] += 1'000'000;
    EXPECT_FALSE(block(round(0, v++), {{k.address, registration(k)}})[0].error);
  }
  const Key submitter = key(9);
  balances[submitter.address] += 1'000'000;
  const auto submitted = block(round(0, 5), {{submitter.address, job(2, 20)}});
  ASSERT_FALSE(submitted[0].error);
  const cip11::JobId id = *submitted[0].job_id;
  const std::uint64_t s = height;
  // Round epoch 1 is the validator-set epoch whose first block is the one in
  // round (1, 0), at s + 2, as on the devchain: a seed round mapped into it
  // waits until its activation is final (choice 153).
  validators.add(Epoch{1}, Height{s + 2}, {crypto::Ed25519Public{}});
  const PendingSelectionV1 at_s = *state.jobs.at(id).pending;
  EXPECT_EQ((Round{at_s.submission_epoch, at_s.submission_view}), round(0, 5));
  EXPECT_EQ(at_s.seed_delay_views, 3u);
  // Mapped with epoch 0 open: exact only if epoch 0 reaches view 8.
  EXPECT_EQ((Round{at_s.seed_epoch, at_s.seed_view}), round(0, 8));
  block(round(0, 6), {});  // epoch 0's last block: its views are 0..6
  EXPECT_EQ(state.jobs.at(id).state, JobState::kPendingSelection);
  // Epoch 0 closes at view 6: advance_round((0, 5), 3) over {7 views} = (1, 1).
  block(round(1, 0), {});
  EXPECT_EQ(seeds.schedule().closed_epoch_views, std::vector<std::uint64_t>{7});
  EXPECT_EQ(advance_round(seeds.schedule(), round(0, 5), 3), round(1, 1));
  EXPECT_EQ(state.jobs.at(id).state, JobState::kPendingSelection);  // (1, 1) has not come
  block(round(1, 1), {});  // the seed round itself: a block never reads its own round
  EXPECT_EQ(state.jobs.at(id).state, JobState::kPendingSelection);
  EXPECT_TRUE(effects.consumed_seeds.empty());
  block(round(1, 2), {});  // the first block after r_seed assigns
  const JobRecord& assigned = state.jobs.at(id);
  ASSERT_EQ(assigned.state, JobState::kAssigned);
  EXPECT_EQ(assigned.assignment_height, Height{s + 4});
  const Beacon committed = beacon_of(*seeds.at(round(1, 1)));
  EXPECT_EQ(committed.evidence.size(), vrf::kProofSize);  // its leader's proof, alpha (1 ‖ 1)
  ASSERT_EQ(effects.consumed_seeds.size(), 1u);
  EXPECT_EQ(effects.consumed_seeds[0], (ConsumedSeed{RoundEpoch{1}, View{1}, committed.signature, committed.evidence}));
  EXPECT_EQ(assigned.selection_seed, selection_seed_v3(SelectionMode::kDelayed, *beacon_hash_v1(committed), id, s));
  EXPECT_TRUE(check_consumed(seeds, effects.consumed_seeds).ok());
  // An M = 1 job in epoch 1's first view reads epoch 0's last round (R_{S-1}).
  block(round(1, 3), {});
  const auto first = block(round(2, 0), {{submitter.address, job(1, 20)}});
  ASSERT_FALSE(first[0].error);
  EXPECT_EQ(seeds.schedule().closed_epoch_views, (std::vector<std::uint64_t>{7, 4}));
  EXPECT_EQ(state.jobs.at(*first[0].job_id).selection_seed,
            selection_seed_v3(SelectionMode::kImmediate, *beacon_hash_v1(beacon_of(*seeds.at(round(1, 3)))),
                              *first[0].job_id, height));
}

// The same submission on an epoch that runs past view_S + K: the round mapped
// at S was exact, and the job is drawn from it, the epoch closing later or not.
TEST(Cip11SeedChain, ASeedRoundInsideItsEpochIsTheOneNamedAtSubmission) {
  EpochSchedule schedule{{7}};
  EXPECT_EQ(mapped_round(schedule, round(0, 2), 3, round(1, 0)), round(0, 5));
  EXPECT_EQ(mapped_round(schedule, round(0, 5), 3, round(1, 2)), round(1, 1));
  EXPECT_EQ(mapped_round(schedule, round(0, 5), 3, round(1, 1)), std::nullopt);  // not before the block's own
  EXPECT_EQ(mapped_round({}, round(0, 5), 3, round(0, 8)), std::nullopt);        // epoch 0 open: may close first
  EXPECT_EQ(mapped_round({}, round(0, 5), 3, round(0, 9)), round(0, 8));
  EXPECT_EQ(previous_round(schedule, round(1, 0)), round(0, 6));
  EXPECT_EQ(previous_round(schedule, round(1, 4)), round(1, 3));
  EXPECT_EQ(previous_round(schedule, round(0, 0)), round(0, 0));
  SeedChain seeds = one_leader_chain();
  EXPECT_TRUE(seeds.take(round(0, 3), std::nullopt).ok());
  EXPECT_EQ(seeds.schedule_at(round(1, 2)).closed_epoch_views, std::vector<std::uint64_t>{4});
  EXPECT_EQ(seeds.take(round(2, 0), std::nullopt).error().error, SeedError::kNotInSchedule);  // one epoch at a time
  EXPECT_TRUE(seeds.schedule().closed_epoch_views.empty());  // a refusal closes nothing
  ASSERT_TRUE(seeds.take(round(1, 2), std::nullopt).ok());  // (1, 0) and (1, 1) nullified on the way
  EXPECT_EQ(seeds.schedule().closed_epoch_views, std::vector<std::uint64_t>{4});  // epoch 0: views 0..3
  EXPECT_EQ(seeds.take(round(0, 4), std::nullopt).error().error, SeedError::kRoundNotAfter);
  EXPECT_TRUE(seeds.at(round(1, 0)).has_value());
  EXPECT_EQ(seeds.at(round(1, 0))->output, nullified_seed(chain_id(), round(1, 0), seeds.at(round(0, 3))->output));
}

}  // namespace
// Choice 102: rounds are views. On rotating validators a block's view runs
// ahead of its height (skipped views are nullified rounds), so a pending
// selection's seed round is advance_round(Round(0, view of S), K): after the
// submission's own round, unknown when it is submitted. Named from the height
// S (the code before), it was a round already past - derived by everyone
// before the job existed.
TEST(Cip11SeedChain, APendingSelectionsSeedRoundIsKViewsAfterItsBlocksViewNotItsHeight) {
  using namespace testing;
  SeedChain seeds = one_leader_chain();
  ChainParams params;
  params.present_first_enabled = true;
  State state;
  std::map<Address, u128> balances;
  std::uint64_t height = 0, view = 0;
  std::uint32_t txs = 0;
  Effects effects;
  const ValidatorSnapshots validators = ValidatorSnapshots::genesis({crypto::Ed25519Public{}});
  // One block in round `at` (views between the last block's and `at` nullified).
  auto block = [&](std::uint64_t at, std::vector<std::pair<Address, Instruction>> instructions) {
    ++height;
    view = at;
    const Round r = round(0, view);
    auto advance = seeds.advance(r, *seeds.prove(validator_seed(1), r));
    EXPECT_TRUE(advance.ok());
    effects = {};
    PresentSet present(state.index.size());
    SeedsBefore beacon(seeds, r, *advance);
    BlockContext context{Height{height}, params, beacon, present, validators, View{view}};
    begin_block(state, context, effects);
    auto out = apply_all(state, balances, context, instructions, txs, effects);
    seeds.commit(std::move(*advance));
    return out;
  };
  const auto runners = keys(1, 4);
  for (const auto& k : runners) {
    balances[k.address] += 1'000'000;
    EXPECT_FALSE(block(view + 1, {{k.address, registration(k)}})[0].error);
  }
  // Twenty views pass without a block: the chain's views run ahead of its heights.
  const Key submitter = key(9);
  balances[submitter.address] += 1'000'000;
  const auto submitted = block(view + 20, {{submitter.address, job(2, 20)}});
  ASSERT_FALSE(submitted[0].error);
  const cip11::JobId id = *submitted[0].job_id;
  const std::uint64_t s = height, s_view = view;
  ASSERT_EQ(s, 5u);
  ASSERT_EQ(s_view, 24u);
  const PendingSelectionV1 p = *state.jobs.at(id).pending;
  EXPECT_EQ(p.submission_view, View{s_view});
  EXPECT_EQ((Round{p.seed_epoch, p.seed_view}), round(0, s_view + params.selection_seed_delay_views));
  EXPECT_FALSE(seeds.at({p.seed_epoch, p.seed_view}).has_value());  // nobody holds it at submission
  block(view + 1, {});
  block(view + 1, {});
  EXPECT_EQ(state.jobs.at(id).state, JobState::kPendingSelection);  // view 26: its round (27) has not passed
  block(view + 1, {});  // view 27 is the seed round itself: a block never reads its own round
  EXPECT_EQ(state.jobs.at(id).state, JobState::kPendingSelection);
  block(view + 1, {});  // view 28: the first block after r_seed assigns, at height 9 = S + 4
  const JobRecord& assigned = state.jobs.at(id);
  ASSERT_EQ(assigned.state, JobState::kAssigned);
  EXPECT_EQ(assigned.assignment_height, Height{s + 4});
  const Beacon committed = beacon_of(*seeds.at(devchain_round(p.seed_view)));
  ASSERT_EQ(effects.consumed_seeds.size(), 1u);
  EXPECT_EQ(effects.consumed_seeds[0],
            (ConsumedSeed{RoundEpoch{0}, p.seed_view, committed.signature, committed.evidence}));
  EXPECT_EQ(committed.evidence.size(), vrf::kProofSize);  // a leader's proof, not a derived round
  EXPECT_EQ(assigned.selection_seed, selection_seed_v3(SelectionMode::kDelayed, *beacon_hash_v1(committed), id, s));
  // An M = 1 job reads the round just before its block's (view - 1), not height - 1.
  const auto now = block(view + 5, {{submitter.address, job(1, 20)}});
  ASSERT_FALSE(now[0].error);
  const Beacon parent = beacon_of(*seeds.at(round(0, view - 1)));  // a nullified round of the gap
  EXPECT_TRUE(parent.evidence.empty());
  EXPECT_EQ(state.jobs.at(*now[0].job_id).selection_seed,
            selection_seed_v3(SelectionMode::kImmediate, *beacon_hash_v1(parent), *now[0].job_id, height));
}

}  // namespace cowboy::cip11::chain
