// Collection over real HTTP against a transitd in this process (docs/transit.md,
// decisions 110-117, 186-188): each gate refusing its blocked case by name, the budget
// of eight removals per command with a restart between two commands, the
// permanent tombstone, and that no PID, resource name or record id comes back.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>

#include "common/crypto.h"
#include "state_fixture.h"
#include "store_probe.h"

namespace cowboy::transit {
namespace {

InputValue bytes(const std::string& s) { return InputValue{{s.begin(), s.end()}}; }

class CollectionTest : public StateTest {
 protected:
  void SetUp() override {
    StateTest::SetUp();
    doc_ = resource("doc");
    accept(*admin_, CreateProcess{kPid, {{{"doc"}}}, true});
    accept(*admin_, Associate{kPid, {"doc"}, doc_});
    accept(*admin_, Initialize{kPid, 0});
    generation_ = ok<ProcessChanged>(admin_->submit(Own{kPid, 1})).generation;
  }
  template <typename P = Pid> Turn turn(P pid = kPid, std::optional<Id> generation = std::nullopt) {
    return Turn{testing::id<Pid>(pid), generation.value_or(generation_), std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {},
                std::nullopt};
  }
  TurnPublished publish(const Turn& t) { return ok<TurnPublished>(admin_->submit(t)); }
  // A record is named by its number; a resource's may be given as its ResourceId.
  static std::optional<Id> record_of(std::optional<Id> record) { return record; }
  static std::optional<Id> record_of(ResourceId resource) { return resource.value; }
  template <typename R, typename P = Pid> ClientResult<Receipt> collect(CollectKind kind, R record, P pid = kPid) {
    return admin_->submit(Collect{testing::id<Pid>(pid), kind, record_of(record)});
  }
  template <typename R, typename P = Pid> Collected collected(CollectKind kind, R record, P pid = kPid) {
    return ok<Collected>(collect(kind, record, pid));
  }
  template <typename R, typename P = Pid> Reason refusal(CollectKind kind, R record, P pid = kPid) {
    return refused(collect(kind, record, pid)).reason;
  }
  template <typename P = Pid> void terminate(P pid_of = kPid) {
    const Pid pid = testing::id<Pid>(pid_of);
    accept(*admin_, Terminate{pid, process_info(*admin_, pid).generation});
  }
  /// A process that allows collection, initialized and owned by the root: its generation.
  Id running(auto pid_of, bool allow_collection = true) {
    const Pid pid = testing::id<Pid>(pid_of);
    accept(*admin_, CreateProcess{pid, {}, allow_collection});
    accept(*admin_, Initialize{pid, 0});
    return ok<ProcessChanged>(admin_->submit(Own{pid, 1})).generation;
  }

  ResourceId doc_{};
  Id generation_ = 0;
};

TEST_F(CollectionTest, TheCapabilityIsReported) {
  const auto caps = admin_->capabilities();
  ASSERT_TRUE(caps.ok());
  EXPECT_NE(std::find(caps->supported.items.begin(), caps->supported.items.end(), CapabilityName{"collection"}),
            caps->supported.items.end());
}

TEST_F(CollectionTest, OnlyAProcessAdmittedWithAllowCollectionIsCollected) {
  accept(*admin_, CreateProcess{Pid{8}, {}, false});
  terminate(8);
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt, 8), Reason::kCollectionNotAllowed);
  EXPECT_EQ(refusal(CollectKind::kOutput, Id{1}, 8), Reason::kCollectionNotAllowed);
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt, 99), Reason::kUnknownProcess);
}

