// Storage compaction against transitd as a real process (docs/transit.md,
// decision 146): a node is SIGKILLed while a compactor's storage_compact
// commands, and the rewrites they order, are under way; the restarted node
// keeps the cursor it published, finishes every relocation it accepted, and
// every value and revision reads exactly as before - currently and through
// views retained at older revisions.
#include <atomic>
#include <functional>
#include <regex>
#include <thread>

#include "../support/run.h"
#include "net/http_connection.h"
#include "process_fixture.h"

namespace cowboy::transit {
namespace {

EntryKey key_of(const std::string& s) { return EntryKey{{s.begin(), s.end()}}; }

class CompactionProcessTest : public ProcessTest {
 protected:
  void SetUp() override {
    ProcessTest::SetUp();
    write_sample_genesis();
    start();
  }
  // The node goes before its directory: one still relocating deletes table files under remove_all.
  void TearDown() override {
    node_.reset();
    ProcessTest::TearDown();
  }
  void start() {
    node_ = std::make_unique<cowboy::testing::ChildProcess>(std::vector<std::string>{
        kBin + "/transitd", "--genesis", (dir_ / "genesis.json").string(), "--data", (dir_ / "journal").string(),
        "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"});
    const auto ready = node_->wait_for_line("transitd_ready");
    ASSERT_TRUE(ready);
    port_ = ready_port_of(*ready);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(*ready, m, std::regex(R"(admin=127\.0\.0\.1:(\d+))"))) << *ready;
    admin_port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
  }
  ClientOptions options() {
    auto o = kill_options(port_, 1, 0);
    o.timeout = std::chrono::seconds(30);
    return o;
  }
  /// transitd_storage_relocated_through from the admin listener (-1: unreadable).
  long relocated() {
    net::HttpConnection admin("127.0.0.1", admin_port_);
    auto metrics = admin.get("/metrics");
    if (!metrics.ok()) return -1;
    std::smatch m;
    if (!std::regex_search(metrics->body, m, std::regex(R"(\ntransitd_storage_relocated_through (\d+)\n)"))) return -1;
    return std::stol(m[1]);
  }
  /// Every entry of the resource at `basis`, page by page.
  static std::vector<Entry> all(Client& c, const Basis& basis) {
    std::vector<Entry> out;
    std::optional<EntryCursor> cursor;
    for (int pages = 0; pages < 1000; ++pages) {
      auto r = c.query(ListEntries{basis, std::nullopt, cursor});
      EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
      if (!r.ok()) break;
      const auto& page = std::get<EntryPage>(r->result);
      out.insert(out.end(), page.items.items.begin(), page.items.items.end());
      if (!page.cursor) break;
      cursor = page.cursor;
    }
    return out;
  }

