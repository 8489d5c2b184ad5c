// cbqsd over real wss://: §19 clause 4 (sessions), clause 6 (durability and
// the checkpoint chain), clause 8 (solvency mid-session), credit, and bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "broker_fixture.h"
#include "group_config.h"
#include "cbqs/broker/auth.h"
#include "cbqs/wire/ids.h"
#include "cbqs/chain/billing.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/limits.h"

namespace cowboy::cbqs::broker {
namespace {

using namespace testing;
using BrokerTest = BrokerFixture;

constexpr std::uint16_t kAll = verb::kAppend | verb::kConsume | verb::kReplay | verb::kManageLanes | verb::kManageSettings;

Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }

TEST_F(BrokerTest, HandshakeLanesAppendsAndAVerifiableCheckpoint) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  auto lane = request(*c, session, 10, req::CreateLane{});
  ASSERT_NE(body<resp::LaneCreated>(lane), nullptr) << error_text(lane);
  LaneId lane_id = body<resp::LaneCreated>(lane)->lane_id;
  EXPECT_EQ(lane_id, LaneId{1});
  for (std::uint64_t i = 1; i <= 20; ++i) {
    auto appended = request(*c, session, 100 + i, req::Append{{lane_id, text("record " + std::to_string(i))}});
    ASSERT_NE(body<resp::Appended>(appended), nullptr) << error_text(appended);
    EXPECT_EQ(body<resp::Appended>(appended)->sequence, Sequence{i});
  }
  auto cp = request(*c, session, 200, req::GetCheckpoint{});
  ASSERT_NE(body<resp::Checkpoint>(cp), nullptr) << error_text(cp);
  const auto& receipt = body<resp::Checkpoint>(cp)->receipt;
  EXPECT_EQ(receipt.last_sequence, Sequence{20});
  EXPECT_EQ(receipt.provider, provider.address);
  EXPECT_EQ(verify_checkpoint(receipt, *node->provider(provider.address)), CheckpointVerdict::kValid);
  // A receipt whose provider is not the stream's is rejected.
  ProviderRecordV2 other = *node->provider(provider.address);
  other.provider = Address{0x77};
  EXPECT_EQ(verify_checkpoint(receipt, other), CheckpointVerdict::kInvalid);
}

TEST_F(BrokerTest, AReplayedCompleteSessionOpensNothing) {
  auto c = connect();
  auto g = grant(kAll);
  ASSERT_TRUE(c->send(OpenSession{rid(1), g}).ok());
  auto ch = std::get<SessionChallenge>(next(*c));
  SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), ch.session_id, ch.challenge, {}};
  sign_proof(proof, holder);
  ASSERT_TRUE(c->send(CompleteSession{rid(2), proof}).ok());
  ASSERT_TRUE(std::holds_alternative<SessionOpened>(next(*c)));
  ASSERT_TRUE(c->send(CompleteSession{rid(3), proof}).ok());  // the captured frame, again
  EXPECT_EQ(error_code(next(*c)), code(ErrorCode::kChallengeUnknown));
  // On another connection it opens nothing either: pairs belong to their connection.
  auto other = connect();
  ASSERT_TRUE(other->send(CompleteSession{rid(4), proof}).ok());
  EXPECT_EQ(error_code(next(*other)), code(ErrorCode::kChallengeUnknown));
}

TEST_F(BrokerTest, ASessionIdNotOpenOnThisConnectionIsRefused) {
  auto a = connect(), b = connect();
  Bytes32 session = open_session(*a, grant(kAll));
  EXPECT_EQ(error_code(request(*b, session, 5, req::GetSettings{})), code(ErrorCode::kUnknownSession));
  EXPECT_NE(body<resp::Settings>(request(*a, session, 6, req::GetSettings{})), nullptr);
}

