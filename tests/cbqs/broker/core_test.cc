// Core without a socket: a fake Peer takes the encoded frames, a manual clock
// and a fixed snapshot stand in for time and the chain. The handshake's
// signatures are real.
#include "cbqs/broker/core.h"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <future>
#include <thread>

#include "cbqs/broker/auth.h"
#include "cbqs/store/memory_store.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "fakes.h"

namespace cowboy::cbqs::broker {
namespace {

class RecordingPeer final : public Peer {
 public:
  void send(Bytes frame) override { frames.push_back(std::move(*decode<CbqsServerFrameV2>(frame))); }
  void close() override { closed = true; }
  std::size_t queued_bytes() const override { return 0; }
  void lift_frame_cap() override { lifted = true; }
  std::vector<CbqsServerFrameV2> frames;
  bool closed = false;
  bool lifted = false;
};

using testing::seed;

class CoreTest : public ::testing::Test {
 protected:
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work = boost::asio::make_work_guard(io);
  store::MemoryStore store;
  testing::FixedViews views;
  ManualClock clock{1'800'000'000'000};
  testing::CountingEntropy entropy;
  std::unique_ptr<Core> core;
  RecordingPeer peer;
  Core::ConnectionId connection = 0;
  Bytes32 sid{};
  std::uint8_t next_request = 0;
  std::function<void(const Bytes32&)> hold_load;  // set before the first request: runs on the loader thread

  void SetUp() override {
    sid[0] = 0x5e;
    views.view->chain_instance_id[0] = 0xc1;
    StreamRecordV2 stream;
    stream.stream_id = sid;
    stream.admin_key = ed25519_public_key(seed(1));
    testing::add_solvent_stream(*views.view, stream);
    CoreConfig config;
    config.provider.signing_seed = seed(3);
    config.before_load = [this](const Bytes32& stream) {
      if (hold_load) hold_load(stream);
    };
    core = std::make_unique<Core>(io, config, store, views, clock, entropy);
    connection = core->on_open(peer);
  }

  void TearDown() override {
    core->on_close(connection);
    core.reset();
  }

  StreamGrantV2 grant(std::uint16_t verbs, std::optional<Bytes32> stream = std::nullopt) const {
    StreamGrantV2 g;
    g.chain_instance_id = views.view->chain_instance_id;
    g.stream_id = stream.value_or(sid);
    g.holder_signing_key = ed25519_public_key(seed(2));
    g.verbs = verbs;
    g.not_before_ms = clock.now_ms() - 1'000;
    g.expires_at_ms = clock.now_ms() + 60'000;
    g.max_message_bytes = 1 << 20;
    g.max_append_bytes_per_sec = 1 << 30;
    sign_grant(g, seed(1));
    return g;
  }

  Bytes32 next_id() {
    Bytes32 id{};
    id[0] = ++next_request;
    return id;
  }

  void frame(const CbqsClientFrameV2& f) { core->on_frame(connection, encode(f)); }

  /// Turns the io_context until the core is idle and nothing is ready to run.
  void settle() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (io.poll() == 0 && core->idle()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    FAIL() << "the core did not settle";
  }

  template <typename T>
  const T* last() const {
    for (auto it = peer.frames.rbegin(); it != peer.frames.rend(); ++it)
      if (const auto* f = std::get_if<T>(&*it)) return f;
    return nullptr;
  }
  std::optional<ErrorCode> last_error() const {
    const auto* e = last<ErrorFrame>();
    if (!e) return std::nullopt;
    return error_from_u16(e->code);
  }

  Bytes32 open_session(const StreamGrantV2& g) {
    frame(OpenSession{next_id(), g});
    settle();  // the signature check waits for an admission turn
    const auto* challenge = last<SessionChallenge>();
    EXPECT_NE(challenge, nullptr);
    if (!challenge) return {};
    SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), challenge->session_id, challenge->challenge, {}};
    sign_proof(proof, seed(2));
    frame(CompleteSession{next_id(), proof});
    settle();
    EXPECT_NE(last<SessionOpened>(), nullptr);
    return challenge->session_id;
  }

  Bytes32 request(const Bytes32& session, CbqsRequestBodyV2 body) {
    Bytes32 id = next_id();
    frame(Request{id, session, std::move(body)});
    settle();
    return id;
  }
  const CbqsResponseBodyV2* answer(const Bytes32& id) const {
    for (const auto& f : peer.frames)
      if (const auto* r = std::get_if<Response>(&f); r && r->request_id == id) return &r->body;
    return nullptr;
  }
};