  static constexpr Pid kPid{7};
  static constexpr int kTurns = 60, kKeys = 40;
  /// Resource "doc", process kPid associated with it and owned by the root,
  /// kTurns turns each rewriting four of kKeys keys, every tenth retaining a view.
  void populate() {
    Client c(options());
    auto created = c.submit(CreateResource{{"doc"}, std::nullopt});
    ASSERT_TRUE(created.ok()) << created.error().message;
    doc_ = std::get<ResourceCreated>(created->outcome).resource;
    ASSERT_TRUE(c.submit(CreateProcess{kPid, {{{"doc"}}}}).ok());
    auto associated = c.submit(Associate{kPid, {"doc"}, doc_});
    ASSERT_TRUE(associated.ok());
    association_ = std::get<Associated>(associated->outcome).association_revision;
    ASSERT_TRUE(c.submit(Initialize{kPid, 0}).ok());
    auto owned = c.submit(Own{kPid, 1});
    ASSERT_TRUE(owned.ok());
    const Id generation = std::get<ProcessChanged>(owned->outcome).generation;
    for (int t = 0; t < kTurns; ++t) {
      Turn turn{kPid, generation, std::nullopt, doc_, std::nullopt, {}, {}, {}, {}, std::nullopt};
      for (int j = 0; j < 4; ++j) {  // a turn's most (kTurnMutations)
        const std::string k = "k" + std::to_string(100 + (t * 4 + j) % kKeys);
        const std::string v = "v" + std::to_string(t) + "-" + std::to_string(j);
        turn.mutations.items.push_back({key_of(k), EntryValue{{v.begin(), v.end()}}});
      }
      if (t % 10 == 0) turn.views.items.push_back(doc_);
      auto r = c.submit(turn);
      ASSERT_TRUE(r.ok()) << r.error().message;
      for (Id v : std::get<TurnPublished>(r->outcome).views.items) views_.push_back(v);
    }
  }
  /// A compactor relocates leaf_at(cursor) after leaf after leaf; the node is
  /// SIGKILLed under it after the fifth acknowledgement and started again.
  /// Returns what was acknowledged and the restarted node's cursor, once it
  /// has relocated through it. Every wait is bounded: a compactor refused
  /// (a node that does not know the leaf) or stalled fails the test, not hangs it.
  std::pair<Id, Id> kill_amid_compaction(const std::function<StorageLeaf(Id)>& leaf_at) {
    std::atomic<Id> acknowledged{0};
    std::atomic<bool> killed{false}, stopped{false};
    std::thread compactor([&] {
      Client c(options());
      for (Id cursor = 0; !killed; ++cursor) {
        auto r = c.submit(StorageCompact{cursor, leaf_at(cursor)});
        if (!r.ok()) break;  // the node is gone, or refused it
        const auto* done = std::get_if<StorageCompacted>(&r->outcome);
        EXPECT_TRUE(done) << "cursor " << cursor;
        if (!done) break;
        EXPECT_EQ(done->cursor, cursor + 1);
        acknowledged = cursor + 1;
      }
      stopped = true;
    });
    const auto acknowledged_by = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (acknowledged < 5 && !stopped && std::chrono::steady_clock::now() < acknowledged_by)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_GE(acknowledged.load(), 5u) << "the compactor stopped or stalled before its fifth acknowledgement";
    node_->kill(SIGKILL);
    killed = true;
    compactor.join();

    start();
    Client after(options());
    auto storage = after.query(StorageQuery{});
    EXPECT_TRUE(storage.ok()) << storage.error().message;
    if (!storage.ok()) return {acknowledged.load(), 0};
    const Id cursor = std::get<StorageStatus>(storage->result).compaction_cursor;
    EXPECT_EQ(std::get<StorageStatus>(storage->result).epoch, 0u);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (relocated() < static_cast<long>(cursor) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(relocated(), static_cast<long>(cursor));
    return {acknowledged.load(), cursor};
  }
  std::string cli() {
    return kBin + "/transit --endpoint 127.0.0.1:" + std::to_string(port_) + " --realm dev --principal 1 --key " +
           key_file("root.key", 0) + " storage";
  }

  ResourceId doc_{};
  Id association_ = 0;
  std::vector<Id> views_;
  std::uint16_t port_ = 0, admin_port_ = 0;
  std::unique_ptr<cowboy::testing::ChildProcess> node_;
};

TEST_F(CompactionProcessTest, ASigkillAmidCompactionLosesNothingAndTheRestartFinishesEveryAcceptedRelocation) {
  populate();
  const ResourceId doc = doc_;
  const std::vector<Id>& views = views_;
  Client reader(options());
  std::vector<std::vector<Entry>> before;
  for (Id v : views) before.push_back(all(reader, ViewBasis{v}));
  auto access = reader.query(ReadAccess{doc});
  ASSERT_TRUE(access.ok());
  const Revision revision = std::get<ResourceAccess>(access->result).resource.revision;
  before.push_back(all(reader, CurrentBasis{doc, revision}));
  ASSERT_EQ(before.back().size(), static_cast<std::size_t>(kKeys));

  // A compactor relocates leaf after leaf; the node is killed under it after the fifth acknowledgement.
  const auto [acknowledged, cursor] = kill_amid_compaction([&](Id cursor) {
    return cursor % 3 == 2 ? StorageLeaf{ProcessLeaf{kPid}}
                           : StorageLeaf{EntryLeaf{doc, key_of("k" + std::to_string(100 + cursor % kKeys))}};
  });
  // What was acknowledged is kept; at most one more committed unanswered.
  EXPECT_GE(cursor, acknowledged);
  EXPECT_LE(cursor, acknowledged + 1);
  Client after(options());
  // Every value and revision, through every retained view and currently.
  for (std::size_t i = 0; i < views.size(); ++i) EXPECT_EQ(all(after, ViewBasis{views[i]}), before[i]) << "view " << views[i];
  auto access_after = after.query(ReadAccess{doc});
  ASSERT_TRUE(access_after.ok());
  EXPECT_EQ(std::get<ResourceAccess>(access_after->result).resource.revision, revision);
  EXPECT_EQ(all(after, CurrentBasis{doc, revision}), before.back());

  // The CLI goes on from the stored cursor.
  const std::string cli = this->cli();
  auto shown = cowboy::testing::run(cli);
  ASSERT_EQ(shown.status, 0) << shown.out;
  EXPECT_NE(shown.out.find("compaction cursor " + std::to_string(cursor) + ","), std::string::npos) << shown.out;
  auto compacted = cowboy::testing::run(cli + " compact --resource " + std::to_string(doc.value) + " --entry k100");
  ASSERT_EQ(compacted.status, 0) << compacted.out;
  EXPECT_EQ(compacted.out.rfind("storage_compacted {\"cursor\":" + std::to_string(cursor + 1) + ",", 0), 0u)
      << compacted.out;
  auto fenced = cowboy::testing::run(cli + " fence");
  ASSERT_EQ(fenced.status, 0) << fenced.out;
  EXPECT_EQ(fenced.out.rfind("storage_fenced {\"epoch\":1,", 0), 0u) << fenced.out;
  // The needs came back with the node (decision 183): the root, which signed every command, first.
  auto needs = cowboy::testing::run(cli + " needs");
  ASSERT_EQ(needs.status, 0) << needs.out;
  EXPECT_EQ(needs.out.rfind("principal 1: ", 0), 0u) << needs.out;
  EXPECT_NE(needs.out.find(" writes since its last relocation\n"), std::string::npos) << needs.out;
}

// Decision 185: the same for the other records' leaves - the resource's
// record (a version per turn), its association, the retained views' records
// and the root's credential binding - relocated in turn while the node is
// SIGKILLed: every version reads as before, through the old views too, and
// the CLI names and compacts such a leaf.
TEST_F(CompactionProcessTest, ASigkillAmidRelocationsOfTheOtherRecordsLosesNothing) {
  populate();
  Client reader(options());
  struct Reads {
    ResourceAccess access;
    AssociationPage associations;
    std::vector<std::vector<Entry>> views;
    bool operator==(const Reads&) const = default;
  };
  const auto reads = [&](Client& c) {
    Reads out;
    auto access = c.query(ReadAccess{doc_});
    EXPECT_TRUE(access.ok());
    if (access.ok()) out.access = std::get<ResourceAccess>(access->result);
    auto associations = c.query(ListAssociations{kPid, std::nullopt});
    EXPECT_TRUE(associations.ok());
    if (associations.ok()) out.associations = std::get<AssociationPage>(associations->result);
    out.associations.cut = Position{0};  // the position read at
    for (Id v : views_) out.views.push_back(all(c, ViewBasis{v}));
    return out;
  };
  const Reads before = reads(reader);
  ASSERT_EQ(before.associations.items.items.size(), 1u);
  ASSERT_EQ(before.views.size(), static_cast<std::size_t>(kTurns / 10));

  const auto [acknowledged, cursor] = kill_amid_compaction([&](Id cursor) {
    switch (cursor % 4) {
      case 0: return StorageLeaf{ResourceLeaf{doc_}};
      case 1: return StorageLeaf{ViewLeaf{views_[cursor % views_.size()]}};
      case 2: return StorageLeaf{AssociationLeaf{kPid, association_}};
      default: return StorageLeaf{CredentialLeaf{PrincipalId{1}, 1}};
    }
  });
  EXPECT_GE(cursor, acknowledged);
  EXPECT_LE(cursor, acknowledged + 1);
  Client after(options());
  EXPECT_EQ(reads(after), before);

  const std::string cli = this->cli();
  auto compacted = cowboy::testing::run(cli + " compact --record resource:" + std::to_string(doc_.value));
  ASSERT_EQ(compacted.status, 0) << compacted.out;
  EXPECT_EQ(compacted.out.rfind("storage_compacted {\"cursor\":" + std::to_string(cursor + 1) + ",\"leaf\":{\"resource_record\":", 0),
            0u)
      << compacted.out;
  auto bad = cowboy::testing::run(cli + " compact --record resource:x");
  EXPECT_NE(bad.status, 0) << bad.out;
  // The process's record and the resource's took a version per turn; the
  // resource's was relocated last, so it is not listed.
  auto needs = cowboy::testing::run(cli + " needs");
  ASSERT_EQ(needs.status, 0) << needs.out;
  EXPECT_NE(needs.out.find("\nprocess 7: "), std::string::npos) << needs.out;
  EXPECT_EQ(needs.out.find("\nresource "), std::string::npos) << needs.out;  // a line of its own; "of resource" is an entry's
  EXPECT_EQ(reads(after), before);
}

}  // namespace
}  // namespace cowboy::transit
