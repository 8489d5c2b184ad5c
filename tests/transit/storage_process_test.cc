// Storage compaction against transitd as a real process (docs/transit.md,
// decision 146): a node is SIGKILLed while a compactor's storage_compact
// commands, and the rewrites they order, are under way; the restarted node
// keeps the cursor it published, finishes every relocation it accepted, and
// every value and revision reads exactly as before - currently and through
// views retained at older revisions.
#include <atomic>
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

  std::uint16_t port_ = 0, admin_port_ = 0;
  std::unique_ptr<cowboy::testing::ChildProcess> node_;
};

TEST_F(CompactionProcessTest, ASigkillAmidCompactionLosesNothingAndTheRestartFinishesEveryAcceptedRelocation) {
  constexpr Pid kPid{7};
  constexpr int kTurns = 60, kKeys = 40;
  ResourceId doc{};
  std::vector<Id> views;
  {
    Client c(options());
    auto created = c.submit(CreateResource{{"doc"}, std::nullopt});
    ASSERT_TRUE(created.ok()) << created.error().message;
    doc = std::get<ResourceCreated>(created->outcome).resource;
    ASSERT_TRUE(c.submit(CreateProcess{kPid, {{{"doc"}}}}).ok());
    ASSERT_TRUE(c.submit(Associate{kPid, {"doc"}, doc}).ok());
    ASSERT_TRUE(c.submit(Initialize{kPid, 0}).ok());
    auto owned = c.submit(Own{kPid, 1});
    ASSERT_TRUE(owned.ok());
    const Id generation = std::get<ProcessChanged>(owned->outcome).generation;
    // Each turn rewrites four of the keys; every tenth retains a view.
    for (int t = 0; t < kTurns; ++t) {
      Turn turn{kPid, generation, std::nullopt, doc, std::nullopt, {}, {}, {}, {}, std::nullopt};
      for (int j = 0; j < 4; ++j) {  // a turn's most (kTurnMutations)
        const std::string k = "k" + std::to_string(100 + (t * 4 + j) % kKeys);
        const std::string v = "v" + std::to_string(t) + "-" + std::to_string(j);
        turn.mutations.items.push_back({key_of(k), EntryValue{{v.begin(), v.end()}}});
      }
      if (t % 10 == 0) turn.views.items.push_back(doc);
      auto r = c.submit(turn);
      ASSERT_TRUE(r.ok()) << r.error().message;
      for (Id v : std::get<TurnPublished>(r->outcome).views.items) views.push_back(v);
    }
  }
  Client reader(options());
  std::vector<std::vector<Entry>> before;
  for (Id v : views) before.push_back(all(reader, ViewBasis{v}));
  auto access = reader.query(ReadAccess{doc});
  ASSERT_TRUE(access.ok());
  const Revision revision = std::get<ResourceAccess>(access->result).resource.revision;
  before.push_back(all(reader, CurrentBasis{doc, revision}));
  ASSERT_EQ(before.back().size(), static_cast<std::size_t>(kKeys));

  // A compactor relocates leaf after leaf; the node is killed under it after the fifth acknowledgement.
  std::atomic<Id> acknowledged{0};
  std::atomic<bool> killed{false};
  std::thread compactor([&] {
    Client c(options());
    for (Id cursor = 0; !killed; ++cursor) {
      const StorageLeaf leaf = cursor % 3 == 2 ? StorageLeaf{ProcessLeaf{kPid}}
                                               : StorageLeaf{EntryLeaf{doc, key_of("k" + std::to_string(100 + cursor % kKeys))}};
      auto r = c.submit(StorageCompact{cursor, leaf});
      if (!r.ok()) break;  // the node is gone
      EXPECT_EQ(std::get<StorageCompacted>(r->outcome).cursor, cursor + 1);
      acknowledged = cursor + 1;
    }
  });
  while (acknowledged < 5) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  node_->kill(SIGKILL);
  killed = true;
  compactor.join();

  start();
  Client after(options());
  auto storage = after.query(StorageQuery{});
  ASSERT_TRUE(storage.ok()) << storage.error().message;
  const Id cursor = std::get<StorageStatus>(storage->result).compaction_cursor;
  // What was acknowledged is kept; at most one more committed unanswered.
  EXPECT_GE(cursor, acknowledged.load());
  EXPECT_LE(cursor, acknowledged.load() + 1);
  EXPECT_EQ(std::get<StorageStatus>(storage->result).epoch, 0u);
  // The restart finishes the relocations it finds in the ledger (bounded wait).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (relocated() < static_cast<long>(cursor) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(relocated(), static_cast<long>(cursor));
  // Every value and revision, through every retained view and currently.
  for (std::size_t i = 0; i < views.size(); ++i) EXPECT_EQ(all(after, ViewBasis{views[i]}), before[i]) << "view " << views[i];
  auto access_after = after.query(ReadAccess{doc});
  ASSERT_TRUE(access_after.ok());
  EXPECT_EQ(std::get<ResourceAccess>(access_after->result).resource.revision, revision);
  EXPECT_EQ(all(after, CurrentBasis{doc, revision}), before.back());

  // The CLI goes on from the stored cursor.
  const std::string cli = kBin + "/transit --endpoint 127.0.0.1:" + std::to_string(port_) +
                          " --realm dev --principal 1 --key " + key_file("root.key", 0) + " storage";
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

}  // namespace
}  // namespace cowboy::transit
