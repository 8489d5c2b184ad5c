// The immutable catalog (docs/transit.md, decisions 130, 160-164): a record is
// a version under the position that decided it, never overwritten, so the
// state at any published position stays readable exactly; the node keeps a
// bounded number of process records in memory and reads the rest from disk.
#include <map>
#include <set>
#include <thread>

#include "failing_fs.h"
#include "state_fixture.h"
#include "store_probe.h"
#include "transit/node/catalog.h"
#include "transit/node/journal.h"

namespace cowboy::transit {
namespace {

class CatalogTest : public StateTest {
 protected:
  /// Flips the first byte of the value stored at `at` (its opening brace: no longer JSON), synced.
  static void corrupt(rocksdb::DB& db, const std::string& at) {
    std::string stored;
    ASSERT_TRUE(db.Get(rocksdb::ReadOptions(), at, &stored).ok());
    stored[0] ^= 0x55;
    rocksdb::WriteOptions synced;
    synced.sync = true;
    ASSERT_TRUE(db.Put(synced, at, stored).ok());
  }
  /// Refused ServiceUncertain/storage_corrupt (decision 157), the message naming `record`.
  template <typename R> static void expect_corrupt(const R& result, const char* what, const std::string& record = {}) {
    ASSERT_FALSE(result.ok()) << what;
    EXPECT_EQ(result.error().kind, ClientError::Kind::kUncertain) << what;
    EXPECT_NE(result.error().message.find("storage_corrupt"), std::string::npos) << what << ": " << result.error().message;
    EXPECT_NE(result.error().message.find(record), std::string::npos) << what << ": " << result.error().message;
  }
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
  const Position created = accept(*admin_, CreateProcess{Pid{9}, {}}).position;
  const Position initialized = accept(*admin_, Initialize{Pid{9}, 0}).position;
  const Position owned = accept(*admin_, Own{Pid{9}, 1}).position;
  EXPECT_EQ(process_info(*admin_, 9).generation, 2u);
  admin_.reset();
  node_.reset();
  auto db = testing::open_store(dir_);
  EXPECT_EQ(testing::table_keys(*db, node::layout::kProcesses).size(), 3u);  // one per decision, none overwritten
  node::Catalog catalog(*db, nullptr, nullptr);
  const auto read = [&](Position at) {  // a version that decodes, or none
    auto r = catalog.process(Pid{9}, at);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::nullopt;
  };
  EXPECT_FALSE(read(created - 1));
  const auto at_created = read(created);
  const auto at_initialized = read(initialized);
  const auto at_owned = read(owned);
  ASSERT_TRUE(at_created && at_initialized && at_owned);
  EXPECT_FALSE(at_created->initialized);
  EXPECT_EQ(at_created->generation, 0u);
  EXPECT_TRUE(at_initialized->initialized);
  EXPECT_EQ(at_initialized->generation, 1u);
  EXPECT_FALSE(at_initialized->owner);
  EXPECT_EQ(at_owned->generation, 2u);
  EXPECT_EQ(at_owned->owner, std::optional<PrincipalId>(PrincipalId{1}));
  EXPECT_EQ(read(owned + 100), at_owned);  // nothing decided since
  // A listing as of a position shows each process as that position left it.
  std::vector<node::ProcessRecord> then;
  catalog.processes(Pid{0}, initialized, [&](const node::ProcessRecord& r) {
    then.push_back(r);
    return true;
  });
  ASSERT_EQ(then.size(), 1u);
  EXPECT_EQ(then[0], *at_initialized);
  then.clear();
  catalog.processes(Pid{0}, created - 1, [&](const node::ProcessRecord& r) {
    then.push_back(r);
    return true;
  });
  EXPECT_TRUE(then.empty());
}

TEST_F(CatalogTest, WithTwoRecordsResidentEveryDecisionAndReadSeesEveryStoredProcessAndARestartLoadsNone) {
  const ResourceId doc = resource("doc");
  for (Pid pid{10}; pid < Pid{22}; pid = Pid{pid.value + 1}) process(doc, pid);  // initialized: generation 1
  for (Pid pid{10}; pid < Pid{22}; pid = Pid{pid.value + 3}) EXPECT_EQ(ok<ProcessChanged>(admin_->submit(Own{pid, 1})).generation, 2u);
  const auto expected_generation = [](Pid pid) -> Id { return (pid.value - 10) % 3 == 0 ? 2 : 1; };
  for (Pid pid{10}; pid < Pid{22}; pid = Pid{pid.value + 1}) {
    const auto info = process_info(*admin_, pid);
    EXPECT_EQ(info.generation, expected_generation(pid)) << pid.value;
    EXPECT_EQ(info.state, expected_generation(pid) == 2 ? ProcessState::kOwned : ProcessState::kIdle) << pid.value;
  }
  // A PID is never allocated twice, whether its record is in memory or not.
  for (Pid pid : {Pid{10}, Pid{15}, Pid{21}})
    EXPECT_EQ(refused(admin_->submit(CreateProcess{pid, {}})).reason, Reason::kSubjectTaken) << pid.value;
  // The listing pages through every process in PID order, read from disk.
  const auto before = listed();
  ASSERT_EQ(before.size(), 12u);
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].pid, Pid{10 + i});
    EXPECT_EQ(before[i].generation, expected_generation(before[i].pid));
  }
  // A turn of a process long out of memory goes on from its stored record.
  auto turn = ok<TurnPublished>(admin_->submit(Turn{Pid{10}, 2, std::nullopt, doc, std::nullopt, {{{key("a"), value("b")}}},
                                                    {}, {}, {}, std::nullopt}));
  EXPECT_EQ(turn.pid, Pid{10});
  const auto after_turn = listed();
  admin_.reset();
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_TRUE(listed() == after_turn);
  EXPECT_EQ(ok<ProcessChanged>(admin_->submit(Own{Pid{11}, 1})).generation, 2u);
}