// A pending output is refused; a delivered one goes, and the input it became
// stays the destination's (decision 112).
TEST_F(CollectionTest, AnOutputIsCollectedOnlyOnceResolvedAndItsDeliveredInputStays) {
  running(9);
  Turn t = turn();
  t.outputs.items = {{Pid{9}, bytes("first")}, {Pid{9}, bytes("second")}};
  const auto published = publish(t);
  const Id first = published.outputs.items[0], second = published.outputs.items[1];
  EXPECT_EQ(refusal(CollectKind::kOutput, first), Reason::kOutputPending);
  const auto delivered = ok<Delivered>(admin_->submit(Deliver{first}));
  ASSERT_TRUE(delivered.input);
  EXPECT_EQ(refusal(CollectKind::kOutput, first, 9), Reason::kNotOfProcess);
  EXPECT_EQ(collected(CollectKind::kOutput, first), (Collected{kPid, CollectKind::kOutput, first, 1, true}));
  EXPECT_EQ(refusal(CollectKind::kOutput, first), Reason::kUnknownOutput);
  const auto destination = process_info(*admin_, 9);
  ASSERT_TRUE(destination.input);
  EXPECT_EQ(destination.input->input, *delivered.input);
  EXPECT_EQ(destination.input->value, bytes("first"));

  // The process itself waits for its pending output too, on either end of the route.
  terminate();
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt), Reason::kOutputPending);
  accept(*admin_, CancelOutput{second});
  EXPECT_TRUE(collected(CollectKind::kOutput, second).complete);
}

TEST_F(CollectionTest, AnEffectIsCollectedOnlyOnceClosed) {
  Turn t = turn();
  t.effect = EffectIntent{PrincipalId{1}, clock_.trusted() + Millis{60'000}, {}, 1};
  const Id effect = publish(t).effect.value_or(0);
  ASSERT_NE(effect, 0u);
  EXPECT_EQ(refusal(CollectKind::kEffect, effect), Reason::kEffectUnresolved);
  terminate();
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt), Reason::kEffectUnresolved);
  accept(*admin_, CancelEffect{effect});
  EXPECT_EQ(collected(CollectKind::kEffect, effect), (Collected{kPid, CollectKind::kEffect, effect, 1, true}));
  EXPECT_EQ(query_refused(*admin_, EffectRead{effect}).reason, Reason::kUnknownEffect);
}

// Every step short of confirmed deletion is refused: declared, retired.
TEST_F(CollectionTest, APayloadIsCollectedOnlyWithConfirmedDeletion) {
  const Id payload = ok<PayloadChanged>(admin_->submit(DeclarePayload{kPid, 3, Digest{}, true})).payload;
  EXPECT_EQ(refusal(CollectKind::kPayload, payload), Reason::kPayloadNotDeleted);
  terminate();
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt), Reason::kPayloadNotDeleted);
  accept(*admin_, RetirePayload{payload});
  EXPECT_EQ(refusal(CollectKind::kPayload, payload), Reason::kPayloadNotDeleted);
  accept(*admin_, PayloadDeleted{payload});  // nothing was ever uploaded: the store holds none of it
  EXPECT_EQ(collected(CollectKind::kPayload, payload), (Collected{kPid, CollectKind::kPayload, payload, 1, true}));
  EXPECT_EQ(query_refused(*admin_, PayloadRead{payload}).reason, Reason::kUnknownPayload);
}

