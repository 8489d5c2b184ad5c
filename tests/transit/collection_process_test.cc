// Collection against transitd as a real process (docs/transit.md, decision
// 116): a collection that takes many commands is killed (SIGKILL) while its
// commands are under way; the restarted node goes on from what was committed,
// and no record is removed twice or left behind.
#include <atomic>
#include <thread>

#include "../support/run.h"
#include "process_fixture.h"

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
  constexpr Id kPid = 7;
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

}  // namespace
}  // namespace cowboy::transit
