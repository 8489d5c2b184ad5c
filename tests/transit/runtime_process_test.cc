// Runtime binding from the `transit` CLI against a real transitd --dev
// (docs/transit.md, decisions 120-129): a local manager's intent,
// observations with bootstrap evidence read from files, an activation that
// writes the incarnation's key, whose holder then runs the process; own is
// refused runtime_bound; a SIGKILL and a restart keep the binding.
#include <gtest/gtest.h>

#include <fstream>

#include "../support/run.h"
#include "process_fixture.h"

namespace cowboy::transit {
namespace {

TEST_F(ProcessTest, RuntimeBindingFromTheCliAcrossARestart) {
  const auto dev = dir_ / "transitd-dev";
  auto node = std::make_unique<cowboy::testing::ChildProcess>(std::vector<std::string>{
      kBin + "/transitd", "--dev", "--dev-dir", dev.string(), "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"});
  ASSERT_NE(ready_port(*node), 0);
  const std::string cli = kBin + "/transit --dev " + dev.string() + " ";
  auto run = [&](const std::string& args, int status = 0) {
    auto r = cowboy::testing::run(cli + args);
    EXPECT_EQ(r.status, status) << args << ": " << r.out;
    return r.out;
  };
  const std::string artifact = (dir_ / "app.bin").string(), config = (dir_ / "app.toml").string(),
                    other = (dir_ / "other.toml").string();
  std::ofstream(artifact) << "the artifact's bytes";
  std::ofstream(config) << "threads = 4\n";
  std::ofstream(other) << "threads = 8\n";
  const std::string w1 = (dir_ / "w1.key").string(), w2 = (dir_ / "w2.key").string();

  run("resource create --name doc");
  run("process create --pid 7 --require doc");
  run("process associate --pid 7 --name doc --resource 1");
  run("process init --pid 7 --generation 0");
  run("principal create --id 10 --key-out " + w1 + " --permissions inspect,read,write,execute --pid-scope 7");
  run("send --pid 7 --value hello");
  EXPECT_EQ(run("runtime show --pid 7"), "process 7 is not bound\n");
  EXPECT_NE(run("runtime intent --pid 7 --operation 1 --revision 3 --provider host-a --worker 10 --artifact-file " +
                artifact + " --configuration-file " + config)
                .find("runtime_changed {\"pid\":7,\"operation\":1,\"status\":\"intended\""),
            std::string::npos);
  run("runtime observe --pid 7 --operation 1 --incarnation 1 --status starting");
  // Evidence of another configuration is refused, by name.
  EXPECT_NE(run("runtime observe --pid 7 --operation 1 --incarnation 1 --status ready --artifact-file " + artifact +
                    " --configuration-file " + other,
                1)
                .find("configuration_mismatch"),
            std::string::npos);
  run("runtime observe --pid 7 --operation 1 --incarnation 1 --status ready --artifact-file " + artifact +
      " --configuration-file " + config);
  EXPECT_NE(run("process own --pid 7 --generation 1", 1).find("runtime_bound"), std::string::npos);
  EXPECT_NE(run("runtime activate --pid 7 --generation 1 --operation 1 --incarnation 1 --old-key " + w1 +
                " --key-out " + w2)
                .find("\"generation\":2"),
            std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(w2));

  node.reset();  // SIGKILLed, and started again on the same directory
  node = std::make_unique<cowboy::testing::ChildProcess>(std::vector<std::string>{
      kBin + "/transitd", "--dev", "--dev-dir", dev.string(), "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"});
  const std::uint16_t port = ready_port(*node);
  ASSERT_NE(port, 0);
  const std::string shown = run("runtime show --pid 7");
  EXPECT_NE(shown.find("operation 1 (revision 3) on host-a for worker 10, incarnation 1 ready"), std::string::npos) << shown;
  EXPECT_NE(shown.find("activated: operation 1, incarnation 1, generation 2"), std::string::npos) << shown;
  // The incarnation's key runs the process: the head input is released to it.
  const std::string as_worker = kBin + "/transit --endpoint 127.0.0.1:" + std::to_string(port) +
                                " --realm dev --principal 10 --key " + w2 + " ";
  auto r = cowboy::testing::run(as_worker + "process show --pid 7");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("input 1 hello"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cowboy::transit
