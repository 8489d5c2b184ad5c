// Effects to closure from the CLI against a real transitd (docs/transit.md,
// decisions 43-49): an intent captured by a turn, attempted and observed with
// `transit effect ...`, survives a SIGKILL of the node word for word and is
// then closed; cancel_effect of the attempted effect is refused.
#include <chrono>

#include "../support/run.h"
#include "process_fixture.h"

namespace cowboy::transit {
namespace {

TEST_F(ProcessTest, EffectsTakenThroughTheCliSurviveASigkill) {
  const auto dev = dir_ / "transitd-dev";
  const std::vector<std::string> node_args{kBin + "/transitd", "--dev", "--dev-dir", dev.string(), "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"};
  auto node = std::make_unique<cowboy::testing::ChildProcess>(node_args);
  ASSERT_NE(ready_port(*node), 0);
  const std::string cli = kBin + "/transit --dev " + dev.string() + " ";
  auto run = [&](const std::string& args) {
    auto r = cowboy::testing::run(cli + args);
    EXPECT_EQ(r.status, 0) << args << ": " << r.out;
    return r.out;
  };
  run("resource create --name doc");
  run("process create --pid 7 --require doc");
  run("process associate --pid 7 --name doc --resource 1");
  run("process init --pid 7 --generation 0");
  run("process own --pid 7 --generation 1");
  // Trusted time is the node's clock: an hour ahead is ahead of it.
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string deadline = std::to_string(now_ms + 3'600'000);
  EXPECT_NE(run("turn --pid 7 --generation 2 --effect-executor 1 --effect-deadline-ms " + deadline +
                " --effect-budget 3 --effect-intent charge")
                .find("\"effect\":1"),
            std::string::npos);
  EXPECT_EQ(run("effect attempt --effect 1"),
            "effect_changed {\"effect\":1,\"pid\":7,\"phase\":\"attempted\",\"closure\":null,\"input\":null} at position 7\n");
  EXPECT_EQ(run("effect observe --effect 1 --result hex:00ff"),
            "effect_changed {\"effect\":1,\"pid\":7,\"phase\":\"attempted\",\"closure\":null,\"input\":1} at position 8\n");
  const std::string shown = run("effect show --effect 1");
  EXPECT_EQ(shown, "effect 1 of process 7: attempted, executor 1, deadline " + deadline +
                       ", observations 1/3\n"
                       "intent charge\n"
                       "authorized by 1 at position 6, policy revision 1\n"
                       "attempt by 1 at position 7, policy revision 1\n"
                       "observation 1 by 1 at position 8, policy revision 1, input 1: hex:00ff\n");
  const std::string json = run("--json effect show --effect 1");
  EXPECT_NE(json.find("\"result\":\"00ff\""), std::string::npos) << json;  // the connector's bytes, as recorded

  EXPECT_NE(node->kill(SIGKILL), -1);
  node = std::make_unique<cowboy::testing::ChildProcess>(node_args);
  ASSERT_NE(ready_port(*node), 0);
  EXPECT_EQ(run("effect show --effect 1"), shown);
  EXPECT_EQ(run("--json effect show --effect 1").substr(json.find("\"result\"")),
            json.substr(json.find("\"result\"")));

  auto cancel = cowboy::testing::run(cli + "effect cancel --effect 1");
  EXPECT_EQ(cancel.status, 1);
  EXPECT_NE(cancel.out.find("already_attempted"), std::string::npos) << cancel.out;
  EXPECT_EQ(run("effect observe --effect 1 --result ok --final"),
            "effect_changed {\"effect\":1,\"pid\":7,\"phase\":\"closed\",\"closure\":\"observed\",\"input\":2} at position 9\n");
  EXPECT_EQ(run("effect list --filter unresolved"), "");
  EXPECT_EQ(run("effect list"), "effect 1 of process 7: closed (observed), executor 1, deadline " + deadline +
                                    ", observations 2/3\n");
  auto late = cowboy::testing::run(cli + "effect close --effect 1 --kind abandoned");
  EXPECT_EQ(late.status, 1);
  EXPECT_NE(late.out.find("effect_closed"), std::string::npos) << late.out;
  EXPECT_EQ(cowboy::testing::run(cli + "effect close --effect 1 --kind later").status, 2);  // a usage error
}

}  // namespace
}  // namespace cowboy::transit
