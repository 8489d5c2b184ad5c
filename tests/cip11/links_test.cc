// ValidatorLinks and RunnerLink over real QUIC on 127.0.0.1, with the block
// clock injected: admission, a signed Ping each block answered by a signed
// Pong, local presence and its timeout, backpressure, CapabilityDelta,
// hard failure, a pushed job stream, a wrong nonce echo, and the runner's
// reconnect after a validator restart and after a Goodbye with
// retry_after_blocks.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <future>
#include <mutex>

#include "../support/temp_dir.h"
#include "cip11/link/runner_link.h"
#include "cip11/link/validator_links.h"
#include "channel_end.h"
#include "net/dev_cert.h"
#include "samples.h"

namespace cowboy::cip11 {
namespace {

// Handshake checks of unadmitted peers wait in seed 003's fair queue under
// their address: one address's backlog is served round robin with another's
// check, which runs second instead of behind the backlog, and beyond 64
// waiting for one address the queue refuses (the channel then says
// Goodbye{RateLimited}). IPv6 peers share a source per /64.
TEST(Cip11SignatureWorker, HandshakesOfOneAddressWaitBehindThemselvesNotInFrontOfAnother) {
  boost::asio::io_context io{1};
  SignatureWorker worker(io, 1);
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  worker.run([open] { open.wait(); }, [] {}, true);  // holds the one thread while the queue fills
  std::mutex mu;
  std::vector<int> order;
  int refused = 0, done = 0;
  const auto flood = handshake_source(boost::asio::ip::make_address("127.0.0.2"));
  const auto honest = handshake_source(boost::asio::ip::make_address("127.0.0.1"));
  auto check = [&](int n) {
    return [&, n] {
      std::lock_guard lock(mu);
      order.push_back(n);
    };
  };
  for (int i = 0; i < 100; ++i) worker.run_handshake(flood, check(i), [&] { ++done; }, [&] { ++refused; });
  worker.run_handshake(honest, check(-1), [&] { ++done; }, [&] { ++refused; });
  gate.set_value();
  ASSERT_TRUE(testing::run_until(io, [&] { return done == 65 && refused == 36; }));
  std::lock_guard lock(mu);
  ASSERT_EQ(order.size(), 65u);
  EXPECT_EQ(order[0], 0);
  EXPECT_EQ(order[1], -1);  // FIFO would have put it 65th
  const auto stats = worker.stats();
  EXPECT_EQ(stats.handshakes_checked, 65u);
  EXPECT_EQ(stats.handshakes_refused, 36u);
  EXPECT_EQ(stats.handshakes_waiting, 0u);

  using boost::asio::ip::make_address;
  EXPECT_EQ(handshake_source(make_address("2001:db8:1:2::1")), handshake_source(make_address("2001:db8:1:2:ffff::9")));
  EXPECT_NE(handshake_source(make_address("2001:db8:1:2::1")), handshake_source(make_address("2001:db8:1:3::1")));
  EXPECT_EQ(handshake_source(make_address("::ffff:127.0.0.2")), flood);
}

class AdmitAll final : public Admission {
 public:
  std::optional<GoodbyeReason> admit(const Hello&) override { return std::nullopt; }
};

LocalOffer offer() { return LocalOffer{7, kProtocolVersion, testing::filled(0x40), Epoch{0}, Height{1}}; }

const Address& runner_addr() {
  static const Address a = *runner_address(testing::party().runner.pubkey());
  return a;
}

struct World {
  boost::asio::io_context io{1};
  cowboy::testing::TempDir dir;
  net::CertFiles cert = *net::ensure_dev_certificate(dir.path());
  AdmitAll admit_all;
  SystemEntropy entropy;
  std::uint16_t port = 0;
  std::unique_ptr<ValidatorLinks> validator;
  std::vector<std::pair<std::int64_t, Frame>> validator_job_frames;
  std::vector<std::string> lost;
  std::vector<ValidatorLinks::LinkId> links_ended;
  bool push_on_admission;

