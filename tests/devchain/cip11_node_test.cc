// The devchain's CIP-11 plane end to end in process: signed transactions,
// durable blocks with their presence field, the observer and restarts.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cip11/chain_harness.h"
#include "../support/temp_dir.h"
#include "devchain/node.h"
#include "scenario.h"

namespace cowboy::devchain {
namespace {

namespace chain = cip11::chain;
using chain::testing::key;
using chain::testing::Key;

struct Cip11Fixture : ::testing::Test {
  cowboy::testing::TempDir dir;
  NodeConfig config{dir.path(), std::chrono::milliseconds(5)};
  std::vector<Key> runners{key(1), key(2), key(3), key(4)};
  Key submitter = key(9);

  GenesisSpec genesis(bool present_first = true, bool shadow = false) const {
    GenesisSpec g = testing::genesis_for(testing::secret(1));
    for (const auto& k : runners) g.balances.emplace_back(k.address, 1'000'000);
    g.balances.emplace_back(submitter.address, 1'000'000);
    Cip11Genesis c;
    c.params.chain_id = 7;
    c.params.present_first_enabled = present_first;
    c.params.presence_shadow_enabled = shadow;
    c.validators.push_back({crypto::Ed25519Public{}, "127.0.0.1:7443"});
    g.cip11 = c;
    return g;
  }
  std::unique_ptr<Node> open(const std::filesystem::path& at, bool present_first = true, bool shadow = false) {
    NodeConfig c = config;
    c.data_dir = at;
    auto node = Node::open(c, genesis(present_first, shadow));
    EXPECT_TRUE(node.ok()) << (node.ok() ? "" : node.error());
    return node.ok() ? std::move(*node) : nullptr;
  }
  static Transaction signed_tx(Node& node, const Key& k, const chain::Instruction& instruction) {
    Transaction tx{*node.chain_instance_id(), node.account_info(k.address)->next_nonce,
                   Cip11Call{chain::encode_instruction(instruction)}, {}};
    EXPECT_TRUE(sign_tx(tx, k.secret));
    return tx;
  }
  /// Submits, produces a block, returns the receipt.
  static TxReceipt run(Node& node, const Key& k, const chain::Instruction& instruction) {
    auto hash = node.submit(signed_tx(node, k, instruction));
    EXPECT_TRUE(hash.ok()) << (hash.ok() ? "" : hash.error().message);
    EXPECT_TRUE(node.produce_block().ok());
    return **node.receipt(*hash);
  }
};

TEST_F(Cip11Fixture, RegistryIndexPinThroughSignedTransactions) {
  auto node = open(dir.path() / "a");
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(run(*node, runners[i], chain::testing::registration(runners[i])).ok());
  EXPECT_TRUE(run(*node, runners[1], chain::SetRunnerHealth{cip11::HealthStatus::kPaused}).ok());
  auto list = node->runners();
  ASSERT_EQ(list->size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*list)[i].address, runners[i].address);
  EXPECT_EQ((*list)[1].health, cip11::HealthStatus::kPaused);
  EXPECT_TRUE(run(*node, runners[3], chain::testing::registration(runners[3])).ok());
  list = node->runners();
  ASSERT_EQ(list->size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*list)[i].address, runners[i].address);
  // A refused instruction names its rule in the receipt.
  auto r = run(*node, runners[0], chain::testing::registration(runners[0]));
  EXPECT_EQ(r.error, "RunnerExists");
}

TEST_F(Cip11Fixture, ResubmittingTheSameTransactionIsIdempotent) {
  auto node = open(dir.path() / "a");
  auto tx = signed_tx(*node, runners[0], chain::testing::registration(runners[0]));
  auto first = node->submit(tx);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*node->submit(tx), *first);  // pending
  ASSERT_TRUE(node->produce_block().ok());
  EXPECT_EQ(*node->submit(tx), *first);  // included
  ASSERT_TRUE(node->produce_block().ok());
  EXPECT_EQ(node->account_info(runners[0].address)->next_nonce, 1u);  // applied once
  EXPECT_TRUE((*node->receipt(*first))->ok());
}