// A resource the process owns: retired first, then a running holder's view,
// a retired holder's retained view and a running consumer's association each
// block; the owner's own view and retired consumers' associations go with it.
TEST_F(CollectionTest, AResourceWaitsForRetirementViewsAndRunningConsumers) {
  const ResourceId r = resource("r", kPid);
  EXPECT_EQ(refusal(CollectKind::kResource, r), Reason::kResourceNotRetired);
  const Id viewer = 11, viewer_generation = running(viewer);
  EXPECT_EQ(refusal(CollectKind::kResource, r, viewer), Reason::kNotOfProcess);  // kPid owns its lifetime
  accept(*admin_, Associate{Pid{viewer}, {"r"}, r});
  Turn viewing = turn(viewer, viewer_generation);
  viewing.views.items = {r};
  publish(viewing);
  accept(*admin_, CreateProcess{Pid{9}, {}, false});
  accept(*admin_, Associate{Pid{9}, {"r"}, r});
  accept(*admin_, Associate{kPid, {"r"}, r});
  Turn own_view = turn();
  own_view.views.items = {r};
  publish(own_view);
  accept(*admin_, RetireResource{r});

  EXPECT_EQ(refusal(CollectKind::kResource, r), Reason::kViewLive);
  terminate(viewer);
  EXPECT_EQ(refusal(CollectKind::kResource, r), Reason::kVersionRetained);
  EXPECT_EQ(collected(CollectKind::kProcess, std::nullopt, viewer),
            (Collected{Pid{viewer}, CollectKind::kProcess, viewer, 2, true}));  // its view and its association
  EXPECT_EQ(refusal(CollectKind::kResource, r), Reason::kAssociationLive);
  terminate(9);
  EXPECT_EQ(refusal(CollectKind::kResource, r), Reason::kAssociationLive);  // the owner's own, while it runs
  terminate();
  // kPid's view and association, 9's association.
  EXPECT_EQ(collected(CollectKind::kResource, r), (Collected{kPid, CollectKind::kResource, r.value, 3, true}));
  EXPECT_EQ(refusal(CollectKind::kResource, r), Reason::kAlreadyCollected);
  EXPECT_EQ(refused(admin_->submit(CreateResource{{"r"}, std::nullopt})).reason, Reason::kNameTaken);
  EXPECT_TRUE(answer<AssociationPage>(*admin_, ListAssociations{Pid{9}, std::nullopt}).items.items.empty());
}

// Decision 187: the seed's cleanup "removes at most eight entries or grants
// in one command". After its views and associations, a retired resource's
// grants go (the policy revision advances) and then its live entries, each as
// a deletion version at a new revision, eight removals a command in all, a
// restart between two commands; the versions it had stay on disk, and a grant
// on another resource stays.
TEST_F(CollectionTest, AResourcesGrantsAndEntriesAreRemovedEightACommand) {
  const ResourceId r = resource("r", kPid);
  accept(*admin_, Associate{kPid, {"r"}, r});
  for (int first = 0; first < 10; first += 4) {
    Turn write = turn();
    write.resource = r;
    for (int i = first; i < std::min(10, first + 4); ++i)
      write.mutations.items.push_back({key(numbered("k", i)), value(numbered("v", i))});
    publish(write);
  }
  const Revision written = revision_of(r);
  const Id role = principal(12, 112, RealmScope{}, kInspect);
  std::vector<Id> grants;
  for (int i = 0; i < 3; ++i) grants.push_back(grant(role, ResourceScope{r}, kRead));
  const Id kept = grant(role, ResourceScope{doc_}, kRead);
  accept(*admin_, RetireResource{r});
  terminate();

  // Its association, its three grants, four of its ten entries; then the other six.
  const auto policy = answer<Identity>(*admin_, IdentityQuery{}).policy_revision;
  EXPECT_EQ(collected(CollectKind::kResource, r), (Collected{kPid, CollectKind::kResource, r.value, 8, false}));
  EXPECT_GT(answer<Identity>(*admin_, IdentityQuery{}).policy_revision, policy);
  for (Id g : grants) EXPECT_EQ(refused(admin_->submit(RevokeGrant{g, std::nullopt})).reason, Reason::kUnknownGrant);
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(collected(CollectKind::kResource, r), (Collected{kPid, CollectKind::kResource, r.value, 6, true}));
  EXPECT_EQ(refusal(CollectKind::kResource, r), Reason::kAlreadyCollected);
  accept(*admin_, RevokeGrant{kept, std::nullopt});
  EXPECT_TRUE(collected(CollectKind::kProcess, std::nullopt).complete);

  // On disk: every version written is still there, and each key's newest is a deletion above them.
  node_.reset();
  {
    auto db = testing::open_store(dir_);
    const std::string prefix = node::layout::entries_of(r);
    std::map<std::string, std::vector<std::pair<Id, bool>>> versions;  // key: (revision, live), newest first
    for (const auto& stored : testing::table_keys(*db, node::layout::kEntries)) {
      if (!stored.starts_with(prefix)) continue;
      std::string v;
      ASSERT_TRUE(db->Get(rocksdb::ReadOptions{}, stored, &v).ok());
      const auto [k, revision] = node::layout::parse_entry(stored);
      versions[std::string(k.value.begin(), k.value.end())].push_back({revision.value, node::layout::parse_entry_value(v).has_value()});
    }
    ASSERT_EQ(versions.size(), 10u);
    for (const auto& [k, list] : versions) {
      ASSERT_EQ(list.size(), 2u) << k;
      EXPECT_GT(list[0].first, written.value) << k;
      EXPECT_FALSE(list[0].second) << k;
      EXPECT_LE(list[1].first, written.value) << k;
      EXPECT_TRUE(list[1].second) << k;
    }
  }
  start(genesis_);
}

