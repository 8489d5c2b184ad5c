// ControlChannel over real QUIC on 127.0.0.1: admission through the control
// stream, frames after it, Goodbye unsigned before and signed after, and a
// broken stream ending in Goodbye ProtocolError.
#include "cip11/control.h"

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

// One end: an endpoint whose connections each get a ControlChannel.
struct End {
  End(boost::asio::io_context& io, const Signer& me, LocalOffer o, const net::CertFiles* cert) : me(me), offer(o) {
    quic::Events e;
    e.on_established = [this](quic::Connection& c) {
      auto& ch = channel(c);
      if (this->me.role() == Role::kRunner) {
        EXPECT_TRUE(ch.open());
      }
    };
    e.on_stream_data = [this](quic::Connection& c, std::int64_t s, ByteView d) { channel(c).on_stream_data(s, d); };
    e.on_closed = [this](quic::Connection& c, const std::string&) {
      channels.erase(&c);
      ++closed;
    };
    quic::EndpointConfig config;
    if (cert) config = testing::server_config(*cert);
    endpoint = std::move(*quic::Endpoint::open(io, config, e));
  }
  ControlChannel& channel(quic::Connection& c) {
    auto it = channels.find(&c);
    if (it == channels.end()) {
      ControlChannel::Callbacks cb;
      cb.on_admitted = [this](ControlChannel&) { ++admitted; };
      cb.on_frame = [this](ControlChannel&, const Frame& f) { frames.push_back(f); };
      cb.on_goodbye = [this](ControlChannel&, GoodbyeReason r, bool by_peer) { goodbyes.emplace_back(r, by_peer); };
      it = channels.emplace(&c, std::make_unique<ControlChannel>(c, me, offer, admission, entropy, &budget, cb)).first;
    }
    return *it->second;
  }
  ControlChannel& only() { return *channels.begin()->second; }

  const Signer& me;
  LocalOffer offer;
  AdmitAll admission;
  SystemEntropy entropy;
  net::ReadBudget budget{1 << 20};
  std::unique_ptr<quic::Endpoint> endpoint;
  std::map<quic::Connection*, std::unique_ptr<ControlChannel>> channels;
  std::vector<Frame> frames;
  std::vector<std::pair<GoodbyeReason, bool>> goodbyes;
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

TEST(Cip11Control, AdmissionThenFramesThenASignedGoodbye) {
  Net n;
  End validator(n.io, testing::party().validator, offer(), &n.cert), runner(n.io, testing::party().runner, offer(), nullptr);
  ASSERT_TRUE(runner.endpoint->connect("127.0.0.1", validator.endpoint->port()).ok());
  ASSERT_TRUE(n.run_until([&] { return runner.admitted == 1 && validator.admitted == 1; }));
  EXPECT_EQ(connection_id(runner.only().binding()), connection_id(validator.only().binding()));
  CapabilityDelta delta = testing::capability_delta();
  ASSERT_TRUE(runner.only().send(delta));
  ASSERT_TRUE(n.run_until([&] { return validator.frames.size() == 1; }));
  EXPECT_EQ(validator.frames[0], Frame{delta});
  runner.only().goodbye(GoodbyeReason::kShutdown, "maintenance", 20);
  ASSERT_TRUE(n.run_until([&] { return !validator.goodbyes.empty() && validator.closed == 1 && runner.closed == 1; }));
  EXPECT_EQ(validator.goodbyes[0], std::make_pair(GoodbyeReason::kShutdown, true));  // signed and verified
}

TEST(Cip11Control, AWrongChainIsRefusedWithAnUnsignedGoodbyeBeforeAdmission) {
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

TEST(Cip11Control, ABrokenControlStreamEndsWithGoodbyeProtocolError) {
  Net n;
  End validator(n.io, testing::party().validator, offer(), &n.cert), runner(n.io, testing::party().runner, offer(), nullptr);
  ASSERT_TRUE(runner.endpoint->connect("127.0.0.1", validator.endpoint->port()).ok());
  ASSERT_TRUE(n.run_until([&] { return runner.admitted == 1 && validator.admitted == 1; }));
  // A zero length prefix on the control stream, below the channel.
  runner.only().connection().send(0, Bytes{0, 0, 0, 0});
  ASSERT_TRUE(n.run_until([&] { return !validator.goodbyes.empty() && !runner.goodbyes.empty(); }));
  EXPECT_EQ(validator.goodbyes[0], std::make_pair(GoodbyeReason::kProtocolError, false));
  EXPECT_EQ(runner.goodbyes[0], std::make_pair(GoodbyeReason::kProtocolError, true));  // signed: they were admitted
}

}  // namespace
}  // namespace cowboy::cip11