TEST_F(Cip11Fixture, EveryBlockCarriesThePresenceFieldTheRulesAllow) {
  enum class Flags { kNone, kShadow, kPresentFirst };
  for (Flags flags : {Flags::kNone, Flags::kShadow, Flags::kPresentFirst}) {
    auto node = open(dir.path() / std::to_string(static_cast<int>(flags)), flags == Flags::kPresentFirst,
                     flags == Flags::kShadow);
    const Bytes malformed{0x01, 0x07};
    int asked = 0;
    node->set_presence_provider([&](std::uint64_t, std::uint32_t) { return ++asked, malformed; });
    auto h = node->produce_block();
    ASSERT_TRUE(h.ok());
    auto p = node->block_presence(*h);
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(p->present.empty());
    switch (flags) {
      case Flags::kNone:  // nothing reads the field (§14 Phase 1 without shadow): none is asked for or carried
        EXPECT_EQ(asked, 0);
        EXPECT_FALSE(p->field);
        break;
      case Flags::kShadow:  // the proposer's bytes are kept for the shadow draw and read as empty (rule 1)
        EXPECT_EQ(asked, 1);
        EXPECT_EQ(p->field, malformed);
        break;
      case Flags::kPresentFirst:  // this proposer writes a valid empty set instead (rule 2)
        EXPECT_EQ(asked, 1);
        EXPECT_EQ(p->field, cip11::encode_presence(cip11::PresentSet(0)));
        break;
    }
  }
}

TEST_F(Cip11Fixture, TheObserverSeesAssignmentsOnceDurableAndThePollEndpointListsThem) {
  auto node = open(dir.path() / "a");
  std::vector<chain::AssignmentNotice> seen;
  node->set_block_observer([&](const CommittedBlock& b) {
    for (const auto& a : b.effects.assigned) seen.push_back(a);
  });
  ASSERT_TRUE(run(*node, runners[0], chain::testing::registration(runners[0])).ok());
  node->set_presence_provider([](std::uint64_t, std::uint32_t n) {
    cip11::PresentSet s(n);
    if (n > 0) s.add(0);
    return cip11::encode_presence(s);
  });
  auto receipt = run(*node, submitter, chain::testing::job(1, 10));
  ASSERT_TRUE(receipt.ok());
  ASSERT_TRUE(receipt.job_id);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].job_id, *receipt.job_id);
  EXPECT_EQ(seen[0].runner, runners[0].address);
  EXPECT_EQ(seen[0].deadline_block, cip11::Height{receipt.height + 10});
  auto polled = node->runner_jobs(runners[0].address);
  ASSERT_EQ(polled->size(), 1u);
  EXPECT_EQ((*polled)[0].job_id, *receipt.job_id);
  auto done = run(*node, runners[0], chain::JobResultSubmit{*receipt.job_id, Bytes{'o', 'k'}, Bytes32{}});
  EXPECT_TRUE(done.ok());
  EXPECT_EQ(node->job(*receipt.job_id)->state, chain::JobState::kCompleted);
  EXPECT_TRUE(node->runner_jobs(runners[0].address)->empty());
  auto foreign = run(*node, runners[1], chain::JobResultSubmit{*receipt.job_id, Bytes{1}, Bytes32{}});
  EXPECT_EQ(foreign.error, "JobClosed");
}