// Decision 188: a resource's collection takes its entries in key order and
// each command scans on from past the last key the one before removed, so a
// command's work does not grow with what the earlier ones removed. 20,000
// entries, 2,501 commands: counted by the node's key-visit counter
// (decision 191), the whole cleanup visits each stored key at most twice
// (before, each command scanned every key from the first: some 25 million
// visits). Every entry ends deleted, and its value stays at the revision
// before the cleanup.
TEST_F(CollectionTest, AResourcesEntriesAreCollectedAtACostThatDoesNotGrowWithWhatWasRemoved) {
  constexpr int kEntries = 20000;
  const ResourceId r = resource("r", kPid);
  accept(*admin_, Associate{kPid, {"r"}, r});
  for (int first = 0; first < kEntries; first += 4) {
    Turn write = turn();
    write.resource = r;
    for (int i = first; i < first + 4; ++i) write.mutations.items.push_back({key(numbered("k", i)), value(numbered("v", i))});
    publish(write);
  }
  const Revision written = revision_of(r);
  accept(*admin_, RetireResource{r});
  terminate();

  // The counter as transitd's /metrics serves it.
  const auto visited = [&] {
    const std::string text = node_->metrics_text(), series = "\ntransitd_collection_keys_visited_total ";
    const auto at = text.find(series);
    EXPECT_NE(at, std::string::npos) << text;
    return at == std::string::npos ? ~std::uint64_t{0} : std::stoull(text.substr(at + series.size()));
  };
  const std::uint64_t before = visited();
  EXPECT_EQ(before, 0u);  // no collection yet
  std::size_t commands = 0;
  Id removed = 0;
  for (bool complete = false; !complete && commands < kEntries; ++commands) {
    const Collected c = collected(CollectKind::kResource, r);
    removed += c.removed;
    complete = c.complete;
  }
  EXPECT_EQ(removed, Id{kEntries + 1});  // its association and every entry
  ASSERT_EQ(commands, std::size_t{kEntries / 8 + 1});
  // Each key once, in key order, with the scans' cursor (decision 188); the
  // bound allows twice, as after a restart's one scan from the first key.
  const std::uint64_t keys = visited() - before;
  std::cout << "keys visited by the cleanup: " << keys << " (" << kEntries << " keys)\n";
  EXPECT_GE(keys, std::uint64_t{kEntries});
  EXPECT_LE(keys, std::uint64_t{2 * kEntries});
  EXPECT_EQ(refusal(CollectKind::kResource, r), Reason::kAlreadyCollected);

  // On disk (a retired resource is not read over HTTP, lifetime_ended), every
  // key: its value at or below `written`, where the catalog's reads at that
  // revision find it, and a deletion above it as its newest version.
  node_.reset();
  {
    auto db = testing::open_store(dir_);
    const std::string prefix = node::layout::entries_of(r);
    std::map<std::string, std::vector<std::pair<Id, std::optional<EntryValue>>>> versions;  // key: (revision, value), newest first
    for (const auto& stored : testing::table_keys(*db, node::layout::kEntries)) {
      if (!stored.starts_with(prefix)) continue;
      std::string v;
      ASSERT_TRUE(db->Get(rocksdb::ReadOptions{}, stored, &v).ok());
      const auto [k, revision] = node::layout::parse_entry(stored);
      versions[std::string(k.value.begin(), k.value.end())].push_back({revision.value, node::layout::parse_entry_value(v)});
    }
    ASSERT_EQ(versions.size(), std::size_t{kEntries});
    for (int i = 0; i < kEntries; ++i) {
      const auto& list = versions[numbered("k", i)];
      ASSERT_EQ(list.size(), 2u) << i;
      EXPECT_GT(list[0].first, written.value) << i;
      EXPECT_FALSE(list[0].second) << i;
      EXPECT_LE(list[1].first, written.value) << i;
      EXPECT_EQ(list[1].second, std::optional(value(numbered("v", i)))) << i;
    }
  }
  start(genesis_);
}