  SignatureWorker runner_worker{io, 1};
  net::ReadBudget runner_budget{1 << 20};
  std::unique_ptr<RunnerEndpoint> runner_endpoint;
  std::unique_ptr<RunnerLink> runner;
  std::vector<std::tuple<std::int64_t, Frame, bool>> runner_job_frames;
  std::vector<std::string> runner_lost;
  int runner_admissions = 0;

  explicit World(std::chrono::milliseconds block_time = std::chrono::seconds(1), bool push_on_admission = false)
      : push_on_admission(push_on_admission) {
    open_validator();
    runner_endpoint = std::move(*RunnerEndpoint::open(io, runner_worker, runner_budget, {}));
    RunnerLink::Callbacks cb;
    cb.on_admitted = [this] { ++runner_admissions; };
    cb.on_lost = [this](const std::string& why) { runner_lost.push_back(why); };
    cb.on_job_frame = [this](std::int64_t s, const Frame& f, const Res<Unit>& seal) {
      runner_job_frames.emplace_back(s, f, seal.ok());
    };
    RunnerLinkConfig config;
    config.port = port;
    config.offer = offer();
    config.block_time = block_time;
    runner = std::make_unique<RunnerLink>(*runner_endpoint, testing::party().runner, admit_all, entropy, config, cb);
    runner->start();
    // Until the admission Ping's Pong is back: a Ping sent before it would
    // make that Pong stale (only the latest nonce is answered, §6.3).
    EXPECT_TRUE(run_until([&] {
      return runner->admitted() && validator->presence().present(runner_addr()) && runner->stats().pongs == 1;
    }));
  }

  void open_validator() {
    ValidatorLinksConfig config;
    config.endpoint = testing::server_config(cert);
    config.endpoint.port = port;
    config.endpoint.stateless_reset_secret = testing::filled(0x5e);
    config.offer = offer();
    ValidatorLinks::Callbacks cb;
    cb.on_job_frame = [this](const Address&, ValidatorLinks::LinkId, std::int64_t s, const Frame& f) {
      validator_job_frames.emplace_back(s, f);
    };
    cb.on_lost = [this](const Address&, const std::string& why) { lost.push_back(why); };
    cb.on_link_ended = [this](const Address&, ValidatorLinks::LinkId link) { links_ended.push_back(link); };
    cb.on_admitted = [this](const Address& runner) {
      if (push_on_admission) {
        EXPECT_TRUE(validator->push(runner, testing::job_assignment()));
      }
    };
    auto v = ValidatorLinks::open(io, testing::party().validator, admit_all, entropy, config, cb);
    EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error());
    validator = std::move(*v);
    port = validator->port();
  }

  void block(Height h) {
    validator->on_block(h);
    runner->on_block(h);
  }