// Decision 170: outputs, effects and payloads are read from disk through a
// bounded cache (two records each here), and the indexes the rules walk over
// them - routes and their heads, unresolved effects, each process's outputs,
// effects and payloads - are stored tables kept by each decision's write.
// Every stored index row is what the newest records say it should be.
void expect_indexes_agree_with_records(rocksdb::DB& db) {
  using namespace node::layout;
  node::Catalog catalog(db, nullptr, nullptr);
  std::set<std::string> expected, stored;
  std::map<std::pair<Pid, Pid>, Id> heads;  // route -> its oldest pending output
  catalog.records(kOutputs, 0, node::layout::kNewest, [&](Id id, std::string_view text) {
    auto o = from_json<node::OutputRecord>(text, 4096);
    EXPECT_TRUE(o.ok()) << id;
    if (!o.ok()) return false;
    expected.insert(key(kOutputsOf, o->source, id));
    if (o->state == OutputState::kPending) {
      expected.insert(key(kRoutes, o->source, o->destination, id));
      expected.insert(key(kArriving, o->destination, o->source, id));
      heads.emplace(std::pair{o->source, o->destination}, id);  // ids ascend: the first stays
    }
    return true;
  });
  for (const auto& [route, head] : heads) expected.insert(key(kRouteHeads, head));
  catalog.records(kEffects, 0, node::layout::kNewest, [&](Id id, std::string_view text) {
    auto e = from_json<node::EffectRecord>(text, 64 * 1024);
    EXPECT_TRUE(e.ok()) << id;
    if (!e.ok()) return false;
    expected.insert(key(kEffectsOf, e->info.pid, id));
    if (e->info.phase != EffectPhase::kClosed) expected.insert(key(kUnresolved, id));
    return true;
  });
  catalog.records(kPayloads, 0, node::layout::kNewest, [&](Id id, std::string_view text) {
    auto y = from_json<node::PayloadRecord>(text, 4096);
    EXPECT_TRUE(y.ok()) << id;
    if (!y.ok()) return false;
    expected.insert(key(kPayloadsOf, y->info.pid, id));
    return true;
  });
  // Decision 175: resources, associations and views, and their names, owners, PIDs and resources.
  catalog.records(kResources, 0, node::layout::kNewest, [&](Id id, std::string_view text) {
    auto r = from_json<node::ResourceRecord>(text, 4096);
    EXPECT_TRUE(r.ok()) << id;
    if (!r.ok()) return false;
    expected.insert(row(resource_name(r->info.name.value), id));
    if (r->info.owner) expected.insert(key(kLifetimeOf, *r->info.owner, id));
    return true;
  });
  std::set<std::string> associations;  // record keys: (pid, revision)
  for (const auto& k : testing::table_keys(db, kAssociations)) associations.insert(k.substr(0, kPairKey));
  for (const auto& record : associations) {
    auto a = catalog.record_at<Association>(record, node::layout::kNewest);
    EXPECT_TRUE(a.ok()) << record;
    if (!a.ok() || !*a) continue;  // removed
    const Association& live = **a;
    expected.insert(key(kAssociationsOf, live.pid, live.revision));
    expected.insert(row(association_name(live.pid, live.name.value), live.revision));
    expected.insert(key(kAssociatedBy, live.resource, live.pid, live.revision));
  }
  catalog.records(kViews, 0, node::layout::kNewest, [&](Id id, std::string_view text) {
    auto v = from_json<node::ViewRecord>(text, 4096);
    EXPECT_TRUE(v.ok()) << id;
    if (!v.ok()) return false;
    expected.insert(key(kViewsOf, v->pid, id));
    expected.insert(key(kViewsOn, v->resource, id));
    return true;
  });
  for (char t : {kRoutes, kArriving, kRouteHeads, kUnresolved, kOutputsOf, kEffectsOf, kPayloadsOf, kResourceNames,
                 kLifetimeOf, kAssociationsOf, kAssociationNames, kAssociatedBy, kViewsOf, kViewsOn})
    for (const auto& k : testing::table_keys(db, t)) stored.insert(k);
  EXPECT_EQ(stored, expected);
  // Decision 190: the written rows by PID and by resource are one set; a
  // resource's last writer other than its owner has its rows while the
  // resource is not collected, and a collected resource has none.
  std::set<std::pair<Id, Id>> by_pid, by_resource;  // (pid, resource)
  for (const auto& k : testing::table_keys(db, kWrittenBy)) by_pid.insert({get_be64(k.substr(2)), get_be64(k.substr(10))});
  for (const auto& k : testing::table_keys(db, kWritersOf))
    by_resource.insert({get_be64(k.substr(10)), get_be64(k.substr(2))});
  EXPECT_EQ(by_pid, by_resource);
  catalog.records(kResources, 0, node::layout::kNewest, [&](Id id, std::string_view text) {
    auto r = from_json<node::ResourceRecord>(text, 4096);
    if (!r.ok()) return false;
    if (r->collected_at) {
      for (const auto& [pid, resource] : by_pid) EXPECT_NE(resource, id) << pid;
    } else if (r->writer) {
      EXPECT_TRUE(by_pid.contains({r->writer->value, id})) << id;
    }
    return true;
  });
}

