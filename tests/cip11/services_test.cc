// cip11d and cip11-runner end to end: real processes on 127.0.0.1, real QUIC,
// a real devchain (100 ms blocks). Where a test needs a party that misbehaves
// - a validator that pushes differing fields or withholds results, a runner
// that stays silent - that party runs in this process on the same libraries.
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>

#include "../support/cip11_processes.h"
#include "../support/poll.h"
#include "../support/temp_dir.h"
#include "cip11/link/runner_link.h"
#include "cip11/link/validator_links.h"
#include "cip11/subset.h"
#include "cip11/validator/runner_directory.h"
#include "cip11/validator/service.h"
#include "net/dev_cert.h"
#include "net/host_port.h"

namespace cowboy::cip11 {
namespace {

using testing::Cip11dProcess;
using testing::eventually;
using testing::RunnerProcess;

std::string hex(const Bytes32& id) { return devchain::json::hex0x(id); }

struct DevWorld {
  cowboy::testing::TempDir dir;
  std::unique_ptr<Cip11dProcess> validator;
  std::vector<std::unique_ptr<RunnerProcess>> runners;

  explicit DevWorld(std::vector<std::string> flags = {"--dev-runners", "1"}) {
    validator = std::make_unique<Cip11dProcess>(data(), flags);
    EXPECT_TRUE(validator->up());
  }
  std::filesystem::path data() const { return dir.path() / "data"; }
  RunnerProcess& runner(unsigned index, std::vector<std::string> extra = {}) {
    runners.push_back(std::make_unique<RunnerProcess>(data(), index, std::move(extra)));
    return *runners.back();
  }
  devchain::HttpClient chain() const { return validator->chain(); }
  std::optional<Bytes32> submit(const std::string& spec, std::uint64_t timeout_blocks = 50) {
    auto c = chain();
    return testing::submit_job(c, data() / "keys" / "submitter.key", spec, timeout_blocks);
  }
  bool present(double n) {
    return eventually([&] { return validator->metric("cip11d_present_runners") == n; }, std::chrono::seconds(20));
  }
  std::optional<chain::JobRecord> job(const Bytes32& id) {
    auto c = chain();
    auto j = c.job(id);
    if (!j) return std::nullopt;
    return *j;
  }
  std::uint64_t height() {
    auto c = chain();
    auto h = c.height();
    return h ? *h : 0;
  }
};

TEST(Cip11Services, AJobIsPushedToItsRunnerAndItsResultIsIncluded) {
  DevWorld w;
  auto& r = w.runner(0);
  ASSERT_TRUE(r.wait_for({"event=connected"}));
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"echo":"hello push"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=included", hex(*id)}));
  EXPECT_TRUE(r.saw({"event=accepted", hex(*id), "via=push"}));
  EXPECT_TRUE(r.saw({"event=result_sent", hex(*id), "reveal on the accepted stream"}));
  auto job = w.job(*id);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, chain::JobState::kCompleted);
  EXPECT_EQ(std::string(job->result.begin(), job->result.end()), "hello push");
  auto m = w.validator->metrics();
  EXPECT_EQ(m["cip11d_pushes_total"], 1);
  EXPECT_EQ(m["cip11d_results_forwarded_total"], 1);
  EXPECT_EQ(m["cip11d_push_latency_seconds_count"], 1);
  EXPECT_NE(w.validator->metrics_text().find("cip11d_acks_total{status=\"accepted\"} 1"), std::string::npos);
}

TEST(Cip11Services, WithTwoValidatorsTheRunnerAcceptsOnePushAndAnswersTheOtherDuplicate) {
  DevWorld w({"--dev-runners", "1", "--dev-validators", "2"});
  Cip11dProcess second(w.dir.path() / "second",
                       {"--chain-url", w.validator->chain_url(), "--key", (w.data() / "keys" / "validator-1.key").string()});
  ASSERT_TRUE(second.up());
  auto& r = w.runner(0);
  ASSERT_TRUE(r.wait_count("event=connected", 2));  // Sub(R) holds both (k = 2)
  ASSERT_TRUE(eventually([&] {
    return w.validator->metric("cip11d_present_runners") == 1 && second.metric("cip11d_present_runners") == 1;
  }, std::chrono::seconds(20)));
  auto id = w.submit(R"({"sha256":"two validators"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=included", hex(*id)}));
  ASSERT_TRUE(r.wait_for({"event=duplicate", hex(*id)}, std::chrono::seconds(5)));
  EXPECT_EQ(r.count("event=accepted"), 1u);
  ASSERT_TRUE(eventually([&] {
    auto a = w.validator->metrics_text(), b = second.metrics_text();
    auto has = [](const std::string& t, const std::string& s) { return t.find(s) != std::string::npos; };
    return (has(a, "cip11d_acks_total{status=\"accepted\"} 1") && has(b, "cip11d_acks_total{status=\"duplicate\"} 1")) ||
           (has(b, "cip11d_acks_total{status=\"accepted\"} 1") && has(a, "cip11d_acks_total{status=\"duplicate\"} 1"));
  }));
}

