// The peer bench's RabbitMQ peer (bench/peers/rabbitmq_peer.cc) against a real
// rabbitmq-server: it starts a private node, publishes with confirms into a
// quorum queue, drains with acking consumers, and stops everything it started.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <filesystem>

#include "../../bench/peers/peer.h"
#include "../support/raw_tcp.h"
#include "../support/temp_dir.h"

namespace cowboy::bench::peers {
namespace {

bool listening(std::uint16_t port) { return cowboy::testing::RawTcp::open(port) != nullptr; }

class RabbitPeerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Built with librabbitmq-dev; the server comes with `make bench`, not `make test`.
    if (!rabbitmq_installed()) GTEST_SKIP() << "rabbitmq-server is not installed (scripts/install-deps.sh rabbitmq-server)";
  }
  cowboy::testing::TempDir dir;
};

TEST_F(RabbitPeerTest, StartsPublishesWithConfirmsDrainsAndStops) {
  auto p = cowboy::testing::free_ports(SOCK_STREAM, 3);
  RabbitPorts ports{p[0], p[1], p[2]};
  auto peer = make_rabbitmq(ports);
  ASSERT_TRUE(peer->start(dir.path()));
  EXPECT_TRUE(listening(ports.amqp));  // the node
  EXPECT_TRUE(listening(ports.dist));
  EXPECT_TRUE(listening(ports.epmd));  // and its own epmd

  // Every confirmed publish has one latency: confirms are counted, not sends.
  Sample appended = peer->append({1, 16, 256, 0.5, 0});
  EXPECT_GT(appended.operations, 0u);
  EXPECT_EQ(appended.latencies_ms.size(), appended.operations);

  // A fresh quorum queue of 300 records, drained by two workers acking each.
  Sample drained = peer->drain(2, 300, 256);
  EXPECT_EQ(drained.operations, 300u);
  EXPECT_GT(drained.seconds, 0);

  // A live subscriber receives what is published at 200/s, each once.
  Sample delivered = peer->delivery(200, 0.5, 256);
  EXPECT_GT(delivered.operations, 0u);
  EXPECT_EQ(delivered.latencies_ms.size(), delivered.operations);

  // The durable state is a quorum queue's: Raft's write-ahead log is in the private data dir.
  bool wal = false;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path() / "mnesia"))
    wal = wal || e.path().extension() == ".wal";
  EXPECT_TRUE(wal);

  peer->stop();
  // Stopped by PID: the node and its epmd are gone, nothing listens on their
  // ports (epmd's may still be bound by TIME_WAIT sockets, so no bind test).
  EXPECT_FALSE(listening(ports.amqp));
  EXPECT_FALSE(listening(ports.dist));
  EXPECT_FALSE(listening(ports.epmd));
}

}  // namespace
}  // namespace cowboy::bench::peers
