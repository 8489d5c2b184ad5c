// The CIP-11 QUIC layer over real UDP on 127.0.0.1: the TLS 1.3 handshake,
// the §6.2 exporter property (both ends agree; another connection differs),
// and a runner-opened control stream carrying bytes both ways.
#include "cip11/quic/arena.h"
#include "cip11/quic/endpoint.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "../support/temp_dir.h"
#include "io_loop.h"
#include "cip11/handshake.h"
#include "cip11/reassembler.h"
#include "net/dev_cert.h"
#include "samples.h"

namespace cowboy::cip11::quic {

void PrintTo(const CloseCode& c, std::ostream* out) {
  *out << (c.application ? "application 0x" : "transport 0x") << std::hex << c.code << std::dec;
}

namespace {

// A validator endpoint (the QUIC server) and a runner endpoint (the client) on one io thread.
struct Pair {
  boost::asio::io_context io{1};
  cowboy::testing::TempDir dir;
  std::unique_ptr<Endpoint> validator, runner;
  std::vector<Connection*> validator_side, runner_side;
  std::map<Connection*, Bytes> received;
  std::vector<std::string> closed;

  explicit Pair(const MemoryHooks* validator_memory = nullptr) {
    auto cert = net::ensure_dev_certificate(dir.path());
    EXPECT_TRUE(cert.ok());
    Events v;
    v.on_established = [this](Connection& c) { validator_side.push_back(&c); };
    v.on_stream_data = [this](Connection& c, std::int64_t stream, ByteView data) {
      received[&c].insert(received[&c].end(), data.begin(), data.end());
      c.send(stream, data);  // echo on the same stream
    };
    v.on_closed = [this](Connection&, const std::string& why) { closed.push_back("validator: " + why); };
    auto config = testing::server_config(*cert);
    config.connection_memory = validator_memory;
    auto ve = Endpoint::open(io, config, v);
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

  template <typename Done>
  bool run_until(Done done) {
    return testing::run_until(io, done);
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

// A FIN goes after every byte queued before it: two writes and the end of
// the stream in one turn arrive as both writes, then the end.
TEST(Cip11Quic, AStreamEndsAfterEveryByteQueuedBeforeIt) {
  Pair p;
  std::map<Connection*, int> ended;
  Events v;
  v.on_established = [&](Connection& c) { p.validator_side.push_back(&c); };
  v.on_stream_data = [&](Connection& c, std::int64_t, ByteView data) {
    p.received[&c].insert(p.received[&c].end(), data.begin(), data.end());
  };
  v.on_stream_end = [&](Connection& c, std::int64_t) { ++ended[&c]; };
  auto cert = net::ensure_dev_certificate(p.dir.path());
  auto validator = Endpoint::open(p.io, testing::server_config(*cert), v);
  ASSERT_TRUE(validator.ok());
  for (int round = 0; round < 20; ++round) {
    ASSERT_TRUE(p.runner->connect("127.0.0.1", (*validator)->port()).ok());
    ASSERT_TRUE(p.run_until([&] { return p.runner_side.size() == static_cast<std::size_t>(round + 1); }));
    Connection& runner = *p.runner_side.back();
    auto stream = runner.open_stream();
    ASSERT_TRUE(stream);
    const Bytes first(148, 0x0a), second(270, 0x0b);
    ASSERT_TRUE(runner.send(*stream, first));
    ASSERT_TRUE(runner.send(*stream, second));
    runner.end_stream(*stream);
    ASSERT_TRUE(p.run_until([&] { return p.validator_side.size() == static_cast<std::size_t>(round + 1) &&
                                         ended[p.validator_side.back()] == 1; })) << round;
    const Bytes& got = p.received[p.validator_side.back()];
    EXPECT_EQ(got.size(), first.size() + second.size()) << round;  // not cut after the first write
    EXPECT_TRUE(got == concat({first, second})) << round;
  }
}

// The servers' arena (quic/arena.h) holds every ngtcp2 allocation of a
// connection from its first Initial to its close, and frees none of it twice.
TEST(Cip11Quic, ConnectionsLiveInTheDedicatedArena) {
  Pair p(&dedicated_arena());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(p.runner->connect("127.0.0.1", p.validator->port()).ok());
  ASSERT_TRUE(p.run_until([&] { return p.runner_side.size() == 3 && p.validator_side.size() == 3; }));
  Connection& runner = *p.runner_side[0];
  auto control = runner.open_stream();
  ASSERT_TRUE(control);
  const Bytes hello(5000, 0x5a);
  ASSERT_TRUE(runner.send(*control, hello));
  ASSERT_TRUE(p.run_until([&] { return p.received[&runner].size() == hello.size(); }));
  EXPECT_EQ(p.received[p.validator_side[0]], hello);
  for (auto* c : p.runner_side) c->close(0);
  ASSERT_TRUE(p.run_until([&] { return p.closed.size() == 6 && p.validator->connections() == 0; }));
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

// RFC 9001 §8.1: ALPN is mandatory on both ends. A runner whose ClientHello
// carries no ALPN extension, or offers only another protocol, fails the TLS
// handshake with no_application_protocol (QUIC error 0x178) and is never
// established; so does a runner facing a server that selects no protocol.
TEST(Cip11Quic, AHandshakeThatDoesNotNegotiateCowboyCip11FailsWithNoApplicationProtocol) {
  struct Case {
    std::string runner_alpn, validator_alpn;
    bool runner_refuses;  // the runner sends the alert (the server selected nothing)
  };
  for (const Case& k : {Case{"", std::string(kAlpn), false}, Case{"h3", std::string(kAlpn), false},
                        Case{std::string(kAlpn), "", true}}) {
    Pair p;
    int established = 0;
    std::optional<CloseCode> runner_heard, validator_heard;
    bool runner_closed = false, validator_closed = false;
    auto cert = net::ensure_dev_certificate(p.dir.path());
    ASSERT_TRUE(cert.ok());
    Events v, r;
    v.on_established = [&](Connection&) { ++established; };
    v.on_closed = [&](Connection& c, const std::string&) { validator_closed = true, validator_heard = c.peer_close(); };
    r.on_established = [&](Connection&) { ++established; };
    r.on_closed = [&](Connection& c, const std::string&) { runner_closed = true, runner_heard = c.peer_close(); };
    auto server_config = testing::server_config(*cert);
    server_config.alpn = k.validator_alpn;
    EndpointConfig client_config;
    client_config.alpn = k.runner_alpn;
    auto validator = Endpoint::open(p.io, server_config, v);
    auto runner = Endpoint::open(p.io, client_config, r);
    ASSERT_TRUE(validator.ok() && runner.ok());
    ASSERT_TRUE((*runner)->connect("127.0.0.1", (*validator)->port()).ok());
    const std::string what = "runner offers '" + k.runner_alpn + "', validator selects '" + k.validator_alpn + "'";
    ASSERT_TRUE(p.run_until([&] { return runner_closed && validator_closed; }))
        << what << ": runner closed " << runner_closed << ", validator closed " << validator_closed;
    EXPECT_EQ(established, 0) << what;
    EXPECT_EQ(k.runner_refuses ? validator_heard : runner_heard, kNoApplicationProtocol) << what;
  }
}

// §6.2 over real QUIC: each end runs Handshake on the control stream, fed by
// a FrameReassembler, with the connection's own exporter value.
class AdmitAll final : public Admission {
 public:
  std::optional<GoodbyeReason> admit(const Hello&) override { return std::nullopt; }
};

struct Authenticating {
  explicit Authenticating(const Signer& me) : me(me) {}
  const Signer& me;
  AdmitAll admission;
  SystemEntropy entropy;
  struct State {
    std::unique_ptr<Handshake> handshake;
    FrameReassembler frames;
    bool hello_sent = false;
  };
  std::map<Connection*, State> states;
  std::vector<GoodbyeReason> refusals;
  int admitted = 0;

  State& state(Connection& c) {
    State& st = states[&c];
    if (!st.handshake)
      st.handshake = std::make_unique<Handshake>(me, LocalOffer{7, kProtocolVersion, testing::filled(0x40), Epoch{0}, Height{1}},
                                                 *c.channel_binding(), admission, entropy);
    return st;
  }
  void send_hello(Connection& c, std::int64_t stream) {
    State& st = state(c);
    if (st.hello_sent) return;
    st.hello_sent = true;
    c.send(stream, encode_frame(st.handshake->hello()));
  }
  void on_data(Connection& c, std::int64_t stream, ByteView data) {
    send_hello(c, stream);  // the validator's Hello goes out on the stream the runner opened
    State& st = state(c);
    ASSERT_TRUE(st.frames.push(data).ok());
    while (auto f = st.frames.next()) {
      auto step = st.handshake->on_frame(*f);
      if (step.refuse) refusals.push_back(*step.refuse);
      for (const auto& out : step.send) c.send(stream, encode_frame(out));
      if (st.handshake->admitted()) ++admitted;
    }
  }
};

TEST(Cip11Quic, HelloAndHelloAckOverTheControlStreamAdmitBothEnds) {
  Pair p;
  Authenticating runner(testing::party().runner), validator(testing::party().validator);
  Events r, v;
  r.on_established = [&](Connection& c) { runner.send_hello(c, *c.open_stream()); };
  r.on_stream_data = [&](Connection& c, std::int64_t s, ByteView d) { runner.on_data(c, s, d); };
  v.on_stream_data = [&](Connection& c, std::int64_t s, ByteView d) { validator.on_data(c, s, d); };
  auto re = Endpoint::open(p.io, {}, r);
  auto cert = net::ensure_dev_certificate(p.dir.path());
  auto ve = Endpoint::open(p.io, testing::server_config(*cert), v);
  ASSERT_TRUE(re.ok() && ve.ok());
  ASSERT_TRUE((*re)->connect("127.0.0.1", (*ve)->port()).ok());
  ASSERT_TRUE(p.run_until([&] { return runner.admitted == 1 && validator.admitted == 1; }))
      << runner.refusals.size() << " " << validator.refusals.size();
  EXPECT_TRUE(runner.refusals.empty());
  EXPECT_TRUE(validator.refusals.empty());
}

// A relay that terminates QUIC/TLS on both sides and forwards the control
// stream's bytes between a runner and a validator: the runner's HelloAck is
// over the runner-side binding, so the validator refuses it, and since the
// validator proves itself only to a runner it has verified, no HelloAck
// ever reaches the runner. Nothing is admitted at either end. (The runner's
// own refusal of a proof over another binding: Cip11Handshake.)
TEST(Cip11Quic, ARelayThatTerminatesTlsOnBothSidesIsRefusedAndNothingIsAdmitted) {
  Pair p;
  auto cert = net::ensure_dev_certificate(p.dir.path());
  Authenticating runner(testing::party().runner), validator(testing::party().validator);
  Connection* relay_to_runner = nullptr;  // the relay's server side
  Connection* relay_to_validator = nullptr;
  std::int64_t upstream = -1;
  Bytes early;  // runner bytes that arrive before the upstream connection is up
  Events rv, rr, r, v;
  r.on_established = [&](Connection& c) { runner.send_hello(c, *c.open_stream()); };
  r.on_stream_data = [&](Connection& c, std::int64_t s, ByteView d) { runner.on_data(c, s, d); };
  v.on_stream_data = [&](Connection& c, std::int64_t s, ByteView d) { validator.on_data(c, s, d); };
  rr.on_stream_data = [&](Connection& c, std::int64_t, ByteView d) {  // from the runner: forward upstream
    relay_to_runner = &c;
    if (upstream < 0) return early.insert(early.end(), d.begin(), d.end()), void();
    relay_to_validator->send(upstream, d);
  };
  rv.on_established = [&](Connection& c) {
    relay_to_validator = &c;
    upstream = *c.open_stream();
    if (!early.empty()) c.send(upstream, early);
  };
  rv.on_stream_data = [&](Connection&, std::int64_t, ByteView d) {  // from the validator: forward downstream
    if (relay_to_runner) relay_to_runner->send(0, d);
  };
  auto validator_ep = Endpoint::open(p.io, testing::server_config(*cert), v);
  auto relay_server = Endpoint::open(p.io, testing::server_config(*cert), rr);
  auto relay_client = Endpoint::open(p.io, {}, rv);
  auto runner_ep = Endpoint::open(p.io, {}, r);
  ASSERT_TRUE(validator_ep.ok() && relay_server.ok() && relay_client.ok() && runner_ep.ok());
  ASSERT_TRUE((*relay_client)->connect("127.0.0.1", (*validator_ep)->port()).ok());
  ASSERT_TRUE((*runner_ep)->connect("127.0.0.1", (*relay_server)->port()).ok());
  ASSERT_TRUE(p.run_until([&] { return !validator.refusals.empty(); }));
  EXPECT_EQ(validator.refusals[0], GoodbyeReason::kAuthFailed);
  EXPECT_TRUE(runner.refusals.empty());  // it was never shown a validator proof
  EXPECT_EQ(runner.admitted, 0);
  EXPECT_EQ(validator.admitted, 0);
}

// A validator endpoint with `limits` (its certificate filled in) counting established connections.
Result<std::unique_ptr<Endpoint>, std::string> counting_validator(Pair& p, EndpointConfig limits, int& established) {
  auto cert = net::ensure_dev_certificate(p.dir.path());
  if (!cert) return Err{cert.error()};
  limits.certificate = cert->certificate;
  limits.private_key = cert->private_key;
  Events v;
  v.on_established = [&established](Connection&) { ++established; };
  return Endpoint::open(p.io, limits, v);
}

// §6.2/§6.6 pre-auth protection: one address beyond its new-connection rate
// is dropped while another address connects at once.
TEST(Cip11Quic, OneAddressBeyondItsConnectionRateIsDroppedAndAnotherIsServed) {
  Pair p;
  int established = 0;
  EndpointConfig limits;
  limits.new_connections_per_address_per_sec = 0.001;
  limits.new_connection_burst = 3;
  auto validator = counting_validator(p, limits, established);
  ASSERT_TRUE(validator.ok());
  EndpointConfig from_two;
  from_two.host = "127.0.0.2";
  auto flooder = Endpoint::open(p.io, from_two, {});
  ASSERT_TRUE(flooder.ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE((*flooder)->connect("127.0.0.1", (*validator)->port()).ok());
  ASSERT_TRUE(p.run_until([&] { return established == 3 && (*validator)->stats().refused_initials >= 7; }));
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(p.runner->connect("127.0.0.1", (*validator)->port()).ok());
  ASSERT_TRUE(p.run_until([&] { return established == 4; }));  // 127.0.0.1 has its own bucket
  std::printf("figure: another address established in %.1f ms beside a flooding one\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

// Half-open handshakes are capped, each lasts at most the handshake timeout,
// and at the cap a new Initial evicts the oldest: peers that never finish
// cannot keep a new peer out (before, it waited for them to time out).
TEST(Cip11Quic, HalfOpenHandshakesAreCappedTheOldestIsEvictedAndTheRestExpire) {
  Pair p;
  int established = 0;
  EndpointConfig limits;
  limits.handshake_timeout = std::chrono::milliseconds(2'000);
  limits.max_half_open = 2;
  auto validator = counting_validator(p, limits, established);
  ASSERT_TRUE(validator.ok());
  // Clients whose loop never runs again: their Initials go out, nothing else.
  boost::asio::io_context stalled{1};
  EndpointConfig from_three;
  from_three.host = "127.0.0.3";
  auto silent = Endpoint::open(stalled, from_three, {});
  ASSERT_TRUE(silent.ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE((*silent)->connect("127.0.0.1", (*validator)->port()).ok());
  ASSERT_TRUE(p.run_until([&] { return (*validator)->stats().half_open == 2 && (*validator)->connections() == 2; }));
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(p.runner->connect("127.0.0.1", (*validator)->port()).ok());
  ASSERT_TRUE(p.run_until([&] { return established == 1; }));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("figure: an honest runner established %.1f ms after stalled half-open handshakes filled the cap\n", ms);
  EXPECT_LT(ms, 1'000.0);  // the stalled ones last 2 s: it did not wait for them
  EXPECT_EQ((*validator)->stats().evicted_handshakes, 4u);  // three by the stalled Initials, one by the runner's
  EXPECT_EQ((*validator)->stats().refused_initials, 0u);
  // The one stalled handshake left is dropped at its timeout.
  ASSERT_TRUE(p.run_until([&] { return (*validator)->stats().half_open == 0 && (*validator)->connections() == 1; }));
}

// A validator restarted on its port with the same stateless-reset secret
// resets the old connection at the runner's next packet (RFC 9000 §10.3), so
// the runner learns at once instead of after the 30 s idle timeout.
TEST(Cip11Quic, ARestartedServerResetsItsOldConnectionsAtTheirNextPacket) {
  Pair p;
  auto cert = net::ensure_dev_certificate(p.dir.path());
  ASSERT_TRUE(cert.ok());
  auto config = testing::server_config(*cert);
  config.stateless_reset_secret = testing::filled(0x5e);
  Events quiet;
  auto first = Endpoint::open(p.io, config, quiet);
  ASSERT_TRUE(first.ok());
  const std::uint16_t port = (*first)->port();
  ASSERT_TRUE(p.runner->connect("127.0.0.1", port).ok());
  ASSERT_TRUE(p.run_until([&] { return p.runner_side.size() == 1; }));
  first->reset();  // the old process is gone without a word: no CONNECTION_CLOSE
  config.port = port;
  auto second = Endpoint::open(p.io, config, quiet);
  ASSERT_TRUE(second.ok()) << second.error();

  const auto sent = std::chrono::steady_clock::now();
  auto stream = p.runner_side[0]->open_stream();
  ASSERT_TRUE(stream);
  ASSERT_TRUE(p.runner_side[0]->send(*stream, Bytes(64, 0x01)));
  ASSERT_TRUE(p.run_until([&] { return p.closed.size() == 1; }))
      << (*second)->stats().datagrams_in << " in, " << (*second)->stats().stateless_resets << " resets";
  EXPECT_EQ(p.closed[0], "runner: the peer closed the connection");
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(5));
  EXPECT_GE((*second)->stats().stateless_resets, 1u);  // one per packet of the old connection that arrived
  EXPECT_EQ((*second)->connections(), 0u);
}

}  // namespace
}  // namespace cowboy::cip11::quic
