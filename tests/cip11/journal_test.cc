// The runner's journal (cip11/runner/journal.h) on real RocksDB: what one
// synced write records survives the process being SIGKILLed, a store
// belongs to one chain and key, its state directory follows the
// data-directory rule (common/data_dir.h), the bounds hold, and the stored
// forms are pinned byte for byte.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "../support/data_dir_layouts.h"
#include "../support/temp_dir.h"
#include "cip11/runner/journal.h"

namespace cowboy::cip11 {
namespace {

Bytes32 filled32(std::uint8_t b) {
  Bytes32 x;
  x.fill(b);
  return x;
}

Obligation obligation(std::uint8_t id) {
  Obligation o;
  o.job_id = JobId{filled32(id)};
  o.runners = 2;
  o.result = Bytes{'4', '2'};
  o.salt = filled32(0x55);
  o.commit_tx = filled32(0xc0);
  return o;
}

struct Cip11TxJournal : ::testing::Test {
  cowboy::testing::TempDir dir;
  const Bytes32 chain = filled32(0xc1);
  const Address runner = [] {
    Address a;
    a.fill(0xaa);
    return a;
  }();
  std::unique_ptr<TxJournal> open(JournalLimits limits = {}) {
    auto j = TxJournal::open(dir.path() / "state", chain, runner, limits);
    EXPECT_TRUE(j.ok()) << (j.ok() ? "" : j.error());
    return j.ok() ? std::move(*j) : nullptr;
  }
};

TEST_F(Cip11TxJournal, WhatOneSyncedWriteRecordedSurvivesASigkill) {
  const RetainedTx commit{filled32(0xc0), 7, Bytes{1, 2, 3}};
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // records, then dies without closing anything
    auto j = TxJournal::open(dir.path() / "state", chain, runner);
    if (!j || !(*j)->record(commit, 8, obligation(1))) ::_exit(1);
    ::raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  auto j = open();
  auto contents = j->load();
  ASSERT_TRUE(contents.ok()) << contents.error();
  EXPECT_EQ(contents->next_nonce, 8u);
  EXPECT_EQ(contents->transactions, std::vector<RetainedTx>{commit});
  EXPECT_EQ(contents->obligations, std::vector<Obligation>{obligation(1)});

  // The reveal replaces the obligation in the same write as its transaction; forgetting is final.
  Obligation revealed = obligation(1);
  revealed.reveal_tx = filled32(0xd0);
  ASSERT_TRUE(j->record(RetainedTx{filled32(0xd0), 8, Bytes{4}}, 9, revealed));
  j->forget_transaction(commit.hash);
  j.reset();
  j = open();
  contents = j->load();
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(contents->next_nonce, 9u);
  ASSERT_EQ(contents->transactions.size(), 1u);
  EXPECT_EQ(contents->transactions[0].hash, filled32(0xd0));
  EXPECT_EQ(contents->obligations, std::vector<Obligation>{revealed});
  j->forget_obligation(revealed.job_id);
  EXPECT_TRUE(j->load()->obligations.empty());
}

TEST_F(Cip11TxJournal, AStoreBelongsToOneChainAndOneKey) {
  ASSERT_TRUE(open());
  Address other = runner;
  other[0] ^= 1;
  auto wrong_key = TxJournal::open(dir.path() / "state", chain, other);
  ASSERT_FALSE(wrong_key.ok());
  EXPECT_NE(wrong_key.error().find("another chain or runner key"), std::string::npos) << wrong_key.error();
  EXPECT_FALSE(TxJournal::open(dir.path() / "state", filled32(0xc2), runner).ok());
}

// docs/operations.md, "Data directories": a directory of other files is
// refused and left as it was; a symlink to an empty directory (or an empty
// mount point) gets the journal inside it; a creation cut short is built again.
TEST_F(Cip11TxJournal, TheStateDirectoryIsADataDirectory) {
  const auto foreign = dir.path() / "foreign";
  std::filesystem::create_directories(foreign / "photos");
  std::ofstream(foreign / "notes.txt") << "mine";
  auto refused = TxJournal::open(foreign, chain, runner);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("refusing " + foreign.string() + ": it is not empty (notes.txt, photos)"), std::string::npos)
      << refused.error();
  EXPECT_NE(refused.error().find("cip11-runner state directory"), std::string::npos) << refused.error();
  EXPECT_EQ(cowboy::testing::names_in(foreign), (std::vector<std::string>{"notes.txt", "photos"}));

