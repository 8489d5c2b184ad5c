// The chain plane's selection rules that span blocks and flags: what
// CIP11_PRESENT_FIRST_ENABLED switches on (§13), the Phase-1 shadow draw
// (§14), Mode A's guard (§8.4), the block-S snapshot a pending selection is
// checked against (§9.2) and timeout re-selection from the original seed
// (§9.2, §11.2).
#include <gtest/gtest.h>

#include "chain_harness.h"
#include "cip11/chain/codec.h"

namespace cowboy::cip11::chain {
namespace {

using testing::Chain;
using testing::key;
using testing::Key;
using testing::keys;
using testing::state_bytes;


std::vector<Address> draw(std::span<const Candidate> eligible, const Bytes32& seed, std::uint32_t m,
                          const PresentSet* presence = nullptr) {
  CommitteeRequest r;
  r.eligible = eligible;
  r.presence = presence;
  r.committee_size = m;
  r.seed = seed;
  return select_committee(r);
}

// §13: with the flag off live selection is CIP-2 v2 (its seed domain, no mode
// byte); on, the v3 seed. Either way the committee is that seed's draw.
TEST(Cip11Chain, LiveSelectionUsesTheV2SeedWithTheFlagOffAndTheV3SeedWithItOn) {
  auto ks = keys(110, 6);
  std::set<Bytes32> seeds;
  for (bool on : {false, true}) {
    Chain c;
    c.params.present_first_enabled = on;
    c.register_all(ks);
    c.begin();
    const State before = c.state;
    auto out = c.tx(ks[0].address, testing::job(1, 10));
    ASSERT_FALSE(out.error);
    const JobRecord& job = c.job_of(*out.job_id);
    const Bytes32 beacon = c.beacon_hash(c.height.value - 1);  // R_{S-1}
    const Bytes32 expected = on ? selection_seed_v3(SelectionMode::kImmediate, beacon, job.job_id, c.height.value)
                                : selection_seed_v2(beacon, job.job_id, c.height.value);
    EXPECT_EQ(job.selection_seed, expected) << on;
    EXPECT_EQ(c.committee_of(job.job_id), draw(eligible_candidates(before, c.context(), job), expected, 1)) << on;
    seeds.insert(*job.selection_seed);
  }
  EXPECT_EQ(seeds.size(), 2u);
}

// §14 Phase 1: the CIP-11 draw on a side path. The state is byte-identical to
// a chain without shadow mode; the shadow committee is exactly what the
// present-first chain draws from the same blocks. An M > 1 job's shadow draw
// waits for its own seed round (the next test).
TEST(Cip11Chain, ShadowModeDrawsTheCip11CommitteeBesideTheLiveOneAndChangesNothing) {
  auto ks = keys(120, 8);
  for (std::uint32_t m : {1u, 2u}) {
    auto run = [&](bool shadow, bool present_first) {
      Chain c;
      c.params.presence_shadow_enabled = shadow;
      c.params.present_first_enabled = present_first;
      c.register_all(ks);
      auto out = c.ok(ks[0].address, testing::job(m, 20), {3});
      while (c.job_of(*out.job_id).state != JobState::kAssigned) c.begin({3});
      return std::tuple(state_bytes(c.state), c.committee_of(*out.job_id), c.effects.shadow, c.effects.shadow_writes);
    };
    auto [plain_state, live, none, no_writes] = run(false, false);
    auto [shadow_state, shadow_live, shadow, writes] = run(true, false);
    EXPECT_EQ(shadow_state, plain_state) << "the side path changed the state, M = " << m;
    EXPECT_EQ(shadow_live, live);
    EXPECT_TRUE(none.empty());
    EXPECT_TRUE(no_writes.empty());
    ASSERT_EQ(writes.size(), 1u);
    if (m == 1) {
      ASSERT_EQ(shadow.size(), 1u);
      EXPECT_EQ(shadow[0].live, live);
      EXPECT_EQ(shadow[0].selection, 1u);
      // What the present-first chain would have drawn: the present runner.
      EXPECT_EQ(shadow[0].shadow, std::get<1>(run(false, true)));
      EXPECT_EQ(shadow[0].shadow, std::vector<Address>{ks[3].address});
      EXPECT_EQ(shadow[0].shadow_present, 1u);
      ASSERT_TRUE(writes[0].record && writes[0].record->seed);  // the v3 seed its re-selections derive from
      EXPECT_FALSE(writes[0].record->pending);
    } else {
      // M > 1: nothing drawn in block S; the book waits for the seed round.
      EXPECT_TRUE(shadow.empty());
      ASSERT_TRUE(writes[0].record && writes[0].record->pending);
      EXPECT_FALSE(writes[0].record->seed);
      EXPECT_EQ(writes[0].record->pending->live, live);
    }
  }
}

// §14 with §9.2: under shadow mode an M > 1 job's CIP-11 draw waits for its
// own future seed round r_seed and is made at the block the live CIP-11 pass
// would make it in, over the block-S candidates (a runner registered since is
// not among them, however present), with r_seed's seed - the committee the
// present-first chain assigns. The state stays byte-identical to the chain
// without shadow mode at every block.
TEST(Cip11Chain, AShadowMultiRunnerDrawWaitsForItsSeedRoundAndDrawsOverItsBlockSCandidates) {
  auto ks = keys(160, 7);
  struct Run {
    std::vector<Bytes> states;               // after each block from S on
    std::vector<std::vector<ShadowDraw>> shadow;  // each block's shadow draws from S on
    std::vector<Address> committee;          // when the first CIP-11 committee is drawn (live or shadow)
    std::vector<Address> live_at_s;
    Height s{}, pass{};
    std::vector<Candidate> pool;  // the block-S snapshot as the pass reads it
    cip11::JobId id{};
  };
  auto run = [&](bool shadow, bool present_first) {
    Run r;
    Chain c;
    c.params.presence_shadow_enabled = shadow;
    c.params.present_first_enabled = present_first;
    c.register_all(std::vector<Key>(ks.begin(), ks.end() - 1));
    auto out = c.ok(ks[0].address, testing::job(2, 20), {3});
    const cip11::JobId id = *out.job_id;
    r.id = id;
    r.s = c.height;
    r.live_at_s = c.committee_of(id);
    auto record = [&] {
      r.states.push_back(state_bytes(c.state));
      r.shadow.push_back(c.effects.shadow);
    };
    record();
    c.fund(ks[6]);  // registered after S, present from then on: never in the block-S snapshot
    c.ok(ks[6].address, testing::registration(ks[6], 1'000'000), {3});
    record();
    for (Height h = c.height + 1; h <= r.s + 8; ++h) {
      c.begin({3, 6});
      record();
      const bool drawn = present_first ? c.job_of(id).selections == 1 && r.pass == Height{0} && h > r.s
                                       : !c.effects.shadow.empty();
      if (!drawn || r.pass != Height{0}) continue;
      r.pass = h;
      r.committee = present_first ? c.committee_of(id) : c.effects.shadow.at(0).shadow;
      r.pool = snapshot_candidates(c.state, c.context(), c.job_of(id), r.s);
    }
    return r;
  };
  const Run plain = run(false, false), shadowed = run(true, false), cip11 = run(false, true);
  EXPECT_EQ(shadowed.states, plain.states) << "the side path changed the state";
  EXPECT_EQ(shadowed.live_at_s, plain.live_at_s);
  ASSERT_EQ(shadowed.s, cip11.s);
  // The pass: the first block whose round is after r_seed = S + K, for both.
  const Height r_seed = shadowed.s + 3;
  EXPECT_EQ(cip11.pass, r_seed + 1);
  EXPECT_EQ(shadowed.pass, cip11.pass);
  for (std::size_t i = 0; i < shadowed.shadow.size(); ++i) {
    const Height h = shadowed.s + i;
    if (h == shadowed.pass) continue;
    EXPECT_TRUE(shadowed.shadow[i].empty()) << "a shadow draw in block " << h.value << ", not at the pass";
  }
  const auto& at_pass = shadowed.shadow.at(shadowed.pass - shadowed.s);
  ASSERT_EQ(at_pass.size(), 1u);
  EXPECT_EQ(at_pass[0].selection, 1u);
  EXPECT_EQ(at_pass[0].live, shadowed.live_at_s);  // compared with the live first committee, drawn at S
  // Exactly the live CIP-11 committee, from r_seed's seed over the block-S pool:
  // the present runner of that pool first, the late present one never.
  EXPECT_EQ(at_pass[0].shadow, cip11.committee);
  ASSERT_EQ(cip11.pool.size(), 6u);
  PresentSet present(7);
  present.add(3);
  present.add(6);
  ASSERT_EQ(shadowed.id, cip11.id);
  const Chain beacon;  // the same dev beacon: every Chain has the same chain id
  const Bytes32 seed = selection_seed_v3(SelectionMode::kDelayed, beacon.beacon_hash(r_seed.value), cip11.id,
                                         shadowed.s.value);
  EXPECT_EQ(at_pass[0].shadow, draw(cip11.pool, seed, 2, &present));
  ASSERT_EQ(at_pass[0].shadow.size(), 2u);
  EXPECT_EQ(at_pass[0].shadow[0], ks[3].address);
  EXPECT_EQ(at_pass[0].shadow[1], ks[2].address);
  EXPECT_EQ(at_pass[0].live, (std::vector<Address>{ks[4].address, ks[5].address}))
      << "the live v2 committee, drawn at S without presence";
  EXPECT_EQ(at_pass[0].shadow_present, 1u);
  EXPECT_EQ(std::count(at_pass[0].shadow.begin(), at_pass[0].shadow.end(), ks[6].address), 0);
}

// §14 with §11.2: a live re-selection under shadow mode gets its shadow, drawn
// with the inputs a live CIP-11 re-selection uses - this block's pool without
// the runners that timed out, its PresenceInput, and the seed derived from the
// shadow's own original v3 seed - which here is the committee the present-first
// chain redraws. The live one, from the v2 seed, is unchanged, and so is the state.
TEST(Cip11Chain, AShadowReselectionRedrawsAsLiveCip11FromTheShadowsOwnOriginalSeed) {
  auto ks = keys(175, 5);
  struct Run {
    std::vector<Bytes> states;
    std::vector<Address> first, second;  // the live committees
    std::vector<ShadowDraw> shadow;      // the re-selection block's shadow draws
    Bytes32 original{};                  // the live first committee's seed
    std::vector<Candidate> pool;         // what the re-selection drew from
    std::size_t book_after_end = 1;
  };
  auto run = [&](bool shadow, bool present_first) {
    Run r;
    Chain c;
    c.params.presence_shadow_enabled = shadow;
    c.params.present_first_enabled = present_first;
    c.register_all({ks[0]});  // one runner when the job is submitted: every rule draws it
    auto out = c.ok(ks[4].address, testing::job(1, 6), {0});
    const cip11::JobId id = *out.job_id;
    r.first = c.committee_of(id);
    r.original = *c.job_of(id).selection_seed;
    r.states.push_back(state_bytes(c.state));
    c.register_all({ks[1], ks[2], ks[3]});  // indices 1, 2, 3
    while (c.job_of(id).selections < 2) {
      c.begin({1, 2});  // it never answers; two of the new runners are present
      r.states.push_back(state_bytes(c.state));
    }
    r.second = c.committee_of(id);
    r.shadow = c.effects.shadow;
    State pool = c.state;
    for (const Address& a : r.second) --pool.runners.at(a).active_jobs;
    r.pool = eligible_candidates(pool, c.context(), c.job_of(id));
    while (c.job_of(id).state == JobState::kAssigned) c.begin({1, 2});
    c.begin();  // the block that ended it is written: its writes are in the book
    r.book_after_end = c.shadow.size();
    return r;
  };
  const Run plain = run(false, false), shadowed = run(true, false), cip11 = run(false, true);
  EXPECT_EQ(shadowed.states, plain.states) << "the side path changed the state";
  EXPECT_EQ(shadowed.second, plain.second);
  ASSERT_EQ(shadowed.first, std::vector<Address>{ks[0].address});
  ASSERT_EQ(cip11.first, shadowed.first);  // the same runner timed out under both rules
  ASSERT_EQ(shadowed.shadow.size(), 1u);
  const ShadowDraw& d = shadowed.shadow[0];
  EXPECT_EQ(d.selection, 2u);
  EXPECT_EQ(d.live, shadowed.second);
  EXPECT_EQ(d.shadow, cip11.second);
  // That committee exactly: the v3 original's re-selection seed over {1, 2, 3}, present-first.
  ASSERT_EQ(shadowed.pool.size(), 3u);
  PresentSet present(4);
  present.add(1);
  present.add(2);
  EXPECT_EQ(d.shadow, draw(shadowed.pool, reselection_seed(cip11.original, 2), 1, &present));
  EXPECT_EQ(d.shadow, std::vector<Address>{ks[1].address});
  EXPECT_EQ(d.live, std::vector<Address>{ks[3].address});  // the v2 re-selection, presence not read
  EXPECT_EQ(d.shadow_present, 1u);
  EXPECT_NE(d.shadow, draw(shadowed.pool, reselection_seed(shadowed.original, 2), 1, &present))
      << "pick other keys: the v2 seed draws the same here";
  // Once the job has ended, its record leaves the book.
  EXPECT_EQ(shadowed.book_after_end, 0u);
}

// §8.4: PRESENCE_HARD_EXCLUDE_ENABLED takes effect only with effective_k >=
// K_HARD_MIN, which the default MAX_SUBSET = 8 never reaches. Set, it changes
// no draw: a non-present floor-eligible runner is still drawn, and rule 2
// still holds (chain_mode_a_test.cc has the guard met).
TEST(Cip11Chain, HardExcludeBelowTheKHardMinGuardPresenceStillOnlyOrders) {
  auto ks = keys(130, 4);
  auto run = [&](bool hard) {
    Chain c;
    c.params.present_first_enabled = true;
    c.params.presence_hard_exclude_enabled = hard;
    c.register_all(ks);
    auto out = c.ok(ks[0].address, testing::job(3, 20), {2});
    while (c.job_of(*out.job_id).state != JobState::kAssigned) c.begin({2});
    EXPECT_EQ(c.committee_of(*out.job_id).size(), 3u) << "only one runner is present; the rest must stay drawable";
    EXPECT_EQ(c.committee_of(*out.job_id).at(0), ks[2].address);
    return state_bytes(c.state);
  };
  EXPECT_EQ(run(true), run(false));
  ChainParams hard;
  hard.present_first_enabled = true;
  hard.presence_hard_exclude_enabled = true;
  EXPECT_FALSE(presence_of_block(hard, std::nullopt, 4).ok());  // §7.2 rule 3: Mode B's field stays required
}

// §9.2 / §11.2: a committee that timed out is redrawn at deadline + 1 from a
// seed derived from the job's original one - for M > 1 the seed of its
// absolute round r_seed - never from the parent beacon of the re-selection block.
TEST(Cip11Chain, ATimedOutCommitteeIsRedrawnFromTheJobsOriginalSeed) {
  auto ks = keys(140, 8);
  for (std::uint32_t m : {1u, 2u}) {
    Chain c;
    c.params.present_first_enabled = true;
    c.register_all(ks);
    auto out = c.ok(ks[0].address, testing::job(m, 6));
    const cip11::JobId id = *out.job_id;
    const Height s = c.height;
    while (c.job_of(id).state != JobState::kAssigned) c.begin();
    const std::uint64_t seed_view = m == 1 ? s.value - 1 : s.value + c.params.selection_seed_delay_views;
    const Bytes32 original = selection_seed_v3(m == 1 ? SelectionMode::kImmediate : SelectionMode::kDelayed,
                                               c.beacon_hash(seed_view), id, s.value);
    ASSERT_EQ(c.job_of(id).selection_seed, original);
    const Height deadline = c.job_of(id).deadline_block;
    while (c.height <= deadline) c.begin();
    ASSERT_EQ(c.job_of(id).selections, 2u) << "M = " << m;
    EXPECT_TRUE(c.effects.consumed_seeds.empty());  // a re-selection consumes no new seed
    // The pool the re-selection drew from: this block's registry before its new assignments.
    State pool = c.state;
    for (const Address& r : c.committee_of(id)) --pool.runners.at(r).active_jobs;
    const auto eligible = eligible_candidates(pool, c.context(), c.job_of(id));
    const auto expected = draw(eligible, reselection_seed(original, 2), m);
    EXPECT_EQ(c.committee_of(id), expected) << "M = " << m;
    // The rule the re-selection must not follow would have drawn otherwise here.
    const Bytes32 parent = selection_seed_v3(m == 1 ? SelectionMode::kImmediate : SelectionMode::kDelayed,
                                             c.beacon_hash(c.height.value - 1), id, c.height.value);
    EXPECT_NE(draw(eligible, parent, m), expected) << "pick other keys: this case cannot tell the rules apart";
    EXPECT_EQ(c.job_of(id).deadline_block, c.height + 6);
  }
}

// §9.2: the pass re-derives the block-S snapshot from the registry as it stood
// then - a runner paused since is still in it, one registered since is not -
// checks it against the committed root, and draws from it.
TEST(Cip11Chain, APendingSelectionIsDrawnFromTheRegistryAsItStoodInBlockS) {
  auto ks = keys(150, 7);
  Chain c;
  c.params.present_first_enabled = true;
  c.register_all(std::vector<Key>(ks.begin(), ks.end() - 1));
  c.begin();
  const State at_s = c.state;  // the end of block S-1: nothing has changed in S yet
  auto out = c.tx(ks[0].address, testing::job(3, 20));
  const cip11::JobId id = *out.job_id;
  const Height s = c.height;
  const auto snapshot = eligible_candidates(at_s, c.context(), c.job_of(id));
  ASSERT_EQ(snapshot.size(), 6u);
  EXPECT_EQ(c.job_of(id).pending->candidates_snapshot_root, candidates_snapshot_root(snapshot, c.params.reputation));
  EXPECT_EQ(snapshot_candidates(c.state, c.context(), c.job_of(id), s), snapshot);
  // Until the pass: one runner pauses, two heartbeat, a new one registers.
  c.ok(ks[1].address, SetRunnerHealth{HealthStatus::kPaused});
  c.ok(ks[2].address, RunnerHeartbeat{});
  c.ok(ks[2].address, RunnerHeartbeat{});
  c.register_all({ks[6]});
  while (c.job_of(id).state == JobState::kPendingSelection) c.begin();
  ASSERT_EQ(c.job_of(id).state, JobState::kAssigned);
  const Bytes32 seed = selection_seed_v3(SelectionMode::kDelayed,
                                         c.beacon_hash(s.value + c.params.selection_seed_delay_views), id, s.value);
  const auto expected = draw(snapshot, seed, 3);
  EXPECT_EQ(c.committee_of(id), expected);
  // Drawn from today's registry instead, it would differ.
  State today = c.state;
  for (const Address& r : expected) --today.runners.at(r).active_jobs;
  EXPECT_NE(draw(eligible_candidates(today, c.context(), c.job_of(id)), seed, 3), expected);
}

// §9.2: "if they differ, the block is invalid" and "the pending selection MUST
// remain pending". A record whose block-S snapshot no longer matches its root
// (here: a registry record altered under it) is never assigned; it is
// reported in each block that finds it due, and at its deadline it ends.
TEST(Cip11Chain, APendingSelectionWhoseSnapshotDoesNotVerifyIsNeverAssignedAndEndsAtItsDeadline) {
  auto ks = keys(160, 4);
  Chain c;
  c.params.present_first_enabled = true;
  c.register_all(ks);
  auto out = c.ok(ks[0].address, testing::job(2, 10));
  const cip11::JobId id = *out.job_id;
  const Height deadline = c.job_of(id).deadline_block;
  const std::uint64_t due = c.job_of(id).pending->seed_view.value + 1;
  // Unchanged since S, so this record is the block-S record the root committed to.
  c.state.runners.at(ks[1].address).stake += 1;
  for (c.begin(); c.height <= deadline; c.begin()) {
    EXPECT_EQ(c.job_of(id).state, JobState::kPendingSelection) << c.height.value;
    EXPECT_TRUE(c.effects.assigned.empty());
    EXPECT_TRUE(c.effects.consumed_seeds.empty()) << "a seed no processed record consumed";
    EXPECT_EQ(c.effects.unverified_pending, c.height >= Height{due} ? std::vector<JobId>{id} : std::vector<JobId>{});
  }
  EXPECT_EQ(c.job_of(id).state, JobState::kTimedOut);
  EXPECT_EQ(c.job_of(id).finished_at, deadline + 1);
  EXPECT_EQ(c.effects.expired_pending, std::vector<JobId>{id});
  EXPECT_FALSE(c.job_of(id).pending);
  EXPECT_TRUE(c.job_of(id).committee.empty());
  for (const auto& k : ks) EXPECT_EQ(c.state.runners.at(k.address).active_jobs, 0u);
  c.begin();  // the derived index has looked at the job again: no pending selection is left
  EXPECT_TRUE(c.state.due.pending_submissions().empty());
}

// The history a block-S snapshot reads is bounded: with no pending selection a
// runner keeps only the current block's version; a pending one keeps the
// version it needs until its pass; the state with history stores and reloads.
TEST(Cip11Chain, RunnersKeepOnlyTheHistoryAPendingSelectionCanRead) {
  auto ks = keys(170, 3);
  Chain c;
  c.params.present_first_enabled = true;
  c.register_all(ks);
  const Address a = ks[1].address;
  for (int i = 0; i < 5; ++i) c.ok(a, RunnerHeartbeat{});
  EXPECT_EQ(c.state.runners.at(a).history.size(), 1u);  // this block's: a job later in it would read it
  auto out = c.ok(ks[0].address, testing::job(2, 20));
  const Height s = c.height;
  c.ok(a, RunnerHeartbeat{});
  c.ok(a, RunnerHeartbeat{});
  const auto& history = c.state.runners.at(a).history;
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].first, s + 1);  // the first version at or after S: the record as of block S
  EXPECT_EQ(history[0].second.last_heartbeat, s - 1);
  EXPECT_TRUE(history[0].second.history.empty());
  Bytes stored = state_bytes(c.state);
  codec::Reader r(stored);
  State back = get_state(r);
  r.finish();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(back, c.state);
  while (c.job_of(*out.job_id).state == JobState::kPendingSelection) c.begin();
  c.ok(a, RunnerHeartbeat{});
  EXPECT_EQ(c.state.runners.at(a).history.size(), 1u);
  EXPECT_EQ(c.state.runners.at(a).history[0].first, c.height);
}

}  // namespace
}  // namespace cowboy::cip11::chain
