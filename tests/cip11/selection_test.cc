// §5.1 subsets, §6.6 heartbeat phase, §9 selection, §9.4 job_kind.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "../support/hex_fixture.h"
#include "cip11/pending.h"
#include "cip11/selection.h"
#include "cip11/subset.h"
#include "common/codec.h"
#include "common/crypto.h"

namespace cowboy::cip11 {
namespace {

Address address(std::uint8_t b) {
  Address a;
  a.fill(b);
  return a;
}

Bytes32 seed_named(std::string_view name) { return crypto::keccak256(as_bytes(name)); }

// ---- §5.1 -------------------------------------------------------------------

TEST(Cip11Subset, KFollowsTheSection51Examples) {
  EXPECT_EQ(subset_size(0), 0u);
  EXPECT_EQ(subset_size(1), 1u);
  EXPECT_EQ(subset_size(2), 2u);
  EXPECT_EQ(subset_size(3), 3u);
  EXPECT_EQ(subset_size(4), 3u);
  for (std::size_t n = 5; n <= 8; ++n) EXPECT_EQ(subset_size(n), 4u) << n;
  for (std::size_t n = 9; n <= 16; ++n) EXPECT_EQ(subset_size(n), 5u) << n;
  EXPECT_EQ(subset_size(17), 6u);
  EXPECT_EQ(subset_size(64), 7u);
  EXPECT_EQ(subset_size(65), 8u);
  EXPECT_EQ(subset_size(100), 8u);
  EXPECT_EQ(subset_size(100000), 8u);
  EXPECT_EQ(subset_size(100, SubsetParams{3, 32}), 8u);  // ceil(log2 100) + 1 = 8 below a raised ceiling
}

std::vector<crypto::Ed25519Public> validators(std::size_t n) {
  std::vector<crypto::Ed25519Public> out;
  for (std::size_t i = 0; i < n; ++i) {
    crypto::Ed25519Seed seed;
    seed.fill(static_cast<std::uint8_t>(0x50 + i));
    out.push_back(crypto::ed25519_from_seed(seed).public_key);
  }
  std::sort(out.begin(), out.end());  // the snapshot's canonical order
  return out;
}

TEST(Cip11Subset, ValidatorSetHashIsOverTheRawOrderedKeys) {
  auto v = validators(3);
  Bytes all;
  for (const auto& k : v) all.insert(all.end(), k.begin(), k.end());
  EXPECT_EQ(validator_set_hash(v), crypto::keccak256(all));
  std::swap(v[0], v[1]);
  EXPECT_NE(validator_set_hash(v), crypto::keccak256(all));  // order is part of the identity
}

TEST(Cip11Subset, SubsetIsTheFirstKByKeyedHash) {
  crypto::init();
  crypto::Secp256k1Secret secret;
  secret.fill(0x11);
  const auto runner_key = *crypto::secp256k1_public_key(secret);
  const auto v = validators(10);
  const auto sub = subset_of(runner_key, v);
  ASSERT_EQ(sub.size(), 5u);
  std::vector<Bytes32> keys;
  for (const auto& peer : v) keys.push_back(crypto::keccak256({runner_key, peer}));
  for (std::size_t i = 1; i < sub.size(); ++i) EXPECT_LT(keys[sub[i - 1]], keys[sub[i]]);
  std::set<std::size_t> in(sub.begin(), sub.end());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (in.count(i)) continue;
    EXPECT_GT(keys[i], keys[sub.back()]) << i;  // everything left out sorts after the subset
    EXPECT_FALSE(in_subset(runner_key, v, v[i]));
  }
  EXPECT_TRUE(in_subset(runner_key, v, v[sub[0]]));
  EXPECT_EQ(subset_of(runner_key, validators(1)), (std::vector<std::size_t>{0}));  // launch: the sole validator
}

// ---- §9.1, §9.3 -------------------------------------------------------------

TEST(Cip11Selection, LivenessFloor) {
  EXPECT_TRUE(passes_liveness_floor(HealthStatus::kHealthy, Height{900}, Height{1000}));
  EXPECT_FALSE(passes_liveness_floor(HealthStatus::kHealthy, Height{899}, Height{1000}));
  EXPECT_TRUE(passes_liveness_floor(HealthStatus::kHealthy, Height{1001}, Height{1000}));  // saturating
  EXPECT_FALSE(passes_liveness_floor(HealthStatus::kUnhealthy, Height{1000}, Height{1000}));
  EXPECT_FALSE(passes_liveness_floor(HealthStatus::kPaused, Height{1000}, Height{1000}));
  EXPECT_FALSE(passes_liveness_floor(HealthStatus::kDeregistered, Height{1000}, Height{1000}));
  EXPECT_TRUE(passes_liveness_floor(HealthStatus::kHealthy, Height{700}, Height{1000}, 300));
}

TEST(Cip11Selection, IntegerSquareRoot) {
  const std::pair<u128, u128> cases[] = {{0, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 2}, {15, 3}, {16, 4}, {17, 4},
                                         {999999, 999}, {1000000, 1000}, {u128{1} << 64, u128{1} << 32}};
  for (auto [n, root] : cases) EXPECT_TRUE(isqrt(n) == root) << u128_to_string(n);
  const u128 big = (u128{1} << 64) - 1;
  EXPECT_TRUE(isqrt(big * big) == big);
  EXPECT_TRUE(isqrt(big * big - 1) == big - 1);
  EXPECT_TRUE(isqrt(~u128{0}) == big);
  // Either side of the 64-bit fast path's edge (2^63 - 1), squares and their neighbours.
  const u128 edge = UINT64_MAX / 2;
  for (u128 n : {edge - 1, edge, edge + 1, edge + 2, u128{3037000499} * 3037000499, u128{3037000500} * 3037000500 - 1,
                 u128{3037000500} * 3037000500, u128{1'000'000'000'000}, u128{999'999'999'999}}) {
    const u128 r = isqrt(n);
    EXPECT_TRUE(r * r <= n && (r + 1) * (r + 1) > n) << u128_to_string(n);
  }
}

TEST(Cip11Selection, Cip2V3WeightAtQ1e6) {
  const ReputationConfig unit{1, 100'000};
  EXPECT_TRUE(cip2_v3_weight(1'000'000, 1'000'000'000, unit) == 1'000'000);  // reputation 1.0: factor 1
  EXPECT_TRUE(cip2_v3_weight(1'000'000, 250'000'000, unit) == 500'000);      // sqrt(0.25) = 0.5
  EXPECT_TRUE(cip2_v3_weight(1'000'000, 100'000, unit) == 100'000);          // sqrt(1e-4) = 0.01 -> floor 0.1
  EXPECT_TRUE(cip2_v3_weight(1'000'000, 0, unit) == 100'000);
  EXPECT_TRUE(cip2_v3_weight(1'000'000, 2'000'000'000, unit) == 1'414'213);  // isqrt(2e12) = 1414213
  const ReputationConfig hundred{100, 100'000};
  EXPECT_TRUE(cip2_v3_weight(1'000'000, 25'000'000'000ULL, hundred) == 500'000);  // 25 / 100
  EXPECT_TRUE(cip2_v3_weight(7, 1'000'000'000, unit) == 7);
  EXPECT_TRUE(cip2_v3_weight(~u128{0}, 4'000'000'000ULL, unit) == ~u128{0} / 1'000'000);  // saturates, then / 1e6
}

// ---- §9.2 seed and beacon ---------------------------------------------------

TEST(Cip11Selection, BeaconHashAndV3SeedLayouts) {
  Beacon beacon{RoundEpoch{3}, View{77}, 0x01, Bytes(48, 0xab)};
  codec::Writer w;
  w.raw("cowboy-beacon-v1");
  w.u64(3);
  w.u64(77);
  w.u8(0x01);
  w.raw(Bytes{0x00, 0x30});
  w.raw(Bytes(48, 0xab));
  const Bytes32 expected_beacon = crypto::keccak256(w.data());
  auto beacon_hash = beacon_hash_v1(beacon);
  ASSERT_TRUE(beacon_hash.ok());
  EXPECT_EQ(*beacon_hash, expected_beacon);

  const JobId job{seed_named("job")};
  const Bytes submitted_le{0x39, 0x30, 0, 0, 0, 0, 0, 0};  // 12345 little-endian
  EXPECT_EQ(selection_seed_v3(SelectionMode::kImmediate, *beacon_hash, job, 12345),
            crypto::keccak256(concat({as_bytes("cowboy-runner-select-v3:"), Bytes{0x00}, *beacon_hash, job.value,
                                      submitted_le})));
  EXPECT_NE(selection_seed_v3(SelectionMode::kDelayed, *beacon_hash, job, 12345),
            selection_seed_v3(SelectionMode::kImmediate, *beacon_hash, job, 12345));
  // The CIP-2 v2 stand-in (flag off): its own domain, no mode byte.
  EXPECT_EQ(selection_seed_v2(*beacon_hash, job, 12345),
            crypto::keccak256(concat({as_bytes("cowboy-runner-select-v2:"), *beacon_hash, job.value, submitted_le})));
  // A re-selection's seed: the original seed and the committee's number, u32 little-endian.
  const Bytes32 original = seed_named("original");
  EXPECT_EQ(reselection_seed(original, 2),
            crypto::keccak256(concat({as_bytes("cowboy-runner-reselect-v1:"), original, Bytes{0x02, 0, 0, 0}})));

  EXPECT_EQ(beacon_hash_v1(Beacon{RoundEpoch{3}, View{77}, 0x02, Bytes(96, 1)}).error(), Errc::kBadBeaconScheme);
  EXPECT_EQ(beacon_hash_v1(Beacon{RoundEpoch{3}, View{77}, 0x01, Bytes(47, 1)}).error(), Errc::kWrongLength);
}

// ---- §9.2 candidates_snapshot_root -------------------------------------------

std::vector<Candidate> ordered_candidates(std::size_t n) {
  std::vector<Candidate> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(Candidate{address(static_cast<std::uint8_t>(0x10 * (i + 1))), std::uint32_t(i),
                            u128{1000} * (i + 1), 1'000'000'000});
  return out;
}

TEST(Cip11Selection, CandidatesSnapshotRootMerkleRules) {
  const ReputationConfig config{1, 100'000};
  auto inner = [](const Bytes32& l, const Bytes32& r) {
    return crypto::keccak256({as_bytes("cowboy-candidates-inner-v1"), l, r});
  };
  EXPECT_EQ(candidates_snapshot_root({}, config), crypto::keccak256(as_bytes("cowboy-candidates-empty-v1")));

  auto c = ordered_candidates(5);
  std::vector<Bytes32> leaf;
  for (std::uint32_t i = 0; i < 5; ++i) leaf.push_back(candidate_leaf(i, c[i], c[i].effective_stake));

  codec::Writer w;
  w.raw("cowboy-candidates-leaf-v1");
  w.u32(0);
  w.raw(c[0].address);
  w.u128(1000);
  w.u64(1'000'000'000);
  w.u128(1000);
  EXPECT_EQ(leaf[0], crypto::keccak256(w.data()));

  EXPECT_EQ(candidates_snapshot_root(std::span(c).first(1), config), leaf[0]);
  EXPECT_EQ(candidates_snapshot_root(std::span(c).first(2), config), inner(leaf[0], leaf[1]));
  EXPECT_EQ(candidates_snapshot_root(std::span(c).first(3), config),
            inner(inner(leaf[0], leaf[1]), inner(leaf[2], leaf[2])));
  // Five leaves: 5 -> (01)(23)(44) -> ((01)(23))((44)(44)) -> root.
  const Bytes32 l01 = inner(leaf[0], leaf[1]), l23 = inner(leaf[2], leaf[3]), l44 = inner(leaf[4], leaf[4]);
  EXPECT_EQ(candidates_snapshot_root(c, config), inner(inner(l01, l23), inner(l44, l44)));

  auto changed = c;
  changed[3].reputation_x1e9 -= 1;
  EXPECT_NE(candidates_snapshot_root(changed, config), candidates_snapshot_root(c, config));
}

// ---- §9.2 the draw ----------------------------------------------------------

std::uint64_t ticket_head(const Bytes32& seed, std::uint64_t i) {
  Bytes i_le(8);
  for (int b = 0; b < 8; ++b) i_le[b] = static_cast<std::uint8_t>(i >> (8 * b));
  const Bytes32 h = crypto::keccak256(concat({seed, i_le}));
  std::uint64_t v = 0;
  for (int b = 7; b >= 0; --b) v = (v << 8) | h[b];
  return v;
}

TEST(Cip11Selection, WeightedDrawWalksTheTicketThroughTheWeights) {
  const Bytes32 seed = seed_named("draw");
  const std::vector<u128> weights{100, 200, 300, 400};
  for (std::uint64_t i = 0; i < 50; ++i) {
    std::uint64_t ticket = ticket_head(seed, i) % 1000;
    const std::size_t expected = ticket < 100 ? 0 : ticket < 300 ? 1 : ticket < 600 ? 2 : 3;
    EXPECT_EQ(weighted_draw(weights, seed, i), expected) << i;
  }
  EXPECT_EQ(weighted_draw(std::vector<u128>{}, seed, 0), std::nullopt);
  EXPECT_EQ(weighted_draw(std::vector<u128>{0, 0}, seed, 0), std::nullopt);
  for (std::uint64_t i = 0; i < 20; ++i) EXPECT_EQ(weighted_draw(std::vector<u128>{0, 5, 0}, seed, i), 1u);
}

TEST(Cip11Selection, MruLookupTtlIsInclusiveAndSaturating) {
  const MruRecord record{address(0x77), Height{1000}};
  EXPECT_EQ(lookup_mru(record, Height{1000 + kMruTtlBlocks}), address(0x77));
  EXPECT_EQ(lookup_mru(record, Height{1000 + kMruTtlBlocks + 1}), std::nullopt);
  EXPECT_EQ(lookup_mru(record, Height{5}), address(0x77));  // set_at above H: saturating subtraction
  EXPECT_EQ(lookup_mru(std::nullopt, Height{1000}), std::nullopt);
}

TEST(Cip11Selection, ModeAGuard) {
  EXPECT_TRUE(mode_a_effective(true, 20, 11));
  EXPECT_FALSE(mode_a_effective(true, 20, 10));   // not an honest majority of 20
  EXPECT_FALSE(mode_a_effective(true, 8, 5));     // MAX_SUBSET 8 cannot instantiate hard-exclude
  EXPECT_FALSE(mode_a_effective(false, 100, 51));
  EXPECT_TRUE(mode_a_effective(true, 100, 51));
}

// The §9.2 pin: addresses not initially sorted, distinct weights; the weights
// must stay with their runners through sorting, partitioning and swap_remove.
struct PinRunner {
  Address address;
  u128 stake;
  std::uint64_t reputation_x1e9;
  std::uint32_t registry_index;
};

std::vector<Candidate> pin_candidates() {
  // Registration order D, B, A, C: stakes and reputations differ, and sorting reorders them.
  const PinRunner runners[] = {{address(0x40), 4000, 1'000'000'000, 0},
                               {address(0x20), 2000, 250'000'000, 1},
                               {address(0x10), 9000, 40'000'000, 2},
                               {address(0x30), 3000, 640'000'000, 3}};
  std::vector<Candidate> c;
  for (const auto& r : runners) c.push_back(Candidate{r.address, r.registry_index, r.stake, r.reputation_x1e9});
  sort_by_address(c);
  return c;
}

TEST(Cip11Selection, PinWeightsStayPairedWithTheirRunners) {
  const auto c = pin_candidates();
  ASSERT_EQ(c[0].address, address(0x10));
  ASSERT_EQ(c[3].address, address(0x40));
  const ReputationConfig config{1, 100'000};
  // Weights by runner: A 9000*0.2=1800, B 2000*0.5=1000, C 3000*0.8=2400, D 4000*1=4000.
  EXPECT_TRUE(cip2_v3_weight(c[0].effective_stake, c[0].reputation_x1e9, config) == 1800);
  EXPECT_TRUE(cip2_v3_weight(c[1].effective_stake, c[1].reputation_x1e9, config) == 1000);
  EXPECT_TRUE(cip2_v3_weight(c[2].effective_stake, c[2].reputation_x1e9, config) == 2400);
  EXPECT_TRUE(cip2_v3_weight(c[3].effective_stake, c[3].reputation_x1e9, config) == 4000);

  // Replay the draw by hand from its tickets: pool [A,B,C,D] with weights [1800,1000,2400,4000].
  const Bytes32 seed = seed_named("pin");
  std::vector<std::pair<Address, u128>> pool{
      {address(0x10), 1800}, {address(0x20), 1000}, {address(0x30), 2400}, {address(0x40), 4000}};
  std::vector<Address> expected;
  for (std::uint64_t i = 0; i < 4; ++i) {
    u128 total = 0;
    for (auto& [a, w] : pool) total += w;
    u128 ticket = u128{ticket_head(seed, i)} % total;
    std::size_t j = 0;
    while (ticket >= pool[j].second) ticket -= pool[j++].second;
    expected.push_back(pool[j].first);
    pool[j] = pool.back();
    pool.pop_back();
  }
  CommitteeRequest req;
  req.eligible = c;
  req.committee_size = 4;
  req.seed = seed;
  req.config = config;
  EXPECT_EQ(select_committee(req), expected);
  EXPECT_EQ(std::set<Address>(expected.begin(), expected.end()).size(), 4u);
}

CommitteeRequest request(const std::vector<Candidate>& c, std::uint32_t m, const PresentSet* presence,
                         std::string_view seed) {
  CommitteeRequest req;
  req.eligible = c;
  req.committee_size = m;
  req.presence = presence;
  req.seed = seed_named(seed);
  req.config = ReputationConfig{1, 100'000};
  return req;
}

TEST(Cip11Selection, PresentFirstDrawsThePresentPoolUntilItIsEmpty) {
  const auto c = pin_candidates();  // registry indices: A 2, B 1, C 3, D 0
  PresentSet present(4);
  present.add(1);  // B
  present.add(3);  // C
  for (const char* seed : {"s1", "s2", "s3", "s4", "s5", "s6"}) {
    auto committee = select_committee(request(c, 3, &present, seed));
    ASSERT_EQ(committee.size(), 3u);
    std::set<Address> first_two(committee.begin(), committee.begin() + 2);
    EXPECT_EQ(first_two, (std::set<Address>{address(0x20), address(0x30)})) << seed;
    // The third comes from the fallback pool [A, D] with the global counter still running: i == 2.
    const auto j = weighted_draw(std::vector<u128>{1800, 4000}, seed_named(seed), 2);
    EXPECT_EQ(committee[2], *j == 0 ? address(0x10) : address(0x40)) << seed;
  }
}

TEST(Cip11Selection, MissingOrEmptyPresenceFailsOpen) {
  const auto c = pin_candidates();
  PresentSet none(4);
  const auto without = select_committee(request(c, 2, nullptr, "open"));
  EXPECT_EQ(select_committee(request(c, 2, &none, "open")), without);
  EXPECT_EQ(without.size(), 2u);
  // A runner registered after H-1 has no index: never present, still drawable.
  auto late = c;
  late[0].registry_index.reset();
  PresentSet all(4);
  for (std::uint32_t i = 0; i < 4; ++i) all.add(i);
  auto committee = select_committee(request(late, 4, &all, "open"));
  EXPECT_EQ(committee.size(), 4u);
  EXPECT_EQ(committee.back(), address(0x10));  // drawn last, from the fallback pool
}

TEST(Cip11Selection, MruMultiplierOnlyAtIterationZeroAndOnlyInTheActivePool) {
  const auto c = pin_candidates();
  for (const char* seed : {"m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"}) {
    auto req = request(c, 2, nullptr, seed);
    req.mru = address(0x20);  // B, weight 1000 -> 4000 at i == 0 only
    auto committee = select_committee(req);
    const auto j0 = weighted_draw(std::vector<u128>{1800, 4000, 2400, 4000}, seed_named(seed), 0);
    EXPECT_EQ(committee[0], c[*j0].address) << seed;
    // i == 1 draws from the residual pool with B's base weight restored.
    std::vector<std::pair<Address, u128>> pool{{c[0].address, 1800}, {c[1].address, 1000}, {c[2].address, 2400},
                                               {c[3].address, 4000}};
    pool[*j0] = pool.back();
    pool.pop_back();
    std::vector<u128> w;
    for (auto& e : pool) w.push_back(e.second);
    EXPECT_EQ(committee[1], pool[*weighted_draw(w, seed_named(seed), 1)].first) << seed;
  }
  // An MRU runner outside the active (present) pool at i == 0 changes nothing.
  PresentSet present(4);
  present.add(0);  // D only
  auto with_mru = request(c, 3, &present, "m1");
  with_mru.mru = address(0x20);
  EXPECT_EQ(select_committee(with_mru), select_committee(request(c, 3, &present, "m1")));
}

TEST(Cip11Selection, MultiValidatorCommitteesIgnorePresenceForMembership) {
  const auto c = pin_candidates();
  PresentSet present(4);
  present.add(1);
  for (const char* seed : {"v1", "v2", "v3"}) {
    auto multi = request(c, 2, &present, seed);
    multi.multi_validator = true;
    EXPECT_EQ(select_committee(multi), select_committee(request(c, 2, nullptr, seed))) << seed;
    auto single_runner = request(c, 1, &present, seed);
    single_runner.multi_validator = true;  // M == 1 stays present-first
    EXPECT_EQ(select_committee(single_runner), std::vector<Address>{address(0x20)}) << seed;
  }
}

TEST(Cip11Selection, ModeAHardExcludesAndUnderFills) {
  const auto c = pin_candidates();
  PresentSet present(4);
  present.add(3);  // C
  auto req = request(c, 3, &present, "a");
  req.mode_a = true;
  EXPECT_EQ(select_committee(req), std::vector<Address>{address(0x30)});
  req.presence = nullptr;
  EXPECT_TRUE(select_committee(req).empty());
}

// Whole committees for fixed seeds, checked in: tests/fixtures/cip11/committees.txt.
TEST(Cip11Selection, FixedSeedCommitteeVectors) {
  std::vector<Candidate> c;
  for (std::uint32_t i = 0; i < 12; ++i) {
    Address a = address(0);
    const Bytes32 k = crypto::keccak256(Bytes{static_cast<std::uint8_t>(i)});
    std::copy_n(k.begin(), 20, a.begin());
    c.push_back(Candidate{a, i, u128{1000} + 997 * i, 100'000'000ULL * (1 + (i * 7) % 10)});
  }
  sort_by_address(c);
  PresentSet present(12);
  for (std::uint32_t i : {1u, 4u, 6u, 9u}) present.add(i);

  std::ostringstream lines;
  for (const char* seed : {"committee-a", "committee-b", "committee-c"}) {
    for (std::uint32_t m : {1u, 3u, 6u}) {
      for (bool with_presence : {false, true}) {
        auto req = request(c, m, with_presence ? &present : nullptr, seed);
        req.mru = c[5].address;
        lines << seed << " M=" << m << (with_presence ? " present" : " none") << ":";
        for (const auto& a : select_committee(req)) lines << " " << to_hex(a).substr(0, 8);
        lines << "\n";
      }
    }
  }
  lines << "root " << to_hex(candidates_snapshot_root(c, ReputationConfig{1, 100'000})) << "\n";
  const std::string path = std::string(COWBOY_FIXTURE_DIR) + "/cip11/committees.txt";
  if (std::getenv("COWBOY_WRITE_FIXTURES")) std::ofstream(path) << lines.str();
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(lines.str(), expected);
}

// ---- §9.2 PendingSelectionV1 -------------------------------------------------

PendingSelectionV1 pending_sample() {
  PendingSelectionV1 p;
  p.job_id = JobId{seed_named("job")};
  p.submitted_at = Height{5000};
  p.selection_state_height = Height{5000};
  p.committee_size = 3;
  p.submission_epoch = RoundEpoch{2};
  p.submission_view = View{40};
  p.seed_epoch = RoundEpoch{2};
  p.seed_view = View{43};
  p.seed_delay_views = 3;
  p.candidates_snapshot_root = seed_named("root");
  return p;
}

TEST(Cip11Pending, RecordIsPinnedAndRoundTrips) {
  const PendingSelectionV1 p = pending_sample();
  const Bytes encoded = encode(p);
  const std::string path = std::string(COWBOY_FIXTURE_DIR) + "/cip11/pending_selection_v1.hex";
  if (std::getenv("COWBOY_WRITE_FIXTURES"))
    cowboy::testing::write_hex_fixture(path, "PendingSelectionV1, deterministic CBOR keyed 0..10", encoded);
  auto fixture = cowboy::testing::read_hex_fixture(path);
  ASSERT_TRUE(fixture);
  EXPECT_EQ(to_hex(encoded), to_hex(*fixture));
  EXPECT_EQ(to_hex(encoded).substr(0, 6), "ab0001");  // map of 11, key 0: version 1
  auto decoded = decode_pending_selection(*fixture);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, p);

  PendingSelectionV1 v2 = p;
  v2.version = 2;
  EXPECT_EQ(decode_pending_selection(encode(v2)).error(), Errc::kUnknownVariant);
  Bytes truncated = encoded;
  truncated.pop_back();
  EXPECT_FALSE(decode_pending_selection(truncated).ok());
}

TEST(Cip11Pending, StorageKeys) {
  const PendingSelectionV1 p = pending_sample();
  EXPECT_EQ(pending_by_job_key(p.job_id),
            crypto::keccak256(concat({as_bytes("cip11:pending-selection:v1:job"), p.job_id.value})));
  const Bytes key = pending_due_round_index_key(p);
  const Bytes expected = concat({as_bytes("cip11:pending-selection:v1:due-round"),
                                 Bytes{0, 0, 0, 0, 0, 0, 0, 2}, Bytes{0, 0, 0, 0, 0, 0, 0, 43},
                                 Bytes{0, 0, 0, 0, 0, 0, 0x13, 0x88}, p.job_id.value});
  EXPECT_EQ(key, expected);
  // Lexicographic order of the index is (seed round, submitted_at, job_id).
  PendingSelectionV1 later = p;
  later.seed_view = View{44};
  later.submitted_at = Height{1};
  EXPECT_LT(key, pending_due_round_index_key(later));
}

// ---- §6.6, §9.4 ---------------------------------------------------------------

TEST(Cip11Selection, HeartbeatPhaseIsTheHashModTheCadence) {
  const Address runner = address(0x5a);
  codec::Writer w;
  w.u64(7);
  w.raw(runner);
  const Bytes32 h = crypto::keccak256(w.data());
  EXPECT_EQ(heartbeat_phase(7, runner, 256), h[31]);  // a power of two keeps the low bytes
  EXPECT_EQ(heartbeat_phase(7, runner, 65536), (std::uint64_t{h[30]} << 8) | h[31]);
  EXPECT_EQ(heartbeat_phase(7, runner, 1), 0u);
  EXPECT_NE(heartbeat_phase(7, runner, 1u << 30), heartbeat_phase(8, runner, 1u << 30));  // chain-specific

  std::set<std::uint64_t> phases;
  for (int i = 0; i < 1000; ++i) {
    const auto phase = heartbeat_phase(7, address(static_cast<std::uint8_t>(i)) , 90);
    EXPECT_LT(phase, 90u);
    phases.insert(phase);
  }
  EXPECT_GT(phases.size(), 60u);  // 256 distinct runners spread over the buckets
}

TEST(Cip11Selection, JobKindTableIsPinned) {
  EXPECT_EQ(static_cast<int>(*job_kind_named("Llm")), 0x00);
  EXPECT_EQ(static_cast<int>(*job_kind_named("Http")), 0x01);
  EXPECT_EQ(static_cast<int>(*job_kind_named("Mcp")), 0x02);
  EXPECT_EQ(static_cast<int>(*job_kind_named("Custom")), 0x03);
  EXPECT_EQ(static_cast<int>(*job_kind_named("PublishChainRoot")), 0x04);
  EXPECT_EQ(static_cast<int>(*job_kind_named("Agent")), 0x05);
  EXPECT_EQ(job_kind_named("EthSend"), std::nullopt);  // discussed, never landed
}

}  // namespace
}  // namespace cowboy::cip11
