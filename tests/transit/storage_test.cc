// The journal's storage rules over real RocksDB files (docs/transit.md,
// decision 13): a failed sync fails the node closed until a restart, which
// recovers what was published; a stored head or genesis of another (or no)
// definition is refused before any catalog is read.
#include <gtest/gtest.h>

#include "failing_fs.h"
#include "node_fixture.h"
#include "transit/node/catalog.h"
#include "transit/node/layout.h"
#include "transit/node/records.h"
#include "store_probe.h"

namespace cowboy::transit {
namespace {

using testing::replace;
using testing::seed_of;

class StorageTest : public NodeTest {
 protected:
  /// Opens the stopped node's RocksDB directly, as the journal does.
  std::unique_ptr<rocksdb::DB> open_store() { return testing::open_store(dir_); }
  std::string get(rocksdb::DB& db, std::string_view key) {
    std::string value;
    EXPECT_TRUE(db.Get(rocksdb::ReadOptions(), key, &value).ok()) << key;
    return value;
  }
  void put(rocksdb::DB& db, std::string_view key, std::string_view value) {
    rocksdb::WriteOptions synced;
    synced.sync = true;
    ASSERT_TRUE(db.Put(synced, key, value).ok());
  }
  std::string open_error() {
    node::NodeConfig config;
    config.data_dir = dir_;
    auto n = node::Node::open(config, clock_);
    EXPECT_FALSE(n.ok());
    return n.ok() ? std::string() : n.error();
  }

  // They outlive the node, which TearDown stops.
  std::shared_ptr<testing::SyncFailingFileSystem> fs_ = std::make_shared<testing::SyncFailingFileSystem>();
  std::unique_ptr<rocksdb::Env> env_ = testing::env_over(fs_);
};

TEST_F(StorageTest, AFailedSyncFailsTheNodeClosedUntilARestartRecoversThePublishedState) {
  storage_env_ = env_.get();
  start();
  Client client = root();
  ASSERT_TRUE(client.submit(create(2, 100)).ok());  // position 1, published

  fs_->fail_syncs(true);
  const SignedRequest second = sign(client.build(create(3, 101), 2), seed_of(0));
  auto failed = post("/v1/command", to_json(second));
  EXPECT_EQ(failed.status, 503);
  EXPECT_EQ(rejection_of(failed).reason, Reason::kStorageFailed);
  EXPECT_GE(fs_->failed_syncs(), 1u);

  // The disk works again, but the node stays failed closed: the page cache
  // cannot be trusted after a failed sync, so every later answer is uncertain.
  fs_->fail_syncs(false);
  const auto query = to_json(sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, IdentityQuery{}}, seed_of(0)));
  for (const auto& [route, body] : std::vector<std::pair<std::string, std::string>>{
           {"/v1/query", query}, {"/v1/command", to_json(second)},
           {"/v1/command", to_json(sign(client.build(create(4, 102), 3), seed_of(0)))}}) {
    auto answer = post(route, body);
    EXPECT_EQ(answer.status, 503) << route;
    EXPECT_EQ(rejection_of(answer).reason, Reason::kStorageFailed) << route;
  }
  EXPECT_EQ(node_->sequencer().stats().position, 1u);

  // A restart recovers the published state; the uncertain request, resent as
  // the same bytes, is decided once: either the write that reached the log
  // before its sync failed is recovered and its receipt returned, or it is
  // decided now - at the same sequence and position either way.
  restart();
  Client again = root();
  auto resent = again.resubmit(second);
  ASSERT_TRUE(resent.ok()) << resent.error().message;
  EXPECT_EQ(resent->sequence, 2u);
  EXPECT_EQ(resent->position, Position{2});
  auto twice = again.resubmit(second);
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(to_json(*twice), to_json(*resent));
  EXPECT_EQ(again.identity()->sequence, 2u);
  EXPECT_TRUE(again.decision(PrincipalId{3}, RealmScope{}, Permissions{kInspect})->allowed);
  EXPECT_FALSE(again.decision(PrincipalId{4}, RealmScope{}, Permissions{kInspect})->allowed);  // never decided
}