// The same blocks produce the same state whether or not the node was killed
// in between: a child process runs half of them and SIGKILLs itself.
TEST_F(Cip11Fixture, SigkillRestartReplaysToTheSameCommitteesAndState) {
  auto script = [&](Node& node, int from, int to) {
    node.set_presence_provider([](std::uint64_t h, std::uint32_t n) {
      cip11::PresentSet s(n);
      for (std::uint32_t i = 0; i < n; ++i)
        if ((i + h) % 3 == 0) s.add(i);
      return cip11::encode_presence(s);
    });
    for (int step = from; step < to; ++step) {
      if (step < 4) run(node, runners[step], chain::testing::registration(runners[step]));
      else if (step % 3 == 0) run(node, submitter, chain::testing::job(step % 2 == 0 ? 1 : 2, 12));
      else ASSERT_TRUE(node.produce_block().ok());
    }
  };
  const auto killed = dir.path() / "killed", reference = dir.path() / "reference";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto node = open(killed);
    script(*node, 0, 20);
    raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  {
    auto node = open(killed);
    EXPECT_EQ(*node->height(), 20u);
    script(*node, 20, 40);
  }
  auto a = open(killed);
  auto b = open(reference);
  script(*b, 0, 40);
  ASSERT_EQ(*a->height(), *b->height());
  EXPECT_EQ(a->state_hash(), b->state_hash());
  for (std::uint64_t h = 1; h <= *a->height(); ++h)
    EXPECT_EQ(a->block_presence(h)->field, b->block_presence(h)->field);
  // The records as the store serves them, each read from its own key.
  std::size_t assigned = 0;
  auto listed = b->runners();
  ASSERT_EQ(*a->runners(), *listed);
  for (const auto& r : *listed) {
    auto jobs = b->runner_jobs(r.address);
    EXPECT_EQ(*a->runner_jobs(r.address), *jobs);
    for (const auto& j : *jobs) EXPECT_EQ(*a->job(j.job_id), j);
    assigned += jobs->size();
  }
  EXPECT_GT(assigned, 0u);  // the script left jobs in flight, so committees were compared too
}

// A block that leaves a committee empty - its one runner timed out, the other
// registered runner deregistered, so the re-selection draws nobody - writes
// that job, the freed runner and the poll view, so a restart serves exactly
// what the node served before it.
TEST_F(Cip11Fixture, ACommitteeLeftEmptyIsStoredAndARestartServesTheSame) {
  const auto at = dir.path() / "chain";
  cip11::JobId id{};
  chain::JobRecord served;
  Bytes32 state_hash{};
  {
    auto node = open(at);
    ASSERT_TRUE(run(*node, runners[0], chain::testing::registration(runners[0])).ok());
    ASSERT_TRUE(run(*node, runners[1], chain::testing::registration(runners[1])).ok());
    ASSERT_TRUE(run(*node, runners[1], chain::DeregisterRunner{}).ok());
    auto submitted = run(*node, submitter, chain::testing::job(1, 3));
    ASSERT_TRUE(submitted.ok()) << submitted.error.value_or("");
    id = *submitted.job_id;
    ASSERT_EQ(node->job(id)->committee.size(), 1u);
    ASSERT_EQ(node->runner_jobs(runners[0].address)->size(), 1u);
    while (node->job(id)->selections < 2) ASSERT_TRUE(node->produce_block().ok());
    served = *node->job(id);
    ASSERT_EQ(served.state, chain::JobState::kAssigned);
    ASSERT_TRUE(served.committee.empty()) << "the only eligible runner timed out and is excluded";
    EXPECT_TRUE(node->runner_jobs(runners[0].address)->empty());
    EXPECT_EQ(node->runner(runners[0].address)->active_jobs, 0u);
    state_hash = node->state_hash();
  }
  auto node = open(at);
  EXPECT_EQ(*node->job(id), served);
  EXPECT_TRUE(node->runner_jobs(runners[0].address)->empty());
  EXPECT_EQ(node->runner(runners[0].address)->active_jobs, 0u);
  EXPECT_EQ(node->runner(runners[1].address)->health, cip11::HealthStatus::kDeregistered);
  EXPECT_EQ(node->state_hash(), state_hash);
  // And the chain goes on from it: the empty committee ends at its deadline.
  while (node->job(id)->state == chain::JobState::kAssigned) ASSERT_TRUE(node->produce_block().ok());
  EXPECT_EQ(node->job(id)->state, chain::JobState::kTimedOut);
}

