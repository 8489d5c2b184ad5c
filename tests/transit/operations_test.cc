// transitd's operator surface in this process over real HTTP on 127.0.0.1
// (docs/transit.md, "Operating transitd"): the request deadline and the
// pending bound, against a journal whose syncs a test holds (failing_fs.h) -
// a disk as slow as the test wants, whatever the machine's speed; and the
// admin listener's /healthz, /readyz and /metrics.
#include <gtest/gtest.h>

#include <future>
#include <regex>

#include "../support/poll.h"
#include "failing_fs.h"
#include "node_fixture.h"

namespace cowboy::transit {
namespace {

using testing::seed_of;

class OperationsTest : public NodeTest {
 protected:
  void TearDown() override {
    fs_->hold_syncs(false);  // the node's last writes must go through
    NodeTest::TearDown();
  }
  net::HttpAnswer admin_get(const std::string& target) {
    net::HttpConnection c("127.0.0.1", node_->admin_port());
    auto r = c.get(target);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
    return r.ok() ? *r : net::HttpAnswer{};
  }
  /// The value of one sample line of /metrics (`name{labels}` exactly), or -1.
  double sample(const std::string& metrics, const std::string& series) {
    std::istringstream in(metrics);
    for (std::string line; std::getline(in, line);)
      if (line.starts_with(series + " ")) return std::stod(line.substr(series.size() + 1));
    return -1;
  }
  std::string command(Client& client, Id sequence, auto id, std::uint8_t seed) {
    return to_json(sign(client.build(create(id, seed), sequence), seed_of(0)));
  }

  std::shared_ptr<testing::SyncFailingFileSystem> fs_ = std::make_shared<testing::SyncFailingFileSystem>();
  std::unique_ptr<rocksdb::Env> env_ = testing::env_over(fs_);
};

// A command stuck behind a stalled disk is answered ServiceUncertain at the
// deadline, not never; it stays in the pipeline and commits once the disk
// moves, and its exact retry returns that one receipt: nothing lost, nothing
// decided twice. /readyz says the disk is slow meanwhile.
TEST_F(OperationsTest, ACommandBehindAStalledDiskIsAnsweredUncertainAtTheDeadlineAndStillCommitsOnce) {
  storage_env_ = env_.get();
  request_deadline_ = std::chrono::milliseconds(300);
  admin_ = {"127.0.0.1", 0};
  start();
  Client client = root();
  ASSERT_TRUE(client.submit(create(2, 100)).ok());  // position 1
  EXPECT_EQ(admin_get("/readyz").status, 200);

  fs_->hold_syncs(true);
  const std::string second = command(client, 2, 3, 101);
  const auto started = std::chrono::steady_clock::now();
  auto answer = post("/v1/command", second);
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(300));
  EXPECT_EQ(answer.status, 503);
  const Rejection rejection = rejection_of(answer);
  EXPECT_EQ(rejection.code, RejectionCode::kServiceUncertain);
  EXPECT_EQ(rejection.reason, Reason::kOverloaded);
  EXPECT_NE(rejection.message.value.find("300 ms deadline"), std::string::npos) << rejection.message.value;
  EXPECT_NE(rejection.message.value.find("may still commit"), std::string::npos) << rejection.message.value;
  EXPECT_GE(fs_->held_syncs(), 1u);

  // Once the synced write under way is older than the deadline: not ready, and why.
  net::HttpAnswer ready;
  EXPECT_TRUE(cowboy::testing::eventually([&] { return (ready = admin_get("/readyz")).status == 503; }));
  EXPECT_NE(ready.body.find("the disk is slow"), std::string::npos) << ready.body;
  auto metrics = admin_get("/metrics").body;
  EXPECT_EQ(sample(metrics, "transitd_deadline_expired_total"), 1);
  EXPECT_EQ(sample(metrics, "transitd_pending_requests"), 1);  // still in the node
  EXPECT_EQ(sample(metrics, "transitd_ready"), 0);
  EXPECT_EQ(sample(metrics, "transitd_authority_position"), 1);
  EXPECT_EQ(sample(metrics, R"(transitd_rejections_total{reason="overloaded",code="ServiceUncertain"})"), 1);

