// Storage maintenance over real HTTP against a transitd in this process
// (docs/transit.md, decisions 140-149): the fence and its epoch, a fence
// racing a prepared publication, the read-lease grace, compaction of every
// kind of leaf preserving every value and revision (through older retained
// views too) while the leaf's bytes move to new table files, each refusal by
// its reason leaving the state as it was, and a restart.
#include <algorithm>
#include <thread>

#include <rocksdb/db.h>

#include "common/crypto.h"
#include "owned_doc_fixture.h"
#include "store_probe.h"
#include "transit/contract/operations.h"
#include "transit/node/storage.h"

namespace cowboy::transit {
namespace {

using Bytes = Client::Bytes;

class StorageMaintenanceTest : public OwnedDocTest {
 protected:
  StorageStatus status(Client& c) { return answer<StorageStatus>(c, StorageQuery{}); }
  StorageStatus status() { return status(*admin_); }
  /// kPid's turn in doc putting `puts` (a null value deletes), with a view of doc when asked.
  Turn turn(std::vector<std::pair<std::string, std::optional<std::string>>> puts, bool view = false) {
    Turn t{kPid, generation_, std::nullopt, doc_, std::nullopt, {}, {}, {}, {}, std::nullopt};
    for (auto& [k, v] : puts)
      t.mutations.items.push_back({key(k), v ? std::optional<EntryValue>(value(*v)) : std::nullopt});
    if (view) t.views.items.push_back(doc_);
    return t;
  }
  /// Every entry of doc as read at `basis`, one page (the tests keep under eight keys).
  EntryPage page(Basis basis) {
    EntryPage p = answer<EntryPage>(*admin_, ListEntries{basis, std::nullopt, std::nullopt});
    EXPECT_FALSE(p.cursor) << "more than one page";
    p.cut = Position{0};  // the position read at, which every later decision moves
    return p;
  }
  /// Waits (bounded) until the relocator has rewritten every leaf up to `cursor`.
  void await_relocation(Id cursor) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (node_->sequencer().stats().relocated_through < cursor && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(node_->sequencer().stats().relocated_through, cursor);
  }
  Receipt compact(StorageLeaf leaf) { return accept(*admin_, StorageCompact{status().compaction_cursor, std::move(leaf)}); }
  std::vector<LeafNeed> needs() { return answer<CompactionNeeds>(*admin_, CompactionNeedsQuery{}).leaves.items; }
  /// Relocates every listed leaf, then the root's own, whose need is then 0 (decision 183).
  void relocate_all_needs() {
    for (int page = 0; page < 16; ++page) {
      const auto listed = needs();
      if (listed.empty()) break;
      for (const auto& n : listed) compact(n.leaf);
    }
    compact(PrincipalLeaf{PrincipalId{1}});
    ASSERT_EQ(needs(), std::vector<LeafNeed>{});
  }
  Reason compact_refused(StorageLeaf leaf, std::optional<Id> cursor = std::nullopt) {
    return refused(admin_->submit(StorageCompact{cursor.value_or(status().compaction_cursor), std::move(leaf)})).reason;
  }
};

TEST_F(StorageMaintenanceTest, TheCapabilityIsReportedAndAFreshRealmIsAtEpochZeroUnderTheCurrentDefinition) {
  const auto caps = admin_->require(capability::kStorageMaintenance);
  ASSERT_TRUE(caps.ok()) << caps.error().message;
  const StorageStatus s = status();
  EXPECT_EQ(s.location_definition, node::location_definition());
  EXPECT_EQ(s.epoch, 0u);
  EXPECT_EQ(s.fenced_at, Position{0});
  EXPECT_EQ(s.grace_below, 0u);
  EXPECT_EQ(s.compaction_cursor, 0u);
  EXPECT_EQ(s.read_lease_grace_ms, kSnapshotLeaseMaxMs);
}

// Decision 141: one ordinary signed acceptance advances the epoch by one and
// records where and when; the history floor and what is read do not change.
TEST_F(StorageMaintenanceTest, AFenceAdvancesTheEpochInOneAcceptanceAndChangesNoRetention) {
  accept(*admin_, turn({{"a", "1"}}));
  const EntryPage before = page(CurrentBasis{doc_, revision_of(doc_)});
  const auto floor_before = answer<CheckpointStatus>(*admin_, CheckpointQuery{});
  const TrustedMs t = clock_.trusted() + Millis{5'000};
  clock_.set(t);
  const Receipt r = accept(*admin_, StorageFence{0, false});
  const auto& fenced = std::get<StorageFenced>(r.outcome);
  EXPECT_EQ(fenced.epoch, 1u);
  EXPECT_EQ(fenced.fenced_at_ms, t);
  EXPECT_EQ(fenced.grace_below, 0u);
  const StorageStatus s = status();
  EXPECT_EQ(s.epoch, 1u);
  EXPECT_EQ(s.fenced_at, r.position);
  EXPECT_EQ(s.fenced_at_ms, t);
  EXPECT_EQ(page(CurrentBasis{doc_, revision_of(doc_)}), before);
  EXPECT_EQ(answer<CheckpointStatus>(*admin_, CheckpointQuery{}), floor_before);
  // The next fence names epoch 1; naming 0 again is stale.
  EXPECT_EQ(refused(admin_->submit(StorageFence{0, false})).reason, Reason::kStorageEpochChanged);
  EXPECT_EQ(refused(admin_->submit(StorageFence{7, false})).reason, Reason::kStorageEpochChanged);
  EXPECT_EQ(status(), s);
  EXPECT_EQ(std::get<StorageFenced>(accept(*admin_, StorageFence{1, false}).outcome).epoch, 2u);
}

// Decision 143: a candidate prepared at the observed (epoch, position) fails
// when a fence comes between; prepared again at the new basis it publishes.
TEST_F(StorageMaintenanceTest, AFenceRacingAPreparedPublicationMakesItFailAndLeavesTheResourceAsItWas) {
  // A worker scoped to process 8, which shares doc with kPid.
  constexpr Pid kWorked{8};
  process(doc_, kWorked);
  const auto worker_role = principal(2, 2, PidScope{kWorked}, kInspect | kExecute, kWorked);
  grant(worker_role, ResourceScope{doc_}, kInspect | kRead | kWrite);
  Client worker(options(2, 2));
  const Id generation = ok<ProcessChanged>(worker.submit(Own{kWorked, 1})).generation;
  const auto put = [&](const std::string& k, const std::string& v) {
    Turn t{kWorked, generation, std::nullopt, doc_, std::nullopt, {}, {}, {}, {}, std::nullopt};
    t.mutations.items.push_back({key(k), value(v)});
    return t;
  };
  const Revision revision = revision_of(doc_);

  // The worker observes the storage basis (a PID-scoped principal may) and prepares its publication...
  auto observed = worker.query(StorageQuery{});
  ASSERT_TRUE(observed.ok()) << observed.error().message;
  const StorageBasis basis{std::get<StorageStatus>(observed->result).epoch, observed->position};
  // ... an administrator's fence is accepted first ...
  accept(*admin_, StorageFence{basis.epoch, false});
  // ... and the original publication fails, changing nothing.
  EXPECT_EQ(refused(worker.submit(PreparedTurn{basis, put("a", "prepared")})).reason, Reason::kStorageFenced);
  EXPECT_EQ(revision_of(doc_), revision);
  EXPECT_EQ(page(CurrentBasis{doc_, revision}).items.items.size(), 0u);

  // Prepared again at the basis observed now, it publishes; a compaction between does not fence it.
  auto again = worker.query(StorageQuery{});
  ASSERT_TRUE(again.ok());
  const StorageBasis now{std::get<StorageStatus>(again->result).epoch, again->position};
  compact(ProcessLeaf{kWorked});
  const Receipt published = accept(worker, PreparedTurn{now, put("a", "prepared")});
  EXPECT_EQ(std::get<TurnPublished>(published.outcome).revision, revision + 1);
  EXPECT_EQ(text(page(CurrentBasis{doc_, revision + 1}).items.items.at(0).value), "prepared");

  // A basis past what is stored is no observation at all.
  EXPECT_EQ(refused(worker.submit(PreparedTurn{{now.epoch + 1, now.position}, put("b", "x")})).reason,
            Reason::kStorageBasisAhead);
  EXPECT_EQ(refused(worker.submit(PreparedTurn{{now.epoch, position() + 5}, put("b", "x")})).reason,
            Reason::kStorageBasisAhead);
  // A prepared turn keeps every rule of a turn: a stale generation is still stale.
  auto basis_now = worker.query(StorageQuery{});
  ASSERT_TRUE(basis_now.ok());
  Turn stale = put("b", "x");
  stale.generation -= 1;
  EXPECT_EQ(refused(worker.submit(PreparedTurn{{now.epoch, basis_now->position}, stale})).reason, Reason::kStaleGeneration);
  EXPECT_EQ(revision_of(doc_), revision + 1);
}

// Decision 142: grace is recorded by a later fence once trusted time is a
// whole lease past the current epoch's fence, and never before.
TEST_F(StorageMaintenanceTest, AFenceRecordsReadLeaseGraceOnlyOnceTrustedTimeIsALeasePastTheCurrentFence) {
  const TrustedMs t = clock_.trusted() + Millis{1'000};
  clock_.set(t);
  EXPECT_EQ(refused(admin_->submit(StorageFence{0, true})).reason, Reason::kNoEarlierFence);
  EXPECT_EQ(status().epoch, 0u);
  accept(*admin_, StorageFence{0, false});  // epoch 1, at t
  clock_.set(t + kReadLeaseGraceMs - Millis{1});
  const StorageStatus before = status();
  EXPECT_EQ(refused(admin_->submit(StorageFence{1, true})).reason, Reason::kReadLeaseGracePending);
  EXPECT_EQ(status(), before);
  clock_.set(t + kReadLeaseGraceMs);
  const StorageFenced fenced = std::get<StorageFenced>(accept(*admin_, StorageFence{1, true}).outcome);
  EXPECT_EQ(fenced.epoch, 2u);
  EXPECT_EQ(fenced.grace_below, 1u);  // every lease taken under epoch 0 has ended
  // A fence without the grace keeps what was recorded.
  clock_.set(t + kReadLeaseGraceMs + Millis{1});
  EXPECT_EQ(std::get<StorageFenced>(accept(*admin_, StorageFence{2, false}).outcome).grace_below, 1u);
  EXPECT_EQ(status().grace_below, 1u);
}

// Decisions 141 and 144: realm-wide administrative authority, held now;
// every refusal leaves the storage head as it was. Anyone may read it.
TEST_F(StorageMaintenanceTest, WithoutRealmControlAtRealmScopeNeitherOperationIsAccepted) {
  principal(2, 2, RealmScope{}, kAllPermissions & ~kRealmControl);
  principal(3, 3, PidScope{kPid}, kAllPermissions, kPid);  // everything, but PID-scoped: never the realm
  const auto held = ok<PrincipalCreated>(admin_->submit(CreatePrincipal{
      PrincipalId{4}, testing::key_of(testing::seed_of(4)), RealmScope{}, Permissions{kAllPermissions}, std::nullopt, std::nullopt}));
  Client writer(options(2, 2)), scoped(options(3, 3)), revoked(options(4, 4));
  accept(revoked, StorageFence{0, false});  // while its grant is held
  accept(*admin_, RevokeGrant{held.grant, std::nullopt});
  const StorageStatus before = status();
  for (Client* c : {&writer, &scoped, &revoked}) {
    EXPECT_EQ(refused(c->submit(StorageFence{1, false})).reason, Reason::kNotPermitted);
    EXPECT_EQ(refused(c->submit(StorageCompact{0, ProcessLeaf{kPid}})).reason, Reason::kNotPermitted);
    EXPECT_EQ(status(*c), before);
  }
  EXPECT_EQ(status(), before);
}

// Decision 144: a compaction names the stored cursor and a leaf that is
// stored; otherwise nothing changes.
TEST_F(StorageMaintenanceTest, AStaleCursorOrALeafThatIsNotStoredIsRefused) {
  accept(*admin_, turn({{"a", "1"}}));
  compact(EntryLeaf{doc_, key("a")});
  const StorageStatus before = status();
  EXPECT_EQ(compact_refused(EntryLeaf{doc_, key("a")}, Id{0}), Reason::kCompactionCursorChanged);
  EXPECT_EQ(compact_refused(EntryLeaf{doc_, key("a")}, Id{5}), Reason::kCompactionCursorChanged);
  EXPECT_EQ(compact_refused(EntryLeaf{doc_, key("never")}), Reason::kUnknownLeaf);
  EXPECT_EQ(compact_refused(EntryLeaf{ResourceId{doc_.value + 9}, key("a")}), Reason::kUnknownLeaf);
  EXPECT_EQ(compact_refused(BlockLeaf{doc_, key("none")}), Reason::kUnknownLeaf);
  EXPECT_EQ(compact_refused(ProcessLeaf{Pid{kPid.value + 1}}), Reason::kUnknownLeaf);
  EXPECT_EQ(compact_refused(PrincipalLeaf{PrincipalId{99}}), Reason::kUnknownLeaf);
  EXPECT_EQ(compact_refused(RoleLeaf{99}), Reason::kUnknownLeaf);
  EXPECT_EQ(compact_refused(GrantLeaf{99}), Reason::kUnknownLeaf);
  EXPECT_EQ(status(), before);
  // An entry deleted at the current revision is still a stored leaf: its versions are.
  accept(*admin_, turn({{"a", std::nullopt}}));
  compact(EntryLeaf{doc_, key("a")});
  EXPECT_EQ(status().compaction_cursor, before.compaction_cursor + 1);
}

// Decisions 144 and 161: every record is stored as versions, key +
// ~position, so a leaf's ranges hold every stored version of its record - the
// root principal's many (one a decision it signs), a block record's two, a
// revoked grant's removal - and not one key per record.
TEST_F(StorageMaintenanceTest, ALeafsRangesHoldEveryStoredVersionOfItsRecord) {
  const Bytes body(100, 0x5a);
  Turn with_block = turn({{"a", "1"}});
  with_block.blocks.items.push_back({key("blob"), body.size(), crypto::sha256(ByteView(body.data(), body.size()))});
  accept(*admin_, with_block, {body});
  accept(*admin_, RetireBlock{doc_, key("blob")});
  accept(*admin_, turn({{"a", "2"}}));
  const Id revoked = grant(1, ResourceScope{doc_}, kRead);
  accept(*admin_, RevokeGrant{revoked, std::nullopt});
  compact(GrantLeaf{revoked});  // removed, yet stored: a leaf
  admin_.reset();
  node_.reset();
  auto db = testing::open_store(dir_);
  using namespace node::layout;
  const std::vector<std::pair<StorageLeaf, std::string>> records = {
      {PrincipalLeaf{PrincipalId{1}}, key(kPrincipals, 1)},      {RoleLeaf{1}, key(kRoles, 1)},
      {GrantLeaf{1}, key(kGrants, 1)},              {GrantLeaf{revoked}, key(kGrants, revoked)},
      {ProcessLeaf{kPid}, process_versions(kPid)},  {BlockLeaf{doc_, key("blob")}, block_record(doc_, key("blob"))},
      {EntryLeaf{doc_, key("a")}, entry_versions(doc_, key("a"))}};
  for (const auto& [leaf, record] : records) {
    const auto ranges = node::leaf_ranges(leaf);
    std::size_t versions = 0;
    for (const auto& k : testing::table_keys(*db, record[0])) {
      if (!k.starts_with(record) || k.size() != record.size() + 8) continue;
      ++versions;
      EXPECT_TRUE(std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) { return r.first <= k && k <= r.second; }))
          << "a version outside its leaf's ranges: table " << record[0] << ", position " << version_position(k, record.size()).value;
    }
    // The root's role and grant are written once, at the genesis; every other record again since.
    const bool once = record[0] == kRoles || record == key(kGrants, 1);
    EXPECT_GE(versions, once ? 1u : 2u) << record[0];
  }
  // The block's body, which is changed in place, is one key of its ranges.
  const std::string body_key = block(doc_, key("blob"));
  const auto block_ranges = node::leaf_ranges(BlockLeaf{doc_, key("blob")});
  EXPECT_TRUE(std::any_of(block_ranges.begin(), block_ranges.end(),
                          [&](const auto& r) { return r.first == body_key && r.second == body_key; }));
}

// Decisions 144-145: every kind of leaf is relocated - its bytes move to new
// table files - and every value and revision reads as before, at the current
// revision and through views retained at older ones; the epoch stays.
TEST_F(StorageMaintenanceTest, CompactionPreservesEveryValueAndRevisionReadableThroughAnOlderRetainedView) {
  const Bytes body(5000, 0x5a);
  Turn with_block = turn({{"a", "1"}, {"b", "1"}}, true);
  with_block.blocks.items.push_back({key("blob"), body.size(), crypto::sha256(ByteView(body.data(), body.size()))});
  std::vector<Id> views;
  views.push_back(std::get<TurnPublished>(accept(*admin_, with_block, {body}).outcome).views.items.at(0));
  views.push_back(std::get<TurnPublished>(accept(*admin_, turn({{"a", "2"}, {"c", "1"}}, true)).outcome).views.items.at(0));
  views.push_back(std::get<TurnPublished>(accept(*admin_, turn({{"b", std::nullopt}, {"d", "1"}}, true)).outcome).views.items.at(0));
  accept(*admin_, turn({{"a", "3"}, {"e", "1"}}));
  const Revision revision = revision_of(doc_);
  std::vector<EntryPage> before;
  for (Id v : views) before.push_back(page(ViewBasis{v}));
  before.push_back(page(CurrentBasis{doc_, revision}));
  ASSERT_EQ(before[0].items.items.size(), 2u);  // the oldest view still holds a=1, b=1
  const Block block_before = answer<Block>(*admin_, ReadBlock{CurrentBasis{doc_, revision}, key("blob"), std::nullopt});
  const ProcessInfo process_before = process_info(*admin_);
  const StorageStatus storage_before = status();

  std::vector<StorageLeaf> leaves;
  for (const char* k : {"a", "b", "c", "d", "e"}) leaves.push_back(EntryLeaf{doc_, key(k)});
  leaves.push_back(BlockLeaf{doc_, key("blob")});
  leaves.push_back(ProcessLeaf{kPid});
  leaves.push_back(PrincipalLeaf{PrincipalId{1}});
  leaves.push_back(RoleLeaf{1});
  leaves.push_back(GrantLeaf{1});
  for (const auto& leaf : leaves) {
    const StorageCompacted done = std::get<StorageCompacted>(compact(leaf).outcome);
    EXPECT_EQ(done.leaf, leaf);
    EXPECT_EQ(done.epoch, 0u);
  }
  await_relocation(leaves.size());
  // Relocated again, each leaf is in table files none of which held it before.
  for (const auto& leaf : leaves) {
    const auto placed = node_->sequencer().placement(leaf);
    ASSERT_FALSE(placed.empty());
    const Id cursor = std::get<StorageCompacted>(compact(leaf).outcome).cursor;
    await_relocation(cursor);
    for (auto file : node_->sequencer().placement(leaf))
      EXPECT_EQ(std::count(placed.begin(), placed.end(), file), 0) << "file " << file << " of cursor " << cursor;
  }

  EXPECT_EQ(revision_of(doc_), revision);
  for (std::size_t i = 0; i < views.size(); ++i) EXPECT_EQ(page(ViewBasis{views[i]}), before[i]) << "view " << views[i];
  EXPECT_EQ(page(CurrentBasis{doc_, revision}), before.back());
  EXPECT_EQ(answer<Block>(*admin_, ReadBlock{CurrentBasis{doc_, revision}, key("blob"), std::nullopt}), block_before);
  EXPECT_EQ(process_info(*admin_), process_before);
  EXPECT_EQ(status().epoch, storage_before.epoch);
  EXPECT_EQ(status().compaction_cursor, 2 * leaves.size());
  EXPECT_EQ(answer<CheckpointStatus>(*admin_, CheckpointQuery{}).floor, Position{0});
}

// Decision 185: a record of every other record table is a leaf too - here a
// resource's, the root's credential binding, an association, views and a
// mailbox input - refused when nothing of it is stored, and relocated into
// table files none of which held it, with every stored version's bytes as
// they were and every read answering as before: the resource's revision
// and access, every entry through views retained at older revisions, the
// association listing, the process with its mailbox.
TEST_F(StorageMaintenanceTest, EveryOtherRecordIsALeafAndRelocatingItKeepsEveryVersion) {
  std::vector<Id> views;
  views.push_back(std::get<TurnPublished>(accept(*admin_, turn({{"a", "1"}, {"b", "1"}}, true)).outcome).views.items.at(0));
  views.push_back(std::get<TurnPublished>(accept(*admin_, turn({{"a", "2"}}, true)).outcome).views.items.at(0));
  accept(*admin_, turn({{"b", std::nullopt}, {"c", "1"}}));
  const Id input = ok<Sent>(admin_->submit(Send{kPid, InputValue{{7, 7}}})).input;
  AssociationPage associations = answer<AssociationPage>(*admin_, ListAssociations{kPid, std::nullopt});
  ASSERT_EQ(associations.items.items.size(), 1u);
  const Id association = associations.items.items[0].revision;
  const std::vector<StorageLeaf> leaves = {
      ResourceLeaf{doc_},          CredentialLeaf{PrincipalId{1}, 1}, AssociationLeaf{kPid, association},
      ViewLeaf{views[0]},          ViewLeaf{views[1]},                InputLeaf{kPid, input}};
  const auto reads = [&] {
    std::vector<std::string> out;
    AssociationPage a = answer<AssociationPage>(*admin_, ListAssociations{kPid, std::nullopt});
    a.cut = Position{0};  // the position read at, which every decision moves
    out.push_back(to_json(a));
    out.push_back(to_json(answer<ResourceAccess>(*admin_, ReadAccess{doc_})));
    out.push_back(to_json(process_info(*admin_)));
    for (Id v : views) out.push_back(to_json(page(ViewBasis{v})));
    out.push_back(to_json(page(CurrentBasis{doc_, revision_of(doc_)})));
    return out;
  };
  // Every stored (key, value) of the leaves, read from the closed store.
  const auto stored = [&] {
    admin_.reset();
    node_.reset();
    std::vector<std::pair<std::string, std::string>> out;
    {
      auto db = testing::open_store(dir_);
      rocksdb::ReadOptions in_order;
      in_order.total_order_seek = true;
      std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(in_order));
      for (const auto& leaf : leaves)
        for (const auto& [first, last] : node::leaf_ranges(leaf))
          for (it->Seek(first); it->Valid() && it->key().compare(last) <= 0; it->Next())
            out.emplace_back(it->key().ToString(), it->value().ToString());
    }
    start(genesis_);
    admin_ = std::make_unique<Client>(root());
    return out;
  };

