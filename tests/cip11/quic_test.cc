// The CIP-11 QUIC layer over real UDP on 127.0.0.1: the TLS 1.3 handshake,
// the §6.2 exporter property (both ends agree; another connection differs),
// and a runner-opened control stream carrying bytes both ways.
#include "cip11/quic/endpoint.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "../support/temp_dir.h"
#include "net/dev_cert.h"

namespace cowboy::cip11::quic {
namespace {

// A validator endpoint (the QUIC server) and a runner endpoint (the client) on one io thread.
struct Pair {
  boost::asio::io_context io{1};
  cowboy::testing::TempDir dir;
  std::unique_ptr<Endpoint> validator, runner;
  std::vector<Connection*> validator_side, runner_side;
  std::map<Connection*, Bytes> received;
  std::vector<std::string> closed;

  Pair() {
    auto cert = net::ensure_dev_certificate(dir.path());
    EXPECT_TRUE(cert.ok());
    Events v;
    v.on_established = [this](Connection& c) { validator_side.push_back(&c); };
    v.on_stream_data = [this](Connection& c, std::int64_t stream, ByteView data) {
      received[&c].insert(received[&c].end(), data.begin(), data.end());
      c.send(stream, data);  // echo on the same stream
    };
    v.on_closed = [this](Connection&, const std::string& why) { closed.push_back("validator: " + why); };
    auto ve = Endpoint::open(io, {.certificate = cert->certificate, .private_key = cert->private_key}, v);
    EXPECT_TRUE(ve.ok()) << (ve.ok() ? "" : ve.error());
    validator = std::move(*ve);
    Events r;
    r.on_established = [this](Connection& c) { runner_side.push_back(&c); };
    r.on_stream_data = [this](Connection& c, std::int64_t, ByteView data) {
      received[&c].insert(received[&c].end(), data.begin(), data.end());
    };
    r.on_closed = [this](Connection&, const std::string& why) { closed.push_back("runner: " + why); };
    auto re = Endpoint::open(io, {}, r);
    EXPECT_TRUE(re.ok()) << (re.ok() ? "" : re.error());
    runner = std::move(*re);
  }

  /// Runs the io loop until `done` or 5 s.
  template <typename Done>
  bool run_until(Done done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      io.run_for(std::chrono::milliseconds(5));
      io.restart();
    }
    return done();
  }
};

TEST(Cip11Quic, HandshakeExporterAgreesAndAControlStreamCarriesBytesBothWays) {
  Pair p;
  auto c = p.runner->connect("127.0.0.1", p.validator->port());
  ASSERT_TRUE(c.ok()) << c.error();
  ASSERT_TRUE(p.run_until([&] { return p.runner_side.size() == 1 && p.validator_side.size() == 1; })) << p.closed.size();
  Connection& runner = *p.runner_side[0];
  Connection& validator = *p.validator_side[0];
  auto a = runner.channel_binding(), b = validator.channel_binding();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);  // both ends derive the same 32 bytes
  EXPECT_NE(*a, Bytes32{});

  auto control = runner.open_stream();
  ASSERT_TRUE(control);
  EXPECT_EQ(*control, 0);  // the runner's first bidirectional stream is the control stream (§6.1)
  Bytes hello(3000, 0x42);  // more than one packet
  for (std::size_t i = 0; i < hello.size(); ++i) hello[i] = static_cast<std::uint8_t>(i * 7);
  ASSERT_TRUE(runner.send(*control, hello));
  ASSERT_TRUE(p.run_until([&] { return p.received[&runner].size() == hello.size(); }));
  EXPECT_EQ(p.received[&validator], hello);
  EXPECT_EQ(p.received[&runner], hello);  // the echo
  ASSERT_TRUE(p.run_until([&] { return runner.unacked_bytes() == 0; }));  // kept until acknowledged, then dropped

  // The validator advertised one bidirectional stream: a runner cannot open a second.
  EXPECT_FALSE(runner.open_stream());

  // Another connection between the same two endpoints binds to other bytes.
  ASSERT_TRUE(p.runner->connect("127.0.0.1", p.validator->port()).ok());
  ASSERT_TRUE(p.run_until([&] { return p.runner_side.size() == 2 && p.validator_side.size() == 2; }));
  EXPECT_EQ(p.runner_side[1]->channel_binding(), p.validator_side[1]->channel_binding());
  EXPECT_NE(p.runner_side[1]->channel_binding(), a);
}

TEST(Cip11Quic, AnApplicationCloseReachesThePeer) {
  Pair p;
  ASSERT_TRUE(p.runner->connect("127.0.0.1", p.validator->port()).ok());
  ASSERT_TRUE(p.run_until([&] { return p.runner_side.size() == 1 && p.validator_side.size() == 1; }));
  p.runner_side[0]->close(7);
  ASSERT_TRUE(p.run_until([&] { return p.closed.size() == 2; }));
  EXPECT_EQ(p.closed[0], "runner: closed by this end");
  EXPECT_EQ(p.closed[1], "validator: the peer closed the connection");
  ASSERT_TRUE(p.run_until([&] { return p.runner->connections() == 0 && p.validator->connections() == 0; }));
}

}  // namespace
}  // namespace cowboy::cip11::quic