  fs_->hold_syncs(false);
  EXPECT_TRUE(cowboy::testing::eventually([&] { return node_->sequencer().stats().position == 2; }));
  EXPECT_EQ(admin_get("/readyz").status, 200);
  auto retried = post("/v1/command", second);
  ASSERT_EQ(retried.status, 200) << retried.body;
  auto receipt = from_json<Receipt>(retried.body, kMaxAnswerBytes);
  ASSERT_TRUE(receipt.ok());
  EXPECT_EQ(receipt->position, Position{2});
  EXPECT_EQ(receipt->sequence, 2u);
  EXPECT_EQ(node_->sequencer().stats().position, 2u);  // decided once
  EXPECT_EQ(node_->sequencer().stats().replayed, 1u);
  EXPECT_EQ(node_->sequencer().stats().pending, 0u);
}

// Beyond max_pending requests in the node (queued, deciding or awaiting their
// write) a request is refused overloaded at once; the ones inside are answered
// when the disk moves, and the refused one, resubmitted as the same bytes, is
// decided then.
TEST_F(OperationsTest, BeyondMaxPendingARequestIsRefusedOverloadedAtOnceAndItsResubmissionIsDecided) {
  storage_env_ = env_.get();
  max_pending_ = 2;
  request_deadline_ = std::chrono::milliseconds(0);  // no deadline: only the bound answers early
  admin_ = {"127.0.0.1", 0};
  start();
  Client client = root();
  ASSERT_TRUE(client.submit(create(2, 100)).ok());  // position 1

  fs_->hold_syncs(true);
  const std::string a = command(client, 2, 3, 101), b = command(client, 3, 4, 102), c = command(client, 4, 5, 103);
  auto first = std::async(std::launch::async, [&] { return post("/v1/command", a); });
  ASSERT_TRUE(cowboy::testing::eventually([&] { return node_->sequencer().stats().pending == 1; }));
  auto second = std::async(std::launch::async, [&] { return post("/v1/command", b); });
  ASSERT_TRUE(cowboy::testing::eventually([&] { return node_->sequencer().stats().pending == 2; }));

  // Refused at once, not after the held disk: bounded here so that a node that queues it fails, not hangs.
  auto third = std::async(std::launch::async, [&] { return post("/v1/command", c); });
  if (third.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    fs_->hold_syncs(false);
    FAIL() << "the request beyond max_pending waited for the disk instead of being refused";
  }
  auto refused = third.get();
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(rejection_of(refused).reason, Reason::kOverloaded);
  EXPECT_EQ(rejection_of(refused).code, RejectionCode::kServiceUncertain);
  auto metrics = admin_get("/metrics").body;
  EXPECT_EQ(sample(metrics, "transitd_overloaded_total"), 1);
  EXPECT_EQ(sample(metrics, "transitd_pending_requests"), 2);
  EXPECT_EQ(sample(metrics, "transitd_pending_requests_limit"), 2);

  fs_->hold_syncs(false);
  EXPECT_EQ(first.get().status, 200);
  EXPECT_EQ(second.get().status, 200);
  auto resubmitted = post("/v1/command", c);
  ASSERT_EQ(resubmitted.status, 200) << resubmitted.body;
  EXPECT_EQ(from_json<Receipt>(resubmitted.body, kMaxAnswerBytes)->position, Position{4});
  EXPECT_EQ(node_->sequencer().stats().pending, 0u);
}

// /healthz, /readyz and /metrics on their own listener: counters by outcome
// and reason, cumulative histograms, the position, the journal and the
// connections; the command listener does not serve them, nor the admin one POST.
TEST_F(OperationsTest, TheAdminListenerServesHealthReadinessAndMetricsApartFromTheCommandRoutes) {
  admin_ = {"127.0.0.1", 0};
  start();
  ASSERT_NE(node_->admin_port(), node_->port());
  Client client = root();
  for (Id id = 2; id <= 4; ++id) ASSERT_TRUE(client.submit(create(id, static_cast<std::uint8_t>(100 + id))).ok());
  ASSERT_TRUE(client.identity().ok());
  EXPECT_EQ(post("/v1/command", command(client, 9, 9, 109)).status, 409);  // a sequence gap
  net::HttpConnection held("127.0.0.1", node_->port());  // one connection kept open
  ASSERT_TRUE(held.post("/v1/query", "{}").ok());

  EXPECT_EQ(admin_get("/healthz").status, 200);
  auto ready = admin_get("/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ready: realm dev (genesis checked at open), journal open, position 3\n");
  const std::string m = admin_get("/metrics").body;
  EXPECT_EQ(sample(m, R"(transitd_commands_total{outcome="accepted"})"), 3);
  EXPECT_EQ(sample(m, R"(transitd_commands_total{outcome="replayed"})"), 0);
  EXPECT_EQ(sample(m, R"(transitd_rejections_total{reason="sequence_gap",code="Conflict"})"), 1);
  EXPECT_EQ(sample(m, R"(transitd_rejections_total{reason="syntax",code="InvalidRequest"})"), 0);
  EXPECT_EQ(sample(m, "transitd_authority_position"), 3);
  EXPECT_EQ(sample(m, "transitd_ready"), 1);
  EXPECT_EQ(sample(m, "transitd_pending_requests"), 0);
  EXPECT_EQ(sample(m, "transitd_request_deadline_seconds"), 5);
  EXPECT_GE(sample(m, "transitd_open_connections"), 1);
  EXPECT_GT(sample(m, "transitd_journal_bytes"), 0);
  EXPECT_EQ(sample(m, "transitd_journal_failed"), 0);
  EXPECT_GT(sample(m, "process_resident_memory_bytes"), 0);
  EXPECT_NE(m.find("# TYPE transitd_decision_duration_seconds histogram\n"), std::string::npos);
  // Cumulative buckets ending in +Inf = _count; one decision per accepted command, one sync per write.
  for (const std::string h : {"transitd_decision_duration_seconds", "transitd_sync_duration_seconds"}) {
    std::regex bucket("^" + h + R"re(_bucket\{le="([^"]+)"\} (\d+)$)re");
    std::istringstream in(m);
    double last = 0;
    int buckets = 0;
    for (std::string line; std::getline(in, line);) {
      std::smatch s;
      if (!std::regex_match(line, s, bucket)) continue;
      EXPECT_GE(std::stod(s[2]), last) << line;
      last = std::stod(s[2]);
      ++buckets;
    }
    EXPECT_EQ(buckets, 11) << h;
    EXPECT_EQ(sample(m, h + "_bucket{le=\"+Inf\"}"), sample(m, h + "_count"));
    EXPECT_GT(sample(m, h + "_sum"), 0) << h;
  }
  EXPECT_EQ(sample(m, "transitd_decision_duration_seconds_count"), 4);  // the refused command's decision too
  EXPECT_EQ(sample(m, "transitd_sync_duration_seconds_count"), sample(m, "transitd_synced_writes_total"));

  net::HttpConnection admin("127.0.0.1", node_->admin_port());
  EXPECT_EQ(admin.post("/metrics", "")->status, 405);
  EXPECT_EQ(admin.get("/v1/command")->status, 404);
  EXPECT_EQ(rejection_of(post("/metrics", "")).reason, Reason::kUnknownRoute);
}

}  // namespace
}  // namespace cowboy::transit