  const StorageStatus start_status = status();
  EXPECT_EQ(compact_refused(ResourceLeaf{ResourceId{doc_.value + 9}}), Reason::kUnknownLeaf);
  EXPECT_EQ(compact_refused(CredentialLeaf{PrincipalId{1}, 99}), Reason::kUnknownLeaf);
  EXPECT_EQ(compact_refused(AssociationLeaf{kPid, association + 9}), Reason::kUnknownLeaf);
  EXPECT_EQ(compact_refused(ViewLeaf{views[1] + 9}), Reason::kUnknownLeaf);
  EXPECT_EQ(compact_refused(InputLeaf{kPid, input + 1}), Reason::kUnknownLeaf);
  for (const StorageLeaf& none : {StorageLeaf{OutputLeaf{1}}, StorageLeaf{EffectLeaf{1}}, StorageLeaf{PayloadLeaf{1}},
                                  StorageLeaf{RuntimeLeaf{kPid}}})
    EXPECT_EQ(compact_refused(none), Reason::kUnknownLeaf);
  EXPECT_EQ(status(), start_status);

  const std::vector<std::string> before = reads();
  const auto bytes_before = stored();
  std::size_t resource_versions = 0;
  for (const auto& [k, v] : bytes_before) resource_versions += k[0] == node::layout::kResources;
  EXPECT_GE(resource_versions, 4u);  // its creation and three turns: versions, not one key
  for (const auto& leaf : leaves) {
    const StorageCompacted done = std::get<StorageCompacted>(compact(leaf).outcome);
    EXPECT_EQ(done.leaf, leaf);
  }
  await_relocation(start_status.compaction_cursor + leaves.size());
  // Relocated again, each leaf is in table files none of which held it before.
  for (const auto& leaf : leaves) {
    const auto placed = node_->sequencer().placement(leaf);
    ASSERT_FALSE(placed.empty());
    const Id cursor = std::get<StorageCompacted>(compact(leaf).outcome).cursor;
    await_relocation(cursor);
    for (auto file : node_->sequencer().placement(leaf))
      EXPECT_EQ(std::count(placed.begin(), placed.end(), file), 0) << "file " << file << " of cursor " << cursor;
  }
  EXPECT_EQ(reads(), before);
  EXPECT_EQ(stored(), bytes_before);
  EXPECT_EQ(reads(), before);
}

// Decisions 140 and 146: the epoch, its fence, the grace and the cursor are
// the stored head's; a restart reads them back and finishes the relocations.
TEST_F(StorageMaintenanceTest, ARestartPreservesTheEpochTheCursorAndEveryRelocatedValue) {
  accept(*admin_, turn({{"a", "1"}, {"b", "2"}}, true));
  const TrustedMs t = clock_.trusted() + Millis{10};
  clock_.set(t);
  accept(*admin_, StorageFence{0, false});
  clock_.set(t + kReadLeaseGraceMs);
  accept(*admin_, StorageFence{1, true});
  compact(EntryLeaf{doc_, key("a")});
  compact(ProcessLeaf{kPid});
  compact(GrantLeaf{1});
  const StorageStatus before = status();
  const EntryPage entries = page(CurrentBasis{doc_, revision_of(doc_)});
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(status(), before);
  EXPECT_EQ(before.epoch, 2u);
  EXPECT_EQ(before.grace_below, 1u);
  EXPECT_EQ(before.compaction_cursor, 3u);
  await_relocation(3);
  EXPECT_EQ(page(CurrentBasis{doc_, revision_of(doc_)}), entries);
  // The next ones go on from there.
  EXPECT_EQ(std::get<StorageFenced>(accept(*admin_, StorageFence{2, false}).outcome).epoch, 3u);
  EXPECT_EQ(std::get<StorageCompacted>(compact(EntryLeaf{doc_, key("b")}).outcome).cursor, 4u);
}

// Decision 140: a stored head of another location definition is refused as
// the journal opens; none is implied.
TEST_F(StorageMaintenanceTest, AHeadOfAnotherLocationDefinitionIsRefusedAsItOpens) {
  node_.reset();
  {
    auto db = testing::open_store(dir_);
    ASSERT_TRUE(db);
    std::string text;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), node::layout::kHead, &text).ok());
    auto head = from_json<node::Head>(text, 1 << 20);
    ASSERT_TRUE(head.ok());
    head->location_definition[0] ^= 1;
    rocksdb::WriteOptions synced;
    synced.sync = true;
    ASSERT_TRUE(db->Put(synced, node::layout::kHead, to_json(*head)).ok());
  }
  node::NodeConfig config;
  config.data_dir = dir_;
  auto n = node::Node::open(config, clock_);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().find("location definition"), std::string::npos) << n.error();
}

