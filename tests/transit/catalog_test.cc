// The immutable catalog (docs/transit.md, decision 130): a process record is
// a version under the position that decided it, never overwritten, so the
// state at any published position stays readable exactly; the node keeps a
// bounded number of records in memory and reads the rest from disk.
#include "state_fixture.h"
#include "store_probe.h"
#include "transit/node/catalog.h"

namespace cowboy::transit {
namespace {

class CatalogTest : public StateTest {
 protected:
  void SetUp() override {
    resident_processes_ = 2;  // far fewer than the processes below: most reads go to disk
    StateTest::SetUp();
  }
  std::vector<ProcessSummary> listed() {
    std::vector<ProcessSummary> all;
    std::optional<Cursor> cursor;
    do {
      auto page = answer<ProcessPage>(*admin_, ListProcesses{cursor});
      all.insert(all.end(), page.items.items.begin(), page.items.items.end());
      cursor = page.cursor;
    } while (cursor);
    return all;
  }
};

TEST_F(CatalogTest, EachDecisionAddsAProcessVersionAndEveryEarlierPositionStillReadsAsItWas) {
  const Id created = accept(*admin_, CreateProcess{9, {}}).position;
  const Id initialized = accept(*admin_, Initialize{9, 0}).position;
  const Id owned = accept(*admin_, Own{9, 1}).position;
  EXPECT_EQ(process_info(*admin_, 9).generation, 2u);
  admin_.reset();
  node_.reset();
  auto db = testing::open_store(dir_);
  EXPECT_EQ(testing::table_keys(*db, node::layout::kProcesses).size(), 3u);  // one per decision, none overwritten
  node::Catalog catalog(*db, nullptr, nullptr);
  EXPECT_FALSE(catalog.process(9, created - 1));
  const auto at_created = catalog.process(9, created);
  const auto at_initialized = catalog.process(9, initialized);
  const auto at_owned = catalog.process(9, owned);
  ASSERT_TRUE(at_created && at_initialized && at_owned);
  EXPECT_FALSE(at_created->initialized);
  EXPECT_EQ(at_created->generation, 0u);
  EXPECT_TRUE(at_initialized->initialized);
  EXPECT_EQ(at_initialized->generation, 1u);
  EXPECT_FALSE(at_initialized->owner);
  EXPECT_EQ(at_owned->generation, 2u);
  EXPECT_EQ(at_owned->owner, std::optional<Id>(1));
  EXPECT_EQ(catalog.process(9, owned + 100), at_owned);  // nothing decided since
  // A listing as of a position shows each process as that position left it.
  std::vector<node::ProcessRecord> then;
  catalog.processes(0, initialized, [&](const node::ProcessRecord& r) {
    then.push_back(r);
    return true;
  });
  ASSERT_EQ(then.size(), 1u);
  EXPECT_EQ(then[0], *at_initialized);
  then.clear();
  catalog.processes(0, created - 1, [&](const node::ProcessRecord& r) {
    then.push_back(r);
    return true;
  });
  EXPECT_TRUE(then.empty());
}

TEST_F(CatalogTest, WithTwoRecordsResidentEveryDecisionAndReadSeesEveryStoredProcessAndARestartLoadsNone) {
  const Id doc = resource("doc");
  for (Id pid = 10; pid < 22; ++pid) process(doc, pid);  // initialized: generation 1
  for (Id pid = 10; pid < 22; pid += 3) EXPECT_EQ(ok<ProcessChanged>(admin_->submit(Own{pid, 1})).generation, 2u);
  const auto expected_generation = [](Id pid) -> Id { return (pid - 10) % 3 == 0 ? 2 : 1; };
  for (Id pid = 10; pid < 22; ++pid) {
    const auto info = process_info(*admin_, pid);
    EXPECT_EQ(info.generation, expected_generation(pid)) << pid;
    EXPECT_EQ(info.state, expected_generation(pid) == 2 ? ProcessState::kOwned : ProcessState::kIdle) << pid;
  }
  // A PID is never allocated twice, whether its record is in memory or not.
  for (Id pid : {Id{10}, Id{15}, Id{21}})
    EXPECT_EQ(refused(admin_->submit(CreateProcess{pid, {}})).reason, Reason::kSubjectTaken) << pid;
  // The listing pages through every process in PID order, read from disk.
  const auto before = listed();
  ASSERT_EQ(before.size(), 12u);
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].pid, 10 + i);
    EXPECT_EQ(before[i].generation, expected_generation(before[i].pid));
  }
  // A turn of a process long out of memory goes on from its stored record.
  auto turn = ok<TurnPublished>(admin_->submit(Turn{10, 2, std::nullopt, doc, std::nullopt, {{{key("a"), value("b")}}},
                                                    {}, {}, {}, std::nullopt}));
  EXPECT_EQ(turn.pid, 10u);
  const auto after_turn = listed();
  admin_.reset();
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_TRUE(listed() == after_turn);
  EXPECT_EQ(ok<ProcessChanged>(admin_->submit(Own{11, 1})).generation, 2u);
}