TEST_F(BrokerTest, SessionEndsOnGrantExpiryWithoutAnyRefresh) {
  chain->outage = true;  // no refresh can happen
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll, LaneScopeAny{}, 1'500));
  auto ended = c->receive(std::chrono::seconds(5));  // unsolicited
  ASSERT_TRUE(ended.ok());
  const auto* e = std::get_if<ErrorFrame>(&*ended);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->code, code(ErrorCode::kGrantExpired));
  EXPECT_EQ(e->details, Bytes(session.begin(), session.end()));
  EXPECT_EQ(error_code(request(*c, session, 7, req::GetSettings{})), code(ErrorCode::kUnknownSession));
}

TEST_F(BrokerTest, ARevokedGrantEndsTheSessionOnTheFirstRequestAfterTheRefresh) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  ASSERT_TRUE(owner->send_instruction(UpdateStreamV2{stream_id, std::nullopt, true})->ok());
  await_refresh();
  EXPECT_EQ(error_code(request(*c, session, 8, req::GetSettings{})), code(ErrorCode::kGenerationMismatch));
  EXPECT_EQ(error_code(request(*c, session, 9, req::GetSettings{})), code(ErrorCode::kUnknownSession));
}

TEST_F(BrokerTest, ChainOutageRefusesNewSessionsButServesOpenOnes) {
  ASSERT_TRUE(set_param("cbqs.max_snapshot_age_blocks", 5));
  await_refresh();
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  auto lane = body<resp::LaneCreated>(request(*c, session, 10, req::CreateLane{}))->lane_id;
  chain->outage = true;
  ASSERT_TRUE(cowboy::testing::eventually([&] { return !broker->ready(); }));  // 5 blocks of 10 ms
  auto fresh = connect();
  ASSERT_TRUE(fresh->send(OpenSession{rid(1), grant(kAll)}).ok());
  EXPECT_EQ(error_code(next(*fresh)), code(ErrorCode::kChainStateStale));
  auto appended = request(*c, session, 11, req::Append{{lane, text("during the outage")}});  // goal 7
  EXPECT_NE(body<resp::Appended>(appended), nullptr) << error_text(appended);
  chain->outage = false;
  ASSERT_TRUE(cowboy::testing::eventually([&] { return broker->ready(); }));
  auto later = connect();
  EXPECT_NE(open_session(*later, grant(kAll)), Bytes32{});
}

TEST_F(BrokerTest, AnAccountSuspendedMidSessionStopsAppendsAtOnce) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  auto lane = body<resp::LaneCreated>(request(*c, session, 10, req::CreateLane{}))->lane_id;
  auto paid = request(*c, session, 11, req::Append{{lane, text("paid")}});
  ASSERT_NE(body<resp::Appended>(paid), nullptr) << error_text(paid);
  // Rent far above the balance from the next settlement on.
  ASSERT_TRUE(set_param("cbqs.stream_rate_per_block", 1'000'000'000'000));
  ASSERT_TRUE(admin->send_instruction(SettleAccountV2{owner->address(), provider.address})->ok());
  ASSERT_TRUE(cowboy::testing::eventually([&] {
    auto a = node->account(owner->address(), provider.address);
    return a.ok() && !solvent(*a, *node->height());
  }));
  await_refresh();
  EXPECT_EQ(error_code(request(*c, session, 12, req::Append{{lane, text("unpaid")}})), code(ErrorCode::kAccountInsolvent));
  // Reads stay available.
  EXPECT_NE(body<resp::Checkpoint>(request(*c, session, 13, req::GetCheckpoint{})), nullptr);
}