TEST(Cip11Services, BackpressureTakesTheRunnerOutOfTheNextPresenceInput) {
  DevWorld w({"--dev-runners", "1", "--dev-max-concurrent", "1"});
  auto& r = w.runner(0, {"--max-concurrent", "1"});
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"sleep_ms":2000})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=accepted", hex(*id)}));
  ASSERT_TRUE(w.present(0));  // out of local presence while full
  const std::uint64_t h = w.height() + 1;
  ASSERT_TRUE(eventually([&] { return w.height() > h; }));
  auto c = w.chain();
  auto block = c.block_presence(h);
  ASSERT_TRUE(block);
  EXPECT_TRUE(block->field.has_value());           // present-first on: a valid (empty) set, stated
  EXPECT_TRUE(block->present.empty()) << h;        // registry index 0 is not in it
  ASSERT_TRUE(r.wait_for({"event=included", hex(*id)}));
  ASSERT_TRUE(w.present(1));  // capacity re-asserted, then the next Ping
}

TEST(Cip11Services, AKilledRunnerLeavesPresenceWithinThePresenceTimeout) {
  DevWorld w;
  auto& r = w.runner(0);
  ASSERT_TRUE(w.present(1));
  const std::uint64_t killed_at = w.height();
  r.kill9();
  ASSERT_TRUE(w.present(0));
  const std::uint64_t gone_at = w.height();
  EXPECT_LE(gone_at - killed_at, kPresenceTimeoutBlocks + 2);  // + the block in flight and the one being read
  EXPECT_GE(gone_at - killed_at, kPresenceTimeoutBlocks - 2);  // by the timeout, not by a connection close
}

TEST(Cip11Services, AfterAValidatorSigkillAndRestartRunnersReturnAndNewJobsArePushed) {
  cowboy::testing::TempDir dir;
  auto data = dir.path() / "data";
  auto first = std::make_unique<Cip11dProcess>(data, std::vector<std::string>{"--dev-runners", "1"});
  ASSERT_TRUE(first->up());
  const std::uint16_t chain_port = first->chain_port(), admin_port = first->admin_port();
  RunnerProcess r(data, 0);
  ASSERT_TRUE(r.wait_for({"event=connected"}));
  first->kill9();
  first.reset();
  Cip11dProcess again(data, {"--dev-runners", "1"}, chain_port, admin_port);
  ASSERT_TRUE(again.up());
  ASSERT_TRUE(r.wait_count("event=connected", 2, std::chrono::seconds(30)));
  ASSERT_TRUE(eventually([&] { return again.metric("cip11d_present_runners") == 1; }, std::chrono::seconds(20)));
  auto c = again.chain();
  auto id = testing::submit_job(c, data / "keys" / "submitter.key", R"({"echo":"after restart"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=included", hex(*id)}));
  EXPECT_TRUE(r.saw({"event=accepted", hex(*id), "via=push"}));
}

TEST(Cip11Services, AJobCancelStopsExecutionAndNoResultFollows) {
  DevWorld w;
  auto& r = w.runner(0);
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"sleep_ms":30000})", 5);  // times out after 5 blocks: Reassigned, and cancelled
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=accepted", hex(*id)}));
  ASSERT_TRUE(r.wait_for({"event=cancelled", hex(*id)}, std::chrono::seconds(10)));
  EXPECT_GE(w.validator->metric("cip11d_cancels_total"), 1);
  EXPECT_FALSE(r.saw({"event=result_sent", hex(*id)}, std::chrono::milliseconds(1500)));
}

TEST(Cip11Services, ASignedGoodbyeIsHonouredAtOnce) {
  DevWorld w;
  auto& r = w.runner(0);
  ASSERT_TRUE(r.wait_for({"event=connected"}));
  const auto start = std::chrono::steady_clock::now();
  w.validator->terminate();  // SIGTERM: Goodbye{Shutdown} to every runner
  auto line = r.wait_for({"event=disconnected"}, std::chrono::seconds(10));
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("Goodbye Shutdown"), std::string::npos) << *line;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));  // not the 30 s idle timeout
}

}  // namespace
}  // namespace cowboy::cip11