  template <typename Done>
  bool run_until(Done done) {
    return testing::run_until(io, done);
  }
};

TEST(Cip11Links, AnAdmittedRunnerPingsEachBlockAndTheValidatorAnswersWithSignedPongs) {
  World w;
  EXPECT_EQ(w.validator->stats().admitted, 1u);
  for (Height h{2}; h <= Height{4}; ++h) {
    w.block(h);
    ASSERT_TRUE(w.run_until([&] { return w.runner->stats().pongs == h.value; })) << h.value;  // one at admission, one per block
  }
  EXPECT_EQ(w.runner->stats().pings, 4u);
  EXPECT_EQ(w.runner->stats().rejected_pongs, 0u);
  EXPECT_EQ(w.validator->stats().pings, 4u);
  EXPECT_EQ(w.validator->stats().stale_nonces, 0u);
  EXPECT_EQ(w.validator->stats().bad_seals, 0u);
  EXPECT_TRUE(w.runner->validator_says_accepting());
  EXPECT_EQ(w.validator->presence().present_runners(), std::vector<Address>{runner_addr()});
}

TEST(Cip11Links, FifteenSilentBlocksTakeTheRunnerOutOfPresenceButNotOffTheConnection) {
  World w;
  w.validator->on_block(Height{1});  // the runner's last Ping was stamped at height 0
  w.validator->on_block(Height{14});
  EXPECT_TRUE(w.validator->presence().present(runner_addr()));
  w.validator->on_block(Height{15});
  EXPECT_FALSE(w.validator->presence().present(runner_addr()));
  EXPECT_TRUE(w.validator->connected(runner_addr()));
  EXPECT_EQ(w.validator->stats().presence_exits, 1u);
  w.block(Height{16});  // the next Ping restores it
  ASSERT_TRUE(w.run_until([&] { return w.validator->presence().present(runner_addr()); }));
}

TEST(Cip11Links, BackpressureHoldsTheRunnerOutUntilItReassertsCapacity) {
  World w;
  ASSERT_TRUE(w.runner->send(kControlStream, BackpressureSignal{Height{1}, 4, 4, false, "full", {}}));
  ASSERT_TRUE(w.run_until([&] { return !w.validator->presence().present(runner_addr()); }));
  w.block(Height{2});
  ASSERT_TRUE(w.run_until([&] { return !w.runner->validator_says_accepting(); }));  // the Pong says so
  EXPECT_FALSE(w.validator->presence().present(runner_addr()));                    // and the Ping did not restore it
  ASSERT_TRUE(w.runner->send(kControlStream, BackpressureSignal{Height{2}, 3, 4, true, std::nullopt, {}}));
  w.block(Height{3});
  ASSERT_TRUE(w.run_until([&] { return w.validator->presence().present(runner_addr()) && w.runner->validator_says_accepting(); }));
}

TEST(Cip11Links, ACapabilityDeltaIsKeptAsAdvisoryStateOfTheConnection) {
  World w;
  EXPECT_EQ(w.validator->capabilities(runner_addr()), nullptr);  // none until a first delta
  auto added = [&] {
    const AdvisoryCapabilities* c = w.validator->capabilities(runner_addr());
    return c ? c->added.size() : 0;
  };
  ASSERT_TRUE(w.runner->send(kControlStream, CapabilityDelta{Height{1}, {"gpu", "wasm"}, {"cpu"}, {testing::filled(9)}, {}, {}}));
  ASSERT_TRUE(w.run_until([&] { return added() == 2; }));
  const AdvisoryCapabilities& c = *w.validator->capabilities(runner_addr());
  EXPECT_EQ(c.added, (std::set<std::string>{"gpu", "wasm"}));
  EXPECT_EQ(c.removed, (std::set<std::string>{"cpu"}));
  EXPECT_EQ(c.added_entitlements, (std::set<Bytes32>{testing::filled(9)}));
  ASSERT_TRUE(w.runner->send(kControlStream, CapabilityDelta{Height{2}, {}, {"gpu"}, {}, {}, {}}));
  ASSERT_TRUE(w.run_until([&] { return added() == 1; }));
  EXPECT_TRUE(w.validator->capabilities(runner_addr())->removed.contains("gpu"));
}

TEST(Cip11Links, AHardFailureDropsPresenceUntilTheNextValidPing) {
  World w;
  w.validator->hard_failure(runner_addr());
  EXPECT_FALSE(w.validator->presence().present(runner_addr()));
  w.block(Height{2});
  ASSERT_TRUE(w.run_until([&] { return w.validator->presence().present(runner_addr()); }));
}

TEST(Cip11Links, APushedAssignmentArrivesSealedAndTheRunnersAckComesBack) {
  World w;
  auto stream = w.validator->push(runner_addr(), testing::job_assignment());
  ASSERT_TRUE(stream);
  ASSERT_TRUE(w.run_until([&] { return w.runner_job_frames.size() == 1; }));
  auto& [s, f, seal_ok] = w.runner_job_frames[0];
  EXPECT_EQ(s, stream->stream);
  EXPECT_TRUE(seal_ok);
  const auto& a = std::get<JobAssignment>(f);
  EXPECT_EQ(a.assignment_hash, stream->assignment_hash);  // what push() said the ack must echo
  ASSERT_TRUE(w.runner->send(s, JobAck{a.job_id, a.assignment_hash, AckStatus::accepted(), std::nullopt, {}}));
  ASSERT_TRUE(w.run_until([&] { return w.validator_job_frames.size() == 1; }));
  EXPECT_EQ(w.validator_job_frames[0].first, stream->stream);
  EXPECT_EQ(std::get<JobAck>(w.validator_job_frames[0].second).job_id, a.job_id);
  // A cancel on the same stream, then the runner sees it.
  ASSERT_TRUE(w.validator->send(runner_addr(), stream->stream, JobCancel{a.job_id, a.assignment_hash, CancelReason::kExpired, {}}));
  ASSERT_TRUE(w.run_until([&] { return w.runner_job_frames.size() == 2; }));
  EXPECT_TRUE(std::get<2>(w.runner_job_frames[1]));
  EXPECT_EQ(std::get<JobCancel>(std::get<1>(w.runner_job_frames[1])).reason, CancelReason::kExpired);
}

// A job stream holds one of the 64 stream credits the runner gives the
// validator until both ends have ended it (docs/cip11.md, "Job streams"):
// ended by both, 70 pushes in a row all open; a runner that never ends its
// side would stop the validator at 64.
TEST(Cip11Links, AJobStreamEndedByBothEndsGivesItsStreamCreditBack) {
  World w;
  for (int i = 0; i < 70; ++i) {
    auto pushed = w.validator->push(runner_addr(), testing::job_assignment());
    ASSERT_TRUE(pushed) << i;
    ASSERT_TRUE(w.run_until([&] { return w.runner_job_frames.size() == static_cast<std::size_t>(i + 1); })) << i;
    const auto& a = std::get<JobAssignment>(std::get<1>(w.runner_job_frames.back()));
    ASSERT_TRUE(w.runner->send(pushed->stream, JobAck{a.job_id, a.assignment_hash, AckStatus::duplicate(), std::nullopt, {}}));
    w.runner->end_job_stream(pushed->stream);  // the runner's last frame on it
    w.validator->end_job_stream(runner_addr(), pushed->stream);
  }
  ASSERT_TRUE(w.run_until([&] { return w.validator->job_streams() == 0; })) << w.validator->job_streams();
}

// The validator admits first and may push at once, while the runner is still
// verifying the validator's HelloAck: the job stream waits for it.
TEST(Cip11Links, AnAssignmentPushedTheMomentTheValidatorAdmitsArrivesOnceTheRunnerHasAdmittedToo) {
  World w(std::chrono::seconds(1), true);
  ASSERT_TRUE(w.run_until([&] { return w.runner_job_frames.size() == 1; }));
  EXPECT_TRUE(std::get<2>(w.runner_job_frames[0]));
  EXPECT_TRUE(std::holds_alternative<JobAssignment>(std::get<1>(w.runner_job_frames[0])));
  EXPECT_EQ(w.validator->stats().goodbyes_sent, 0u);
}

TEST(Cip11Links, AValidatorRestartIsNoticedAtTheNextPingAndTheRunnerIsReadmitted) {
  World w;
  w.validator.reset();  // gone without a word, as after SIGKILL
  w.open_validator();   // same port, same stateless-reset secret
  const auto restarted = std::chrono::steady_clock::now();
  w.block(Height{2});  // the Ping meets a stateless reset
  ASSERT_TRUE(w.run_until([&] { return w.runner_admissions == 2 && w.validator->presence().present(runner_addr()); }));
  EXPECT_LT(std::chrono::steady_clock::now() - restarted, std::chrono::seconds(2));
  EXPECT_EQ(w.runner->stats().losses, 1u);
  EXPECT_EQ(w.runner->stats().admissions, 2u);
}

TEST(Cip11Links, AGoodbyesRetryAfterBlocksIsAFloorOnTheReconnectWait) {
  World w(std::chrono::milliseconds(200));
  const auto said = std::chrono::steady_clock::now();
  w.validator->goodbye_all(GoodbyeReason::kDraining, 2);  // 2 blocks of 200 ms
  ASSERT_TRUE(w.run_until([&] { return w.runner->stats().losses == 1; }));
  ASSERT_TRUE(w.run_until([&] { return w.runner_admissions == 2; }));
  EXPECT_GE(std::chrono::steady_clock::now() - said, std::chrono::milliseconds(400));
  EXPECT_EQ(w.lost.size(), 1u);
}

// §5.2/§15.1: the DoS gate bounds a registered identity to k connections,
// one per validator of Sub(R). Here the same runner key connects three times
// to one validator (k + 1 and more, for k = 1): each newer admitted
// connection supersedes the older, which gets a signed Goodbye{RateLimited},
// counts as lost and gets no more Pongs; only the newest is answered.
TEST(Cip11Links, OneAdmittedConnectionPerRunnerTheNewestWinsAndOlderOnesGetGoodbyeRateLimited) {
  World w;
  w.runner.reset();  // its link would reconnect and take part
  ASSERT_TRUE(w.run_until([&] { return w.validator->connections() == 0 && w.lost.size() == 1; }));
  testing::End same_key(w.io, testing::party().runner, offer(), nullptr);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(same_key.endpoint->connect("127.0.0.1", w.port).ok());
    ASSERT_TRUE(w.run_until([&] { return same_key.admitted == i + 1 && w.validator->stats().admitted == 2u + i; })) << i;
  }
  ASSERT_TRUE(w.run_until([&] { return same_key.closed == 2 && w.validator->connections() == 1; }));
  for (int older : {0, 1}) {
    ASSERT_EQ(same_key.goodbyes_of[older].size(), 1u) << older;
    EXPECT_EQ(same_key.goodbyes_of[older][0], std::make_pair(GoodbyeReason::kRateLimited, true)) << older;  // signed
  }
  EXPECT_TRUE(same_key.goodbyes_of[2].empty());
  EXPECT_EQ(w.validator->admitted_runners(), 1u);
  EXPECT_EQ(w.validator->stats().lost, 3u);
  EXPECT_EQ(w.lost[1], "superseded by a newer connection");
  EXPECT_EQ(w.lost[2], "superseded by a newer connection");
  // Only the newest is answered, and it keeps the runner present.
  ASSERT_TRUE(same_key.numbered(2)->send(kControlStream, HeartbeatPing{Height{5}, 0, {}}));
  ASSERT_TRUE(w.run_until([&] {
    const auto& f = same_key.frames_of[2];
    return !f.empty() && std::holds_alternative<HeartbeatPong>(f.back());
  }));
  EXPECT_TRUE(w.validator->presence().present(runner_addr()));
  EXPECT_EQ(w.validator->stats().pongs, 2u);  // the World runner's admission Ping, and this one
}

