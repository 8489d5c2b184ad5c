// Channel over real QUIC on 127.0.0.1: admission through the control stream,
// signed frames after it (sealed on the worker, checked at the peer), job
// streams opened by the validator, placement refusals, the admission
// deadline, and Goodbye unsigned before admission and signed after.
#include "cip11/link/channel.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "../support/temp_dir.h"
#include "channel_end.h"
#include "samples.h"

namespace cowboy::cip11 {
namespace {

using testing::End;
using testing::Received;

LocalOffer offer(std::uint64_t chain_id = 7) { return LocalOffer{chain_id, kProtocolVersion, testing::filled(0x40), Epoch{0}, Height{1}}; }

struct Net {
  boost::asio::io_context io{1};
  cowboy::testing::TempDir dir;
  net::CertFiles cert = *net::ensure_dev_certificate(dir.path());
  template <typename Done>
  bool run_until(Done done) {
    return testing::run_until(io, done);
  }
};

struct Admitted {
  Net n;
  End validator{n.io, testing::party().validator, offer(), &n.cert};
  End runner{n.io, testing::party().runner, offer(), nullptr};
  Admitted() {
    EXPECT_TRUE(runner.endpoint->connect("127.0.0.1", validator.endpoint->port()).ok());
    EXPECT_TRUE(n.run_until([&] { return runner.admitted == 1 && validator.admitted == 1; }));
  }
};

TEST(Cip11Channel, AdmissionThenSealedFramesThenASignedGoodbye) {
  Admitted a;
  EXPECT_EQ(connection_id(a.runner.only().binding()), connection_id(a.validator.only().binding()));
  CapabilityDelta delta = testing::capability_delta();
  delta.signed_ = {};  // sealed by the channel on the worker
  ASSERT_TRUE(a.runner.only().send(kControlStream, delta));
  ASSERT_TRUE(a.n.run_until([&] { return a.validator.frames.size() == 1; }));
  EXPECT_EQ(a.validator.frames[0].stream, kControlStream);
  EXPECT_TRUE(a.validator.frames[0].seal_ok);
  const auto& got = std::get<CapabilityDelta>(a.validator.frames[0].frame);
  EXPECT_EQ(got.added_capabilities, delta.added_capabilities);
  EXPECT_NE(got.signed_, RunnerSig{});
  a.runner.only().goodbye(GoodbyeReason::kShutdown, "maintenance", 20);
  ASSERT_TRUE(a.n.run_until([&] { return !a.validator.goodbyes.empty() && a.validator.closed == 1 && a.runner.closed == 1; }));
  EXPECT_EQ(a.validator.goodbyes[0], std::make_pair(GoodbyeReason::kShutdown, true));  // signed and verified
}

TEST(Cip11Channel, AValidatorJobStreamCarriesTheAssignmentAndTheRunnersAnswers) {
  Admitted a;
  JobAssignment assignment = testing::job_assignment();
  auto stream = a.validator.only().open_job_stream(assignment);
  ASSERT_TRUE(stream);
  EXPECT_EQ(*stream & 0x03, 0x01);  // a server-initiated bidirectional stream
  ASSERT_TRUE(a.n.run_until([&] { return a.runner.frames.size() == 1; }));
  const Received& r = a.runner.frames[0];
  EXPECT_EQ(r.stream, *stream);
  EXPECT_TRUE(r.seal_ok);  // hashes, keys and signature as the connection gives them
  const auto& got = std::get<JobAssignment>(r.frame);
  EXPECT_EQ(got.job_spec_hash, job_spec_hash(assignment.job_spec));
  EXPECT_EQ(got.runner_pubkey, testing::party().runner.pubkey());

  JobAck ack{got.job_id, got.assignment_hash, AckStatus::accepted(), std::nullopt, {}};
  ASSERT_TRUE(a.runner.only().send(*stream, ack));
  // A JobAck on the control stream is refused locally: not its place.
  EXPECT_FALSE(a.runner.only().send(kControlStream, ack));
  ASSERT_TRUE(a.n.run_until([&] { return a.validator.frames.size() == 1; }));
  EXPECT_EQ(a.validator.frames[0].stream, *stream);
  EXPECT_TRUE(a.validator.frames[0].seal_ok);
  EXPECT_EQ(std::get<JobAck>(a.validator.frames[0].frame).status, AckStatus::accepted());

  // Both ends end the stream; QUIC then closes it on both.
  a.validator.only().end_job_stream(*stream);
  a.runner.only().end_job_stream(*stream);
  ASSERT_TRUE(a.n.run_until([&] { return a.validator.closed_streams.size() == 1 && a.runner.closed_streams.size() == 1; }));
  EXPECT_EQ(a.validator.closed_streams[0], *stream);
}

TEST(Cip11Channel, AnAssignmentWithAnotherConnectionsKeysFailsItsSealButIsShown) {
  Admitted a;
  // Bytes a validator might replay from elsewhere: sealed for another runner.
  JobAssignment forged = testing::job_assignment();
  ConnectionBinding other = a.validator.only().binding();
  other.runner = testing::runner_key(1).pubkey();
  Frame f{forged};
  seal(f, testing::party().validator, BoundConnection(other));
  Bytes wire = encode_frame(f);
  auto stream = a.validator.only().connection().open_stream();
  ASSERT_TRUE(stream);
  a.validator.only().connection().send(*stream, wire);
  ASSERT_TRUE(a.n.run_until([&] { return a.runner.frames.size() == 1; }));
  EXPECT_FALSE(a.runner.frames[0].seal_ok);
  EXPECT_TRUE(a.runner.goodbyes.empty());  // the runner answers Reject(UnverifiableAssignment), not Goodbye
}

TEST(Cip11Channel, AFrameOnTheWrongStreamOrFromTheWrongEndIsGoodbyeProtocolError) {
  for (int c = 0; c < 2; ++c) {
    Admitted a;
    if (c == 0) {  // a JobAck on the control stream, below the channel
      JobAck ack = testing::job_ack(AckStatus::accepted(), std::nullopt);
      a.runner.only().connection().send(kControlStream, encode_frame(ack));
    } else {  // a Pong from the runner
      a.runner.only().connection().send(kControlStream, encode_frame(testing::heartbeat_pong()));
    }
    ASSERT_TRUE(a.n.run_until([&] { return !a.validator.goodbyes.empty() && !a.runner.goodbyes.empty(); })) << c;
    EXPECT_EQ(a.validator.goodbyes[0], std::make_pair(GoodbyeReason::kProtocolError, false)) << c;
    EXPECT_EQ(a.runner.goodbyes[0], std::make_pair(GoodbyeReason::kProtocolError, true)) << c;  // signed: admitted
    EXPECT_TRUE(a.validator.frames.empty()) << c;
  }
}

TEST(Cip11Channel, AWrongChainIsRefusedWithAnUnsignedGoodbyeBeforeAdmission) {
  Net n;
  End validator(n.io, testing::party().validator, offer(8), &n.cert), runner(n.io, testing::party().runner, offer(7), nullptr);
  ASSERT_TRUE(runner.endpoint->connect("127.0.0.1", validator.endpoint->port()).ok());
  ASSERT_TRUE(n.run_until([&] { return !runner.goodbyes.empty() && !validator.goodbyes.empty(); }));
  EXPECT_EQ(validator.goodbyes[0], std::make_pair(GoodbyeReason::kWrongChain, false));
  // The runner's view: the validator's Goodbye, or its own refusal of the
  // validator's Hello, whichever came first; both are WrongChain.
  EXPECT_EQ(runner.goodbyes[0].first, GoodbyeReason::kWrongChain);
  EXPECT_EQ(runner.admitted + validator.admitted, 0);
  ASSERT_TRUE(n.run_until([&] { return runner.closed == 1 && validator.closed == 1; }));
}

TEST(Cip11Channel, ABrokenControlStreamEndsWithGoodbyeProtocolError) {
  Admitted a;
  // A zero length prefix on the control stream, below the channel.
  a.runner.only().connection().send(0, Bytes{0, 0, 0, 0});
  ASSERT_TRUE(a.n.run_until([&] { return !a.validator.goodbyes.empty() && !a.runner.goodbyes.empty(); }));
  EXPECT_EQ(a.validator.goodbyes[0], std::make_pair(GoodbyeReason::kProtocolError, false));
  EXPECT_EQ(a.runner.goodbyes[0], std::make_pair(GoodbyeReason::kProtocolError, true));
}

TEST(Cip11Channel, APeerThatDoesNotCompleteHelloWithinTheDeadlineIsRefused) {
  Net n;
  End validator(n.io, testing::party().validator, offer(), &n.cert, std::chrono::milliseconds(200));
  End runner(n.io, testing::party().runner, offer(), nullptr);
  runner.open_control = false;  // TLS completes, Hello never comes
  ASSERT_TRUE(runner.endpoint->connect("127.0.0.1", validator.endpoint->port()).ok());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(n.run_until([&] { return validator.closed == 1; }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  ASSERT_EQ(validator.goodbyes.size(), 1u);
  EXPECT_EQ(validator.goodbyes[0], std::make_pair(GoodbyeReason::kAuthFailed, false));
  EXPECT_EQ(validator.admitted, 0);
}

}  // namespace
}  // namespace cowboy::cip11

namespace cowboy::cip11 {
namespace {

// §12.1: half a frame and then the end of the stream is a truncated frame, a
// protocol error on either kind of stream: the peer gets a signed
// Goodbye{ProtocolError} and the connection closes. A control stream that
// ends cleanly is one too: it lasts as long as the connection (§6.1).
TEST(Cip11Channel, AStreamEndingInsideAFrameIsGoodbyeProtocolErrorOnBothStreamKinds) {
  const Bytes ping = encode_frame(testing::heartbeat_ping());
  for (int c = 0; c < 3; ++c) {
    Admitted a;
    quic::Connection& raw = a.runner.only().connection();  // below the runner's channel
    std::int64_t stream = kControlStream;
    if (c == 1) {  // a job stream, cut inside the runner's JobAck
      auto opened = a.validator.only().open_job_stream(testing::job_assignment());
      ASSERT_TRUE(opened);
      ASSERT_TRUE(a.n.run_until([&] { return a.runner.frames.size() == 1; }));
      stream = *opened;
      const Bytes ack = encode_frame(testing::job_ack(AckStatus::accepted(), std::nullopt));
      raw.send(stream, ByteView(ack).first(ack.size() - 3));
    } else if (c == 0) {
      raw.send(stream, ByteView(ping).first(10));
    }  // c == 2: the control stream ends with nothing pending
    raw.end_stream(stream);
    ASSERT_TRUE(a.n.run_until([&] { return !a.runner.goodbyes.empty() && a.validator.closed == 1; })) << c;
    EXPECT_EQ(a.validator.goodbyes[0], std::make_pair(GoodbyeReason::kProtocolError, false)) << c;
    EXPECT_EQ(a.runner.goodbyes[0], std::make_pair(GoodbyeReason::kProtocolError, true)) << c;  // signed and verified
    EXPECT_TRUE(a.validator.frames.empty()) << c;
  }
}

// §12.5: after admission a Goodbye must be signed. An unsigned one is not
// the peer's word; this end answers with its own signed Goodbye{AuthFailed}
// and keeps the connection open for the grace period, so the peer reads it.
TEST(Cip11Channel, AnUnsignedGoodbyeAfterAdmissionIsAnsweredWithASignedAuthFailedThePeerReceives) {
  Admitted a;
  a.runner.only().connection().send(kControlStream, encode_frame(Goodbye{GoodbyeReason::kShutdown, std::nullopt,
                                                                          std::nullopt, std::nullopt}));
  ASSERT_TRUE(a.n.run_until([&] { return !a.runner.goodbyes.empty(); }));
  EXPECT_EQ(a.validator.goodbyes[0], std::make_pair(GoodbyeReason::kAuthFailed, false));
  EXPECT_EQ(a.runner.goodbyes[0], std::make_pair(GoodbyeReason::kAuthFailed, true));  // its bytes arrived, signed
  ASSERT_TRUE(a.n.run_until([&] { return a.validator.closed == 1 && a.runner.closed == 1; }));
}

// A Hello or HelloAck once admitted is a protocol error (the handshake is
// over; one Hello per connection), refused with a signed Goodbye.
TEST(Cip11Channel, AHelloOrHelloAckAfterAdmissionIsGoodbyeProtocolError) {
  for (const Frame& again : {Frame{testing::hello()}, Frame{testing::hello_ack()}}) {
    Admitted a;
    a.runner.only().connection().send(kControlStream, encode_frame(again));
    ASSERT_TRUE(a.n.run_until([&] { return !a.runner.goodbyes.empty(); })) << static_cast<int>(type_of(again));
    EXPECT_EQ(a.validator.goodbyes[0], std::make_pair(GoodbyeReason::kProtocolError, false));
    EXPECT_EQ(a.runner.goodbyes[0], std::make_pair(GoodbyeReason::kProtocolError, true));
    EXPECT_TRUE(a.validator.frames.empty());
  }
}

// One end of the §6.2 handshake written out by hand over a real connection,
// below any Channel: it writes `then` in the same write as its HelloAck,
// misbehaving at the first moment it can, and records what the peer says.
struct RawPeer {
  RawPeer(boost::asio::io_context& io, const Signer& me, const net::CertFiles* cert, Bytes then)
      : me(me), then(std::move(then)) {
    quic::Events e;
    e.on_established = [this](quic::Connection& c) {
      if (this->me.role() == Role::kRunner) hello(c, *c.open_stream());
    };
    e.on_stream_data = [this](quic::Connection& c, std::int64_t stream, ByteView data) {
      hello(c, stream);  // a validator answers the runner's Hello with its own
      State& st = *states[&c];
      if (!st.frames.push(data)) return;
      while (auto f = st.frames.next()) {
        st.received.push_back(*f);
        if (std::holds_alternative<Goodbye>(*f)) return c.close(0);  // read: no need for the grace period
        if (st.handshake->admitted()) continue;
        auto step = st.handshake->on_frame(*f);
        for (const auto& out : step.send) {
          Bytes bytes = encode_frame(out);
          if (std::holds_alternative<HelloAck>(out)) bytes.insert(bytes.end(), this->then.begin(), this->then.end());
          c.send(stream, bytes);
        }
      }
    };
    e.on_closed = [this](quic::Connection& c, const std::string&) {
      if (auto it = states.find(&c); it != states.end()) finished.push_back(std::move(it->second)), states.erase(it);
    };
    quic::EndpointConfig config;
    if (cert) {
      config = testing::server_config(*cert);
      config.new_connection_burst = 1'000;  // many connections from 127.0.0.1 in a row
    }
    endpoint = std::move(*quic::Endpoint::open(io, config, e));
  }
  void hello(quic::Connection& c, std::int64_t stream) {
    auto& slot = states[&c];
    if (!slot) slot = std::make_unique<State>();
    State& st = *slot;
    if (st.handshake) return;
    st.handshake = std::make_unique<Handshake>(me, offer(), *c.channel_binding(), admission, entropy);
    c.send(stream, encode_frame(st.handshake->hello()));
  }
  struct State {
    std::unique_ptr<Handshake> handshake;
    FrameReassembler frames;
    std::vector<Frame> received;
  };
  const Signer& me;
  Bytes then;
  testing::AdmitAll admission;
  SystemEntropy entropy;
  std::unique_ptr<quic::Endpoint> endpoint;
  std::map<quic::Connection*, std::unique_ptr<State>> states;
  std::vector<std::unique_ptr<State>> finished;  // closed connections, in order
};

// The peer's Goodbye on a finished connection, if it is signed and its
// signature verifies over the connection's identities; its reason.
std::optional<GoodbyeReason> signed_goodbye(const RawPeer::State& st, Role peer) {
  for (const Frame& f : st.received)
    if (const auto* bye = std::get_if<Goodbye>(&f)) {
      if (!bye->signed_ || !st.handshake->proved() || !check_seal(f, peer, BoundConnection(st.handshake->binding())))
        return std::nullopt;
      return bye->reason;
    }
  return std::nullopt;
}

// Connects `client` to `port` `tries` times in a row, each until the raw
// peer has finished that connection; how many of the other end's Goodbyes
// were a signed ProtocolError whose signature verifies (-1: one never ended).
int signed_protocol_errors(Net& n, RawPeer& raw, quic::Endpoint& client, std::uint16_t port, Role other, int tries) {
  for (int i = 0; i < tries; ++i) {
    EXPECT_TRUE(client.connect("127.0.0.1", port).ok());
    if (!n.run_until([&] { return raw.finished.size() == static_cast<std::size_t>(i + 1); })) return -1;
  }
  int ok = 0;
  for (const auto& st : raw.finished) ok += signed_goodbye(*st, other) == GoodbyeReason::kProtocolError;
  return ok;
}

// The moment admission completes is the validator's verification of the
// runner's HelloAck (handshake.h), so a frame error sent right behind a
// HelloAck is always read by an admitted peer and always answered with a
// signed Goodbye - never an unsigned one by a race with the worker. Both
// directions, 50 connections each.
TEST(Cip11Channel, AFrameErrorRightBehindAHelloAckIsAlwaysAnsweredWithASignedGoodbye) {
  constexpr int kTries = 50;
  {
    Net n;
    quic::EndpointConfig roomy;
    roomy.new_connection_burst = 1'000;
    End validator(n.io, testing::party().validator, offer(), &n.cert, std::chrono::seconds(10), roomy);
    // A JobAck on the control stream, right behind the runner's HelloAck.
    RawPeer runner(n.io, testing::party().runner, nullptr, encode_frame(testing::job_ack(AckStatus::accepted(), std::nullopt)));
    EXPECT_EQ(signed_protocol_errors(n, runner, *runner.endpoint, validator.endpoint->port(), Role::kValidator, kTries), kTries);
    EXPECT_EQ(validator.admitted, kTries);
    // What the validator said on the control stream, in order: its Hello (to
    // the runner's), its HelloAck (to the runner's), then the Goodbye.
    for (const auto& st : runner.finished) {
      ASSERT_EQ(st->received.size(), 3u);
      EXPECT_EQ(type_of(st->received[0]), FrameType::kHello);
      EXPECT_EQ(type_of(st->received[1]), FrameType::kHelloAck);
      EXPECT_EQ(type_of(st->received[2]), FrameType::kGoodbye);
    }
  }
  {
    Net n;
    // A Ping from the validator, right behind its HelloAck.
    RawPeer validator(n.io, testing::party().validator, &n.cert, encode_frame(testing::heartbeat_ping()));
    End runner(n.io, testing::party().runner, offer(), nullptr);
    EXPECT_EQ(signed_protocol_errors(n, validator, *runner.endpoint, validator.endpoint->port(), Role::kRunner, kTries), kTries);
  }
}

}  // namespace
}  // namespace cowboy::cip11