// Decision 190: a process that wrote a resource whose lifetime another owns
// is collected only once that resource is. Its views and associations go
// first (the resource's collection waits on a view it retains); then collect
// refuses resource_not_removed - after a restart too, and the maintenance
// listing leaves it out - until the owner's collection of the resource
// removes its rows with the resource's last entry; then it goes.
TEST_F(CollectionTest, AProcessThatWroteAResourceItDoesNotOwnIsCollectedOnlyOnceThatResourceIs) {
  const ResourceId r = resource("r", kPid);
  const Id writer = 9, writer_generation = running(writer);
  accept(*admin_, Associate{Pid{writer}, {"r"}, r});
  Turn write = turn(writer, writer_generation);
  write.resource = r;
  write.mutations.items = {{key("k"), value("v")}};
  write.views.items = {r};
  publish(write);
  terminate(writer);
  EXPECT_EQ(collected(CollectKind::kProcess, std::nullopt, writer),
            (Collected{Pid{writer}, CollectKind::kProcess, writer, 2, false}));  // its view and its association
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt, writer), Reason::kResourceNotRemoved);
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt, writer), Reason::kResourceNotRemoved);
  const auto listed = answer<CollectablePage>(*admin_, ListCollectable{std::nullopt}).items.items;
  EXPECT_EQ(std::count(listed.begin(), listed.end(), CollectableRecord{Pid{writer}, CollectKind::kProcess, writer}), 0);

  accept(*admin_, RetireResource{r});
  // Its entry, then the writer's rows: one command, and the resource is a tombstone.
  EXPECT_EQ(collected(CollectKind::kResource, r), (Collected{kPid, CollectKind::kResource, r.value, 2, true}));
  EXPECT_EQ(collected(CollectKind::kProcess, std::nullopt, writer),
            (Collected{Pid{writer}, CollectKind::kProcess, writer, 0, true}));
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt, writer), Reason::kAlreadyCollected);
}