// A validator that answers each Ping with the wrong nonce_echo.
TEST(Cip11Links, APongEchoingAnotherNonceIsRejectedByTheRunner) {
  boost::asio::io_context io{1};
  cowboy::testing::TempDir dir;
  auto cert = *net::ensure_dev_certificate(dir.path());
  AdmitAll admit;
  SystemEntropy entropy;
  SignatureWorker worker(io, 1);
  net::ReadBudget budget(1 << 20);
  std::map<quic::Connection*, std::unique_ptr<Channel>> channels;
  quic::Events e;
  e.on_established = [&](quic::Connection& c) {
    Channel::Callbacks cb;
    cb.on_frame = [&](Channel& ch, std::int64_t, const Frame& f, const Res<Unit>&) {
      if (const auto* p = std::get_if<HeartbeatPing>(&f)) ch.send(kControlStream, HeartbeatPong{Height{1}, p->nonce + 1, true, {}});
    };
    channels[&c] =
        std::make_unique<Channel>(c, Channel::Setup{testing::party().validator, offer(), admit, entropy, worker, &budget}, cb);
  };
  e.on_stream_data = [&](quic::Connection& c, std::int64_t s, ByteView d) { channels[&c]->on_stream_data(s, d); };
  e.on_closed = [&](quic::Connection& c, const std::string&) { channels.erase(&c); };
  auto server = std::move(*quic::Endpoint::open(io, testing::server_config(cert), e));

  auto ep = std::move(*RunnerEndpoint::open(io, worker, budget, {}));
  RunnerLinkConfig config;
  config.port = server->port();
  config.offer = offer();
  RunnerLink runner(*ep, testing::party().runner, admit, entropy, config, {});
  runner.start();
  ASSERT_TRUE(testing::run_until(io, [&] { return runner.stats().rejected_pongs == 1; }));
  runner.on_block(Height{2});
  ASSERT_TRUE(testing::run_until(io, [&] { return runner.stats().rejected_pongs == 2; }));
  EXPECT_EQ(runner.stats().pongs, 0u);
}

