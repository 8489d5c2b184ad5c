// The SDK examples (examples/) against a real cbqsd --dev, so they keep working.
#include <gtest/gtest.h>

#include "../support/cbqsd_process.h"
#include "../support/run.h"
#include "../support/temp_dir.h"

namespace cowboy {
namespace {

using testing::run;

TEST(Examples, TheWorkQueueFinishesEveryJobAcrossCompetingWorkers) {
  testing::TempDir dir;
  testing::CbqsdProcess cbqsd(dir.path());
  ASSERT_TRUE(cbqsd.up());
  auto r = run(std::string(COWBOY_BIN_DIR) + "/example_work_queue --dev " + cbqsd.data().string() +
               " --jobs 150 --workers 2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("queued 150 jobs on lane 1, group 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all 150 jobs done (3 failed once and were retried)"), std::string::npos) << r.out;
}

TEST(Examples, TheChatRoomSharesMessagesAndKeepsDirectOnesToTheirSeat) {
  testing::TempDir dir;
  testing::CbqsdProcess cbqsd(dir.path());
  ASSERT_TRUE(cbqsd.up());
  std::string chat = std::string(COWBOY_BIN_DIR) + "/example_chat_room --dev " + cbqsd.data().string() + " --room lobby";
  ASSERT_EQ(run("printf 'hi all\\n@bob psst\\n' | " + chat + " --name alice").status, 0);
  auto bob = run("printf 'hello alice\\n' | " + chat + " --name bob");
  ASSERT_EQ(bob.status, 0) << bob.out;
  EXPECT_NE(bob.out.find("alice: hi all\n"), std::string::npos) << bob.out;    // history first
  EXPECT_NE(bob.out.find("(to you) alice: psst\n"), std::string::npos) << bob.out;
  EXPECT_NE(bob.out.find("bob: hello alice\n"), std::string::npos) << bob.out;
  auto carol = run("printf '' | " + chat + " --name carol");
  EXPECT_NE(carol.out.find("bob: hello alice\n"), std::string::npos) << carol.out;
  EXPECT_EQ(carol.out.find("psst"), std::string::npos) << carol.out;  // not her inbox
  auto elsewhere = run("printf '' | " + std::string(COWBOY_BIN_DIR) + "/example_chat_room --dev " +
                       cbqsd.data().string() + " --room kitchen --name dave");
  EXPECT_EQ(elsewhere.out, "");  // another room: other lanes
}

}  // namespace
}  // namespace cowboy
