// One stream's owner without a socket: a fake Outbound records the frames, a
// manual clock moves time, a MemoryStore takes the writes (and fails them on
// demand). The owner runs on an io_context these tests turn; its writes run
// on a real committer thread.
#include "cbqs/broker/stream/owner.h"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "cbqs/store/memory_store.h"
#include "fakes.h"
#include "group_config.h"

namespace cowboy::cbqs::broker {
namespace {

using Sent = std::pair<ConnectionId, CbqsServerFrameV2>;

class RecordingOutbound final : public Outbound {
 public:
  void send(ConnectionId connection, const CbqsServerFrameV2& frame) override { sent.emplace_back(connection, frame); }
  Room room(ConnectionId) const override { return Room::kOpen; }
  std::vector<Sent> sent;
};

// Records which thread made each write, so a test can see where each ran;
// `hold`, when set, runs before a write and may block it.
class ThreadRecordingStore final : public store::Store {
 public:
  Result<Unit, store::StoreError> write(const store::WriteBatch& batch, store::Sync sync) override {
    {
      std::lock_guard lock(mu);
      writers.push_back(std::this_thread::get_id());
    }
    if (hold) hold();
    return inner.write(batch, sync);
  }
  Result<std::optional<std::string>, store::StoreError> get(std::string_view key) override { return inner.get(key); }
  Result<Unit, store::StoreError> scan(std::string_view begin, std::string_view end,
                                       const std::function<bool(std::string_view, std::string_view)>& visit) override {
    return inner.scan(begin, end, visit);
  }
  store::MemoryStore inner;
  std::mutex mu;
  std::vector<std::thread::id> writers;
  std::function<void()> hold;
};

class OwnerTest : public ::testing::Test {
 protected:
  static constexpr ConnectionId kConnection = 7;
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work = boost::asio::make_work_guard(io);
  boost::asio::thread_pool committer{1};
  ThreadRecordingStore store;
  testing::FixedViews views;
  ManualClock clock{1'000'000};
  testing::CountingEntropy entropy;
  RecordingOutbound out;
  StoreHealth health;
  ProviderIdentity provider;
  Bytes32 sid{};
  Bytes32 session{};
  StreamGrantV2 grant;
  std::unique_ptr<StreamOwner> owner;
  std::uint8_t next_request = 0;
  std::atomic<std::size_t>* writes_at_committer = nullptr;  // what load() gives the owner

  void SetUp() override {
    sid[0] = 0x5e;
    session[0] = 0x5a;
    provider.address[0] = 0xb0;
    provider.signing_seed[0] = 0x11;
    StreamRecordV2 stream;
    stream.stream_id = sid;
    testing::add_solvent_stream(*views.view, stream);
    grant.stream_id = sid;
    grant.verbs = 0xff;
    grant.max_message_bytes = 1 << 20;
    grant.max_append_bytes_per_sec = 1 << 30;
    owner = load();
  }

  void TearDown() override {
    owner.reset();
    committer.join();
  }

  std::unique_ptr<StreamOwner> load() {
    return StreamOwner::load(sid, OwnerContext{io.get_executor(), committer.get_executor(), store, views, clock,
                                               entropy, out, health, provider, 1ULL << 30, writes_at_committer});
  }

  Bytes32 request(CbqsRequestBodyV2 body) {
    Bytes32 id{};
    id[0] = ++next_request;
    owner->request(Caller{kConnection, SessionId{session}, grant}, *views.view, views.view->streams.at(sid),
                   RequestId{id}, body);
    return id;
  }

  /// Turns the owner's executor until no write is in flight and nothing is staged.
  void settle() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      io.poll();
      if (owner->idle()) return (void)io.poll();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    FAIL() << "the owner did not settle";
  }

  /// The response body answering `id`, if it was sent.
  const CbqsResponseBodyV2* answer(const Bytes32& id) const {
    for (const auto& [c, f] : out.sent)
      if (const auto* r = std::get_if<Response>(&f); r && r->request_id == id) return &r->body;
    return nullptr;
  }
  std::optional<ErrorCode> refusal(const Bytes32& id) const {
    for (const auto& [c, f] : out.sent)
      if (const auto* e = std::get_if<ErrorFrame>(&f); e && e->request_id == id) return error_from_u16(e->code);
    return std::nullopt;
  }
  std::vector<Delivery> deliveries() const {
    std::vector<Delivery> out_deliveries;
    for (const auto& [c, f] : out.sent)
      if (const auto* d = std::get_if<Delivery>(&f)) out_deliveries.push_back(*d);
    return out_deliveries;
  }

