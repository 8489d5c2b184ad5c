// The `cbqs` CLI against a real `cbqsd --dev`: append, tail and checkpoint
// verification with --json; keygen; a minted narrow grant refused the verb it
// lacks; a generation bump through `cbqs chain` revoking that grant.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "../support/cbqsd_process.h"
#include "../support/poll.h"
#include "../support/temp_dir.h"
#include "devchain/json.h"

namespace cowboy {
namespace {

using nlohmann::json;

struct Run {
  int status;
  std::string out;
};

Run run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, ""};
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(Cli, AppendTailCheckpointGrantsAndRevocation) {
  testing::TempDir dir;
  testing::CbqsdProcess cbqsd(dir.path());  // also points CBQS_HOME at dir/home for the dev key
  ASSERT_TRUE(cbqsd.up());
  std::string cbqs = std::string(COWBOY_BIN_DIR) + "/cbqs --json --chain-url http://127.0.0.1:" +
                     std::to_string(cbqsd.chain_port());
  std::string endpoint = " --endpoint wss://127.0.0.1:" + std::to_string(cbqsd.port()) + "/";
  std::string dev = " --dev " + cbqsd.data().string() + endpoint;

  auto appended = run(cbqs + " append" + dev + " hello world");
  ASSERT_EQ(appended.status, 0) << appended.out;
  auto a = json::parse(appended.out);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1]["sequence"], 2);

  auto tailed = run(cbqs + " tail" + dev + " --from 1");
  ASSERT_EQ(tailed.status, 0) << tailed.out;
  auto t = json::parse(tailed.out);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0]["payload"], "hello");
  EXPECT_EQ(t[1]["payload"], "world");

  auto cp = run(cbqs + " checkpoint" + dev);
  ASSERT_EQ(cp.status, 0) << cp.out;
  EXPECT_EQ(json::parse(cp.out)["verdict"], "valid");

  std::string holder = (dir.path() / "reader.key").string();
  ASSERT_EQ(run(cbqs + " keygen --out " + holder).status, 0);
  EXPECT_EQ(run(cbqs + " keygen --out " + holder).status, 1);  // never overwrites a key
  std::string sid = devchain::json::hex0x(cbqsd.grant().stream_id);
  std::string grant = (dir.path() / "reader.grant").string();
  auto minted = run(cbqs + " grant mint --admin-key " + (cbqsd.data() / "stream-admin-key").string() + " --stream " +
                    sid + " --holder-key " + holder + " --verbs replay --lanes 1 --out " + grant);
  ASSERT_EQ(minted.status, 0) << minted.out;
  std::string reader = endpoint + " --ca " + (cbqsd.data() / "tls" / "dev-cert.pem").string() + " --grant " + grant +
                       " --holder-key " + holder + " --allow-private";
  auto refused = run(cbqs + " append" + reader + " --lane 1 nope");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.out.find("VerbNotGranted"), std::string::npos) << refused.out;
  auto read = run(cbqs + " tail" + reader + " --from 1");
  ASSERT_EQ(read.status, 0) << read.out;
  EXPECT_EQ(json::parse(read.out).size(), 2u);

  // Revoke every outstanding grant; the reader's next session is refused.
  auto bumped = run(cbqs + " chain update-stream --stream " + sid + " --bump-generation");
  ASSERT_EQ(bumped.status, 0) << bumped.out;
  EXPECT_EQ(json::parse(bumped.out)["status"], "applied");
  EXPECT_TRUE(cowboy::testing::eventually(
      [&] { return run(cbqs + " tail" + reader + " --from 1").out.find("GenerationMismatch") != std::string::npos; },
      std::chrono::seconds(15)));
}

TEST(Cli, GroupsConsumeWithExecDeadLettersAndReplay) {
  testing::TempDir dir;
  testing::CbqsdProcess cbqsd(dir.path());
  ASSERT_TRUE(cbqsd.up());
  ASSERT_NE(cbqsd.admin_port(), 0);
  std::string cbqs = std::string(COWBOY_BIN_DIR) + "/cbqs --json --chain-url http://127.0.0.1:" +
                     std::to_string(cbqsd.chain_port());
  std::string dev = " --dev " + cbqsd.data().string() + " --endpoint wss://127.0.0.1:" + std::to_string(cbqsd.port()) + "/";
  std::string admin = " --dev " + cbqsd.data().string() + " --admin http://127.0.0.1:" + std::to_string(cbqsd.admin_port());

  ASSERT_EQ(run(cbqs + " append" + dev + " a b c").status, 0);
  auto created = run(cbqs + " groups create" + dev + " --lane 1 --start-at 1 --max-attempts 1 --visibility-ms 1000");
  ASSERT_EQ(created.status, 0) << created.out;
  auto g = json::parse(created.out);
  EXPECT_EQ(g["group_id"], 1);
  EXPECT_EQ(g["start"], 1);
  EXPECT_EQ(g["max_attempts"], 1);

  // The command fails for the record "b": it is nacked, and with max_attempts 1 dead-lettered.
  auto consumed = run(cbqs + " consume" + dev + " --group 1 --idle-ms 1500 --exec 'grep -qv b'");
  ASSERT_EQ(consumed.status, 0) << consumed.out;
  auto c = json::parse(consumed.out);
  ASSERT_EQ(c.size(), 3u) << consumed.out;
  EXPECT_EQ(c[0]["payload"], "a");
  EXPECT_EQ(c[0]["action"], "ack");
  EXPECT_EQ(c[1]["payload"], "b");
  EXPECT_EQ(c[1]["action"], "nack");
  EXPECT_EQ(c[2]["action"], "ack");

  auto expired = run(cbqs + " groups expired" + admin + " --group 1");
  ASSERT_EQ(expired.status, 0) << expired.out;
  auto e = json::parse(expired.out);
  ASSERT_EQ(e["dead_letters"].size(), 1u) << expired.out;
  EXPECT_EQ(e["dead_letters"][0]["sequence"], 2);
  EXPECT_EQ(e["dead_letters"][0]["reason"], "max_attempts");
  auto replayed = run(cbqs + " groups replay" + admin + " --group 1");
  ASSERT_EQ(replayed.status, 0) << replayed.out;
  EXPECT_EQ(json::parse(replayed.out)["redriven"], 1);
  auto again = run(cbqs + " consume" + dev + " --group 1 --count 1");
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_EQ(json::parse(again.out)[0]["payload"], "b");

  auto updated = run(cbqs + " groups update" + dev + " --group 1 --max-attempts 3");
  ASSERT_EQ(updated.status, 0) << updated.out;
  EXPECT_EQ(json::parse(updated.out)["max_attempts"], 3);
  EXPECT_EQ(json::parse(run(cbqs + " groups get" + dev + " --group 1").out)["max_attempts"], 3);
  EXPECT_EQ(run(cbqs + " groups delete" + dev + " --group 1").status, 0);
  auto gone = run(cbqs + " groups get" + dev + " --group 1");
  EXPECT_EQ(gone.status, 1);
  EXPECT_NE(gone.out.find("UnknownGroup"), std::string::npos) << gone.out;
}

TEST(Cli, LoopbackIsRefusedWithoutTheExplicitOptIn) {
  auto r = run(std::string(COWBOY_BIN_DIR) + "/cbqs append --endpoint wss://127.0.0.1:1/ --grant /nonexistent x");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("refused destination"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("127.0.0.0/8"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cowboy