  const auto link = cowboy::testing::symlink_to_empty_dir(dir.path() / "linked").dir;
  ASSERT_TRUE(TxJournal::open(link, chain, runner).ok());
  EXPECT_EQ(cowboy::testing::names_in(dir.path() / "linked.target"), std::vector<std::string>{"journal.rocksdb"});

  // A kill during creation: the marker, and a store whose CURRENT names a MANIFEST never written.
  const auto cut = dir.path() / "cut";
  std::filesystem::create_directories(cut / "journal.rocksdb");
  std::ofstream(cut / ".creating");
  std::ofstream(cut / "journal.rocksdb" / "CURRENT") << "MANIFEST-000099\n";
  auto rebuilt = TxJournal::open(cut, chain, runner);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error();
  EXPECT_TRUE((*rebuilt)->record(RetainedTx{filled32(0x01), 0, Bytes{1}}, 1, std::nullopt));
  EXPECT_EQ(cowboy::testing::names_in(cut), std::vector<std::string>{"journal.rocksdb"});
}

TEST_F(Cip11TxJournal, RecordsBeyondTheBoundsAreRefusedAndNothingIsWritten) {
  const JournalLimits limits{8, 4};
  auto j = open(limits);
  for (std::size_t i = 0; i < limits.obligations; ++i) {
    Obligation o = obligation(0);
    o.job_id.value[0] = static_cast<std::uint8_t>(i);
    o.job_id.value[1] = static_cast<std::uint8_t>(i >> 8);
    Bytes32 hash = o.job_id.value;
    hash[31] = 0x77;
    ASSERT_TRUE(j->record(RetainedTx{hash, i, Bytes{1}}, i + 1, o)) << i;
  }
  Obligation one_more = obligation(0);
  one_more.job_id.value.fill(0xee);
  EXPECT_FALSE(j->record(RetainedTx{filled32(0xef), 9999, Bytes{1}}, 10'000, one_more));
  auto contents = j->load();
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(contents->obligations.size(), limits.obligations);
  EXPECT_EQ(contents->next_nonce, limits.obligations);  // the refused record moved nothing
  // An existing job's obligation may still be replaced (its reveal).
  Obligation first = obligation(0);
  first.job_id.value[0] = 0;
  first.job_id.value[1] = 0;
  first.reveal_tx = filled32(0xd1);
  EXPECT_TRUE(j->record(RetainedTx{filled32(0xd1), limits.obligations, Bytes{2}}, limits.obligations + 1, first));
  // A store holding more than its bounds is refused when opened with smaller ones.
  j.reset();
  auto smaller = TxJournal::open(dir.path() / "state", chain, runner, JournalLimits{8, 2});
  ASSERT_FALSE(smaller.ok());
  EXPECT_NE(smaller.error().find("too many jobs"), std::string::npos) << smaller.error();
}

TEST_F(Cip11TxJournal, StoredFormsArePinnedAndDecodingIsStrict) {
  const RetainedTx tx{filled32(0x11), 0x0102, Bytes{0xab}};
  Bytes expected{0x01};
  expected.insert(expected.end(), 32, 0x11);
  for (std::uint8_t b : {0, 0, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 1, 0xab}) expected.push_back(b);
  EXPECT_EQ(encode_retained(tx), expected);
  EXPECT_EQ(decode_retained(expected).value(), tx);
  Bytes trailing = expected;
  trailing.push_back(0);
  EXPECT_FALSE(decode_retained(trailing).ok());
  Bytes bad_version = expected;
  bad_version[0] = 2;
  EXPECT_FALSE(decode_retained(bad_version).ok());

  Bytes o = encode_obligation(obligation(3));
  EXPECT_EQ(decode_obligation(o).value(), obligation(3));
  Obligation zero = obligation(3);
  zero.runners = 0;
  EXPECT_FALSE(decode_obligation(encode_obligation(zero)).ok());  // a committee has at least one member
  o.resize(o.size() - 1);
  EXPECT_FALSE(decode_obligation(o).ok());
}

}  // namespace
}  // namespace cowboy::cip11
