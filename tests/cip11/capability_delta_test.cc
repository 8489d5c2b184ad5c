// CapabilityDelta beyond Mode A's request for receipts (§6.5, docs/cip11.md
// choice 126) over real QUIC: a runner (the runner library, in this process)
// that does not serve a job kind of its registration now says so after its
// admission, and its validator (ValidatorService on a devchain, in this
// process) does not push that kind; the runner resumes it with a second
// delta, and the next job of that kind is pushed and completes.
#include <mutex>

#include "../support/run.h"
#include "cip11/runner.h"
#include "service_world.h"

namespace cowboy::cip11 {
namespace {

using testing::eventually;

TEST(Cip11CapabilityDelta, APausedJobKindIsNotPushedAndResumingItBringsPushesBack) {
  testing::LocalChain c;  // runner 0 registered for Custom, the kind submit() sends
  std::mutex mu;
  std::vector<RunnerEvent> events;
  RunnerOptions ro;
  ro.key = c.runner_keys[0];
  ro.state_dir = c.dir.path() / "runner-state";
  ro.block_time = std::chrono::milliseconds(100);
  ro.height_poll = std::chrono::milliseconds(20);
  ro.paused_job_kinds = 1u << static_cast<unsigned>(JobKind::kCustom);
  ro.on_event = [&](const RunnerEvent& e) {
    std::lock_guard lock(mu);
    events.push_back(e);
  };
  auto runner = Runner::start(ro, std::make_unique<devchain::Cip11Port>(*c.node, *c.node));
  ASSERT_TRUE(runner) << runner.error();
  auto pushed = [&](const JobId& id) {
    std::lock_guard lock(mu);
    return std::any_of(events.begin(), events.end(), [&](const RunnerEvent& e) {
      return e.kind == RunnerEvent::Kind::kAssigned && e.via == "push" && e.job_id == id;
    });
  };
  // Admitted, and the delta naming the paused kind taken.
  ASSERT_TRUE(c.metric_is("cip11d_capability_deltas_total 1"));

  auto withheld = c.submit(R"({"echo":"paused"})");
  ASSERT_TRUE(withheld);
  EXPECT_TRUE(c.metric_is("cip11d_assignments_withheld_total 1"));
  EXPECT_NE(c.service->metrics().find("\ncip11d_pushes_total 0\n"), std::string::npos);
  EXPECT_FALSE(pushed(*withheld));
  // The chain's assignment stands: the delta is advisory (§6.5).
  ASSERT_EQ(c.node->job(*withheld)->committee.size(), 1u);

  (*runner)->pause_job_kinds(0);
  ASSERT_TRUE(c.metric_is("cip11d_capability_deltas_total 2"));
  auto resumed = c.submit(R"({"echo":"resumed"})");
  ASSERT_TRUE(resumed);
  EXPECT_TRUE(eventually([&] { return pushed(*resumed); }, std::chrono::seconds(20)));
  EXPECT_TRUE(eventually(
      [&] {
        auto j = c.node->job(*resumed);
        return j.ok() && j->state == chain::JobState::kCompleted;
      },
      std::chrono::seconds(20)));
  EXPECT_TRUE(c.metric_is("cip11d_pushes_total 1"));
  EXPECT_FALSE(pushed(*withheld));
}

// The same through the program: `cip11-runner --pause-kind Custom` is not
// pushed Custom jobs, and a kind with no name refuses the start naming it.
TEST(Cip11CapabilityDelta, TheRunnerProgramPausesAKindByFlagAndRefusesAnUnknownOne) {
  testing::LocalChain c;
  auto refused = cowboy::testing::run(std::string(COWBOY_BIN_DIR) + "/cip11-runner --chain-url " + c.url() + " --key " +
                                      (c.dir.path() / "runner-0.key").string() + " --pause-kind Nope");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.out.find("--pause-kind: no job kind Nope"), std::string::npos) << refused.out;

  auto runner = c.runner(0, {"--pause-kind", "Custom", "--height-poll-ms", "20"});
  ASSERT_TRUE(runner->wait_for({"event=connected"}));
  ASSERT_TRUE(c.metric_is("cip11d_capability_deltas_total 1"));
  auto id = c.submit(R"({"echo":"paused"})");
  ASSERT_TRUE(id);
  EXPECT_TRUE(c.metric_is("cip11d_assignments_withheld_total 1"));
  EXPECT_NE(c.service->metrics().find("\ncip11d_pushes_total 0\n"), std::string::npos);
}

}  // namespace
}  // namespace cowboy::cip11