// Decision 190, the writers left: ten processes wrote r, which kPid owns -
// more writers than one command's eight removals. Each is refused
// resource_not_removed until r's collection removes its rows; that
// collection answers complete: false while any writer's rows are left, over a
// restart too, and the command removing the last writes the tombstone. A
// writer whose rows went in an earlier command is collectable before then:
// the window decision 190 states (the listing shows it).
TEST_F(CollectionTest, AResourceWithMoreWritersThanOneCommandRemovesIsCollectedOverSeveralCommands) {
  const ResourceId r = resource("r", kPid);
  std::vector<Pid> writers;
  for (Id pid = 20; pid < 30; ++pid) {
    const Id generation = running(pid);
    accept(*admin_, Associate{Pid{pid}, {"r"}, r});
    Turn write = turn(pid, generation);
    write.resource = r;
    write.mutations.items = {{key("k"), value("v" + std::to_string(pid))}};
    publish(write);
    terminate(pid);
    writers.push_back(Pid{pid});
  }
  const auto refused_all = [&](std::size_t from) {
    for (std::size_t i = from; i < writers.size(); ++i)
      EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt, writers[i]), Reason::kResourceNotRemoved) << i;
  };
  const auto listed = [&] {  // the processes, from every page
    std::vector<CollectableRecord> out;
    std::optional<Cursor> cursor;
    do {
      const auto page = answer<CollectablePage>(*admin_, ListCollectable{cursor});
      for (const auto& item : page.items.items)
        if (item.kind == CollectKind::kProcess) out.push_back(item);
      cursor = page.cursor;
    } while (cursor);
    return out;
  };
  refused_all(0);
  accept(*admin_, RetireResource{r});
  // The writers' ten associations, then the entry, then the writers' rows: 21 removals.
  EXPECT_EQ(collected(CollectKind::kResource, r), (Collected{kPid, CollectKind::kResource, r.value, 8, false}));
  refused_all(0);
  // Two associations, the entry, five writers' rows.
  EXPECT_EQ(collected(CollectKind::kResource, r), (Collected{kPid, CollectKind::kResource, r.value, 8, false}));
  restart();
  admin_ = std::make_unique<Client>(root());
  refused_all(5);
  std::vector<CollectableRecord> early;
  for (std::size_t i = 0; i < 5; ++i) early.push_back(CollectableRecord{writers[i], CollectKind::kProcess, writers[i].value});
  EXPECT_EQ(listed(), early);  // r is no tombstone yet
  EXPECT_EQ(collected(CollectKind::kResource, r), (Collected{kPid, CollectKind::kResource, r.value, 5, true}));
  EXPECT_EQ(refusal(CollectKind::kResource, r), Reason::kAlreadyCollected);
  EXPECT_EQ(listed().size(), writers.size());
  for (Pid w : writers)
    EXPECT_EQ(collected(CollectKind::kProcess, std::nullopt, w), (Collected{w, CollectKind::kProcess, w.value, 0, true}));
}

// Decision 190: being associated is not writing. A process that named the
// resource in its turns and viewed it, writing nothing, is collected with the
// resource live; so is one whose writes were all to what it owns.
TEST_F(CollectionTest, AProcessAssociatedWithAResourceItNeverWroteIsNotHeldByIt) {
  const ResourceId r = resource("r", kPid);
  const Id reader = 9, reader_generation = running(reader);
  accept(*admin_, Associate{Pid{reader}, {"r"}, r});
  Turn look = turn(reader, reader_generation);
  look.resource = r;  // its writable resource, with nothing written
  look.views.items = {r};
  publish(look);
  const ResourceId own = resource("own", reader);
  accept(*admin_, Associate{Pid{reader}, {"own"}, own});
  Turn write = turn(reader, reader_generation);
  write.resource = own;
  write.mutations.items = {{key("k"), value("v")}};
  publish(write);
  terminate(reader);
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt, reader), Reason::kResourceNotRemoved);  // what it owns
  EXPECT_EQ(collected(CollectKind::kResource, own, reader), (Collected{Pid{reader}, CollectKind::kResource, own.value, 2, true}));
  EXPECT_EQ(collected(CollectKind::kProcess, std::nullopt, reader),
            (Collected{Pid{reader}, CollectKind::kProcess, reader, 2, true}));  // its view and its association with r
}

// Decision 190, with decision 114's realm resources: a resource without an
// owner is never collected, so a process that wrote one is kept forever, as
// one whose payload has no allow_delete is (decision 113).
TEST_F(CollectionTest, AProcessThatWroteARealmResourceIsKeptForever) {
  Turn write = turn();
  write.resource = doc_;
  write.mutations.items = {{key("k"), value("v")}};
  publish(write);
  terminate();
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt), Reason::kResourceNotRemoved);
  EXPECT_EQ(refusal(CollectKind::kResource, doc_), Reason::kNotOfProcess);
}