// Decision 147: compaction is an ordinary mutation - it takes ordinary
// admission capacity, never the control reserve - and so is the fence.
class StorageMaintenanceCeilingTest : public StorageMaintenanceTest {
 protected:
  Genesis genesis() const override {
    Genesis g = testing::sample_genesis();
    g.admission_ceiling = 8;
    g.control_reserve = 4;
    return g;
  }
};

TEST_F(StorageMaintenanceCeilingTest, AtTheAdmissionCeilingNeitherCompactionNorAFenceIsAdmitted) {
  while (position() < Position{8}) accept(*admin_, turn({{"a", std::to_string(position().value)}}));
  const StorageStatus before = status();
  EXPECT_EQ(refused(admin_->submit(StorageCompact{0, ProcessLeaf{kPid}})).reason, Reason::kAdmissionCeiling);
  EXPECT_EQ(refused(admin_->submit(StorageFence{0, false})).reason, Reason::kAdmissionCeiling);
  EXPECT_EQ(status(), before);
}

// Decision 183: a leaf's need is the decisions that wrote into it since its
// last relocation - entries, a block, a process, policy records alike -
// listed most needy first from kMinCompactionNeed up (ties in key order), at
// most a page; a relocation starts its leaf from nothing, and the needs are
// stored, so a restart lists them exactly as before.
TEST_F(StorageMaintenanceTest, CompactionNeedsCountEachLeafsWritesSinceItsRelocationAndSurviveARestart) {
  relocate_all_needs();
  Id root_commands = 0;
  const auto by_root = [&](Command op, std::vector<Bytes> blocks = {}) {
    ++root_commands;
    return accept(*admin_, std::move(op), std::move(blocks));
  };
  by_root(turn({{"hot", "1"}, {"warm", "1"}, {"cold", "1"}}));
  by_root(turn({{"hot", "2"}, {"warm", std::nullopt}}));  // a deletion is a version too
  by_root(turn({{"hot", "3"}}));
  const Bytes body{1, 2, 3};
  Turn with_block = turn({});
  with_block.blocks.items.push_back({key("blob"), body.size(), crypto::sha256(ByteView(body.data(), body.size()))});
  by_root(with_block, {body});  // the record and the body: one decision's write
  by_root(RetireBlock{doc_, key("blob")});
  const Id role = std::get<PrincipalCreated>(
                      by_root(CreatePrincipal{PrincipalId{40}, testing::key_of(testing::seed_of(40)), RealmScope{}, Permissions{kInspect},
                                           std::nullopt, std::nullopt})
                          .outcome)
                      .role;
  const Id grant = std::get<Granted>(by_root(Grant{role, RealmScope{}, Permissions{kRead}, std::nullopt}).outcome).grant;
  by_root(RevokeGrant{grant, std::nullopt});  // the revocation's removal version
  const Id process_writes = 4;  // kPid's record: each of its turns (the block's one included)

  const std::vector<LeafNeed> expected{
      {PrincipalLeaf{PrincipalId{1}}, root_commands},        // the signer's record: a version per command
      {ResourceLeaf{doc_}, 1 + 5},  // decision 185: the fixture's one write of it (a need of 1, never relocated), then each turn's and the retirement's
      {ProcessLeaf{kPid}, process_writes},
      {EntryLeaf{doc_, key("hot")}, 3},
      {EntryLeaf{doc_, key("warm")}, 2},        // ties in key order: e/, then g/, then k/
      {GrantLeaf{grant}, 2},
      {BlockLeaf{doc_, key("blob")}, 2},
  };  // not cold (one write), principal 40 (its creation alone), its role
  EXPECT_EQ(needs(), expected) << to_json(CompactionNeeds{{needs()}});

  // A relocation starts its leaf from nothing; the next decision counts one.
  compact(EntryLeaf{doc_, key("hot")});
  by_root(turn({{"hot", "4"}, {"cold", "2"}}));
  std::vector<LeafNeed> now = needs();
  const std::vector<LeafNeed> after{
      {PrincipalLeaf{PrincipalId{1}}, root_commands + 1},  // and the compaction's own
      {ResourceLeaf{doc_}, 1 + 5 + 1},
      {ProcessLeaf{kPid}, process_writes + 1},
      {EntryLeaf{doc_, key("cold")}, 2},
      {EntryLeaf{doc_, key("warm")}, 2},
      {GrantLeaf{grant}, 2},
      {BlockLeaf{doc_, key("blob")}, 2},
  };  // hot: one write since its relocation
  EXPECT_EQ(now, after) << to_json(CompactionNeeds{{now}});

  // Stored with the decisions: a restart lists them exactly as before.
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(needs(), after);
  // Only realm_control at realm scope reads them: they name leaves.
  principal(41, 41, RealmScope{}, kAllPermissions & ~std::uint64_t{kRealmControl});
  Client other(options(41, 41));
  EXPECT_EQ(query_refused(other, CompactionNeedsQuery{}).reason, Reason::kNotPermitted);
}