TEST_F(BrokerTest, CreditShortThenDeliveryResumesOnCredit) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  auto lane = body<resp::LaneCreated>(request(*c, session, 10, req::CreateLane{}))->lane_id;
  for (int i = 0; i < 3; ++i)
    ASSERT_NE(body<resp::Appended>(request(*c, session, 20 + i, req::Append{{lane, Bytes(100, 'x')}})), nullptr);
  auto progress = request(*c, session, 30, req::Subscribe{SourceCursor{LaneScopeAny{}, StartAt{Sequence{1}}}, 0});
  ASSERT_NE(body<resp::CursorProgress>(progress), nullptr) << error_text(progress);
  EXPECT_EQ(body<resp::CursorProgress>(progress)->scanned_through, Sequence{0});
  auto short_frame = next(*c);
  const auto* state = std::get_if<DeliveryState>(&short_frame);
  ASSERT_NE(state, nullptr) << error_text(short_frame);
  EXPECT_EQ(std::get<CreditShort>(state->state).needed_bytes, 220u);  // 120 + 100
  EXPECT_FALSE(c->receive(std::chrono::milliseconds(100)).ok());     // and nothing more until credit
  EXPECT_NE(body<resp::Ok>(request(*c, session, 31, req::AddCredit{rid(30), 440})), nullptr);
  for (std::uint64_t seq = 1; seq <= 2; ++seq) {
    auto d = next(*c);
    ASSERT_TRUE(std::holds_alternative<Delivery>(d)) << error_text(d);
    EXPECT_EQ(std::get<Delivery>(d).sequence, Sequence{seq});
    EXPECT_FALSE(std::get<Delivery>(d).lease);
  }
  auto again = next(*c);  // the third does not fit in what is left
  EXPECT_TRUE(std::holds_alternative<DeliveryState>(again));
  // A subscription of another session is not this session's to touch.
  auto other = connect();
  Bytes32 other_session = open_session(*other, grant(kAll));
  EXPECT_EQ(error_code(request(*other, other_session, 40, req::AddCredit{rid(30), 1})), code(ErrorCode::kUnknownSubscription));
}

TEST_F(BrokerTest, BadInputGetsTypedErrorsAndTheConnectionKeepsWorking) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  ASSERT_TRUE(c->send_raw(Bytes{0xde, 0xad, 0xbe, 0xef}).ok());
  auto garbage = next(*c);
  EXPECT_EQ(error_code(garbage), code(ErrorCode::kUnsupportedVersion));
  EXPECT_FALSE(std::get<ErrorFrame>(garbage).request_id);
  Bytes unknown_variant = encode(CbqsClientFrameV2{Request{rid(1), session, req::GetSettings{}}});
  unknown_variant[1] = 9;
  ASSERT_TRUE(c->send_raw(unknown_variant).ok());
  EXPECT_EQ(error_code(next(*c)), code(ErrorCode::kMalformed));
  EXPECT_NE(body<resp::Settings>(request(*c, session, 2, req::GetSettings{})), nullptr);
}

TEST_F(BrokerTest, AnOversizeFrameClosesOnlyItsConnection) {
  auto bystander = connect();
  Bytes32 session = open_session(*bystander, grant(kAll));
  auto c = connect();
  // Refused from its first header; the broker drains the rest, so the write completes.
  auto sent = c->send_raw(Bytes(limits::kMaxFrameBytes + 1, 0x02));
  EXPECT_TRUE(sent.ok()) << sent.error();
  auto refused = c->receive(std::chrono::seconds(5));  // the typed error, then the 1009 close
  ASSERT_TRUE(refused.ok()) << refused.error();
  EXPECT_EQ(error_code(*refused), code(ErrorCode::kFrameTooLarge));
  EXPECT_FALSE(std::get<ErrorFrame>(*refused).request_id);
  EXPECT_FALSE(c->receive(std::chrono::seconds(5)).ok());
  EXPECT_NE(body<resp::Settings>(request(*bystander, session, 3, req::GetSettings{})), nullptr);
}

TEST_F(BrokerTest, OpenSessionFloodsHitTheSessionLimit) {
  auto c = connect();
  auto g = grant(kAll);
  std::uint64_t limit = Params{}.max_sessions_per_connection;
  for (std::uint64_t i = 0; i < limit; ++i) {
    ASSERT_TRUE(c->send(OpenSession{rid(i), g}).ok());
    ASSERT_TRUE(std::holds_alternative<SessionChallenge>(next(*c)));
  }
  ASSERT_TRUE(c->send(OpenSession{rid(99), g}).ok());
  EXPECT_EQ(error_code(next(*c)), code(ErrorCode::kSessionLimit));
  auto other = connect();  // other connections are unaffected
  EXPECT_NE(open_session(*other, g), Bytes32{});
}