// A payload declared without allow_delete is kept forever, and so is its process.
TEST_F(CollectionTest, APayloadKeptForeverKeepsItsProcess) {
  ok<PayloadChanged>(admin_->submit(DeclarePayload{kPid, 3, Digest{}, false}));
  terminate();
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt), Reason::kPayloadNotDeleted);
}

// The process last: retired, its resources collected, then its views,
// associations, mailbox inputs and finished outputs, eight per command, a
// restart between two commands; then a tombstone that keeps the PID, the
// resource name and every id taken, across restarts.
// Decision 115's provider gate: a process bound to a runtime placement is
// collected only once its provider is observed stopped, which is taken after
// the retirement too.
TEST_F(CollectionTest, ABoundProcessIsCollectedOnlyOnceItsProviderIsObservedStopped) {
  constexpr PrincipalId kWorker{10};
  principal(kWorker, 110, RealmScope{}, kInspect | kRead | kWrite | kSend | kExecute, kPid);
  Digest digest{};
  digest.fill(0xa1);
  accept(*admin_, RuntimeIntent{kPid, 1, 3, Name{"host-a"}, kWorker, digest, digest});
  accept(*admin_, RuntimeObserve{kPid, 1, 1, RuntimeStatus::kStarting, std::nullopt});
  terminate();
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt), Reason::kProviderRunning);
  accept(*admin_, RuntimeObserve{kPid, 1, 1, RuntimeStatus::kStopped, std::nullopt});
  EXPECT_TRUE(collected(CollectKind::kProcess, std::nullopt).complete);
  // Collected: nothing more is observed of it.
  EXPECT_EQ(refused(admin_->submit(RuntimeObserve{kPid, 1, 2, RuntimeStatus::kStopped, std::nullopt})).reason,
            Reason::kRetired);
}

// Decision 186: a process's provider reservation is its runtime binding (the
// provider, operation, incarnation and worker recorded for its PID). The
// tombstone keeps it as it was, across restarts: no command at the collected
// PID moves it, the PID cannot be created or spawned again to take it, and
// another process can neither bind the reserved worker nor share the binding.
TEST_F(CollectionTest, ACollectedProcessKeepsItsProviderReservationAndNothingReissuesIt) {
  constexpr PrincipalId kWorker{10}, kOtherWorker{11};
  principal(kWorker, 110, RealmScope{}, kInspect | kRead | kWrite | kSend | kExecute, kPid);
  Digest digest{};
  digest.fill(0xa1);
  accept(*admin_, RuntimeIntent{kPid, 1, 3, Name{"host-a"}, kWorker, digest, digest});
  accept(*admin_, RuntimeObserve{kPid, 1, 1, RuntimeStatus::kReady, BootstrapEvidence{digest, digest}});
  accept(*admin_, RuntimeObserve{kPid, 1, 1, RuntimeStatus::kStopped, std::nullopt});
  terminate();
  ASSERT_TRUE(collected(CollectKind::kProcess, std::nullopt).complete);
  const auto reservation = answer<RuntimeInfo>(*admin_, RuntimeQuery{kPid});
  ASSERT_TRUE(reservation.bound);
  EXPECT_EQ(reservation.provider.value, "host-a");
  EXPECT_EQ(reservation.incarnation, 1u);

  const Pid other{30};
  const Id other_generation = running(other);
  principal(kOtherWorker, 111, RealmScope{}, kInspect | kRead | kWrite | kSend | kExecute, other);
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(refused(admin_->submit(RuntimeIntent{kPid, 2, 4, Name{"host-b"}, kWorker, digest, digest})).reason,
              Reason::kRetired);
    EXPECT_EQ(refused(admin_->submit(RuntimeUpgrade{kPid, 1, 2, 4, digest, digest})).reason, Reason::kRetired);
    EXPECT_EQ(refused(admin_->submit(RuntimeObserve{kPid, 1, 2, RuntimeStatus::kStopped, std::nullopt})).reason,
              Reason::kRetired);
    EXPECT_FALSE(admin_->submit(Activate{kPid, 0, 1, 1, PublicKey{}, PublicKey{}}).ok());
    EXPECT_EQ(refused(admin_->submit(CreateProcess{kPid, {}, true})).reason, Reason::kSubjectTaken);
    EXPECT_EQ(refused(admin_->submit(Spawn{other, other_generation, kPid, {}, true})).reason, Reason::kSubjectTaken);
    // The reserved worker is the tombstone's; another PID binds its own, on the same provider, counting afresh.
    EXPECT_EQ(refused(admin_->submit(RuntimeIntent{other, Id(1 + round), 3, Name{"host-a"}, kWorker, digest, digest})).reason,
              Reason::kForeignScope);
    EXPECT_EQ(answer<RuntimeInfo>(*admin_, RuntimeQuery{kPid}), reservation);
    restart();
    admin_ = std::make_unique<Client>(root());
  }
  const auto bound = ok<RuntimeChanged>(admin_->submit(RuntimeIntent{other, 1, 3, Name{"host-a"}, kOtherWorker, digest, digest}));
  EXPECT_EQ(bound.incarnation, 0u);
  EXPECT_EQ(answer<RuntimeInfo>(*admin_, RuntimeQuery{kPid}), reservation);
}