// Decision 185: the other records' leaves are counted as decision 183
// counts the rest - a resource's record takes a version at every turn that
// writes it, a credential binding one at its bind and one at its unbinding,
// a mailbox input one when sent - listed with the others in need and key
// order, stored across a restart, and started over by their relocation.
TEST_F(StorageMaintenanceTest, TheOtherRecordsLeavesAreCountedByNeedToo) {
  relocate_all_needs();
  const auto need_of = [&](const std::vector<LeafNeed>& listed, const StorageLeaf& leaf) -> Id {
    for (const auto& n : listed)
      if (n.leaf == leaf) return n.need;
    return 0;  // not listed
  };
  accept(*admin_, turn({{"a", "1"}}));
  accept(*admin_, turn({{"a", "2"}}));
  accept(*admin_, turn({{"b", "1"}}));
  const Id input = ok<Sent>(admin_->submit(Send{kPid, InputValue{{1}}})).input;  // written once: not listed
  principal(40, 40, RealmScope{}, kInspect);
  const Id readers = ok<RoleCreated>(admin_->submit(CreateRole{{"readers"}, std::nullopt})).role;
  accept(*admin_, BindCredential{PrincipalId{40}, readers, std::nullopt});
  accept(*admin_, UnbindCredential{PrincipalId{40}, readers, std::nullopt});  // the binding's removal version
  const StorageLeaf resource = ResourceLeaf{doc_}, credential = CredentialLeaf{PrincipalId{40}, readers};
  const std::vector<LeafNeed> listed = needs();
  // A version of doc's record per turn, after the fixture's one write of it:
  // a need of 1, not a candidate, so relocate_all_needs left it.
  EXPECT_EQ(need_of(listed, resource), 1u + 3) << to_json(CompactionNeeds{{listed}});
  EXPECT_EQ(need_of(listed, credential), 2u) << to_json(CompactionNeeds{{listed}});
  EXPECT_EQ(need_of(listed, InputLeaf{kPid, input}), 0u);
  EXPECT_EQ(need_of(listed, EntryLeaf{doc_, key("a")}), 2u);
  // Stored with the decisions: a restart lists them exactly as before.
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(needs(), listed);
  // A relocation starts the resource's leaf over; the next turn counts one, which is not listed.
  compact(resource);
  accept(*admin_, turn({{"c", "1"}}));
  EXPECT_EQ(need_of(needs(), resource), 0u);
  EXPECT_EQ(need_of(needs(), credential), 2u);
}

}  // namespace
}  // namespace cowboy::transit