TEST_F(BrokerTest, VerbsAndScopeAreEnforced) {
  auto c = connect();
  Bytes32 reader = open_session(*c, grant(verb::kReplay, LaneScopeExact{LaneId{1}}));
  EXPECT_EQ(error_code(request(*c, reader, 1, req::Append{{LaneId{1}, text("x")}})), code(ErrorCode::kVerbNotGranted));
  EXPECT_EQ(error_code(request(*c, reader, 2, req::CreateLane{})), code(ErrorCode::kVerbNotGranted));
  auto d = connect();
  Bytes32 narrow = open_session(*d, grant(kAll, LaneScopeExact{LaneId{1}}));
  EXPECT_EQ(error_code(request(*d, narrow, 3, req::CreateLane{})), code(ErrorCode::kLaneScopeTooNarrow));
  EXPECT_EQ(error_code(request(*d, narrow, 4, req::Append{{LaneId{2}, text("x")}})), code(ErrorCode::kLaneNotInScope));
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

using namespace testing;

class BrokerFlowTest : public BrokerFixture {
 protected:
  testbed::DeploymentOptions options() override {
    testbed::DeploymentOptions o;
    o.parameters = {{"cbqs.slow_consumer_timeout_ms", 50}};
    return o;
  }
  static constexpr std::uint16_t kAll = 0x003f;
};

TEST_F(BrokerFlowTest, TheRetentionFloorAdvancesAndReadsBelowItAreTyped) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  auto lane = body<resp::LaneCreated>(request(*c, session, 1, req::CreateLane{}))->lane_id;
  for (int i = 0; i < 3; ++i)
    ASSERT_NE(body<resp::Appended>(request(*c, session, 10 + i, req::Append{{lane, Bytes{1, 2, 3}}})), nullptr);
  // 1 ms of retention: the next housekeeping pass (once a second) drops all three.
  auto settings = request(*c, session, 20, req::UpdateSettings{StreamSettingsV2{1, 1'000'000, 1'024, 1'048'576, 4'194'304}});
  ASSERT_NE(body<resp::Settings>(settings), nullptr) << error_text(settings);
  std::uint64_t id = 30;
  ASSERT_TRUE(cowboy::testing::eventually(
      [&] { return error_code(request(*c, session, id++, req::GetCheckpoint{Sequence{1}})) ==
                   code(ErrorCode::kSequenceNotRetained); },
      std::chrono::seconds(5)));
  // A cursor At(1) starts at the floor, and its CursorProgress says so.
  auto progress = request(*c, session, 100, req::Subscribe{SourceCursor{LaneScopeAny{}, StartAt{Sequence{1}}}, 1 << 20});
  ASSERT_NE(body<resp::CursorProgress>(progress), nullptr) << error_text(progress);
  EXPECT_EQ(body<resp::CursorProgress>(progress)->scanned_through, Sequence{3});
}

TEST_F(BrokerFlowTest, AStalledSubscriptionIsClosedAsASlowConsumer) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  auto lane = body<resp::LaneCreated>(request(*c, session, 1, req::CreateLane{}))->lane_id;
  ASSERT_NE(body<resp::Appended>(request(*c, session, 2, req::Append{{lane, Bytes(64, 7)}})), nullptr);
  ASSERT_NE(body<resp::CursorProgress>(request(*c, session, 3, req::Subscribe{SourceCursor{LaneScopeAny{}, StartAt{Sequence{1}}}, 0})),
            nullptr);
  ASSERT_TRUE(std::holds_alternative<DeliveryState>(next(*c)));  // CreditShort
  auto closed = next(*c, std::chrono::seconds(5));               // no credit within 50 ms
  EXPECT_EQ(error_code(closed), code(ErrorCode::kSlowConsumer));
  EXPECT_EQ(std::get<ErrorFrame>(closed).request_id, rid(3));
  EXPECT_EQ(error_code(request(*c, session, 4, req::AddCredit{rid(3), 1'000})), code(ErrorCode::kUnknownSubscription));
}

TEST_F(BrokerFlowTest, CreditAboveTheCapAndDuplicateSubscriptionIdsAreRefused) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  EXPECT_EQ(error_code(request(*c, session, 1, req::Subscribe{SourceCursor{LaneScopeAny{}, StartHead{}}, (1ULL << 30) + 1})),
            code(ErrorCode::kCreditOverflow));
  ASSERT_NE(body<resp::CursorProgress>(request(*c, session, 2, req::Subscribe{SourceCursor{LaneScopeAny{}, StartHead{}}, 0})),
            nullptr);
  // Nothing to replay from Head: the catch-up CursorProgress follows at once (§L).
  auto caught_up = next(*c);
  ASSERT_TRUE(std::holds_alternative<Response>(caught_up));
  EXPECT_TRUE(std::holds_alternative<resp::CursorProgress>(std::get<Response>(caught_up).body));
  EXPECT_EQ(error_code(request(*c, session, 2, req::Subscribe{SourceCursor{LaneScopeAny{}, StartHead{}}, 0})),
            code(ErrorCode::kSubscriptionExists));
  EXPECT_EQ(error_code(request(*c, session, 3, req::AddCredit{rid(2), 1ULL << 31})), code(ErrorCode::kCreditOverflow));
}

TEST_F(BrokerFlowTest, DeliveriesArePacedByMaxDeliveredBytesPerSec) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  auto lane = body<resp::LaneCreated>(request(*c, session, 1, req::CreateLane{}))->lane_id;
  // 1,000 delivered bytes/s; each delivery of 380 payload bytes is a 500-byte frame.
  ASSERT_NE(body<resp::Settings>(request(*c, session, 2, req::UpdateSettings{StreamSettingsV2{604'800'000, 1'000'000, 1'024,
                                                                                            1'048'576, 1'000}})),
            nullptr);
  for (int i = 0; i < 4; ++i)
    ASSERT_NE(body<resp::Appended>(request(*c, session, 10 + i, req::Append{{lane, Bytes(380, 1)}})), nullptr);
  auto start = std::chrono::steady_clock::now();
  ASSERT_NE(body<resp::CursorProgress>(request(*c, session, 20, req::Subscribe{SourceCursor{LaneScopeAny{}, StartAt{Sequence{1}}}, 1 << 20})),
            nullptr);
  int delivered = 0;
  while (delivered < 4) {
    auto f = next(*c);
    if (std::holds_alternative<Delivery>(f)) ++delivered;
  }
  // A full bucket (1,000 bytes) carries two at once; the other two need a second more.
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

using namespace testing;
using AdmissionTest = BrokerFixture;

// One connection floods 10,000 OpenSession frames; another's handshake still
// completes, and no handshake job waits more than two admission-queue turns.
TEST_F(AdmissionTest, AHandshakeFloodDoesNotStarveAnotherConnection) {
  auto flooder = connect();
  auto g = grant(0x003f);
  std::atomic<int> sent{0};
  std::thread flood([&] {
    Bytes frame = encode(CbqsClientFrameV2{OpenSession{rid(1), g}});
    for (int i = 0; i < 10'000; ++i) {
      if (!flooder->send_raw(frame)) break;
      ++sent;
    }
  });
  ASSERT_TRUE(cowboy::testing::eventually([&] { return sent.load() >= 500; }));
  auto honest = connect();
  EXPECT_NE(open_session(*honest, g), Bytes32{});  // completes during the flood
  flood.join();
  EXPECT_EQ(sent.load(), 10'000);
  auto m = broker->metrics();
  EXPECT_LE(m.admission_max_wait_turns, 2u);
  EXPECT_GT(m.admission_turns, 0u);
  // The flooder was held to its per-connection limit and answered, not dropped.
  auto first = next(*flooder);
  EXPECT_TRUE(std::holds_alternative<SessionChallenge>(first) || std::holds_alternative<ErrorFrame>(first));
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

using namespace testing;

class BackpressureTest : public BrokerFixture {
 protected:
  testbed::DeploymentOptions options() override {
    testbed::DeploymentOptions o;
    o.write_high_water = 4 * 1024;  // tiny, so the test crosses it quickly
    return o;
  }
};

// A client that sends without reading pauses its own reads at the broker;
// once it reads again every answer arrives, in order, and nothing is lost.
TEST_F(BackpressureTest, AClientThatDoesNotReadIsPausedNotDropped) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(0x003f));
  for (int i = 0; i < 200; ++i) ASSERT_NE(body<resp::LaneCreated>(request(*c, session, 10, req::CreateLane{})), nullptr);
  // 2,000 answers of about 8 KiB each, far more than the socket buffers hold;
  // the 2,000 small requests themselves fit in them, so sending never blocks.
  constexpr int kRequests = 2'000;
  for (int i = 0; i < kRequests; ++i)
    ASSERT_TRUE(c->send(Request{rid(100 + i), session, req::ListLanes{std::nullopt, 200}}).ok());
  ASSERT_TRUE(cowboy::testing::eventually([&] { return broker->metrics().read_pauses > 0; }));
  for (int i = 0; i < kRequests; ++i) {
    auto f = next(*c);
    ASSERT_TRUE(std::holds_alternative<Response>(f)) << i << ": " << error_text(f);
    ASSERT_EQ(std::get<Response>(f).request_id, rid(100 + i));
  }
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

using namespace testing;
using GroupRequestTest = BrokerFixture;

GroupConfigV2 group_config(LaneId lane) { return cbqs::testing::valid_group_config(lane); }

TEST_F(GroupRequestTest, CreateGetUpdateDeleteOverTheWire) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(0x003f));
  auto lane = body<resp::LaneCreated>(request(*c, session, 1, req::CreateLane{}))->lane_id;
  auto created = request(*c, session, 2, req::CreateGroup{group_config(lane)});
  ASSERT_NE(body<resp::GroupCreated>(created), nullptr) << error_text(created);
  GroupId group_id = body<resp::GroupCreated>(created)->group_id;
  EXPECT_EQ(group_id, GroupId{1});
  auto got = request(*c, session, 3, req::GetGroup{group_id});
  ASSERT_NE(body<resp::Group>(got), nullptr);
  EXPECT_EQ(body<resp::Group>(got)->config.group_id, group_id);
  auto changed = body<resp::Group>(got)->config;
  changed.max_attempts = 7;
  EXPECT_EQ(body<resp::Group>(request(*c, session, 4, req::UpdateGroup{changed}))->config.max_attempts, 7);
  changed.start = StartAt{Sequence{1}};
  EXPECT_EQ(error_code(request(*c, session, 5, req::UpdateGroup{changed})), code(ErrorCode::kImmutableField));
  EXPECT_NE(body<resp::Ok>(request(*c, session, 6, req::DeleteGroup{group_id})), nullptr);
  EXPECT_EQ(error_code(request(*c, session, 7, req::GetGroup{group_id})), code(ErrorCode::kUnknownGroup));
  EXPECT_EQ(body<resp::GroupCreated>(request(*c, session, 8, req::CreateGroup{group_config(lane)}))->group_id, GroupId{2});
}

TEST_F(GroupRequestTest, ScopeRulesForGroups) {
  auto admin_c = connect();
  Bytes32 admin_session = open_session(*admin_c, grant(0x003f));
  auto lane = body<resp::LaneCreated>(request(*admin_c, admin_session, 1, req::CreateLane{}))->lane_id;
  auto group_id = body<resp::GroupCreated>(request(*admin_c, admin_session, 2, req::CreateGroup{group_config(lane)}))->group_id;

  auto c = connect();
  auto g = d->grant(0x003f, LaneScopeAny{}, 600'000, GroupScopeExact{group_id});
  Bytes32 session = open_session(*c, g);
  EXPECT_EQ(error_code(request(*c, session, 3, req::CreateGroup{group_config(lane)})), code(ErrorCode::kGroupScopeTooNarrow));
  EXPECT_NE(body<resp::Group>(request(*c, session, 4, req::GetGroup{group_id})), nullptr);
  EXPECT_EQ(error_code(request(*c, session, 5, req::GetGroup{GroupId{group_id.value + 1}})), code(ErrorCode::kGroupNotInScope));

  auto narrow = connect();
  Bytes32 narrow_session = open_session(*narrow, grant(0x003f, LaneScopeExact{LaneId{lane.value + 1}}));
  EXPECT_EQ(error_code(request(*narrow, narrow_session, 6, req::GetGroup{group_id})), code(ErrorCode::kLaneNotInScope));
  EXPECT_EQ(error_code(request(*narrow, narrow_session, 7, req::CreateGroup{group_config(lane)})),
            code(ErrorCode::kLaneNotInScope));
}

// --io-threads 2: the owners of two streams run on two stream threads, the
// connections stay on cbqs-io, and both streams serve appends and deliveries.
class StreamThreadsTest : public BrokerFixture {
 protected:
  testbed::DeploymentOptions options() override {
    testbed::DeploymentOptions o;
    o.io_threads = 2;
    o.streams = 2;
    return o;
  }
};

std::map<std::string, int> thread_names() {
  std::map<std::string, int> out;
  for (const auto& t : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(t.path() / "comm");
    std::string name;
    std::getline(in, name);
    ++out[name];
  }
  return out;
}

TEST_F(StreamThreadsTest, TwoStreamsServeFromTheirOwnThreads) {
  // Threads name themselves as they start.
  EXPECT_TRUE(cowboy::testing::eventually([] {
    auto names = thread_names();
    return names["cbqs-stream"] == 2 && names["cbqs-commit"] == 2 && names["cbqs-io"] == 1;
  }));
  ASSERT_EQ(d->stream_ids().size(), 2u);
  for (std::size_t s = 0; s < 2; ++s) {
    SCOPED_TRACE("stream " + std::to_string(s));
    auto c = connect();
    ASSERT_TRUE(c);
    Bytes32 session = open_session(*c, d->grant_on(d->stream_ids()[s], kAll));
    auto created = request(*c, session, 1, req::CreateLane{});
    ASSERT_TRUE(body<resp::LaneCreated>(created)) << error_text(created);
    const LaneId lane = body<resp::LaneCreated>(created)->lane_id;
    auto subscribed = request(*c, session, 2, req::Subscribe{SourceCursor{LaneScopeAny{}, StartHead{}}, 1 << 20});
    ASSERT_TRUE(body<resp::CursorProgress>(subscribed)) << error_text(subscribed);
    for (std::uint64_t n = 0; n < 3; ++n)
      ASSERT_TRUE(c->send(Request{rid(10 + n), session, req::Append{{lane, Bytes(4, static_cast<std::uint8_t>(n))}}}).ok());
    std::vector<std::uint64_t> appended, delivered;
    while (appended.size() < 3 || delivered.size() < 3) {
      auto f = next(*c);
      if (const auto* a = body<resp::Appended>(f)) appended.push_back(a->sequence.value);
      else if (const auto* del = std::get_if<Delivery>(&f)) {
        EXPECT_EQ(del->header.stream_id, d->stream_ids()[s]);
        delivered.push_back(del->sequence.value);
      } else if (!body<resp::CursorProgress>(f)) FAIL() << error_text(f);  // progress as the cursor catches up
    }
    EXPECT_EQ(appended, (std::vector<std::uint64_t>{1, 2, 3}));  // each stream numbers its own records
    EXPECT_EQ(delivered, appended);
  }
  auto m = broker->metrics();
  EXPECT_EQ(m.appends, 6u);
  ASSERT_EQ(m.streams.size(), 2u);
}

}  // namespace
}  // namespace cowboy::cbqs::broker