  LaneId create_lane() {
    Bytes32 id = request(req::CreateLane{});
    settle();
    return std::get<resp::LaneCreated>(*answer(id)).lane_id;
  }
  static req::Append append_to(LaneId lane, std::string_view text) {
    return req::Append{AppendRequestV2{lane, Bytes(text.begin(), text.end())}};
  }
  StreamState reload() { return std::move(*StreamState::load(store, sid)); }
};

TEST_F(OwnerTest, AnAppendIsAnsweredOnlyOnceItsWriteIsDurable) {
  Bytes32 lane_request = request(req::CreateLane{});
  EXPECT_EQ(answer(lane_request), nullptr);  // its write has not returned yet
  settle();
  ASSERT_NE(answer(lane_request), nullptr);
  LaneId lane = std::get<resp::LaneCreated>(*answer(lane_request)).lane_id;
  EXPECT_EQ(lane, LaneId{1});

  std::promise<void> gate;  // holds the committer, so the write waits
  boost::asio::post(committer, [f = gate.get_future().share()] { f.wait(); });
  Bytes32 a = request(append_to(lane, "one"));
  Bytes32 b = request(append_to(lane, "two"));
  io.poll();
  EXPECT_EQ(answer(a), nullptr);
  EXPECT_EQ(answer(b), nullptr);
  EXPECT_EQ(reload().durable_head(), 0u);
  gate.set_value();
  settle();
  EXPECT_EQ(std::get<resp::Appended>(*answer(a)).sequence, Sequence{1});
  EXPECT_EQ(std::get<resp::Appended>(*answer(b)).sequence, Sequence{2});
  StreamState stored = reload();
  EXPECT_EQ(stored.durable_head(), 2u);
  EXPECT_EQ(stored.lane_status(lane), LaneStatusV2::kActive);
  auto record = stored.read(store, 2);
  ASSERT_TRUE(record && *record);
  EXPECT_EQ(std::string((*record)->payload.begin(), (*record)->payload.end()), "two");
}

TEST_F(OwnerTest, AnAnswerQueuedAfterAChangeWaitsForItsWrite) {
  StreamSettingsV2 settings{60'000, 1 << 20, 1'024, 1 << 20, 1 << 20};
  Bytes32 update = request(req::UpdateSettings{settings});
  EXPECT_EQ(answer(update), nullptr);
  Bytes32 get = request(req::GetSettings{});
  EXPECT_EQ(answer(get), nullptr);  // it would show the update before the update is durable
  settle();
  ASSERT_NE(answer(get), nullptr);
  EXPECT_EQ(std::get<resp::Settings>(*answer(get)).settings, settings);
  std::size_t update_at = 0, get_at = 0;
  for (std::size_t i = 0; i < out.sent.size(); ++i)
    if (const auto* r = std::get_if<Response>(&out.sent[i].second)) {
      if (r->request_id == update) update_at = i;
      if (r->request_id == get) get_at = i;
    }
  EXPECT_LT(update_at, get_at);
  EXPECT_EQ(reload().effective_settings(views.view->params), settings);
}

TEST_F(OwnerTest, NoWriteRunsOnTheOwnersThread) {
  LaneId lane = create_lane();
  GroupConfigV2 config = testing::valid_group_config(lane);
  request(req::CreateGroup{config});
  request(req::UpdateSettings{StreamSettingsV2{60'000, 1 << 20, 1'024, 1 << 20, 1 << 20}});
  request(append_to(lane, "x"));
  request(req::CloseLane{lane});
  settle();
  std::lock_guard lock(store.mu);
  ASSERT_GE(store.writers.size(), 2u);
  for (const auto& writer : store.writers) EXPECT_NE(writer, std::this_thread::get_id());
}

TEST_F(OwnerTest, AnExpiredLeaseIsRedeliveredAndItsOldHandleIsStale) {
  LaneId lane = create_lane();
  GroupConfigV2 config = testing::valid_group_config(lane);
  config.visibility_timeout_ms = 100;
  config.max_visibility_ms = 1'000;
  Bytes32 created = request(req::CreateGroup{config});
  request(append_to(lane, "job"));
  settle();
  GroupId group = std::get<resp::GroupCreated>(*answer(created)).group_id;
  Bytes32 sub = request(req::Subscribe{SourceGroup{lane, group}, 1 << 20});
  settle();
  ASSERT_EQ(deliveries().size(), 1u);
  Delivery first = deliveries()[0];
  EXPECT_EQ(first.sequence, Sequence{1});
  ASSERT_TRUE(first.lease);

  clock.advance(100);  // the lease's visibility timeout passes
  owner->tick();
  settle();
  ASSERT_EQ(deliveries().size(), 2u);
  Delivery second = deliveries()[1];
  EXPECT_EQ(second.sequence, Sequence{1});
  ASSERT_TRUE(second.lease);
  EXPECT_NE(*second.lease, *first.lease);

  Bytes32 stale = request(req::Ack{sub, *first.lease});
  EXPECT_EQ(refusal(stale), ErrorCode::kLeaseStale);
  Bytes32 ack = request(req::Ack{sub, *second.lease});
  settle();
  ASSERT_NE(answer(ack), nullptr);
  EXPECT_TRUE(std::holds_alternative<resp::Ok>(*answer(ack)));
  // The ack is durable: a restarted owner has nothing to redeliver.
  owner = load();
  Bytes32 again = request(req::Subscribe{SourceGroup{lane, group}, 1 << 20});
  settle();
  ASSERT_NE(answer(again), nullptr);
  EXPECT_EQ(deliveries().size(), 2u);
  auto metrics = owner->metrics();
  ASSERT_EQ(metrics.groups.size(), 1u);
  EXPECT_EQ(metrics.groups[0].pending, 0u);
  EXPECT_EQ(metrics.groups[0].in_flight, 0u);
}

// A first lease is written only as the group frontier's move, and an Ack
// above the oldest outstanding lease only as an entry of the next write's ack
// list; neither is in the owner's pending changes until commit() asks the
// group. Their Delivery and Ok still wait for that write (§9.2: a lease is
// durable before its Delivery, an Ack before its Ok). Before the fix both went
// out at once when no write was in flight.
TEST_F(OwnerTest, AFirstLeaseAndAListedAckAreShownOnlyOnceTheirWriteIsDurable) {
  LaneId lane = create_lane();
  Bytes32 created = request(req::CreateGroup{testing::valid_group_config(lane)});
  request(append_to(lane, "one"));
  request(append_to(lane, "two"));
  settle();
  GroupId group = std::get<resp::GroupCreated>(*answer(created)).group_id;

  std::promise<void> leases_written;  // holds the committer, so the write waits
  boost::asio::post(committer, [f = leases_written.get_future().share()] { f.wait(); });
  Bytes32 sub = request(req::Subscribe{SourceGroup{lane, group}, 1 << 20});
  io.poll();
  EXPECT_TRUE(deliveries().empty()) << "a first lease was shown before the frontier's move was durable";
  leases_written.set_value();
  settle();
  ASSERT_EQ(deliveries().size(), 2u);

  std::promise<void> ack_written;
  boost::asio::post(committer, [f = ack_written.get_future().share()] { f.wait(); });
  Bytes32 ack = request(req::Ack{sub, *deliveries()[1].lease});  // 2, above 1 still leased: listed
  io.poll();
  EXPECT_EQ(answer(ack), nullptr) << "an Ack was answered before its list was durable";
  ack_written.set_value();
  settle();
  ASSERT_NE(answer(ack), nullptr);
  EXPECT_TRUE(std::holds_alternative<resp::Ok>(*answer(ack)));

  owner = load();  // the acked record stays acked; the other lease's attempt was spent
  request(req::Subscribe{SourceGroup{lane, group}, 1 << 20});
  settle();
  ASSERT_EQ(deliveries().size(), 3u);
  EXPECT_EQ(deliveries()[2].sequence, Sequence{1});
}

TEST_F(OwnerTest, RetentionDropsExpiredRecordsThroughTheSameWrites) {
  LaneId lane = create_lane();
  request(req::UpdateSettings{StreamSettingsV2{1'000, 1 << 20, 1'024, 1 << 20, 1 << 20}});
  request(append_to(lane, "old"));
  request(append_to(lane, "older"));
  settle();
  clock.advance(1'000);
  request(append_to(lane, "new"));
  settle();  // the write of "new" is followed by the retention of the first two
  owner->housekeeping(views.view->params);
  settle();
  EXPECT_EQ(owner->metrics().floor, 3u);
  StreamState stored = reload();
  EXPECT_EQ(stored.floor(), 3u);
  EXPECT_EQ(stored.durable_head(), 3u);
  Bytes32 gone = request(req::GetCheckpoint{Sequence{1}});
  EXPECT_EQ(refusal(gone), ErrorCode::kSequenceNotRetained);
}

TEST_F(OwnerTest, AFailedWriteAcknowledgesNothingAndFailsClosed) {
  LaneId lane = create_lane();
  store.inner.fail_syncs(true);
  Bytes32 a = request(append_to(lane, "lost"));
  Bytes32 created = request(req::CreateLane{});
  settle();
  EXPECT_EQ(refusal(a), ErrorCode::kUnavailable);
  EXPECT_EQ(refusal(created), ErrorCode::kUnavailable);
  EXPECT_EQ(answer(a), nullptr);
  EXPECT_TRUE(health.failed());
  store.inner.fail_syncs(false);  // the disk is back; the process still refuses until a restart
  Bytes32 b = request(append_to(lane, "refused"));
  EXPECT_EQ(refusal(b), ErrorCode::kUnavailable);
  settle();
  EXPECT_EQ(answer(b), nullptr);
  StreamState stored = reload();
  EXPECT_EQ(stored.durable_head(), 0u);
  EXPECT_FALSE(stored.lane_status(LaneId{2}).has_value());
}

// cbqs_sync_latency_seconds observes every write the owner makes (its _count
// once froze at the 4,096 recent samples while writes went on).
TEST_F(OwnerTest, TheSyncHistogramObservesEveryWrite) {
  LaneId lane = create_lane();
  for (int i = 0; i < 20; ++i) {
    request(append_to(lane, "x"));
    settle();
  }
  const OwnerCounters& n = owner->counters();
  EXPECT_GE(n.batches, 20u);
  EXPECT_EQ(n.sync_latency.count(), n.batches + n.journal_writes);
  EXPECT_EQ(n.sync_latency.count(), n.sync_latency_us.size());  // below the recent window's size, the two agree
}

// Given the process's count of writes at the committer, a lone append while
// it is zero is written on the owner's thread - and still answered only once
// that synced write has returned.
TEST_F(OwnerTest, ALoneAppendWrittenOnTheOwnersThreadIsAnsweredOnlyAfterItsWrite) {
  std::atomic<std::size_t> at_committer{0};
  writes_at_committer = &at_committer;
  owner = load();
  LaneId lane = create_lane();  // a write with no record: the committer's

  std::mutex m;
  std::condition_variable cv;
  bool entered = false, released = false;
  store.hold = [&] {
    std::unique_lock lock(m);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return released; });
  };
  Bytes32 a{};
  std::thread home([&] {  // the owner's executor for this request: the write blocks it
    a = request(append_to(lane, "one"));
    io.poll();
  });
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return entered; }));
    std::lock_guard writers_lock(store.mu);
    EXPECT_EQ(store.writers.back(), home.get_id());  // written on the owner's thread, not posted
    EXPECT_NE(store.writers.front(), std::this_thread::get_id());  // the lane's write: at the committer
  }
  for (const auto& [c, f] : out.sent) {  // `a` is not yet returned: request() is inside the write
    const auto* r = std::get_if<Response>(&f);
    EXPECT_FALSE(r && std::holds_alternative<resp::Appended>(r->body)) << "answered before its write returned";
  }
  EXPECT_EQ(reload().durable_head(), 0u);
  {
    std::lock_guard lock(m);
    released = true;
  }
  cv.notify_all();
  home.join();
  store.hold = nullptr;
  settle();
  ASSERT_NE(answer(a), nullptr);
  EXPECT_EQ(std::get<resp::Appended>(*answer(a)).sequence, Sequence{1});
  EXPECT_EQ(reload().durable_head(), 1u);
  EXPECT_EQ(at_committer.load(), 0u);
}

// While another write is at the committer, a lone append goes there too: the
// owner's thread never waits for a sync behind another write.
TEST_F(OwnerTest, ALoneAppendGoesToTheCommitterWhileAnotherWriteIsThere) {
  std::atomic<std::size_t> at_committer{1};  // another owner's write
  writes_at_committer = &at_committer;
  owner = load();
  LaneId lane = create_lane();
  Bytes32 a = request(append_to(lane, "one"));
  settle();
  EXPECT_EQ(std::get<resp::Appended>(*answer(a)).sequence, Sequence{1});
  std::lock_guard lock(store.mu);
  ASSERT_EQ(store.writers.size(), 2u);
  for (const auto& writer : store.writers) EXPECT_NE(writer, std::this_thread::get_id());
  EXPECT_EQ(at_committer.load(), 1u);
}

}  // namespace
}  // namespace cowboy::cbqs::broker
