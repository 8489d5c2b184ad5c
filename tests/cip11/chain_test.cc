// The CIP-11 chain plane as a state machine: registry, present-first
// dispatch, timeouts, commit-before-reveal and refusals that change nothing.
#include <gtest/gtest.h>

#include "cip11/chain/codec.h"
#include "chain_harness.h"

namespace cowboy::cip11::chain {
namespace {

using testing::Chain;
using testing::key;
using testing::Key;
using testing::keys;
using testing::state_bytes;


TEST(Cip11Chain, InstructionsRoundTripAndRefuseBadBytes) {
  auto k = key(1);
  std::vector<Instruction> all{testing::registration(k), RunnerHeartbeat{}, SetRunnerHealth{HealthStatus::kPaused},
                               DeregisterRunner{},       testing::job(3, 20), JobResultCommit{JobId{Bytes32{1}}, Bytes32{2}},
                               JobResultSubmit{JobId{Bytes32{3}}, Bytes{9, 9}, Bytes32{4}}};
  for (const auto& i : all) {
    Bytes b = encode_instruction(i);
    auto back = decode_instruction(b);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, i);
    b.push_back(0);
    EXPECT_EQ(decode_instruction(b).error(), codec::DecodeError::kTrailingBytes);
  }
  // A heartbeat is exactly version 1, tag 2.
  EXPECT_EQ(encode_instruction(RunnerHeartbeat{}), (Bytes{0x01, 0x02}));
  EXPECT_EQ(decode_instruction(Bytes{0x02, 0x02}).error(), codec::DecodeError::kBadVersion);
  EXPECT_EQ(decode_instruction(Bytes{0x01, 0x09}).error(), codec::DecodeError::kUnknownVariant);
  EXPECT_EQ(decode_instruction(encode_instruction(SetRunnerHealth{HealthStatus::kDeregistered})).error(),
            codec::DecodeError::kInvalidValue);  // a runner cannot write Deregistered through SetRunnerHealth
  auto bad_job = testing::job(0);
  EXPECT_EQ(decode_instruction(encode_instruction(bad_job)).error(), codec::DecodeError::kInvalidValue);
  bad_job = testing::job(kMaxCommittee + 1);
  EXPECT_EQ(decode_instruction(encode_instruction(bad_job)).error(), codec::DecodeError::kInvalidValue);
}

// §7.2's pin, through the registration path: [A, B, C], B paused and C stale
// without rewriting the list, then D appended at index 3.
TEST(Cip11Chain, RegistryIndexBasisPinThroughInstructions) {
  Chain c;
  c.params.heartbeat_timeout_blocks = 5;
  auto ks = keys(1, 4);
  c.register_all({ks[0], ks[1], ks[2]});
  c.ok(ks[1].address, SetRunnerHealth{HealthStatus::kPaused});
  for (int i = 0; i < 6; ++i) c.ok(ks[0].address, RunnerHeartbeat{});  // C's heartbeat goes stale
  EXPECT_FALSE(passes_liveness_floor(c.state.runners.at(ks[2].address).health,
                                     c.state.runners.at(ks[2].address).last_heartbeat, c.height, 5));
  ASSERT_EQ(c.state.index.size(), 3u);
  for (std::uint32_t i = 0; i < 3; ++i) EXPECT_EQ(c.state.index.at(i), ks[i].address);
  c.register_all({ks[3]});
  EXPECT_EQ(c.state.index.index_of(ks[3].address), 3u);
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(c.state.index.at(i), ks[i].address);
  // A deregistered runner that comes back keeps its index.
  c.ok(ks[1].address, DeregisterRunner{});
  c.ok(ks[1].address, testing::registration(ks[1]));
  EXPECT_EQ(c.state.index.index_of(ks[1].address), 1u);
  EXPECT_EQ(c.state.index.size(), 4u);
}

TEST(Cip11Chain, RegistrationRulesAndStakeCustody) {
  Chain c;
  c.params.min_stake = 100;
  auto a = key(1), b = key(2);
  c.fund(a, 500);
  c.begin();
  const auto before = state_bytes(c.state);
  EXPECT_EQ(c.tx(b.address, testing::registration(a, 100)).error, ChainError::kKeyNotSender);
  EXPECT_EQ(c.tx(a.address, testing::registration(a, 99)).error, ChainError::kStakeBelowMinimum);
  EXPECT_EQ(c.tx(a.address, testing::registration(a, 501)).error, ChainError::kInsufficientFunds);
  EXPECT_EQ(c.tx(a.address, RunnerHeartbeat{}).error, ChainError::kUnknownRunner);
  EXPECT_EQ(state_bytes(c.state), before);  // refusals change nothing
  EXPECT_EQ(c.balances[a.address], 500u);
  EXPECT_FALSE(c.tx(a.address, testing::registration(a, 300)).error);
  EXPECT_EQ(c.balances[a.address], 200u);
  EXPECT_EQ(c.tx(a.address, testing::registration(a, 100)).error, ChainError::kRunnerExists);
  EXPECT_FALSE(c.tx(a.address, DeregisterRunner{}).error);
  EXPECT_EQ(c.balances[a.address], 500u);
  EXPECT_EQ(c.tx(a.address, RunnerHeartbeat{}).error, ChainError::kRunnerDeregistered);
}

TEST(Cip11Chain, EmptyPresentSetDrawsTheFallbackCommitteeAndPresentFirstPrefersPresentRunners) {
  auto ks = keys(10, 8);
  // Chains identical but for presence. Runner 6 is paused: floor-ineligible, so
  // a present set naming only it leaves the present pool empty.
  auto run = [&](bool present_first, std::vector<std::uint32_t> present) {
    Chain c;
    c.params.present_first_enabled = present_first;
    c.register_all(ks);
    c.ok(ks[6].address, SetRunnerHealth{HealthStatus::kPaused});
    std::vector<std::vector<Address>> committees;
    for (int j = 0; j < 6; ++j) {
      auto out = c.ok(ks[0].address, testing::job(1), present);
      committees.push_back(c.committee_of(*out.job_id));
    }
    return committees;
  };
  EXPECT_EQ(run(false, {5}), run(false, {}));  // flag off: presence is ignored (§7.2 rule 1)
  const auto fallback_only = run(true, {});
  EXPECT_EQ(run(true, {6}), fallback_only);  // no eligible runner present: the whole floor-eligible pool (§7.3)
  for (const auto& committee : run(true, {5})) EXPECT_EQ(committee, std::vector<Address>{ks[5].address});
  // Not everyone wins with nobody present: the draw spreads over the floor-eligible pool.
  std::set<Address> winners;
  for (const auto& committee : fallback_only) winners.insert(committee.at(0));
  EXPECT_GT(winners.size(), 1u);
  EXPECT_FALSE(winners.contains(ks[6].address));
}

// §7.3's steering bound: with more than one validator an M > 1 committee is
// drawn over the whole eligible set, presence or not; M = 1 stays present-first.
std::vector<crypto::Ed25519Public> four_peers() {
  std::vector<crypto::Ed25519Public> peers(4);
  for (std::size_t i = 0; i < peers.size(); ++i) peers[i].fill(static_cast<std::uint8_t>(i + 1));
  return peers;
}

TEST(Cip11Chain, MultiValidatorCommitteesIgnorePresence) {
  auto ks = keys(20, 6);
  auto committee = [&](bool multi, std::uint32_t m, std::vector<std::uint32_t> present) {
    Chain c;
    c.params.present_first_enabled = true;
    if (multi) c.validators = ValidatorSnapshots::genesis(four_peers());
    c.register_all(ks);
    auto out = c.ok(ks[0].address, testing::job(m, 20), present);
    while (c.job_of(*out.job_id).state != JobState::kAssigned) c.begin(present);
    return c.committee_of(*out.job_id);
  };
  EXPECT_EQ(committee(true, 3, {4}), committee(true, 3, {}));
  EXPECT_EQ(committee(true, 1, {4}), std::vector<Address>{ks[4].address});
  EXPECT_EQ(committee(false, 3, {4}).at(0), ks[4].address);
}

// §3.2 counts |V| in the snapshot active at the block, not in the genesis:
// a chain that grows from one validator to four by a change stops drawing
// M > 1 committees present-first from the change's activation on (§7.3).
TEST(Cip11Chain, TheSteeringBoundFollowsTheActiveSnapshotNotTheGenesis) {
  auto ks = keys(20, 6);
  constexpr Height kActivation{40};
  auto committee_at = [&](Height submitted, std::vector<std::uint32_t> present) {
    Chain c;
    c.params.present_first_enabled = true;
    c.validators.add(Epoch{1}, kActivation, four_peers());  // after the harness's genesis of one
    c.register_all(ks);
    while (c.height < submitted) c.begin(present);
    auto out = c.ok(ks[0].address, testing::job(3, 20), present);
    while (c.job_of(*out.job_id).state != JobState::kAssigned) c.begin(present);
    return c.committee_of(*out.job_id);
  };
  // One validator: the present runner is drawn first.
  EXPECT_EQ(committee_at(Height{5}, {4}).at(0), ks[4].address);
  // Four from the activation on: presence orders nothing in an M > 1 committee.
  EXPECT_EQ(committee_at(Height{50}, {4}), committee_at(Height{50}, {}));
}

TEST(Cip11Chain, TheDevJobSpecIsPinned) {
  JobRecord job;
  job.job_id = JobId{Bytes32{0xaa}};
  job.kind = JobKind::kHttp;
  job.timeout_blocks = 10;
  job.runners = 2;
  job.max_price = 5;
  job.submitter = Address{0xbb};
  job.spec = Bytes{'h', 'i'};
  Bytes expected{0x01, 0xaa};
  expected.resize(expected.size() + 31, 0);
  for (std::uint8_t b : {0x01, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 2}) expected.push_back(b);
  expected.resize(expected.size() + 15, 0);
  expected.push_back(5);
  expected.push_back(0xbb);
  expected.resize(expected.size() + 19, 0);
  for (std::uint8_t b : {0, 0, 0, 2, 0x68, 0x69}) expected.push_back(b);  // "hi"
  EXPECT_EQ(job_spec_bytes(job), expected);
}

TEST(Cip11Chain, PresentFirstNeverExcludesAFloorEligibleRunner) {
  Chain c;
  c.params.present_first_enabled = true;
  auto ks = keys(30, 4);
  c.register_all(ks);
  c.begin({2});
  c.tx(ks[0].address, testing::job(3, 20));  // M = 3, one present runner
  for (int i = 0; i < 4; ++i) c.begin({2});
  const JobRecord* pending = nullptr;
  for (const auto& [id, j] : c.state.jobs) pending = &j;
  ASSERT_EQ(pending->state, JobState::kAssigned);
  ASSERT_EQ(pending->committee.size(), 3u);
  EXPECT_EQ(pending->committee[0].runner, ks[2].address);  // the present runner first
  // Registered later, never present: still drawn when the present pool runs out.
  Chain d;
  d.params.present_first_enabled = true;
  d.register_all({ks[0]});
  auto out = d.ok(ks[0].address, testing::job(1), {});
  EXPECT_EQ(d.committee_of(*out.job_id), std::vector<Address>{ks[0].address});
}

TEST(Cip11Chain, ASelectionIsTheSameBlocksReplayed) {
  auto ks = keys(40, 6);
  auto run = [&] {
    Chain c;
    c.params.present_first_enabled = true;
    c.register_all(ks);
    for (int i = 0; i < 5; ++i) c.ok(ks[0].address, testing::job(i % 2 == 0 ? 1 : 2, 20), {1, 3});
    for (int i = 0; i < 30; ++i) c.begin({1, 3});
    return state_bytes(c.state);
  };
  EXPECT_EQ(run(), run());
  // The stored form decodes to the same state.
  Bytes bytes = run();
  codec::Reader r(bytes);
  State back = get_state(r);
  r.finish();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(state_bytes(back), bytes);
}

TEST(Cip11Chain, MultiRunnerJobsWaitForTheirSeedRound) {
  Chain c;
  c.params.present_first_enabled = true;  // commit-then-reveal belongs to CIP-11 selection (§13)
  auto ks = keys(50, 5);
  c.register_all(ks);
  auto out = c.ok(ks[0].address, testing::job(3, 20));
  const auto& job = c.job_of(*out.job_id);
  ASSERT_EQ(job.state, JobState::kPendingSelection);
  EXPECT_EQ(job.pending->seed_view, View{c.height.value + c.params.selection_seed_delay_views});  // views are heights here
  EXPECT_TRUE(c.effects.assigned.empty());  // §9.2: block S writes no assignment
  const std::uint64_t due = job.pending->seed_view.value + 1;
  while (c.height.value + 1 < due) {
    c.begin();
    EXPECT_EQ(c.job_of(*out.job_id).state, JobState::kPendingSelection);
  }
  c.begin();
  EXPECT_EQ(c.job_of(*out.job_id).state, JobState::kAssigned);
  EXPECT_EQ(c.job_of(*out.job_id).committee.size(), 3u);
  EXPECT_EQ(c.effects.assigned.size(), 3u);
  ASSERT_EQ(c.effects.consumed_seeds.size(), 1u);
  EXPECT_EQ(c.effects.consumed_seeds[0].view, View{due - 1});
  EXPECT_EQ(c.job_of(*out.job_id).deadline_block, c.job_of(*out.job_id).submitted_at + 20);  // §10.1
  // Too short a timeout for the seed delay is refused.
  c.begin();
  EXPECT_EQ(c.tx(ks[0].address, testing::job(2, c.params.selection_seed_delay_views + 1)).error,
            ChainError::kTimeoutTooShort);

  // And the shortest one it takes: a committee drawn at S + K + 1 at best, one block before its deadline.
  auto shortest = c.tx(ks[0].address, testing::job(2, c.params.selection_seed_delay_views + 2));
  EXPECT_FALSE(shortest.error) << chain_error_name(*shortest.error);

  // Flag off: CIP-2 v2 draws an M > 1 committee in block S at once, and needs no delay.
  Chain v2;
  v2.register_all(ks);
  auto now = v2.ok(ks[0].address, testing::job(3, v2.params.selection_seed_delay_views + 1));
  EXPECT_EQ(v2.job_of(*now.job_id).state, JobState::kAssigned);
  EXPECT_EQ(v2.committee_of(*now.job_id).size(), 3u);
  EXPECT_FALSE(v2.job_of(*now.job_id).pending);
  EXPECT_EQ(v2.effects.assigned.size(), 3u);
  EXPECT_TRUE(v2.effects.consumed_seeds.empty());
  v2.begin();  // the derived index has looked at the job: it never was a pending selection
  EXPECT_TRUE(v2.state.due.pending_submissions().empty());
}

// A chain of several validators with CIP-11 selection, K = 5, whose genesis
// holds the finality depth `f` (0: none named, as chains made before it).
void several_validators(Chain& c, std::uint64_t f) {
  c.params.present_first_enabled = true;
  c.params.multi_validator = true;
  c.params.selection_seed_delay_views = 5;
  c.finality_depth = f;
}

// docs/cip11.md choice 160 (§10.1): with several validators a committee is
// pushed only once its assignment block is final, F blocks after it, and
// that block comes at the earliest K + 1 blocks after S; the deadline is
// S + timeout_blocks, and a committee needs two blocks after the push, a
// commit and then a reveal. A timeout of K + 2 + F ends the job in the
// block of its commit, before any reveal: refused. One block more is taken.
// A chain whose genesis does not hold F (finality_depth 0 here) keeps the
// rule of the chains made before it, K + 1.
TEST(Cip11Chain, AnMOver1JobsTimeoutMustOutlastItsAssignmentBlocksFinality) {
  Chain c;
  several_validators(c, 4);
  const auto ks = keys(60, 3);
  c.register_all(ks);
  const std::uint64_t bound = c.params.selection_seed_delay_views + 2 + c.finality_depth;  // 11
  c.begin();
  EXPECT_EQ(c.tx(ks[0].address, testing::job(2, bound)).error, ChainError::kTimeoutTooShort);
  EXPECT_EQ(c.tx(ks[0].address, testing::job(2, bound - 1)).error, ChainError::kTimeoutTooShort);
  EXPECT_EQ(c.tx(ks[0].address, testing::job(2, c.params.selection_seed_delay_views + 2)).error,
            ChainError::kTimeoutTooShort);  // what a lone producer takes
  auto taken = c.tx(ks[0].address, testing::job(2, bound + 1));
  ASSERT_FALSE(taken.error) << chain_error_name(*taken.error);
  EXPECT_EQ(c.job_of(*taken.job_id).state, JobState::kPendingSelection);
  EXPECT_EQ(c.job_of(*taken.job_id).deadline_block, Height{c.height.value + bound + 1});  // §10.1: from S

  // Several validators, no F in the genesis: the old K + 1.
  Chain old;
  several_validators(old, 0);
  old.register_all(ks);
  old.begin();
  EXPECT_EQ(old.tx(ks[0].address, testing::job(2, old.params.selection_seed_delay_views + 1)).error,
            ChainError::kTimeoutTooShort);
  auto old_taken = old.tx(ks[0].address, testing::job(2, old.params.selection_seed_delay_views + 2));
  EXPECT_FALSE(old_taken.error) << chain_error_name(*old_taken.error);
}

// docs/cip11.md choice 165 (§10.1): an M = 1 job is assigned in S itself,
// deadline S + timeout_blocks, and pushed once S is final, at S + F. A
// timeout of F makes S + F its deadline block, in which no runner has been
// told yet: refused; F + 1 leaves the runner block S + F + 1. Without CIP-11
// selection an M > 1 job is drawn in S too, and its committee needs a commit
// and then a reveal: F + 1 refused, F + 2 taken. A lone producer (F = 0), and
// a chain whose genesis does not hold F, keep taking every timeout.
TEST(Cip11Chain, AnM1JobsTimeoutMustOutlastItsAssignmentBlocksFinality) {
  Chain c;
  several_validators(c, 4);
  const auto ks = keys(61, 3);
  c.register_all(ks);
  c.begin();
  EXPECT_EQ(c.tx(ks[0].address, testing::job(1, c.finality_depth)).error, ChainError::kTimeoutTooShort);
  EXPECT_EQ(c.tx(ks[0].address, testing::job(1, 1)).error, ChainError::kTimeoutTooShort);
  auto taken = c.tx(ks[0].address, testing::job(1, c.finality_depth + 1));
  ASSERT_FALSE(taken.error) << chain_error_name(*taken.error);
  EXPECT_EQ(c.job_of(*taken.job_id).state, JobState::kAssigned);  // drawn in S
  EXPECT_EQ(c.job_of(*taken.job_id).deadline_block, Height{c.height.value + c.finality_depth + 1});  // §10.1: from S

  // Without CIP-11 selection an M = 2 committee is drawn in S: one block more.
  Chain v2;
  v2.finality_depth = 4;
  v2.register_all(ks);
  v2.begin();
  EXPECT_EQ(v2.tx(ks[0].address, testing::job(2, v2.finality_depth)).error, ChainError::kTimeoutTooShort);
  EXPECT_EQ(v2.tx(ks[0].address, testing::job(2, v2.finality_depth + 1)).error, ChainError::kTimeoutTooShort);
  auto v2_taken = v2.tx(ks[0].address, testing::job(2, v2.finality_depth + 2));
  ASSERT_FALSE(v2_taken.error) << chain_error_name(*v2_taken.error);
  EXPECT_EQ(v2.job_of(*v2_taken.job_id).state, JobState::kAssigned);
  auto v2_one = v2.tx(ks[0].address, testing::job(1, v2.finality_depth + 1));  // M = 1 there: F + 1
  EXPECT_FALSE(v2_one.error) << chain_error_name(*v2_one.error);

  // A lone producer (F = 0): a one-block timeout is taken, as before.
  Chain lone;
  lone.params.present_first_enabled = true;
  lone.register_all(ks);
  lone.begin();
  auto one_block = lone.tx(ks[0].address, testing::job(1, 1));
  EXPECT_FALSE(one_block.error) << chain_error_name(*one_block.error);

  // Several validators, no F in the genesis: taken, as before.
  Chain old;
  old.params.present_first_enabled = true;
  old.params.multi_validator = true;
  old.register_all(ks);
  old.begin();
  auto old_one = old.tx(ks[0].address, testing::job(1, 1));
  EXPECT_FALSE(old_one.error) << chain_error_name(*old_one.error);
}

TEST(Cip11Chain, TimeoutReselectsWithoutTheRunnerThatTimedOut) {
  Chain c;
  c.params.max_selections = 3;
  auto ks = keys(60, 3);
  c.register_all(ks);
  auto out = c.ok(ks[0].address, testing::job(1, 4));
  const cip11::JobId id = *out.job_id;
  const Address first = c.committee_of(id).at(0);
  EXPECT_EQ(c.state.runners.at(first).active_jobs, 1u);
  const Height deadline = c.job_of(id).deadline_block;
  while (c.height < deadline) c.begin();
  EXPECT_EQ(c.committee_of(id).at(0), first);  // a result in the deadline block itself still counts
  c.begin();  // deadline + 1: re-selection
  ASSERT_EQ(c.job_of(id).selections, 2u);
  const Address second = c.committee_of(id).at(0);
  EXPECT_NE(second, first);
  EXPECT_EQ(c.job_of(id).excluded, std::vector<Address>{first});
  EXPECT_EQ(c.job_of(id).deadline_block, c.height + 4);  // current block + timeout_blocks
  EXPECT_EQ(c.state.runners.at(first).active_jobs, 0u);
  ASSERT_EQ(c.effects.ended.size(), 1u);
  EXPECT_EQ(c.effects.ended[0].reason, EndReason::kReassigned);
  // The old runner's result is refused now; after max_selections the job times out.
  EXPECT_EQ(c.tx(first, JobResultSubmit{id, Bytes{1}, Bytes32{}}).error, ChainError::kNotAssigned);
  for (int i = 0; i < 20; ++i) c.begin();
  EXPECT_EQ(c.job_of(id).state, JobState::kTimedOut);
  EXPECT_EQ(c.job_of(id).excluded.size(), 3u);
  for (const auto& k : ks) EXPECT_EQ(c.state.runners.at(k.address).active_jobs, 0u);
}

TEST(Cip11Chain, SingleRunnerSubmitsDirectlyAndOthersAreRefused) {
  Chain c;
  auto ks = keys(70, 2);
  c.register_all(ks);
  auto out = c.ok(ks[0].address, testing::job(1, 10));
  const cip11::JobId id = *out.job_id;
  const Address runner = c.committee_of(id).at(0);
  const Address other = runner == ks[0].address ? ks[1].address : ks[0].address;
  c.begin();
  const auto before = state_bytes(c.state);
  EXPECT_EQ(c.tx(other, JobResultSubmit{id, Bytes{1}, Bytes32{}}).error, ChainError::kNotAssigned);
  EXPECT_EQ(c.tx(runner, JobResultSubmit{JobId{Bytes32{7}}, Bytes{1}, Bytes32{}}).error, ChainError::kUnknownJob);
  EXPECT_EQ(state_bytes(c.state), before);
  EXPECT_FALSE(c.tx(runner, JobResultSubmit{id, Bytes{'o', 'k'}, Bytes32{}}).error);
  EXPECT_EQ(c.job_of(id).state, JobState::kCompleted);
  EXPECT_EQ(c.job_of(id).result, (Bytes{'o', 'k'}));
  EXPECT_EQ(c.tx(runner, JobResultSubmit{id, Bytes{1}, Bytes32{}}).error, ChainError::kJobClosed);
  EXPECT_EQ(c.state.runners.at(runner).active_jobs, 0u);
}

TEST(Cip11Chain, CommitBeforeRevealForCommittees) {
  Chain c;
  auto ks = keys(80, 3);
  c.register_all(ks);
  auto out = c.ok(ks[0].address, testing::job(3, 40));
  const cip11::JobId id = *out.job_id;
  while (c.job_of(id).state != JobState::kAssigned) c.begin();
  auto committee = c.committee_of(id);
  ASSERT_EQ(committee.size(), 3u);
  const Bytes result{'4', '2'};
  Bytes32 salt{};
  salt[0] = 9;
  auto commit = [&](const Address& r, ByteView res) { return JobResultCommit{id, result_commitment(id, r, res, salt)}; };
  EXPECT_EQ(c.tx(committee[0], JobResultSubmit{id, result, salt}).error, ChainError::kNoCommitment);
  EXPECT_FALSE(c.tx(committee[0], commit(committee[0], result)).error);
  EXPECT_EQ(c.tx(committee[0], commit(committee[0], result)).error, ChainError::kAlreadyCommitted);
  EXPECT_EQ(c.tx(committee[0], JobResultSubmit{id, result, salt}).error, ChainError::kNoCommitment);  // same block
  c.begin();
  EXPECT_EQ(c.tx(committee[0], JobResultSubmit{id, result, salt}).error, ChainError::kRevealWindowClosed);
  EXPECT_FALSE(c.tx(committee[1], commit(committee[1], result)).error);
  EXPECT_FALSE(c.tx(committee[2], commit(committee[2], Bytes{'x'})).error);
  c.begin();  // every commitment is in an earlier block: the window is open
  EXPECT_EQ(c.tx(committee[1], JobResultSubmit{id, Bytes{'4', '3'}, salt}).error, ChainError::kCommitmentMismatch);
  EXPECT_EQ(c.tx(committee[1], JobResultSubmit{id, result, Bytes32{}}).error, ChainError::kCommitmentMismatch);
  // One runner's commitment is not another's.
  EXPECT_FALSE(c.tx(committee[0], JobResultSubmit{id, result, salt}).error);
  EXPECT_EQ(c.job_of(id).state, JobState::kAssigned);
  // A second reveal from the same runner (a restarted runner's, say) is refused and changes nothing.
  const auto revealed = state_bytes(c.state);
  EXPECT_EQ(c.tx(committee[0], JobResultSubmit{id, result, salt}).error, ChainError::kAlreadyRevealed);
  EXPECT_EQ(state_bytes(c.state), revealed);
  EXPECT_FALSE(c.tx(committee[2], JobResultSubmit{id, Bytes{'x'}, salt}).error);
  EXPECT_EQ(c.job_of(id).state, JobState::kAssigned);  // 1 : 1, no majority of 3 yet
  EXPECT_FALSE(c.tx(committee[1], JobResultSubmit{id, result, salt}).error);
  EXPECT_EQ(c.job_of(id).state, JobState::kCompleted);
  EXPECT_EQ(c.job_of(id).result, result);
}

TEST(Cip11Chain, CommitteeWithoutAMajorityFails) {
  Chain c;
  auto ks = keys(90, 2);
  c.register_all(ks);
  auto out = c.ok(ks[0].address, testing::job(2, 40));
  const cip11::JobId id = *out.job_id;
  while (c.job_of(id).state != JobState::kAssigned) c.begin();
  auto committee = c.committee_of(id);
  Bytes32 salt{};
  for (std::size_t i = 0; i < 2; ++i) {
    Bytes r{static_cast<std::uint8_t>(i)};
    EXPECT_FALSE(c.tx(committee[i], JobResultCommit{id, result_commitment(id, committee[i], r, salt)}).error);
  }
  c.begin();
  for (std::size_t i = 0; i < 2; ++i) EXPECT_FALSE(c.tx(committee[i], JobResultSubmit{id, Bytes{static_cast<std::uint8_t>(i)}, salt}).error);
  EXPECT_EQ(c.job_of(id).state, JobState::kFailed);
}

TEST(Cip11Chain, PresenceFieldRulesInBothFlagStates) {
  ChainParams off, on;
  on.present_first_enabled = true;
  const Bytes malformed{0x01, 0x00, 0x0f, 0x00};  // a bitmap of 2 bytes for 4 runners (1 is right)
  PresentSet two(4);
  two.add(2);
  const Bytes good = encode_presence(two);
  // Rule 1: flag off, absent or malformed is the empty set.
  EXPECT_EQ(presence_of_block(off, std::nullopt, 4)->count(), 0u);
  EXPECT_EQ(presence_of_block(off, malformed, 4)->count(), 0u);
  EXPECT_EQ(*presence_of_block(off, good, 4), two);
  // Rule 2: flag on, exactly one well-formed field.
  EXPECT_FALSE(presence_of_block(on, std::nullopt, 4).ok());
  EXPECT_EQ(presence_of_block(on, malformed, 4).error(), Errc::kBadBitmapLength);
  EXPECT_EQ(*presence_of_block(on, good, 4), two);
  EXPECT_EQ(presence_of_block(on, encode_presence(PresentSet(4)), 4)->count(), 0u);  // a valid empty set
}

TEST(Cip11Chain, MruBiasesOnlyAfterItsActivationHeight) {
  auto ks = keys(100, 6);
  // How often a job goes to the previous job's runner, the MRU record's runner once active.
  auto winners = [&](std::uint64_t activation, bool present_first = true) {
    Chain c;
    c.params.present_first_enabled = present_first;
    c.params.mru_activation_height = Height{activation};
    c.register_all(ks);
    std::optional<Address> previous;
    std::size_t repeats = 0;
    for (int i = 0; i < 30; ++i) {
      auto next = c.ok(ks[0].address, testing::job(1, 10));
      const Address r = c.committee_of(*next.job_id).at(0);
      repeats += previous == r;
      previous = r;
      c.ok(r, JobResultSubmit{*next.job_id, Bytes{1}, Bytes32{}});
    }
    return std::pair(repeats, c.state.mru.size());
  };
  auto [dormant_repeats, dormant_records] = winners(UINT64_MAX);
  EXPECT_EQ(dormant_records, 0u);  // below activation no mru_key is written (§9.4)
  auto [active_repeats, active_records] = winners(0);
  EXPECT_EQ(active_records, 1u);
  EXPECT_GT(active_repeats, dormant_repeats);  // x4 weight at i == 0
  // MRU is part of CIP-11 selection: with the flag off it stays dormant above its activation height.
  EXPECT_EQ(winners(0, false).second, 0u);
}

}  // namespace
}  // namespace cowboy::cip11::chain