class StoredRecordsTest : public CatalogTest {
 protected:
  /// Processes 9 (owned, generation 2), 10 and 11; 9's two turns publish
  /// outputs on routes 9->10 and 9->11 and an effect each; two payloads of 9.
  void work() {
    doc_ = resource("doc");
    for (Pid pid : {Pid{9}, Pid{10}, Pid{11}}) process(doc_, pid);
    accept(*admin_, Own{Pid{9}, 1});
    for (int i = 0; i < 2; ++i) {
      Turn t{Pid{9}, 2, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
      for (Pid d : {Pid{10}, Pid{11}, Pid{10}}) t.outputs.items.push_back(OutputProposal{d, InputValue{{1, 2}}});
      t.effect = EffectIntent{PrincipalId{1}, clock_.trusted() + Millis{3'600'000}, {}, 1};
      const auto published = ok<TurnPublished>(admin_->submit(t));
      for (Id o : published.outputs.items) outputs_.push_back(o);
      effects_.push_back(*published.effect);
    }
    for (int i = 0; i < 2; ++i)
      payloads_.push_back(ok<PayloadChanged>(admin_->submit(DeclarePayload{Pid{9}, 3, Digest{}, false})).payload);
  }
  /// Every page of a listing, one line of items each.
  template <typename Page, typename Q> std::string pages(Q query) {
    std::string out;
    std::optional<Cursor> cursor;
    do {
      query.cursor = cursor;
      auto page = answer<Page>(*admin_, query);
      out += to_json(page.items) + "\n";
      cursor = page.cursor;
    } while (cursor);
    return out;
  }
  /// Every answer served from these records and indexes, in one string.
  std::string answers() {
    std::string out;
    const auto all = [&](auto query, auto page_type) { out += pages<decltype(page_type)>(query); };
    all(ListRoutes{}, RoutePage{});
    all(ListEffects{std::nullopt, EffectFilter::kAll, std::nullopt}, EffectPage{});
    all(ListEffects{std::nullopt, EffectFilter::kUnresolved, std::nullopt}, EffectPage{});
    all(ListEffects{Pid{9}, EffectFilter::kAll, std::nullopt}, EffectPage{});
    for (Id e : effects_) out += to_json(answer<EffectInfo>(*admin_, EffectRead{e})) + "\n";
    for (Id y : payloads_) out += to_json(answer<PayloadInfo>(*admin_, PayloadRead{y})) + "\n";
    return out;
  }
  /// Stops the node; the stored index rows are what the newest records imply.
  void stop_and_check_rows() {
    admin_.reset();
    node_.reset();
    auto db = testing::open_store(dir_);
    expect_indexes_agree_with_records(*db);
  }
  /// The journal as the node opens it, and the authority loaded from it: nothing read from the tables yet.
  struct Loaded {
    std::unique_ptr<node::Journal> journal;
    std::optional<node::Authority> authority;
  };
  Loaded load_journal() {
    Loaded loaded;
    auto journal = node::Journal::open(dir_, std::nullopt);
    EXPECT_TRUE(journal.ok()) << journal.error();
    if (!journal.ok()) return loaded;
    loaded.journal = std::move(*journal);
    auto authority = loaded.journal->load();
    EXPECT_TRUE(authority.ok()) << authority.error();
    if (authority.ok()) loaded.authority.emplace(std::move(*authority));
    return loaded;
  }
  ResourceId doc_{};
  std::vector<Id> outputs_, effects_, payloads_;
};

TEST_F(StoredRecordsTest, ARestartLoadsNoOutputEffectOrPayloadAndEachIsReadFromDiskAsItWas) {
  work();
  // Resolving moves a route's head; closing an effect leaves the unresolved index.
  accept(*admin_, Deliver{outputs_[0]});
  clock_.set(clock_.now_ms() + 7'200'000);  // past both deadlines: the executor closes the first
  accept(*admin_, CloseEffect{effects_[0], CloseKind::kDeadline});
  const std::string before = answers();
  const auto routes = answer<RoutePage>(*admin_, ListRoutes{});
  ASSERT_EQ(routes.items.items.size(), 2u);
  EXPECT_EQ(routes.items.items[0].output, outputs_[1]);  // 9->11's head; 9->10's is now outputs_[2]
  EXPECT_EQ(routes.items.items[0].pending, 2u);
  EXPECT_EQ(routes.items.items[1].output, outputs_[2]);
  EXPECT_EQ(routes.items.items[1].pending, 3u);
  EXPECT_EQ(refused(admin_->submit(Deliver{outputs_[3]})).reason, Reason::kRouteOrder);  // 9->10 is FIFO
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(answers(), before);
  stop_and_check_rows();
  // The journal as the node opens it: nothing of these tables is read until asked.
  auto [journal, authority] = load_journal();
  ASSERT_TRUE(journal && authority);
  EXPECT_EQ(journal->records_read(), 0u);
  const auto* effect = authority->effect(effects_[1]);
  ASSERT_TRUE(effect);
  EXPECT_EQ(effect->info.phase, EffectPhase::kAuthorized);
  EXPECT_EQ(journal->records_read(), 1u);
  ASSERT_TRUE(authority->effect(effects_[1]));
  EXPECT_EQ(journal->records_read(), 1u);  // resident now
  const auto* output = authority->output(outputs_[0]);
  ASSERT_TRUE(output);
  EXPECT_EQ(output->state, OutputState::kDelivered);
  ASSERT_TRUE(authority->payload(payloads_[1]));
  EXPECT_EQ(journal->records_read(), 3u);
  EXPECT_FALSE(authority->output(outputs_.back() + 100));
}

// Decision 174: each route's head is kept in a cache bounded like the records
// (two here, fewer than the routes' changes between reads): every delivery
// moves it, an emptied route takes a new output as its head, and the listing,
// the route order and the stored rows agree throughout and after a restart.
TEST_F(StoredRecordsTest, EveryRouteHeadFollowsEachDeliveryAndAnEmptiedRouteTakesTheNextOutput) {
  work();  // 9->10: outputs 0, 2, 3, 5; 9->11: outputs 1, 4
  const auto heads = [&] {
    std::vector<std::pair<Id, std::uint64_t>> out;
    for (const auto& r : answer<RoutePage>(*admin_, ListRoutes{}).items.items) out.emplace_back(r.output, r.pending);
    return out;
  };
  using Heads = std::vector<std::pair<Id, std::uint64_t>>;
  EXPECT_EQ(heads(), (Heads{{outputs_[0], 4}, {outputs_[1], 2}}));
  EXPECT_EQ(refused(admin_->submit(Deliver{outputs_[2]})).reason, Reason::kRouteOrder);
  accept(*admin_, Deliver{outputs_[1]});
  EXPECT_EQ(heads(), (Heads{{outputs_[0], 4}, {outputs_[4], 1}}));
  accept(*admin_, Deliver{outputs_[0]});
  EXPECT_EQ(refused(admin_->submit(Deliver{outputs_[3]})).reason, Reason::kRouteOrder);
  accept(*admin_, Deliver{outputs_[2]});
  accept(*admin_, Deliver{outputs_[4]});  // 9->11 is empty
  EXPECT_EQ(heads(), (Heads{{outputs_[3], 2}}));
  Turn t{Pid{9}, 2, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  for (Pid d : {Pid{11}, Pid{11}}) t.outputs.items.push_back(OutputProposal{d, InputValue{{3}}});
  const auto published = ok<TurnPublished>(admin_->submit(t));
  ASSERT_EQ(published.outputs.items.size(), 2u);
  EXPECT_EQ(heads(), (Heads{{outputs_[3], 2}, {published.outputs.items[0], 2}}));
  EXPECT_EQ(refused(admin_->submit(Deliver{published.outputs.items[1]})).reason, Reason::kRouteOrder);
  accept(*admin_, Deliver{outputs_[3]});
  accept(*admin_, Deliver{outputs_[5]});  // 9->10 is empty
  const Heads before = heads();
  EXPECT_EQ(before, (Heads{{published.outputs.items[0], 2}}));
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(heads(), before);
  accept(*admin_, Deliver{published.outputs.items[0]});
  EXPECT_EQ(heads(), (Heads{{published.outputs.items[1], 1}}));
  admin_.reset();
  node_.reset();
  auto db = testing::open_store(dir_);
  expect_indexes_agree_with_records(*db);
}

// Collection removes records and their index rows in one write; the process
// gate reads the stored route, effect and payload indexes. Process 10 writes
// "notes", which 9 owns, so the written rows (decision 190) hold data when
// they are checked, and go with the resource's collection.
TEST_F(StoredRecordsTest, CollectionAndItsGatesReadTheStoredIndexes) {
  doc_ = resource("doc");
  accept(*admin_, CreateProcess{Pid{9}, {{{"doc"}}}, true});
  accept(*admin_, Associate{Pid{9}, {"doc"}, doc_});
  accept(*admin_, Initialize{Pid{9}, 0});
  process(doc_, 10);
  const ResourceId notes = resource("notes", 9);
  accept(*admin_, Associate{Pid{10}, {"notes"}, notes});
  accept(*admin_, Own{Pid{10}, 1});
  accept(*admin_, Turn{Pid{10}, 2, std::nullopt, notes, std::nullopt, {{{key("k"), value("v")}}}, {}, {}, {},
                       std::nullopt});
  accept(*admin_, Own{Pid{9}, 1});
  Turn t{Pid{9}, 2, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  t.outputs.items.push_back(OutputProposal{Pid{10}, InputValue{{1}}});
  t.effect = EffectIntent{PrincipalId{1}, clock_.trusted() + Millis{3'600'000}, {}, 1};
  const auto published = ok<TurnPublished>(admin_->submit(t));
  accept(*admin_, Terminate{Pid{9}, 2});
  admin_.reset();
  node_.reset();
  {
    auto db = testing::open_store(dir_);
    ASSERT_EQ(testing::table_keys(*db, node::layout::kWrittenBy).size(), 1u);
    ASSERT_EQ(testing::table_keys(*db, node::layout::kWritersOf).size(), 1u);
    expect_indexes_agree_with_records(*db);
  }
  start(genesis_);
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(refused(admin_->submit(Collect{Pid{9}, CollectKind::kProcess, std::nullopt})).reason, Reason::kOutputPending);
  accept(*admin_, CancelOutput{published.outputs.items[0]});
  EXPECT_EQ(refused(admin_->submit(Collect{Pid{9}, CollectKind::kProcess, std::nullopt})).reason, Reason::kEffectUnresolved);
  accept(*admin_, CancelEffect{*published.effect});
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(refused(admin_->submit(Collect{Pid{9}, CollectKind::kProcess, std::nullopt})).reason,
            Reason::kResourceNotRemoved);  // it owns notes
  accept(*admin_, RetireResource{notes});
  accept(*admin_, Terminate{Pid{10}, 2});
  // 10's association, the entry, 10's written rows.
  EXPECT_EQ(ok<Collected>(admin_->submit(Collect{Pid{9}, CollectKind::kResource, notes.value})),
            (Collected{Pid{9}, CollectKind::kResource, notes.value, 3, true}));
  const auto collected = ok<Collected>(admin_->submit(Collect{Pid{9}, CollectKind::kProcess, std::nullopt}));
  EXPECT_TRUE(collected.complete);
  EXPECT_EQ(refused(admin_->submit(Collect{Pid{9}, CollectKind::kOutput, published.outputs.items[0]})).reason,
            Reason::kAlreadyCollected);
  admin_.reset();
  node_.reset();
  auto db = testing::open_store(dir_);
  expect_indexes_agree_with_records(*db);
  EXPECT_TRUE(testing::table_keys(*db, node::layout::kOutputsOf).empty());
  EXPECT_TRUE(testing::table_keys(*db, node::layout::kEffectsOf).empty());
  EXPECT_TRUE(testing::table_keys(*db, node::layout::kWrittenBy).empty());
  EXPECT_TRUE(testing::table_keys(*db, node::layout::kWritersOf).empty());
}

// Decision 171: the index rows go in the decision's own write. A turn whose
// synced write fails (the node then fails closed) leaves, after the restart,
// records and indexes agreeing - whether the write reached the log or not -
// and the turn resent is decided once, with its rows.
class FailedSyncRecordsTest : public StoredRecordsTest {
 protected:
  void SetUp() override {
    storage_env_ = env_.get();
    StoredRecordsTest::SetUp();
  }
  std::shared_ptr<testing::SyncFailingFileSystem> fs_ = std::make_shared<testing::SyncFailingFileSystem>();
  std::unique_ptr<rocksdb::Env> env_ = testing::env_over(fs_);
};

TEST_F(FailedSyncRecordsTest, AFailedSyncMidDecisionLeavesIndexesAndRecordsAgreeing) {
  work();
  Turn t{Pid{9}, 2, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  t.outputs.items.push_back(OutputProposal{Pid{11}, InputValue{{7}}});
  t.effect = EffectIntent{PrincipalId{1}, clock_.trusted() + Millis{3'600'000}, {}, 1};
  const Id sequence = admin_->identity()->sequence + 1;
  const SignedRequest turn = sign(admin_->build(t, sequence), testing::seed_of(0));
  const SignedRequest deliver = sign(admin_->build(Deliver{outputs_[0]}, sequence + 1), testing::seed_of(0));
  fs_->fail_syncs(true);
  EXPECT_FALSE(admin_->resubmit(turn).ok());
  fs_->fail_syncs(false);
  admin_.reset();
  node_.reset();
  {
    auto db = testing::open_store(dir_);
    expect_indexes_agree_with_records(*db);
  }
  start();
  admin_ = std::make_unique<Client>(root());
  const auto published = admin_->resubmit(turn);
  ASSERT_TRUE(published.ok()) << published.error().message;
  ASSERT_TRUE(admin_->resubmit(deliver).ok());
  const auto routes = answer<RoutePage>(*admin_, ListRoutes{});
  ASSERT_EQ(routes.items.items.size(), 2u);
  EXPECT_EQ(routes.items.items[0].pending, 3u);  // 9->11: two, and the resent turn's
  EXPECT_EQ(routes.items.items[1].output, outputs_[2]);
  admin_.reset();
  node_.reset();
  auto db = testing::open_store(dir_);
  expect_indexes_agree_with_records(*db);
}

// Decision 175: resources, associations, views and runtime bindings are read
// from disk like outputs (two of each resident here), and the indexes the
// rules walk over them - names, lifetime owners, associations by PID, name
// and resource, views by PID and resource - are stored rows.
class StoredCatalogTest : public StoredRecordsTest {
 protected:
  static constexpr PrincipalId kWorker{20};
  /// Processes 9 and 10 associated with "doc"; "lent", whose lifetime 9
  /// owns, associated with 10 and required by 12 (which requires "doc" too);
  /// 9 owned and its turn viewing "doc"; process 11 bound to worker 20.
  void catalog_work() {
    doc_ = resource("doc");
    for (Pid pid : {Pid{9}, Pid{10}}) process(doc_, pid);
    lent_ = resource("lent", Pid{9});
    accept(*admin_, Associate{Pid{10}, {"lent"}, lent_});
    accept(*admin_, CreateProcess{Pid{12}, {{{"doc"}, {"lent"}}}});
    accept(*admin_, Associate{Pid{12}, {"doc"}, doc_});
    accept(*admin_, Associate{Pid{12}, {"lent"}, lent_});
    accept(*admin_, Initialize{Pid{12}, 0});
    accept(*admin_, Own{Pid{9}, 1});
    Turn t{Pid{9}, 2, std::nullopt, doc_, std::nullopt, {{{key("a"), value("b")}}}, {}, {}, {}, std::nullopt};
    t.views.items.push_back(doc_);
    view_ = ok<TurnPublished>(admin_->submit(t)).views.items.at(0);
    accept(*admin_, Turn{Pid{9}, 2, std::nullopt, doc_, std::nullopt, {{{key("a"), value("c")}}}, {}, {}, {}, std::nullopt});
    accept(*admin_, CreateProcess{Pid{11}, {}});
    principal(kWorker, 120, RealmScope{}, kInspect | kExecute, Pid{11});
    Digest artifact{};
    artifact.fill(0xa1);
    ok<RuntimeChanged>(admin_->submit(RuntimeIntent{Pid{11}, 1, 3, Name{"host-a"}, kWorker, artifact, artifact}));
  }
  /// Every answer served from these records and indexes, in one string.
  std::string catalog_answers() {
    std::string out;
    const auto all = [&](auto query, auto page_type) { out += pages<decltype(page_type)>(query); };
    all(ListResources{}, ResourcePage{});
    for (Pid pid : {Pid{9}, Pid{10}, Pid{12}}) all(ListAssociations{pid, std::nullopt}, AssociationPage{});
    all(ListEnded{}, EndedPage{});
    for (Pid pid : {Pid{9}, Pid{10}, Pid{12}})
      for (const char* name : {"doc", "lent"}) out += to_json(answer<LookupResult>(*admin_, AssociationLookup{pid, {name}})) + "\n";
    for (ResourceId r : {doc_, lent_}) out += to_json(answer<ResourceAccess>(*admin_, ReadAccess{r})) + "\n";
    const auto through_view = answer<EntryPage>(*admin_, ListEntries{ViewBasis{view_}, std::nullopt, std::nullopt});
    out += to_json(through_view.items) + " at " + std::to_string(through_view.revision.value) + "\n";
    out += to_json(answer<RuntimeInfo>(*admin_, RuntimeQuery{Pid{11}})) + "\n";
    return out;
  }
  ResourceId lent_{};
  Id view_ = 0;
};

TEST_F(StoredCatalogTest, ARestartLoadsNoViewAssociationResourceOrBindingAndEachIsReadFromDiskAsItWas) {
  catalog_work();
  const std::string before = catalog_answers();
  EXPECT_NE(before.find(" at 2\n"), std::string::npos) << before;  // the view holds revision 2; "doc" is at 3
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(catalog_answers(), before);
  stop_and_check_rows();
  // The journal as the node opens it: none of these records is read until asked.
  auto [journal, authority] = load_journal();
  ASSERT_TRUE(journal && authority);
  EXPECT_EQ(journal->records_read(), 0u);
  const auto* view = authority->view(view_);
  ASSERT_TRUE(view);
  EXPECT_EQ(*view, (node::ViewRecord{view_, Pid{9}, doc_, Revision{2}}));
  EXPECT_EQ(journal->records_read(), 1u);
  ASSERT_TRUE(authority->view(view_));
  EXPECT_EQ(journal->records_read(), 1u);  // resident now
  const auto* lent = authority->resource(lent_);
  ASSERT_TRUE(lent);
  EXPECT_EQ(lent->info.name.value, "lent");
  EXPECT_EQ(lent->info.owner, std::optional<Pid>(Pid{9}));
  EXPECT_EQ(authority->resource(doc_)->info.revision, Revision{3});
  EXPECT_EQ(journal->records_read(), 3u);
  const auto* association = authority->association(Pid{10}, 3);  // 10's "lent": the third association
  ASSERT_TRUE(association);
  EXPECT_EQ(*association, (Association{Pid{10}, {"lent"}, lent_, 3}));
  const auto* binding = authority->runtime(Pid{11});
  ASSERT_TRUE(binding);
  EXPECT_EQ(binding->info.worker, kWorker);
  EXPECT_EQ(binding->info.operation, 1u);
  EXPECT_EQ(journal->records_read(), 5u);
  EXPECT_FALSE(authority->view(view_ + 100));
  EXPECT_FALSE(authority->runtime(Pid{9}));
  EXPECT_FALSE(authority->association(Pid{10}, 100));
}

// The rules that walk the stored indexes, each after a restart: a name is
// reserved forever, an association name once per process, a turn writes
// only an associated resource, retiring a required resource waits for
// quiescence, and ending a lifetime owner ends the processes requiring what
// it owned - and only them.
TEST_F(StoredCatalogTest, TheRulesThatWalkTheStoredIndexesAnswerAlikeAfterARestart) {
  catalog_work();
  restart();
  admin_ = std::make_unique<Client>(root());
  for (const char* name : {"doc", "lent"})
    EXPECT_EQ(refused(admin_->submit(CreateResource{{name}, std::nullopt})).reason, Reason::kNameTaken) << name;
  EXPECT_EQ(refused(admin_->submit(Associate{Pid{10}, {"lent"}, doc_})).reason, Reason::kAssociationExists);
  const ResourceId other = resource("other");
  EXPECT_EQ(refused(admin_->submit(CreateResource{{"other"}, std::nullopt})).reason, Reason::kNameTaken);
  EXPECT_EQ(ok<ProcessChanged>(admin_->submit(Own{Pid{12}, 1})).generation, 2u);
  accept(*admin_, Turn{Pid{12}, 2, std::nullopt, lent_, std::nullopt, {{{key("x"), value("y")}}}, {}, {}, {}, std::nullopt});
  EXPECT_EQ(refused(admin_->submit(Turn{Pid{12}, 2, std::nullopt, other, std::nullopt, {{{key("x"), value("y")}}}, {}, {}, {},
                                        std::nullopt}))
                .reason,
            Reason::kNotAssociated);
  restart();
  admin_ = std::make_unique<Client>(root());
  const auto quiescent = refused(admin_->submit(RetireResource{lent_}));
  EXPECT_EQ(quiescent.reason, Reason::kNotQuiescent);
  EXPECT_NE(quiescent.message.value.find("process 12"), std::string::npos) << quiescent.message.value;
  EXPECT_TRUE(answer<EndedPage>(*admin_, ListEnded{}).items.items.empty());
  accept(*admin_, Terminate{Pid{9}, 2});
  restart();
  admin_ = std::make_unique<Client>(root());
  const auto ended = answer<EndedPage>(*admin_, ListEnded{}).items.items;
  std::vector<Pid> pids;
  for (const auto& e : ended) pids.push_back(e.pid);
  EXPECT_EQ(pids, (std::vector<Pid>{Pid{12}}));  // 10 is associated with "lent" but does not require it
  if (!ended.empty()) {
    EXPECT_EQ(ended[0].ending, Ending::kDependencyEnded);
  }
  EXPECT_EQ(answer<ResourceAccess>(*admin_, ReadAccess{other}).resource.name.value, "other");
  stop_and_check_rows();
}

// A stored association or resource version changed while the node was down
// is storage_corrupt for what needs it (decision 157), never an absent record
// and no longer a journal that does not open; the rest is decided and answered.
// A turn's association lookups are remembered (decision 177), absences
// too; the association that ends an absence must be seen by the next
// decision, through a lookup of each kind: (resource, pid) and (pid, name).
TEST_F(StoredCatalogTest, TheTurnsAssociationLookupsFollowEachNewAssociation) {
  catalog_work();
  restart();
  admin_ = std::make_unique<Client>(root());
  const ResourceId other = resource("other");
  EXPECT_EQ(ok<ProcessChanged>(admin_->submit(Own{Pid{12}, 1})).generation, 2u);
  const Turn write_other{Pid{12}, 2, std::nullopt, other, std::nullopt, {{{key("x"), value("y")}}}, {}, {}, {}, std::nullopt};
  EXPECT_EQ(refused(admin_->submit(write_other)).reason, Reason::kNotAssociated);  // (other, 12): none, remembered
  EXPECT_EQ(refused(admin_->submit(write_other)).reason, Reason::kNotAssociated);
  accept(*admin_, Associate{Pid{12}, {"o"}, other});  // (12, "o"): none, remembered, then listed
  accept(*admin_, write_other);
  EXPECT_EQ(refused(admin_->submit(Associate{Pid{12}, {"o"}, doc_})).reason, Reason::kAssociationExists);
  restart();
  admin_ = std::make_unique<Client>(root());
  accept(*admin_, write_other);
  EXPECT_EQ(refused(admin_->submit(Associate{Pid{12}, {"o"}, doc_})).reason, Reason::kAssociationExists);
}

TEST_F(StoredCatalogTest, ACorruptStoredAssociationOrResourceFailsClosedAtTheRead) {
  doc_ = resource("doc");
  process(doc_, 9);
  process(doc_, 10);
  const ResourceId other = resource("other");
  admin_.reset();
  node_.reset();
  {
    auto db = testing::open_store(dir_);
    ASSERT_TRUE(db);
    for (const std::string& record : {node::layout::key(node::layout::kAssociations, 9, 1),
                                     node::layout::key(node::layout::kResources, other)}) {
      const std::string at = testing::newest_version(*db, record);
      ASSERT_FALSE(at.empty());
      corrupt(*db, at);
    }
  }
  start(genesis_);
  // A fresh client per request: an uncertain one keeps its signed bytes to resend first.
  expect_corrupt(root().query(AssociationLookup{Pid{9}, {"doc"}}), "lookup", "association 1");
  expect_corrupt(root().query(ListAssociations{Pid{9}, std::nullopt}), "listing", "association 1");
  expect_corrupt(root().submit(Associate{Pid{9}, {"doc"}, doc_}), "associate over it", "association 1");
  expect_corrupt(root().query(ReadAccess{other}), "resource read", "resource " + std::to_string(other.value));
  expect_corrupt(root().query(ListResources{}), "resource listing", "resource " + std::to_string(other.value));
  expect_corrupt(root().submit(RetireResource{other}), "retire", "resource " + std::to_string(other.value));
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(answer<LookupResult>(*admin_, AssociationLookup{Pid{10}, {"doc"}}).association->resource, doc_);
  EXPECT_EQ(answer<ResourceAccess>(*admin_, ReadAccess{doc_}).resource.name.value, "doc");
  EXPECT_EQ(refused(admin_->submit(CreateResource{{"other"}, std::nullopt})).reason, Reason::kNameTaken);
  resource("third");
}

// Decision 175 with decision 171: a decision whose synced write fails leaves,
// after the restart, resources, associations and views agreeing with their
// rows, and the decision resent is decided once, with its rows.
TEST_F(FailedSyncRecordsTest, AFailedSyncLeavesResourceAssociationAndViewRowsAgreeingWithTheirRecords) {
  doc_ = resource("doc");
  process(doc_, 9);
  accept(*admin_, Own{Pid{9}, 1});
  const auto fail_then_resend = [&](Command op) -> Receipt {
    const SignedRequest signed_op =
        sign(admin_->build(std::move(op), admin_->identity()->sequence + 1), testing::seed_of(0));
    fs_->fail_syncs(true);
    EXPECT_FALSE(admin_->resubmit(signed_op).ok());
    fs_->fail_syncs(false);
    stop_and_check_rows();
    start();
    admin_ = std::make_unique<Client>(root());
    auto again = admin_->resubmit(signed_op);
    EXPECT_TRUE(again.ok()) << again.error().message;
    return again.ok() ? *again : Receipt{};
  };
  const ResourceId lent = std::get<ResourceCreated>(fail_then_resend(CreateResource{{"lent"}, Pid{9}}).outcome).resource;
  fail_then_resend(Associate{Pid{9}, {"lent"}, lent});
  Turn t{Pid{9}, 2, std::nullopt, lent, std::nullopt, {{{key("a"), value("b")}}}, {}, {}, {}, std::nullopt};
  t.views.items.push_back(doc_);
  const auto turn = fail_then_resend(t);
  ASSERT_TRUE(std::holds_alternative<TurnPublished>(turn.outcome));
  const Id view = std::get<TurnPublished>(turn.outcome).views.items.at(0);
  EXPECT_EQ(refused(admin_->submit(CreateResource{{"lent"}, std::nullopt})).reason, Reason::kNameTaken);
  EXPECT_EQ(answer<LookupResult>(*admin_, AssociationLookup{Pid{9}, {"lent"}}).association->resource, lent);
  EXPECT_EQ(answer<AssociationPage>(*admin_, ListAssociations{Pid{9}, std::nullopt}).items.items.size(), 2u);
  EXPECT_EQ(answer<EntryPage>(*admin_, ListEntries{ViewBasis{view}, std::nullopt, std::nullopt}).revision, Revision{1});
  stop_and_check_rows();
  auto db = testing::open_store(dir_);
  EXPECT_EQ(testing::table_keys(*db, node::layout::kViewsOf).size(), 1u);
  EXPECT_EQ(testing::table_keys(*db, node::layout::kLifetimeOf).size(), 1u);
}

// Decision 157: a stored process version whose bytes were changed while the
// node was down is an error - storage_corrupt, ServiceUncertain - for every
// command and read that needs it, never an absent process: before, the PID
// read as never allocated, and create took it a second time.
TEST_F(CatalogTest, ACorruptStoredProcessVersionFailsClosedAndIsNeverReadAsAbsent) {
  accept(*admin_, CreateProcess{Pid{9}, {}});
  accept(*admin_, Initialize{Pid{9}, 0});
  accept(*admin_, CreateProcess{Pid{10}, {}});
  admin_.reset();
  node_.reset();
  {
    auto db = testing::open_store(dir_);
    ASSERT_TRUE(db);
    // The newest version of 9 sorts first under its PID (~position).
    const std::string at = testing::table_keys(*db, node::layout::kProcesses).front();
    ASSERT_EQ(node::layout::parse_process(at).first, Pid{9});
    corrupt(*db, at);
  }
  start(genesis_);
  // A fresh client per request: an uncertain one keeps its signed bytes to resend first.
  expect_corrupt(root().query(ProcessRead{Pid{9}}), "process read");
  expect_corrupt(root().submit(CreateProcess{Pid{9}, {}}), "create over the corrupt PID");
  expect_corrupt(root().submit(Own{Pid{9}, 1}), "own");
  expect_corrupt(root().query(ListProcesses{std::nullopt}), "the process listing");
  // Only what needs the record: the node decides and answers the rest.
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(process_info(*admin_, 10).pid, Pid{10});
  accept(*admin_, CreateProcess{Pid{11}, {}});
  EXPECT_EQ(refused(admin_->submit(CreateProcess{Pid{10}, {}})).reason, Reason::kSubjectTaken);
}

TEST_F(CatalogTest, AJournalOfAnotherStorageFormatIsRefusedAsItOpens) {
  accept(*admin_, CreateProcess{Pid{9}, {}});
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
  const ResourceId doc = resource("doc");
  process(doc, 9);
  accept(*admin_, Own{Pid{9}, 1});
  accept(*admin_, Send{Pid{9}, InputValue{{1, 2, 3}}});
  accept(*admin_, Turn{Pid{9}, 2, std::nullopt, doc, std::nullopt, {{{key("a"), value("b")}}}, {}, {}, {}, std::nullopt});
  // A compaction: its ledger record, and the relocator's marker once the leaf is rewritten (decisions 144-145).
  accept(*admin_, StorageCompact{0, PrincipalLeaf{PrincipalId{1}}});
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (node_->sequencer().stats().relocated_through < 1 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(node_->sequencer().stats().relocated_through, 1u);
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
                 node::layout::kEntries, node::layout::kInputs, node::layout::kResources, node::layout::kAssociations,
                 node::layout::kCompactions, node::layout::kRelocated})
    EXPECT_TRUE(seen.count(t)) << t;
}

// Every record table keeps a version per decision (decision 161): the state
// as of an earlier position, read from the store after later decisions that
// change and remove its records, is what it was before them, table by table.
class VersionsTest : public CatalogTest {
 protected:
  /// Every record of every table of versions as of `position`: record key -> stored value.
  std::map<std::string, std::string> state_at(Position position) {
    auto db = testing::open_store(dir_);
    node::Catalog catalog(*db, nullptr, nullptr);
    std::map<std::string, std::string> state;
    for (const auto& table : node::layout::kTables) {
      if (!table.record_key) continue;
      std::set<std::string> records;
      for (const auto& k : testing::table_keys(*db, table.prefix)) records.insert(k.substr(0, table.record_key));
      for (const auto& record : records)
        if (auto stored = catalog.version_at(record, position)) state[record] = *stored;
    }
    return state;
  }
  void stop() {
    admin_.reset();
    node_.reset();
  }
  void start_again() {
    restart();
    admin_ = std::make_unique<Client>(root());
  }
  static std::set<char> tables_of(const std::map<std::string, std::string>& state) {
    std::set<char> tables;
    for (const auto& [k, v] : state) tables.insert(k[0]);
    return tables;
  }
};

TEST_F(VersionsTest, LaterDecisionsThatChangeAndRemoveRecordsLeaveEveryEarlierPositionAsItWas) {
  const ResourceId doc = resource("doc");
  process(doc, 9);
  accept(*admin_, CreateProcess{Pid{10}, {}});
  accept(*admin_, Initialize{Pid{10}, 0});
  const Id role = principal(2, 2, RealmScope{}, kInspect);
  const Id extra = grant(role, RealmScope{}, kRead);
  const Id generation = ok<ProcessChanged>(admin_->submit(Own{Pid{9}, 1})).generation;
  accept(*admin_, Send{Pid{9}, InputValue{{1, 2, 3}}});
  Turn t{Pid{9}, generation, std::nullopt, doc, std::nullopt, {{{key("a"), value("b")}}}, {}, {}, {}, std::nullopt};
  t.views.items.push_back(doc);
  t.outputs.items.push_back(OutputProposal{Pid{10}, InputValue{{4}}});
  accept(*admin_, t);
  Turn with_effect{Pid{9}, generation, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  with_effect.effect = EffectIntent{PrincipalId{1}, clock_.trusted() + Millis{60'000}, {}, 2};
  const Position first = accept(*admin_, with_effect).position;
  stop();
  const auto before = state_at(first);
  // Principals, roles, grants, credentials, resources, processes, associations, inputs, views, outputs, effects.
  for (char t : {'p', 'r', 'g', 'c', 'x', 'q', 'a', 'm', 'v', 'o', 'f'}) EXPECT_TRUE(tables_of(before).count(t)) << t;
  const std::string revoked_principal = node::layout::key(node::layout::kPrincipals, 2);
  const std::string removed_grant = node::layout::key(node::layout::kGrants, extra);
  const std::string delivered = node::layout::key(node::layout::kOutputs, 1);
  const std::string attempted = node::layout::key(node::layout::kEffects, 1);
  ASSERT_TRUE(before.count(revoked_principal) && before.count(removed_grant) && before.count(delivered) &&
              before.count(attempted));

  start_again();
  accept(*admin_, RevokeGrant{extra, std::nullopt});
  accept(*admin_, RevokePrincipal{PrincipalId{2}, std::nullopt});
  accept(*admin_, Deliver{1});
  const Position last = accept(*admin_, AttemptEffect{1}).position;
  stop();
  EXPECT_EQ(state_at(first), before);  // every record of every table, exactly
  const auto after = state_at(last);
  EXPECT_FALSE(after.count(removed_grant));  // a removal is a version of its own
  for (const auto& k : {revoked_principal, delivered, attempted}) {
    ASSERT_TRUE(after.count(k));
    EXPECT_NE(after.at(k), before.at(k));
  }
  // The typed reads show the same, and a restart serves the latest versions.
  {
    auto db = testing::open_store(dir_);
    node::Catalog catalog(*db, nullptr, nullptr);
    EXPECT_FALSE(catalog.record_at<node::PrincipalRecord>(revoked_principal, first)->value().revoked);
    EXPECT_TRUE(catalog.record_at<node::PrincipalRecord>(revoked_principal, last)->value().revoked);
    EXPECT_EQ(catalog.record_at<node::OutputRecord>(delivered, first)->value().state, OutputState::kPending);
    EXPECT_EQ(catalog.record_at<node::OutputRecord>(delivered, last)->value().state, OutputState::kDelivered);
    EXPECT_FALSE(catalog.record_at<node::GrantRecord>(removed_grant, last)->has_value());
  }
  start_again();
  EXPECT_FALSE(admin_->decision(PrincipalId{2}, RealmScope{}, Permissions{kInspect})->allowed);  // revoked, as the newest version says
  EXPECT_EQ(answer<EffectInfo>(*admin_, EffectRead{1}).phase, EffectPhase::kAttempted);
}

// A stored version that does not decode, or a key not of its table's shape,
// fails closed: the journal does not open, and a read as of a position is a
// typed error naming the table, never an answer without the record. (A table
// read at start: the root's grant. Associations, which this planted in
// before decision 175, are read when needed and fail at the read instead:
// StoredCatalogTest.ACorruptStoredAssociationOrResourceFailsClosedAtTheRead.)
TEST_F(VersionsTest, ACorruptStoredVersionFailsClosed) {
  const ResourceId doc = resource("doc");
  process(doc, 9);
  const Position at = accept(*admin_, Own{Pid{9}, 1}).position;
  stop();
  const auto open_error = [&] {
    node::NodeConfig config;
    config.data_dir = dir_;
    auto n = node::Node::open(config, clock_);
    return n.ok() ? std::string("opened") : n.error();
  };
  const std::string record = node::layout::key(node::layout::kGrants, 1);
  std::string good;
  const auto plant = [&](const std::string& k, const std::optional<std::string>& v) {
    auto db = testing::open_store(dir_);
    rocksdb::WriteOptions synced;
    synced.sync = true;
    ASSERT_TRUE((v ? db->Put(synced, k, *v) : db->Delete(synced, k)).ok());
  };
  {
    auto db = testing::open_store(dir_);
    const auto keys = testing::table_keys(*db, node::layout::kGrants);
    ASSERT_EQ(keys.size(), 1u);
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), keys[0], &good).ok());
  }
  const std::string newest = node::layout::version(record, at + 1);  // newer than every version
  plant(newest, "{\"not\":\"a grant\"}");
  EXPECT_NE(open_error().find("journal: GrantRecord"), std::string::npos) << open_error();
  {
    auto db = testing::open_store(dir_);
    node::Catalog catalog(*db, nullptr, nullptr);
    auto read = catalog.record_at<node::GrantRecord>(record, at + 1);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().table, "grants");
    EXPECT_TRUE(catalog.record_at<node::GrantRecord>(record, at).ok());  // the earlier version is intact
  }
  plant(newest, std::nullopt);
  plant(record, good);  // a key without its position
  EXPECT_NE(open_error().find("a stored key of another shape"), std::string::npos) << open_error();
  plant(record, std::nullopt);
  EXPECT_EQ(open_error(), "opened");
}

// And the one before it: every record versioned, without the head's storage fields and the ledger (decision 140).
TEST_F(VersionsTest, AJournalOfTheProcessVersionsFormatIsRefused) {
  stop();
  for (const std::string earlier :
       {"transit.storage.2", "transit.storage.3", "transit.storage.4", "transit.storage.5", "transit.storage.6"}) {
    {
      auto db = testing::open_store(dir_);
      rocksdb::WriteOptions synced;
      synced.sync = true;
      ASSERT_TRUE(db->Put(synced, node::layout::kFormat, earlier).ok());
    }
    node::NodeConfig config;
    config.data_dir = dir_;
    auto n = node::Node::open(config, clock_);
    ASSERT_FALSE(n.ok());
    EXPECT_NE(n.error().find("another storage format (" + earlier + "; this build reads transit.storage.7)"),
              std::string::npos)
        << n.error();
  }
}

// Decision 158: the resident records are a least-recently-used cache. Over
// its bound, a decision or query starts by evicting the records read longest
// ago, down to the bound; those read since stay (before, every record went).
class CountingSource final : public node::RecordSource {
 public:
  Result<std::optional<node::ProcessRecord>, node::CorruptRecord> process(Pid pid, Position) const override {
    ++reads;
    node::ProcessRecord r;
    r.pid = pid;
    return std::optional<node::ProcessRecord>{r};
  }
  std::optional<node::CorruptRecord> processes(Pid, Position, const std::function<bool(const node::ProcessRecord&)>&) const override {
    return std::nullopt;
  }
  std::optional<std::string> record(const std::string&, Position) const override { return std::nullopt; }
  void records(char, Id, Position, const std::function<bool(Id, std::string_view)>&) const override {}
  void rows(const std::string&, const std::string&, const std::function<bool(std::string_view)>&) const override {}
  mutable int reads = 0;
};

class NoCatalog final : public node::CatalogReader {
 public:
  std::optional<Entry> entry(ResourceId, const EntryKey&, Revision) const override { return std::nullopt; }
  Scan entries(ResourceId, Revision, const std::optional<EntryKey>&, std::size_t, std::size_t) const override { return {}; }
  std::optional<Input> input(Pid, Id) const override { return std::nullopt; }
  std::optional<std::pair<Revision, node::Bytes>> block(ResourceId, const EntryKey&) const override { return std::nullopt; }
  std::optional<BlockInfo> block_record(ResourceId, const EntryKey&) const override { return std::nullopt; }
  bool stores(const StorageLeaf&) const override { return false; }
  std::optional<node::JournalEntry> committed_entry(Position) const override { return std::nullopt; }
};

TEST(ResidentProcesses, OverTheBoundTheLeastRecentlyUsedAreEvictedAndTheRestStay) {
  node::Authority authority(testing::sample_genesis());
  CountingSource source;
  NoCatalog catalog;
  authority.read_records_from(&source);
  authority.limit_resident(3);
  const auto query_starts = [&] {  // where the bound is applied
    ASSERT_TRUE(authority.answer(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, CapabilitiesQuery{}}, TrustedMs{}, catalog).ok());
  };
  for (Pid pid{1}; pid <= Pid{4}; pid = Pid{pid.value + 1}) ASSERT_TRUE(authority.process(pid));
  ASSERT_TRUE(authority.process(Pid{1}));  // 1 read again: 2 is now the least recently used
  EXPECT_EQ(source.reads, 4);
  query_starts();                     // four resident, three allowed: 2 goes
  for (Pid pid : {Pid{1}, Pid{3}, Pid{4}}) ASSERT_TRUE(authority.process(pid));
  EXPECT_EQ(source.reads, 4);  // still resident
  ASSERT_TRUE(authority.process(Pid{2}));
  EXPECT_EQ(source.reads, 5);  // read again from the source
  query_starts();              // 1, 3, 4, 2 by recency: 1 goes
  ASSERT_TRUE(authority.process(Pid{2}));
  ASSERT_TRUE(authority.process(Pid{4}));
  EXPECT_EQ(source.reads, 5);
  ASSERT_TRUE(authority.process(Pid{1}));
  EXPECT_EQ(source.reads, 6);
}

}  // namespace
}  // namespace cowboy::transit