// docs/cip11.md choice 136: the CIP11_PRESENCE_SHADOW_ENABLED book is
// telemetry kept in memory, outside the store and every state root. A restart
// drops its records, so the job's re-selection after it has no shadow draw;
// the chain itself - state, committees - is the one the same blocks make
// without the restart.
TEST_F(Cip11Fixture, ARestartDropsTheShadowRecordsAndLeavesTheChainAsItWas) {
  struct Out {
    Bytes32 state_hash{};
    chain::JobRecord job;
    std::vector<chain::ShadowDraw> shadow;  // every shadow draw the producer's blocks carried
    std::size_t records_after_submit = 0, records_after_open = 0, records_at_end = 0;
  };
  auto go = [&](const std::string& name, bool restart) {
    Out o;
    const auto at = dir.path() / name;
    auto observed = [&] {
      auto node = open(at, false, true);
      node->set_block_observer([&o](const CommittedBlock& b) {
        for (const auto& d : b.effects.shadow) o.shadow.push_back(d);
      });
      return node;
    };
    auto node = observed();
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(run(*node, runners[i], chain::testing::registration(runners[i])).ok());
    auto submitted = run(*node, submitter, chain::testing::job(1, 3));
    EXPECT_TRUE(submitted.ok() && submitted.job_id);
    const cip11::JobId id = submitted.job_id.value_or(cip11::JobId{});
    o.records_after_submit = node->shadow_records();
    if (restart) {
      node.reset();
      node = observed();
    }
    o.records_after_open = node->shadow_records();
    for (int i = 0; i < 20 && node->job(id)->selections < 2; ++i) EXPECT_TRUE(node->produce_block().ok());
    o.job = *node->job(id);
    o.state_hash = node->state_hash();
    for (int i = 0; i < 40 && !chain::terminal(node->job(id)->state); ++i) EXPECT_TRUE(node->produce_block().ok());
    EXPECT_TRUE(chain::terminal(node->job(id)->state));
    o.records_at_end = node->shadow_records();
    return o;
  };
  const Out kept = go("kept", false), restarted = go("restarted", true);
  EXPECT_EQ(kept.records_after_submit, 1u);
  EXPECT_EQ(restarted.records_after_submit, 1u);
  EXPECT_EQ(kept.records_after_open, 1u);
  EXPECT_EQ(restarted.records_after_open, 0u) << "the book is not stored: a restart drops it";
  EXPECT_EQ(restarted.job, kept.job);
  EXPECT_EQ(restarted.job.selections, 2u);
  EXPECT_EQ(restarted.state_hash, kept.state_hash);
  // Without the restart every committee has its shadow; after it, only the first had.
  ASSERT_EQ(kept.shadow.size(), 3u);  // max_selections committees
  for (std::uint32_t n = 0; n < 3; ++n) EXPECT_EQ(kept.shadow[n].selection, n + 1);
  ASSERT_EQ(restarted.shadow.size(), 1u);
  EXPECT_EQ(restarted.shadow[0].selection, 1u);
  EXPECT_EQ(restarted.shadow[0].shadow, kept.shadow[0].shadow);
  EXPECT_EQ(kept.records_at_end, 0u);  // an ended job's record leaves the book
}

TEST_F(Cip11Fixture, AnOlderStoreIsRefusedByName) {
  const auto at = dir.path() / "old";
  { auto node = open(at); }
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), (at / "chain.rocksdb").string(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    // What a devchain of store version 2 wrote: the whole state under one key.
    ASSERT_TRUE(db->Put({}, "state", std::string(1, '\x02') + "whole state").ok());
  }
  NodeConfig c = config;
  c.data_dir = at;
  auto node = Node::open(c, genesis());
  ASSERT_FALSE(node.ok());
  EXPECT_NE(node.error().find("state version 2"), std::string::npos) << node.error();
}

}  // namespace
}  // namespace cowboy::devchain