TEST_F(CatalogTest, AJournalOfAnotherStorageFormatIsRefusedAsItOpens) {
  accept(*admin_, CreateProcess{9, {}});
  admin_.reset();
  node_.reset();
  const auto open_error = [&] {
    node::NodeConfig config;
    config.data_dir = dir_;
    auto n = node::Node::open(config, clock_);
    return n.ok() ? std::string("opened") : n.error();
  };
  const auto set_format = [&](std::optional<std::string> format) {
    auto db = testing::open_store(dir_);
    rocksdb::WriteOptions synced;
    synced.sync = true;
    ASSERT_TRUE((format ? db->Put(synced, node::layout::kFormat, *format) : db->Delete(synced, node::layout::kFormat)).ok());
  };
  set_format(std::nullopt);  // as a build before process versions left it
  EXPECT_NE(open_error().find("another storage format (none recorded"), std::string::npos) << open_error();
  set_format("transit.storage.1");
  EXPECT_NE(open_error().find("another storage format (transit.storage.1"), std::string::npos) << open_error();
  set_format(std::string(node::layout::kFormatVersion));
  EXPECT_EQ(open_error(), "opened");
}

// The registry (layout::kTables) lists every table once: a realm that has
// used processes, entries, inputs and blocks stores no key outside it.
TEST_F(CatalogTest, EveryStoredKeyBelongsToATableOfTheRegistry) {
  const Id doc = resource("doc");
  process(doc, 9);
  accept(*admin_, Own{9, 1});
  accept(*admin_, Send{9, InputValue{{1, 2, 3}}});
  accept(*admin_, Turn{9, 2, std::nullopt, doc, std::nullopt, {{{key("a"), value("b")}}}, {}, {}, {}, std::nullopt});
  admin_.reset();
  node_.reset();
  auto db = testing::open_store(dir_);
  rocksdb::ReadOptions in_order;
  in_order.total_order_seek = true;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(in_order));
  std::set<char> seen;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string k = it->key().ToString();
    if (k == node::layout::kGenesis || k == node::layout::kHead || k == node::layout::kFormat) continue;
    ASSERT_GE(k.size(), 2u) << k;
    EXPECT_EQ(k[1], '/') << k;
    EXPECT_TRUE(node::layout::table_of(k[0])) << "a key outside the registry: " << k;
    seen.insert(k[0]);
  }
  for (char t : {node::layout::kJournal, node::layout::kSequences, node::layout::kPrincipals, node::layout::kProcesses,
                 node::layout::kEntries, node::layout::kInputs, node::layout::kResources, node::layout::kAssociations})
    EXPECT_TRUE(seen.count(t)) << t;
}

}  // namespace
}  // namespace cowboy::transit
