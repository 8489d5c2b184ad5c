// Collection against transitd as a real process (docs/transit.md, decision
// 116): a collection that takes many commands is killed (SIGKILL) while its
// commands are under way; the restarted node goes on from what was committed,
// and no record is removed twice or left behind.
#include <atomic>
#include <regex>
#include <thread>

#include "../support/poll.h"
#include "../support/run.h"
#include "net/http_connection.h"
#include "process_fixture.h"
#include "transit/maintain/maintainer.h"

namespace cowboy::transit {
namespace {

class CollectionProcessTest : public ProcessTest {
 protected:
  void SetUp() override {
    ProcessTest::SetUp();
    write_sample_genesis();
    node_ = start_node(port_);
    ASSERT_NE(port_, 0);
  }
  // The node goes before its directory: one still relocating deletes table
  // files under remove_all (seen once, the maintainer's first storage run).
  void TearDown() override {
    node_.reset();
    ProcessTest::TearDown();
  }
  ClientOptions options() {
    auto o = kill_options(port_, 1, 0);
    o.timeout = std::chrono::seconds(30);
    return o;
  }
  void accept(Client& c, Command op) {
    auto r = c.submit(std::move(op));
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  std::uint16_t port_ = 0;
  std::unique_ptr<cowboy::testing::ChildProcess> node_;
};

TEST_F(CollectionProcessTest, ASigkillAmidACollectionLosesNothingAndTheRestartGoesOnFromWhatWasCommitted) {
  constexpr Pid kPid{7};
  constexpr int kInputs = 200;  // 25 commands of eight removals
  {
    Client c(options());
    accept(c, CreateProcess{kPid, {}, true});
    accept(c, Initialize{kPid, 0});
    for (int i = 0; i < kInputs; ++i) accept(c, Send{kPid, InputValue{{static_cast<std::uint8_t>(i)}}});
    accept(c, Terminate{kPid, 1});
  }
  // A collector submits collect after collect; the node is killed under it after the third acknowledgement.
  std::atomic<Id> acknowledged{0};  // records removed by the collects answered
  std::atomic<int> answers{0};
  std::atomic<bool> killed{false};
  std::thread collector([&] {
    Client c(options());
    while (!killed) {
      auto r = c.submit(Collect{kPid, CollectKind::kProcess, std::nullopt});
      if (!r.ok()) break;  // the node is gone
      const auto& done = std::get<Collected>(r->outcome);
      EXPECT_EQ(done.removed, kCollectRemovals);
      EXPECT_FALSE(done.complete);
      acknowledged += done.removed;
      ++answers;
    }
  });
  while (answers < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  node_->kill(SIGKILL);
  killed = true;
  collector.join();

  node_ = start_node(port_);
  ASSERT_NE(port_, 0);
  // The first command after the restart from the CLI, the rest from the client.
  auto cli = cowboy::testing::run(kBin + "/transit --endpoint 127.0.0.1:" + std::to_string(port_) +
                                  " --realm dev --principal 1 --key " + key_file("root.key", 0) +
                                  " collect --pid 7 --kind process");
  ASSERT_EQ(cli.status, 0) << cli.out;
  ASSERT_EQ(cli.out.rfind("collected {\"pid\":7,\"kind\":\"process\",\"record\":7,\"removed\":8,", 0), 0u) << cli.out;
  Client after(options());
  Id removed_after = kCollectRemovals;
  int commands = 1;
  for (bool complete = false; !complete && commands < kInputs; ++commands) {
    auto r = after.submit(Collect{kPid, CollectKind::kProcess, std::nullopt});
    ASSERT_TRUE(r.ok()) << r.error().message;
    const auto& done = std::get<Collected>(r->outcome);
    EXPECT_LE(done.removed, kCollectRemovals);
    removed_after += done.removed;
    complete = done.complete;
  }
  // Every input removed exactly once: what was acknowledged, what the restart
  // removed, and at most one command's worth that committed unanswered.
  const Id total = kInputs;
  EXPECT_LE(acknowledged + removed_after, total);
  EXPECT_GE(acknowledged + removed_after + kCollectRemovals, total);
  EXPECT_EQ((acknowledged + removed_after) % kCollectRemovals, 0u);
  auto again = after.submit(Collect{kPid, CollectKind::kProcess, std::nullopt});
  ASSERT_FALSE(again.ok());
  ASSERT_TRUE(again.error().rejection);
  EXPECT_EQ(again.error().rejection->reason, Reason::kAlreadyCollected);
  auto create = after.submit(CreateProcess{kPid, {}, true});
  ASSERT_FALSE(create.ok());
  ASSERT_TRUE(create.error().rejection);
  EXPECT_EQ(create.error().rejection->reason, Reason::kSubjectTaken);
}

// Decision 190 as processes: the rows saying what a process wrote are in the
// acknowledged turn's synced write. transitd is SIGKILLed right after the
// acknowledgement; the restarted node still holds the writer until the
// owner's collection of the resource, and then collects it.
TEST_F(CollectionProcessTest, AWriterStaysHeldByWhatItWroteAfterASigkillFollowingTheAcknowledgedTurn) {
  constexpr Pid kOwner{7}, kWriter{8};
  ResourceId shared{};
  Id generation = 0;
  {
    Client c(options());
    for (Pid pid : {kOwner, kWriter}) {
      accept(c, CreateProcess{pid, {}, true});
      accept(c, Initialize{pid, 0});
    }
    auto created = c.submit(CreateResource{{"shared"}, kOwner});
    ASSERT_TRUE(created.ok()) << created.error().message;
    shared = std::get<ResourceCreated>(created->outcome).resource;
    accept(c, Associate{kWriter, {"shared"}, shared});
    auto owned = c.submit(Own{kWriter, 1});
    ASSERT_TRUE(owned.ok()) << owned.error().message;
    generation = std::get<ProcessChanged>(owned->outcome).generation;
    const std::string k = "k", v = "v";
    auto turned = c.submit(Turn{kWriter, generation, std::nullopt, shared, std::nullopt,
                                {{{EntryKey{{k.begin(), k.end()}}, EntryValue{{v.begin(), v.end()}}}}}, {}, {}, {},
                                std::nullopt});
    ASSERT_TRUE(turned.ok()) << turned.error().message;
  }
  node_->kill(SIGKILL);
  node_ = start_node(port_);
  ASSERT_NE(port_, 0);
  Client c(options());
  const auto reason = [&](Pid pid, CollectKind kind, std::optional<Id> record) {
    auto r = c.submit(Collect{pid, kind, record});
    return r.ok() || !r.error().rejection ? Reason::kSyntax : r.error().rejection->reason;
  };
  accept(c, Terminate{kWriter, generation});
  EXPECT_EQ(reason(kWriter, CollectKind::kProcess, std::nullopt), Reason::kResourceNotRemoved);
  accept(c, RetireResource{shared});
  // The retired writer's association, the entry, the writer's rows.
  auto resource = c.submit(Collect{kOwner, CollectKind::kResource, shared.value});
  ASSERT_TRUE(resource.ok()) << resource.error().message;
  EXPECT_EQ(std::get<Collected>(resource->outcome), (Collected{kOwner, CollectKind::kResource, shared.value, 3, true}));
  auto last = c.submit(Collect{kWriter, CollectKind::kProcess, std::nullopt});
  ASSERT_TRUE(last.ok()) << last.error().message;
  EXPECT_EQ(std::get<Collected>(last->outcome), (Collected{kWriter, CollectKind::kProcess, kWriter.value, 0, true}));
}

// Decision 155 as processes: `transitd --maintain` beside a transitd collects
// unattended what collect would take - process 7, terminated with inputs
// left in its mailbox - and leaves alone what a gate blocks: process 8 is
// running, and process 9's resource is associated with it, so neither the
// resource nor 9 itself may go. Its /metrics count the collection.
TEST_F(CollectionProcessTest, TransitdMaintainCollectsWhatIsCollectableAndLeavesWhatIsBlocked) {
  constexpr PrincipalId kMaintainer{3};
  Client c(options());
  accept(c, CreatePrincipal{kMaintainer, testing::key_of(testing::seed_of(static_cast<std::uint8_t>(kMaintainer.value))), RealmScope{},
                            Permissions{maintain::kRequiredPermissions}, std::nullopt, std::nullopt});
  accept(c, CreateProcess{Pid{7}, {}, true});
  accept(c, Initialize{Pid{7}, 0});
  for (std::uint8_t i = 0; i < 3; ++i) accept(c, Send{Pid{7}, InputValue{{i}}});
  accept(c, Terminate{Pid{7}, 1});
  accept(c, CreateProcess{Pid{8}, {}, true});
  accept(c, Initialize{Pid{8}, 0});
  accept(c, CreateProcess{Pid{9}, {}, true});
  accept(c, Initialize{Pid{9}, 0});
  auto r = c.submit(CreateResource{{"lent"}, Pid{9}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto lent = std::get<ResourceCreated>(r->outcome).resource;
  accept(c, Associate{Pid{8}, {"lent"}, lent});
  accept(c, Terminate{Pid{9}, 1});
  // What the node lists collectable (a read: probing with collect would collect).
  const auto listed = [&] {
    std::vector<CollectableRecord> out;
    auto page = c.query(ListCollectable{std::nullopt});
    EXPECT_TRUE(page.ok()) << (page.ok() ? "" : page.error().message);
    if (page.ok()) out = std::get<CollectablePage>(page->result).items.items;
    return out;
  };
  EXPECT_EQ(listed(), (std::vector<CollectableRecord>{{Pid{7}, CollectKind::kProcess, 7}}));  // not 8, not 9 or its resource
  const auto refusal = [&](Pid pid) {  // only once nothing is collectable: a refusal changes nothing
    auto refused = c.submit(Collect{pid, CollectKind::kProcess, std::nullopt});
    return refused.ok() || !refused.error().rejection ? Reason::kSyntax : refused.error().rejection->reason;
  };

  cowboy::testing::ChildProcess maintainer({kBin + "/transitd", "--maintain", "--endpoint", "127.0.0.1:" + std::to_string(port_),
                                            "--realm", "dev", "--principal", std::to_string(kMaintainer.value), "--key",
                                            key_file("maintainer.key", static_cast<std::uint8_t>(kMaintainer.value)), "--admin-listen", "127.0.0.1:0",
                                            "--idle-ms", "2", "--collects-per-pass", "4", "--log-level", "warn"});
  auto ready = maintainer.wait_for_line("transit_maintain_ready", std::chrono::seconds(30));
  std::smatch admin;
  ASSERT_TRUE(ready && std::regex_search(*ready, admin, std::regex(R"(admin=127\.0\.0\.1:(\d+))")));
  ASSERT_TRUE(cowboy::testing::eventually([&] { return listed().empty(); }, std::chrono::seconds(30)))
      << "process 7 is still listed collectable";
  EXPECT_EQ(refusal(Pid{7}), Reason::kAlreadyCollected);  // by the maintainer: this client sent no collect
  const auto metrics = [&] {
    auto m = net::HttpConnection("127.0.0.1", static_cast<std::uint16_t>(std::stoi(admin[1]))).get("/metrics");
    return m.ok() ? m->body : std::string();
  };
  // A pass that lists nothing collectable: every gate has been judged since 7 went.
  ASSERT_TRUE(cowboy::testing::eventually(
      [&] { return metrics().find("\ntransit_maintain_collectable_processes 0\n") != std::string::npos; },
      std::chrono::seconds(30)));
  EXPECT_EQ(refusal(Pid{8}), Reason::kProcessLive);
  EXPECT_EQ(refusal(Pid{9}), Reason::kResourceNotRemoved);
  auto resource_refused = c.submit(Collect{Pid{9}, CollectKind::kResource, lent.value});
  ASSERT_FALSE(resource_refused.ok());
  ASSERT_TRUE(resource_refused.error().rejection);
  EXPECT_EQ(resource_refused.error().rejection->reason, Reason::kAssociationLive);
  const std::string text = metrics();
  std::smatch complete;
  ASSERT_TRUE(std::regex_search(text, complete, std::regex(R"(\ntransit_maintain_collected_total\{result="complete"\} (\d+)\n)")))
      << text;
  EXPECT_EQ(std::stoull(complete[1]), 1u);  // process 7, its three inputs in the same command
  EXPECT_NE(text.find("\ntransit_maintain_refused_total 0\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace cowboy::transit