TEST_F(CollectionTest, AProcessIsCollectedEightRecordsACommandAndNothingIsReallocated) {
  const ResourceId r = resource("r", kPid);
  for (int i = 0; i < 10; ++i) accept(*admin_, Send{kPid, bytes(numbered("in", i))});
  for (int i = 0; i < 2; ++i) {
    Turn viewing = turn();
    viewing.views.items = {doc_};
    publish(viewing);
  }
  Turn out = turn();
  out.outputs.items = {{kPid, bytes("self")}};
  const Id output = publish(out).outputs.items[0];
  accept(*admin_, Deliver{output});  // the 11th input
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt), Reason::kProcessLive);
  terminate();
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt), Reason::kResourceNotRemoved);
  EXPECT_EQ(collected(CollectKind::kResource, r), (Collected{kPid, CollectKind::kResource, r.value, 0, true}));

  // 2 views + 1 association + 11 inputs + 1 output = 15: two commands, a restart between them.
  EXPECT_EQ(collected(CollectKind::kProcess, std::nullopt), (Collected{kPid, CollectKind::kProcess, kPid.value, 8, false}));
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(collected(CollectKind::kProcess, std::nullopt), (Collected{kPid, CollectKind::kProcess, kPid.value, 7, true}));
  EXPECT_EQ(refusal(CollectKind::kProcess, std::nullopt), Reason::kAlreadyCollected);
  EXPECT_EQ(refusal(CollectKind::kOutput, output), Reason::kAlreadyCollected);

  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(refused(admin_->submit(CreateProcess{kPid, {}, true})).reason, Reason::kSubjectTaken);
    EXPECT_EQ(refused(admin_->submit(CreateResource{{"r"}, std::nullopt})).reason, Reason::kNameTaken);
    const Pid parent{static_cast<Id>(20 + round)};
    const Id parent_generation = running(parent);
    EXPECT_EQ(refused(admin_->submit(Spawn{parent, parent_generation, kPid, {}, true})).reason, Reason::kSubjectTaken);
    // New records take new ids: the collected output's id is not handed out again.
    Turn next = turn(parent, parent_generation);
    next.outputs.items = {{parent, bytes("x")}};
    EXPECT_GT(publish(next).outputs.items[0], output);
    restart();
    admin_ = std::make_unique<Client>(root());
  }
}

}  // namespace
}  // namespace cowboy::transit
