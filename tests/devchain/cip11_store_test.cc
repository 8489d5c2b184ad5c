// The CIP-11 plane's storage: a block stages exactly the records it changed
// (and the poll view's keys follow the committees), a failed block rolls back
// to the committed state, and what is stored loads back to the same state.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <set>

#include "../cip11/chain_harness.h"
#include "../support/temp_dir.h"
#include "cip11/chain/codec.h"
#include "devchain/cip11_store.h"

namespace cowboy::devchain {
namespace {

namespace chain = cip11::chain;
using chain::testing::key;

std::string runner_key(const Address& a) { return "c11/runner/" + std::string(a.begin(), a.end()); }
std::string job_key(const cip11::JobId& id) { return "c11/job/" + std::string(id.value.begin(), id.value.end()); }
std::string assigned_key(const Address& a, const cip11::JobId& id) {
  return "c11/assigned/" + std::string(a.begin(), a.end()) + std::string(id.value.begin(), id.value.end());
}
std::string index_key(std::uint32_t i) { return "c11/index/" + std::string({0, 0, 0, static_cast<char>(i)}); }
const std::string kCounter = "c11/jobs_submitted";

/// The keys a block's batch puts and deletes.
struct Staged : rocksdb::WriteBatch::Handler {
  std::set<std::string> puts, deletes;
  void Put(const rocksdb::Slice& k, const rocksdb::Slice&) override { puts.insert(k.ToString()); }
  void Delete(const rocksdb::Slice& k) override { deletes.insert(k.ToString()); }
};

Staged staged(const chain::State& state) {
  rocksdb::WriteBatch batch;
  cip11_store::stage(state, batch);
  Staged out;
  EXPECT_TRUE(batch.Iterate(&out).ok());
  return out;
}

struct Cip11StoreTest : ::testing::Test {
  chain::testing::Chain c;
  std::vector<chain::testing::Key> ks{key(1), key(2), key(3)};
  void SetUp() override { c.register_all(ks); }  // not committed: so far is one block's changes
};

TEST_F(Cip11StoreTest, ABlockStagesExactlyTheRecordsItChanged) {
  c.state.commit();
  // A heartbeat changes one runner record and nothing else.
  c.ok(ks[1].address, chain::RunnerHeartbeat{});
  auto s = staged(c.state);
  EXPECT_EQ(s.puts, (std::set<std::string>{runner_key(ks[1].address)}));
  EXPECT_TRUE(s.deletes.empty());
  c.state.commit();

  // A block with nothing in it (no job due) stages nothing.
  c.begin();
  EXPECT_TRUE(staged(c.state).puts.empty());
  c.state.commit();

  // A refused instruction looked the sender up and changed nothing.
  c.begin();
  EXPECT_TRUE(c.tx(ks[0].address, chain::testing::registration(ks[0])).error);
  EXPECT_TRUE(staged(c.state).puts.empty());
  c.state.commit();

  // A job: its record, the counter, the assigned runner's record and its poll-view key.
  auto job = c.ok(ks[2].address, chain::testing::job(1, 10));
  const cip11::JobId id = *job.job_id;
  const Address runner = c.committee_of(id).at(0);
  s = staged(c.state);
  EXPECT_EQ(s.puts, (std::set<std::string>{job_key(id), kCounter, runner_key(runner), assigned_key(runner, id)}));
  c.state.commit();

  // Its result ends the assignment: the poll-view key goes.
  c.ok(runner, chain::JobResultSubmit{id, Bytes{'o', 'k'}, Bytes32{}});
  s = staged(c.state);
  EXPECT_EQ(s.puts, (std::set<std::string>{job_key(id), runner_key(runner)}));
  EXPECT_EQ(s.deletes, (std::set<std::string>{assigned_key(runner, id)}));
  c.state.commit();

  // A new registration appends its index entry.
  const auto newcomer = key(4);
  c.fund(newcomer);
  c.ok(newcomer.address, chain::testing::registration(newcomer));
  EXPECT_EQ(staged(c.state).puts, (std::set<std::string>{runner_key(newcomer.address), index_key(3)}));
}

TEST_F(Cip11StoreTest, RollbackReturnsToTheCommittedStateAndItsDueTimes) {
  c.state.commit();
  auto job = c.ok(ks[0].address, chain::testing::job(1, 10));
  c.state.commit();
  const chain::State before = c.state;
  const cip11::JobId id = *job.job_id;
  // A block that completes the job and registers a runner, then its write "fails".
  const Address runner = c.committee_of(id).at(0);
  c.ok(runner, chain::JobResultSubmit{id, Bytes{'o', 'k'}, Bytes32{}});
  const auto newcomer = key(4);
  c.fund(newcomer);
  c.tx(newcomer.address, chain::testing::registration(newcomer));
  ASSERT_NE(c.state, before);
  c.state.rollback();
  EXPECT_EQ(c.state, before);
  EXPECT_EQ(c.state.index.size(), 3u);
  EXPECT_TRUE(staged(c.state).puts.empty());
  // The job is still due at its deadline: with no result it is re-selected then.
  for (cip11::Height h = c.height; h < c.job_of(id).deadline_block; ++h) c.begin();
  EXPECT_EQ(c.job_of(id).selections, 1u);
  c.begin();
  EXPECT_EQ(c.job_of(id).selections, 2u);
}

TEST_F(Cip11StoreTest, WhatIsStoredLoadsBackToTheSameState) {
  cowboy::testing::TempDir dir;
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, (dir.path() / "db").string(), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  auto write_block = [&] {
    rocksdb::WriteBatch batch;
    cip11_store::stage(c.state, batch);
    ASSERT_TRUE(db->Write({}, &batch).ok());
    c.state.commit();
  };
  write_block();  // the registrations, as a genesis block writes its runners
  c.params.mru_activation_height = cip11::Height{0};  // so a completion writes an MRU record too
  c.params.present_first_enabled = true;  // MRU and M > 1 pending selections are CIP-11 selection (§13)
  auto job = c.ok(ks[0].address, chain::testing::job(1, 10));
  write_block();
  c.ok(c.committee_of(*job.job_id).at(0), chain::JobResultSubmit{*job.job_id, Bytes{'o', 'k'}, Bytes32{}});
  write_block();
  c.ok(ks[1].address, chain::testing::job(2, 12));  // pending, with its candidate snapshot
  write_block();
  ASSERT_EQ(c.state.mru.size(), 1u);
  // A Mode A presence proof (docs/cip11.md choice 72): one key per runner.
  c.begin();
  c.state.presence[ks[2].address] = chain::PresenceProof{c.height - 1, c.height - 1 + chain::kPresenceProofTtlBlocks};
  EXPECT_EQ(staged(c.state).puts,
            (std::set<std::string>{"c11/presence/" + std::string(ks[2].address.begin(), ks[2].address.end())}));
  write_block();

  auto loaded = cip11_store::load(*db);
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(*loaded, c.state);
  auto jobs = cip11_store::runner_jobs(*db, {}, c.committee_of(*job.job_id).at(0));
  EXPECT_TRUE(jobs->empty());
}

}  // namespace
}  // namespace cowboy::devchain