TEST_F(StorageTest, AStoredHeadOrGenesisOfAnotherOrNoDefinitionIsRefusedBeforeAnyCatalog) {
  start();
  ASSERT_TRUE(root().submit(create(2, 100)).ok());
  node_.reset();
  std::string head, genesis;
  {
    auto db = open_store();
    head = get(*db, node::layout::kHead);
    genesis = get(*db, node::layout::kGenesis);
    // A principal record no decoder accepts, as its newest version: reading the catalogs would report it.
    put(*db, node::layout::version(node::layout::key(node::layout::kPrincipals, 2), Position{1000}), "not a record");
  }
  const std::string field = "\"definition\":\"" + definition() + "\"";
  ASSERT_NE(head.find(field), std::string::npos);
  const std::string foreign = "\"definition\":\"transit.v1:" + std::string(64, '0') + "\"";
  const std::vector<std::pair<std::string, std::string>> heads = {
      {replace(head, field, foreign), "foreign_definition"},
      {replace(head, field + ",", ""), "missing_definition"},
  };
  for (const auto& [stored, reason] : heads) {
    put(*open_store(), node::layout::kHead, stored);
    const std::string error = open_error();
    EXPECT_NE(error.find("head: " + reason), std::string::npos) << error;
    EXPECT_EQ(error.find("PrincipalRecord"), std::string::npos) << error;  // no catalog was read
  }
  // With this build's head back, the catalogs are read - and the planted record is found.
  put(*open_store(), node::layout::kHead, head);
  EXPECT_NE(open_error().find("PrincipalRecord"), std::string::npos);

  // A stored genesis of another definition is refused as the journal opens.
  put(*open_store(), node::layout::kGenesis, replace(genesis, field, foreign));
  const std::string error = open_error();
  EXPECT_NE(error.find("stored genesis: foreign_definition"), std::string::npos) << error;
}

// Reads reject a stored effect record whose phase, observations and closure
// disagree (decision 47): planted on disk, it is not answered, listed or
// built on, and it stays on disk as it was for an operator to look at.
TEST_F(StorageTest, AStoredEffectOutsideThePhaseClosureMatrixIsNotReadListedOrActedOn) {
  start();
  Client client = root();
  const auto doc = std::get<ResourceCreated>(client.submit(CreateResource{{"doc"}, std::nullopt})->outcome).resource;
  ASSERT_TRUE(client.submit(CreateProcess{Pid{7}, {{{"doc"}}}}).ok());
  ASSERT_TRUE(client.submit(Associate{Pid{7}, {"doc"}, doc}).ok());
  ASSERT_TRUE(client.submit(Initialize{Pid{7}, 0}).ok());
  ASSERT_TRUE(client.submit(Own{Pid{7}, 1}).ok());
  Turn t{Pid{7}, 2, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  t.effect = EffectIntent{PrincipalId{1}, clock_.trusted() + Millis{60'000}, {}, 2};
  ASSERT_TRUE(client.submit(t).ok());
  ASSERT_TRUE(client.submit(AttemptEffect{1}).ok());
  node_.reset();
  std::string key, planted;
  {
    auto db = open_store();
    key = testing::newest_version(*db, node::layout::key(node::layout::kEffects, 1));  // decision 161
    auto record = from_json<node::EffectRecord>(get(*db, key), kMaxAnswerBytes);
    ASSERT_TRUE(record.ok());
    // Closed as observed, by no observation at all.
    record->info.phase = EffectPhase::kClosed;
    record->info.closure = EffectClosure{ClosureKind::kObserved, *record->info.attempt, std::nullopt};
    planted = to_json(*record);
    put(*db, key, planted);
  }
  start(genesis_);
  const auto query = [&](QueryOp op) {
    return post("/v1/query", to_json(sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, std::move(op)}, seed_of(0))));
  };
  const auto me = root().identity();
  ASSERT_TRUE(me.ok());
  for (const auto& answer : {query(EffectRead{1}), query(ListEffects{std::nullopt, EffectFilter::kAll, std::nullopt}),
                             post("/v1/command", to_json(sign(client.build(ObserveEffect{1, {}, true}, me->sequence + 1),
                                                              seed_of(0))))}) {
    EXPECT_EQ(answer.status, 503);
    EXPECT_EQ(rejection_of(answer).reason, Reason::kInconsistentEffect) << answer.body;
  }
  node_.reset();
  EXPECT_EQ(get(*open_store(), key), planted);
}

}  // namespace
}  // namespace cowboy::transit