TEST_F(CoreTest, AHandshakeOpensASessionWhoseAppendsAreAnsweredOnceDurable) {
  Bytes32 session = open_session(grant(0xff));
  EXPECT_TRUE(peer.lifted);
  Bytes32 lane_request = request(session, req::CreateLane{});
  ASSERT_NE(answer(lane_request), nullptr);
  LaneId lane = std::get<resp::LaneCreated>(*answer(lane_request)).lane_id;
  Bytes32 append = request(session, req::Append{AppendRequestV2{lane, Bytes{1, 2, 3}}});
  ASSERT_NE(answer(append), nullptr);
  EXPECT_EQ(std::get<resp::Appended>(*answer(append)).sequence, Sequence{1});
  CoreMetrics m = core->metrics();
  EXPECT_EQ(m.sessions, 1u);
  EXPECT_EQ(m.appends, 1u);
  ASSERT_EQ(m.streams.size(), 1u);
  EXPECT_EQ(m.streams[0].head, 1u);
}

TEST_F(CoreTest, VerbsAndSessionsAreJudgedBeforeTheStreamIsReached) {
  Bytes32 session = open_session(grant(verb::kReplay));
  request(session, req::CreateLane{});
  EXPECT_EQ(last_error(), ErrorCode::kVerbNotGranted);
  Bytes32 unknown{};
  unknown[0] = 0x99;
  request(unknown, req::GetSettings{});
  EXPECT_EQ(last_error(), ErrorCode::kUnknownSession);
  EXPECT_TRUE(core->metrics().streams.empty());  // neither request loaded the stream
}

TEST_F(CoreTest, EndingASessionEndsItsSubscriptionsInTheOwner) {
  Bytes32 session = open_session(grant(0xff));
  request(session, req::Subscribe{SourceCursor{LaneScopeAny{}, StartHead{}}, 1 << 20});
  EXPECT_EQ(core->metrics().subscriptions, 1u);
  Bytes32 close = request(session, req::CloseSession{});
  ASSERT_NE(answer(close), nullptr);
  EXPECT_TRUE(std::holds_alternative<resp::Ok>(*answer(close)));
  CoreMetrics m = core->metrics();
  EXPECT_EQ(m.sessions, 0u);
  EXPECT_EQ(m.subscriptions, 0u);
  request(session, req::GetSettings{});
  EXPECT_EQ(last_error(), ErrorCode::kUnknownSession);
}

TEST_F(CoreTest, AFailedWriteFailsTheStoreClosed) {
  Bytes32 session = open_session(grant(0xff));
  store.fail_syncs(true);
  Bytes32 lane_request = request(session, req::CreateLane{});
  EXPECT_EQ(answer(lane_request), nullptr);
  EXPECT_EQ(last_error(), ErrorCode::kUnavailable);
  EXPECT_TRUE(core->store_failed());
  EXPECT_EQ(core->metrics().sync_failures, 1u);
}

// Issue 45/46: a stream's first request loads it on the loader thread, so while
// stream A's load is held (by the hook, not by timing), a request to stream B
// is answered; A's request is answered once its load is let go.
TEST_F(CoreTest, AStreamBeingLoadedDoesNotHoldUpRequestsToAnotherStream) {
  Bytes32 other = sid;
  other[0] = 0x5f;
  StreamRecordV2 stream;
  stream.stream_id = other;
  stream.admin_key = ed25519_public_key(seed(1));
  testing::add_solvent_stream(*views.view, stream);
  std::promise<void> let_go;
  std::shared_future<void> released = let_go.get_future().share();
  std::atomic<bool> a_loading{false};
  hold_load = [&, released](const Bytes32& s) {
    if (s != sid) return;
    a_loading = true;
    released.wait();
  };
  Bytes32 session_a = open_session(grant(0xff));
  Bytes32 session_b = open_session(grant(0xff, other));

  Bytes32 to_a = next_id();
  frame(Request{to_a, session_a, req::GetSettings{}});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!a_loading && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(a_loading);
  Bytes32 to_b = next_id();
  frame(Request{to_b, session_b, req::GetSettings{}});
  while (!answer(to_b) && std::chrono::steady_clock::now() < deadline) {
    io.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_NE(answer(to_b), nullptr) << "stream B waited for stream A's load";
  EXPECT_EQ(answer(to_a), nullptr);  // A is still loading
  EXPECT_FALSE(core->idle());

  let_go.set_value();
  settle();
  ASSERT_NE(answer(to_a), nullptr);
  EXPECT_TRUE(std::holds_alternative<resp::Settings>(*answer(to_a)));
}

}  // namespace
}  // namespace cowboy::cbqs::broker
