// Channel over real QUIC on 127.0.0.1: admission through the control stream,
// signed frames after it (sealed on the worker, checked at the peer), job
// streams opened by the validator, placement refusals, the admission
// deadline, and Goodbye unsigned before admission and signed after.
#include "cip11/link/channel.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "../support/temp_dir.h"
#include "io_loop.h"
#include "net/dev_cert.h"
#include "samples.h"

namespace cowboy::cip11 {
namespace {

class AdmitAll final : public Admission {
 public:
  std::optional<GoodbyeReason> admit(const Hello&) override { return std::nullopt; }
};

LocalOffer offer(std::uint64_t chain_id = 7) { return LocalOffer{chain_id, kProtocolVersion, testing::filled(0x40), 0, 1}; }

struct Received {
  std::int64_t stream;
  Frame frame;
  bool seal_ok;
};

// One end: an endpoint whose connections each get a Channel.
struct End {
  End(boost::asio::io_context& io, const Signer& me, LocalOffer o, const net::CertFiles* cert,
      std::chrono::milliseconds deadline = std::chrono::seconds(10))
      : me(me), offer(o), deadline(deadline), worker(io, 1) {
    quic::Events e;
    e.on_established = [this](quic::Connection& c) {
      auto& ch = channel(c);
      if (this->me.role() == Role::kRunner && open_control) {
        EXPECT_TRUE(ch.open());
      }
    };
    e.on_stream_data = [this](quic::Connection& c, std::int64_t s, ByteView d) { channel(c).on_stream_data(s, d); };
    e.on_stream_closed = [this](quic::Connection& c, std::int64_t s) {
      channel(c).on_stream_closed(s);
      closed_streams.push_back(s);
    };
    e.on_closed = [this](quic::Connection& c, const std::string&) {
      channels.erase(&c);
      ++closed;
    };
    endpoint = std::move(*quic::Endpoint::open(io, cert ? testing::server_config(*cert) : quic::EndpointConfig{}, e));
  }
  Channel& channel(quic::Connection& c) {
    auto it = channels.find(&c);
    if (it == channels.end()) {
      Channel::Callbacks cb;
      cb.on_admitted = [this](Channel&) { ++admitted; };
      cb.on_frame = [this](Channel&, std::int64_t s, const Frame& f, const Res<Unit>& seal) {
        frames.push_back({s, f, seal.ok()});
      };
      cb.on_goodbye = [this](Channel&, const Goodbye& g, bool by_peer) { goodbyes.emplace_back(g.reason, by_peer); };
      Channel::Setup setup{me, offer, admission, entropy, worker, &budget, deadline};
      it = channels.emplace(&c, std::make_unique<Channel>(c, setup, cb)).first;
    }
    return *it->second;
  }
  Channel& only() { return *channels.begin()->second; }

  const Signer& me;
  LocalOffer offer;
  std::chrono::milliseconds deadline;
  bool open_control = true;
  AdmitAll admission;
  SystemEntropy entropy;
  SignatureWorker worker;
  net::ReadBudget budget{1 << 20};
  std::unique_ptr<quic::Endpoint> endpoint;
  std::map<quic::Connection*, std::unique_ptr<Channel>> channels;
  std::vector<Received> frames;
  std::vector<std::pair<GoodbyeReason, bool>> goodbyes;
  std::vector<std::int64_t> closed_streams;
  int admitted = 0, closed = 0;
};

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
