// The peer bench's NATS drain worker (bench/peers/nats_pull.h) against a real
// nats-server: a pull never takes more than its batch, even when the inbox
// already holds more than half a batch of late deliveries and more arrive
// during the pull, the case where nats.c 3.4.1's natsSubscription_Fetch
// wrote past its array (nats.c #749); and every record is acked once.
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "../../bench/peers/nats_pull.h"
#include "../support/poll.h"
#include "../support/ports.h"
#include "../support/process.h"
#include "../support/temp_dir.h"

namespace cowboy::bench::peers {
namespace {

constexpr const char* kServer = "/usr/sbin/nats-server";

class NatsPullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kServer, X_OK) != 0) GTEST_SKIP() << "nats-server is not installed (scripts/install-deps.sh nats-server)";
    auto port = std::to_string(cowboy::testing::free_port());
    server_ = std::make_unique<cowboy::testing::ChildProcess>(std::vector<std::string>{
        kServer, "-a", "127.0.0.1", "-p", port, "-js", "-sd", dir_.path().string(), "-l", (dir_.path() / "nats.log").string()});
    std::string url = "nats://127.0.0.1:" + port;
    ASSERT_TRUE(cowboy::testing::eventually([&] { return natsConnection_ConnectTo(&nc_, url.c_str()) == NATS_OK; },
                                            std::chrono::seconds(10)));
    ASSERT_EQ(natsConnection_JetStream(&js_, nc_, nullptr), NATS_OK);
    add_stream_and_consumer("S", "s", "w");
    add_stream_and_consumer("T", "t", "v");
  }
  // A work-queue stream of one subject, with a durable pull consumer acking explicitly.
  void add_stream_and_consumer(const char* name, const char* subject, const char* durable) {
    const char* subjects[] = {subject};
    jsStreamConfig stream;
    jsStreamConfig_Init(&stream);
    stream.Name = name;
    stream.Subjects = subjects;
    stream.SubjectsLen = 1;
    stream.Retention = js_WorkQueuePolicy;
    jsStreamInfo* si = nullptr;
    ASSERT_EQ(js_AddStream(&si, js_, &stream, nullptr, nullptr), NATS_OK);
    jsStreamInfo_Destroy(si);
    jsConsumerConfig consumer;
    jsConsumerConfig_Init(&consumer);
    consumer.Durable = durable;
    consumer.AckPolicy = js_AckExplicit;
    jsConsumerInfo* ci = nullptr;
    ASSERT_EQ(js_AddConsumer(&ci, js_, name, &consumer, nullptr, nullptr), NATS_OK);
    jsConsumerInfo_Destroy(ci);
  }
  void TearDown() override {
    if (js_) jsCtx_Destroy(js_);
    if (nc_) natsConnection_Destroy(nc_);
  }
  void publish(const char* subject, int n) {
    for (int i = 0; i < n; ++i) ASSERT_EQ(js_Publish(nullptr, js_, subject, "r", 1, nullptr, nullptr), NATS_OK);
  }
  // A pull request of `batch` to `stream`'s `consumer` that the pull did not
  // send, answered on its inbox: deliveries the pull did not ask for, as those
  // of an earlier request that the client gave up on and the server had not.
  void request_for(const NatsPull& pull, const std::string& stream, const std::string& consumer, int batch) {
    std::string next = "$JS.API.CONSUMER.MSG.NEXT." + stream + "." + consumer, body = "{\"batch\":" + std::to_string(batch) + "}";
    ASSERT_EQ(natsConnection_PublishRequestString(nc_, next.c_str(), pull.inbox().c_str(), body.c_str()), NATS_OK);
    ASSERT_EQ(natsConnection_Flush(nc_), NATS_OK);
  }
  // Records of `stream` not yet acked (undelivered or delivered and unacked).
  std::int64_t unacked(const char* stream, const char* consumer) {
    jsConsumerInfo* ci = nullptr;
    if (js_GetConsumerInfo(&ci, js_, stream, consumer, nullptr, nullptr) != NATS_OK) return -1;
    auto n = static_cast<std::int64_t>(ci->NumAckPending) + static_cast<std::int64_t>(ci->NumPending);
    jsConsumerInfo_Destroy(ci);
    return n;
  }

  cowboy::testing::TempDir dir_;
  std::unique_ptr<cowboy::testing::ChildProcess> server_;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
};

TEST_F(NatsPullTest, APullTakesAtMostItsBatchWhenLateDeliveriesKeepArriving) {
  NatsPull pull;
  ASSERT_TRUE(pull.open(nc_, "S", "w"));

  // 70 late deliveries wait in the inbox (more than half a batch of 100), 40
  // more records are in the stream, and a request the pull did not send waits
  // for T's 60, which arrive during the pull.
  request_for(pull, "S", "w", 70);
  publish("s", 70);
  ASSERT_TRUE(cowboy::testing::eventually([&] { return pull.pending() == 70; }, std::chrono::seconds(10)));
  publish("s", 40);
  request_for(pull, "T", "v", 60);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    publish("t", 60);
  });
  int first = pull.pull_and_ack(100, std::chrono::seconds(2));
  late.join();
  // natsSubscription_Fetch (nats.c 3.4.1) took 160 here, into an array of 100.
  EXPECT_LE(first, 100);
  EXPECT_GT(first, 0);

  // The rest come with later pulls: 170 records, each acked once.
  int total = first;
  for (int i = 0; i < 50 && total < 170; ++i) total += pull.pull_and_ack(100, std::chrono::milliseconds(200));
  EXPECT_EQ(total, 170);
  EXPECT_TRUE(cowboy::testing::eventually([&] { return unacked("S", "w") == 0 && unacked("T", "v") == 0; },
                                          std::chrono::seconds(10)));
}

}  // namespace
}  // namespace cowboy::bench::peers