// §5.3 point 4 over real QUIC: at the cutoff the validator says
// Goodbye{OverlapExpired} to the connections under the old pair only, and a
// runner link told so never reconnects (no Hello under the old hash again).
TEST(Cip11Links, OverlapExpiredEndsOnlyOldEpochConnectionsAndTheRunnerDoesNotComeBack) {
  World w;  // its runner is under epoch 0 (offer())
  const EpochPair old_pair{Epoch{0}, testing::filled(0x40)}, new_pair{Epoch{1}, testing::filled(0x60)};
  LocalOffer window = offer();
  window.subset_epoch = new_pair.subset_epoch;
  window.validator_set_hash = new_pair.validator_set_hash;
  window.overlap = old_pair;
  w.validator->set_offer(window);
  // A second runner connects under the new epoch during the window.
  const Signer second_key = testing::runner_key(1);
  RunnerLinkConfig config;
  config.port = w.port;
  config.offer = window;  // its own pair first; the old one is what it accepts from the validator
  config.offer.overlap = old_pair;
  int second_admissions = 0;
  RunnerLink::Callbacks cb;
  cb.on_admitted = [&] { ++second_admissions; };
  RunnerLink second(*w.runner_endpoint, second_key, w.admit_all, w.entropy, config, cb);
  second.start();
  ASSERT_TRUE(w.run_until([&] { return second.admitted() && w.validator->admitted_runners() == 2; }));

  const auto expired = [&](const ConnectionBinding& b) {
    return EpochPair{b.subset_epoch, b.validator_set_hash} == old_pair;
  };
  EXPECT_EQ(w.validator->goodbye_where(expired, GoodbyeReason::kOverlapExpired, "the overlap window ended at block 9"), 1u);
  ASSERT_TRUE(w.run_until([&] { return w.runner->stats().losses == 1 && w.validator->admitted_runners() == 1; }));
  EXPECT_EQ(w.lost.size(), 1u);
  EXPECT_TRUE(second.admitted());
  // Past the first backoff (100 ms) and more: no new connection, no new admission.
  const auto connects = w.runner->stats().connects;
  EXPECT_FALSE(w.run_until([&] { return w.runner->stats().connects > connects; }));
  EXPECT_EQ(w.runner->stats().admissions, 1u);
  EXPECT_FALSE(w.runner->admitted());
  EXPECT_EQ(second_admissions, 1);
  EXPECT_EQ(w.validator->stats().admitted, 2u);
}

// §5.3 point 1 and §11.5 (docs/cip11.md choice 135): the runner connects
// again under the other pair of an overlap while a job stream is open on its
// first connection. The newer one is the runner's from then on (presence, new
// pushes); the older drains: a cancel still reaches the runner on the stream
// it names, and once both ends have ended that stream the older connection
// is told Goodbye{RateLimited}, as it would have been at once with no stream.
TEST(Cip11Links, AnOlderConnectionUnderTheOtherPairDrainsItsJobStreamsThenEndsAsSuperseded) {
  World w;  // its runner is under epoch 0 (offer())
  const EpochPair old_pair{Epoch{0}, testing::filled(0x40)}, new_pair{Epoch{1}, testing::filled(0x60)};
  auto pushed = w.validator->push(runner_addr(), testing::job_assignment());
  ASSERT_TRUE(pushed);
  ASSERT_TRUE(w.run_until([&] { return w.runner_job_frames.size() == 1; }));
  const auto a = std::get<JobAssignment>(std::get<1>(w.runner_job_frames[0]));
  ASSERT_TRUE(w.runner->send(pushed->stream, JobAck{a.job_id, a.assignment_hash, AckStatus::accepted(), std::nullopt, {}}));
  ASSERT_TRUE(w.run_until([&] { return w.validator_job_frames.size() == 1; }));

  LocalOffer window = offer();
  window.subset_epoch = new_pair.subset_epoch;
  window.validator_set_hash = new_pair.validator_set_hash;
  window.overlap = old_pair;
  w.validator->set_offer(window);
  RunnerLinkConfig config;
  config.port = w.port;
  config.offer = window;
  std::vector<std::pair<std::int64_t, Frame>> newer_frames;
  RunnerLink::Callbacks cb;
  cb.on_job_frame = [&](std::int64_t s, const Frame& f, const Res<Unit>&) { newer_frames.emplace_back(s, f); };
  RunnerLink newer(*w.runner_endpoint, testing::party().runner, w.admit_all, w.entropy, config, cb);
  newer.start();
  w.runner->retire();  // as cip11-runner's reconcile_links does with its epoch-0 link
  ASSERT_TRUE(w.run_until([&] { return newer.admitted() && w.validator->stats().admitted == 2u; }));
  EXPECT_EQ(w.validator->draining(), 1u);
  EXPECT_EQ(w.validator->admitted_runners(), 1u);
  EXPECT_TRUE(w.links_ended.empty());
  // New pushes go on the newer connection.
  auto later = w.validator->push(runner_addr(), testing::job_assignment());
  ASSERT_TRUE(later);
  EXPECT_NE(later->link, pushed->link);
  ASSERT_TRUE(w.run_until([&] { return newer_frames.size() == 1; }));
  EXPECT_EQ(newer_frames[0].first, later->stream);

  // The cancel goes on the older connection's stream and reaches the runner there.
  ASSERT_TRUE(w.validator->send(pushed->link, pushed->stream,
                                JobCancel{a.job_id, a.assignment_hash, CancelReason::kReassigned, {}}));
  ASSERT_TRUE(w.run_until([&] { return w.runner_job_frames.size() == 2; }));
  EXPECT_EQ(std::get<0>(w.runner_job_frames[1]), pushed->stream);
  EXPECT_TRUE(std::get<2>(w.runner_job_frames[1]));  // its seal verified, over the older connection's keys
  EXPECT_EQ(std::get<JobCancel>(std::get<1>(w.runner_job_frames[1])).reason, CancelReason::kReassigned);
  EXPECT_TRUE(w.runner->admitted());
  EXPECT_EQ(w.runner->stats().losses, 0u);

  // Drained: both ends end the stream, and only then is the older one superseded.
  w.runner->end_job_stream(pushed->stream);
  w.validator->end_job_stream(pushed->link, pushed->stream);
  ASSERT_TRUE(w.run_until([&] { return w.runner->stats().losses == 1u && w.validator->draining() == 0u; }));
  ASSERT_EQ(w.runner_lost.size(), 1u);
  EXPECT_EQ(w.runner_lost[0], "Goodbye RateLimited: superseded by a newer connection of this runner");
  EXPECT_EQ(w.links_ended, std::vector<ValidatorLinks::LinkId>{pushed->link});
  EXPECT_TRUE(newer.admitted());
  EXPECT_EQ(w.runner->stats().connects, 1u);  // retired: it does not come back
  EXPECT_EQ(w.validator->admitted_runners(), 1u);
}

}  // namespace
}  // namespace cowboy::cip11
