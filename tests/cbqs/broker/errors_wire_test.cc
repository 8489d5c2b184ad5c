// Every §14 code a client can receive, produced over real wss://, and the
// corners docs/protocol.md decides for a second implementation: the shape of a
// Cursor's requested scope, request_id on decode errors, the connection after
// one, CursorProgress, GetCheckpoint's edges, AddCredit of 0, the upgrade path.
//
// kWireTests maps each code to the test (in this binary) that produces it over
// the wire; EveryCodeHasAWireTest fails when a code has no entry or names a
// test that does not exist.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "broker_fixture.h"
#include "cbqs/broker/auth.h"
#include "cbqs/broker/stream/state.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "common/bytes.h"
#include "group_config.h"

namespace cowboy::cbqs::broker {
namespace {

using namespace testing;
using cbqs::testing::valid_group_config;

struct WireTest {
  std::uint16_t code;
  const char* test;  // Suite.Name
};
constexpr WireTest kWireTests[] = {
    {100, "BrokerTest.BadInputGetsTypedErrorsAndTheConnectionKeepsWorking"},
    {101, "ErrorsWireTest.DecodeErrorsEchoTheRequestIdAndChangeNothingElse"},
    {102, "BrokerTest.AnOversizeFrameClosesOnlyItsConnection"},
    {200, "BrokerTest.ASessionIdNotOpenOnThisConnectionIsRefused"},
    {201, "BrokerTest.OpenSessionFloodsHitTheSessionLimit"},
    {202, "BrokerTest.AReplayedCompleteSessionOpensNothing"},
    {203, "ErrorsWireTest.HandshakeRefusals"},
    {204, "BrokerTest.ChainOutageRefusesNewSessionsButServesOpenOnes"},
    {205, "ErrorsWireTest.HandshakeRefusals"},
    {206, "ErrorsWireTest.HandshakeRefusals"},
    {300, "ErrorsWireTest.GrantRefusalsAtOpenSession"},
    {301, "ErrorsWireTest.GrantRefusalsAtOpenSession"},
    {302, "ErrorsWireTest.AClosedStreamRefusesOpenSession"},
    {303, "ErrorsWireTest.GrantRefusalsAtOpenSession"},
    {304, "ErrorsWireTest.GrantRefusalsAtOpenSession"},
    {305, "ErrorsWireTest.GrantRefusalsAtOpenSession"},
    {306, "ErrorsWireTest.GrantRefusalsAtOpenSession"},
    {307, "ErrorsWireTest.GrantRefusalsAtOpenSession"},
    {308, "ErrorsWireTest.RequestedCursorScopeShapes"},
    {309, "ErrorsWireTest.GrantRefusalsAtOpenSession"},
    {400, "BrokerTest.VerbsAndScopeAreEnforced"},
    {401, "BrokerTest.VerbsAndScopeAreEnforced"},
    {402, "GroupRequestTest.ScopeRulesForGroups"},
    {403, "BrokerTest.VerbsAndScopeAreEnforced"},
    {404, "GroupRequestTest.ScopeRulesForGroups"},
    {405, "BrokerTest.AnAccountSuspendedMidSessionStopsAppendsAtOnce"},
    {406, "GroupTest.CompetingHoldersGetTheirOwnLeasesAndOnlyTheHolderMayAct"},
    {500, "ErrorsWireTest.StatelessFieldChecks"},
    {501, "ErrorsWireTest.LaneStates"},
    {502, "ErrorsWireTest.LaneStates"},
    {503, "ErrorsWireLimitsTest.LaneAndGroupLimits"},
    {504, "ErrorsWireStoreTest.ARoomLaneIdHeldByAPlainLaneIsAConflict"},
    {505, "GroupTest.DeletingAGroupEndsItsSubscriptionsWithUnknownGroup"},
    {506, "ErrorsWireLimitsTest.LaneAndGroupLimits"},
    {507, "ErrorsWireTest.StatelessFieldChecks"},
    {508, "GroupRequestTest.CreateGetUpdateDeleteOverTheWire"},
    {509, "ErrorsWireTest.StatelessFieldChecks"},
    {510, "ErrorsWireTest.StatelessFieldChecks"},
    {511, "BrokerTest.CreditShortThenDeliveryResumesOnCredit"},
    {512, "BrokerFlowTest.CreditAboveTheCapAndDuplicateSubscriptionIdsAreRefused"},
    {513, "GroupTest.CompetingHoldersGetTheirOwnLeasesAndOnlyTheHolderMayAct"},
    {514, "CbqsdCrash.LeasesOutstandingAtSigkillAreDeliveredAgainWithTheirAttemptCounted"},
    {515, "ErrorsWireTest.CheckpointEdges"},
    {516, "ErrorsWireTest.CheckpointEdges"},
    {600, "ErrorsWireTest.AppendLimitsOfTheGrant"},
    {601, "ErrorsWireTest.AppendLimitsOfTheGrant"},
    {602, "GroupTest.CompetingHoldersGetTheirOwnLeasesAndOnlyTheHolderMayAct"},
    {603, "BrokerFlowTest.CreditAboveTheCapAndDuplicateSubscriptionIdsAreRefused"},
    {604, "BrokerFlowTest.AStalledSubscriptionIsClosedAsASlowConsumer"},
    {700, "FailingStoreTest.AFailedSyncAcknowledgesNothingAndTheBrokerSaysWhy"},
    {701, "ErrorsWireStoreTest.AnUnreadableReceiptIsInternal"},
};

TEST(ErrorsWire, EveryCodeHasAWireTest) {
  std::set<std::string> registered;
  const auto* unit = ::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit->total_test_suite_count(); ++i) {
    const auto* suite = unit->GetTestSuite(i);
    for (int j = 0; j < suite->total_test_count(); ++j)
      registered.insert(std::string(suite->name()) + "." + suite->GetTestInfo(j)->name());
  }
  std::set<std::uint16_t> mapped;
  for (const auto& w : kWireTests) {
    mapped.insert(w.code);
    EXPECT_TRUE(registered.contains(w.test)) << w.code << " names a missing test " << w.test;
  }
#define X(num, name, text) EXPECT_TRUE(mapped.contains(num)) << #name " has no wire test";
  CBQS_ERROR_CODES(X)
#undef X
  for (std::uint16_t c : mapped) EXPECT_TRUE(error_from_u16(c)) << c << " is not a code";
}

constexpr std::uint16_t kAll = verb::kAppend | verb::kConsume | verb::kReplay | verb::kManageLanes |
                               verb::kManageGroups | verb::kManageSettings;

class ErrorsWireTest : public BrokerFixture {
 protected:
  StreamGrantV2 resigned(StreamGrantV2 g) {
    sign_grant(g, d->stream_admin());
    return g;
  }
  std::optional<std::uint16_t> open_error(const StreamGrantV2& g) {
    auto c = connect();
    EXPECT_TRUE(c->send(OpenSession{rid(1), g}).ok());
    return error_code(next(*c));
  }
  std::uint64_t append(client::WssConnection& c, const Bytes32& session, LaneId lane, std::string_view text) {
    auto r = request(c, session, next_id++, req::Append{{lane, Bytes(text.begin(), text.end())}});
    EXPECT_NE(body<resp::Appended>(r), nullptr) << error_text(r);
    return body<resp::Appended>(r) ? body<resp::Appended>(r)->sequence.value : 0;
  }
  LaneId create_lane(client::WssConnection& c, const Bytes32& session) {
    auto r = request(c, session, next_id++, req::CreateLane{});
    EXPECT_NE(body<resp::LaneCreated>(r), nullptr) << error_text(r);
    return body<resp::LaneCreated>(r) ? body<resp::LaneCreated>(r)->lane_id : LaneId{0};
  }

  /// A replay: the Subscribe answer, the sequences delivered, the catch-up progress.
  struct Replay {
    std::optional<std::uint16_t> error;
    std::uint64_t first_progress = 0, progress_lane = 0, caught_up = 0;
    std::vector<std::uint64_t> delivered;
  };
  Replay replay(client::WssConnection& c, const Bytes32& session, LaneScope scope, StartPosition start = StartAt{Sequence{1}}) {
    Replay out;
    std::uint64_t id = next_id++;
    auto first = request(c, session, id, req::Subscribe{SourceCursor{std::move(scope), start}, 1 << 20});
    if ((out.error = error_code(first))) return out;
    const auto* p = body<resp::CursorProgress>(first);
    EXPECT_NE(p, nullptr) << error_text(first);
    if (!p) return out;
    out.first_progress = p->scanned_through.value;
    out.progress_lane = p->lane_id.value;
    while (true) {
      auto f = next(c);
      if (const auto* d = std::get_if<Delivery>(&f)) {
        out.delivered.push_back(d->sequence.value);
      } else if (const auto* caught = body<resp::CursorProgress>(f)) {
        out.caught_up = caught->scanned_through.value;
        return out;
      } else {
        ADD_FAILURE() << "unexpected " << error_text(f);
        return out;
      }
    }
  }

  std::uint64_t next_id = 100;
};

TEST_F(ErrorsWireTest, RequestedCursorScopeShapes) {
  // The request the issue traced, byte for byte: Subscribe, Cursor, Set[2, 1], At(1), 1 GiB.
  CbqsRequestBodyV2 traced = req::Subscribe{SourceCursor{LaneScopeSet{{LaneId{2}, LaneId{1}}}, StartAt{Sequence{1}}}, 0x40000000};
  EXPECT_EQ(to_hex(encode(traced)), "0c0103000000020000000000000002000000000000000102000000000000000100000000"
                                    "40000000");

  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  LaneId one = create_lane(*c, session), two = create_lane(*c, session);
  ASSERT_EQ(one, LaneId{1});
  ASSERT_EQ(two, LaneId{2});
  append(*c, session, LaneId{1}, "a");
  append(*c, session, LaneId{2}, "b");
  append(*c, session, LaneId{1}, "c");

  // Refused shapes: unsorted (the bug: it replayed nothing), duplicate, one element, empty, lane 0.
  for (LaneScope bad : {LaneScope{LaneScopeSet{{LaneId{2}, LaneId{1}}}}, LaneScope{LaneScopeSet{{LaneId{1}, LaneId{1}}}},
                        LaneScope{LaneScopeSet{{LaneId{1}}}}, LaneScope{LaneScopeSet{{}}},
                        LaneScope{LaneScopeSet{{LaneId{0}, LaneId{1}}}}, LaneScope{LaneScopeExact{LaneId{0}}}})
    EXPECT_EQ(replay(*c, session, bad).error, code(ErrorCode::kInvalidLaneScope)) << to_hex(encode(bad));

  auto both = replay(*c, session, LaneScopeSet{{LaneId{1}, LaneId{2}}});
  EXPECT_EQ(both.delivered, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(both.progress_lane, 0u);
  EXPECT_EQ(both.caught_up, 3u);
  // A lane that does not exist is accepted and contributes nothing.
  auto with_missing = replay(*c, session, LaneScopeSet{{LaneId{1}, LaneId{99}}});
  EXPECT_EQ(with_missing.delivered, (std::vector<std::uint64_t>{1, 3}));
  auto missing = replay(*c, session, LaneScopeExact{LaneId{99}});
  EXPECT_EQ(missing.error, std::nullopt);
  EXPECT_EQ(missing.progress_lane, 99u);
  EXPECT_TRUE(missing.delivered.empty());

  // Under an Exact(1) grant: the shape is checked before the intersection,
  // and an empty intersection is LaneNotInScope.
  Bytes32 narrow = open_session(*c, grant(verb::kReplay, LaneScopeExact{LaneId{1}}));
  EXPECT_EQ(replay(*c, narrow, LaneScopeSet{{LaneId{2}, LaneId{1}}}).error, code(ErrorCode::kInvalidLaneScope));
  EXPECT_EQ(replay(*c, narrow, LaneScopeSet{{LaneId{2}, LaneId{3}}}).error, code(ErrorCode::kLaneNotInScope));
  auto intersected = replay(*c, narrow, LaneScopeSet{{LaneId{1}, LaneId{2}}});
  EXPECT_EQ(intersected.delivered, (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(intersected.progress_lane, 1u);  // the effective scope is Exact(1)
}

TEST_F(ErrorsWireTest, CursorProgressNeverGoesBackwards) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  LaneId lane = create_lane(*c, session);
  append(*c, session, lane, "a");
  append(*c, session, lane, "b");
  auto past = replay(*c, session, LaneScopeAny{}, StartAt{Sequence{10}});
  EXPECT_EQ(past.first_progress, 9u);
  EXPECT_EQ(past.caught_up, 9u);  // was 2: the head, behind the first
  auto head = replay(*c, session, LaneScopeAny{}, StartHead{});
  EXPECT_EQ(head.first_progress, 2u);
  EXPECT_EQ(head.caught_up, 2u);
  auto from_one = replay(*c, session, LaneScopeAny{}, StartAt{Sequence{1}});
  EXPECT_EQ(from_one.first_progress, 0u);
  EXPECT_EQ(from_one.caught_up, 2u);
}

TEST_F(ErrorsWireTest, DecodeErrorsEchoTheRequestIdAndChangeNothingElse) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  auto g = grant(kAll);
  ASSERT_TRUE(c->send(OpenSession{rid(2), g}).ok());  // a pending pair, kept across the bad frames below
  auto challenge = std::get<SessionChallenge>(next(*c));

  auto refused = [&](Bytes frame) {
    EXPECT_TRUE(c->send_raw(frame).ok());
    auto f = next(*c);
    const auto* e = std::get_if<ErrorFrame>(&f);
    EXPECT_NE(e, nullptr) << error_text(f);
    return e ? std::make_pair(std::optional<std::uint16_t>(e->code), e->request_id)
             : std::make_pair(std::optional<std::uint16_t>{}, std::optional<Bytes32>{});
  };
  Bytes cut = encode(CbqsClientFrameV2{Request{rid(5), session, req::GetGroup{GroupId{1}}}});
  cut.pop_back();
  EXPECT_EQ(refused(cut), std::make_pair(std::optional(code(ErrorCode::kMalformed)), std::optional(rid(5))));
  Bytes trailing = encode(CbqsClientFrameV2{Request{rid(6), session, req::GetSettings{}}});
  trailing.push_back(0);
  EXPECT_EQ(refused(trailing), std::make_pair(std::optional(code(ErrorCode::kMalformed)), std::optional(rid(6))));
  Bytes grant_v3 = encode(CbqsClientFrameV2{OpenSession{rid(7), g}});
  ASSERT_EQ(grant_v3[2 + 32], 2);  // the grant's own version byte
  grant_v3[2 + 32] = 3;
  EXPECT_EQ(refused(grant_v3),
            std::make_pair(std::optional(code(ErrorCode::kUnsupportedVersion)), std::optional(rid(7))));
  // Not read far enough: another frame version, an unknown variant, a short frame.
  Bytes v3 = encode(CbqsClientFrameV2{Request{rid(8), session, req::GetSettings{}}});
  v3[0] = 3;
  EXPECT_EQ(refused(v3), std::make_pair(std::optional(code(ErrorCode::kUnsupportedVersion)), std::optional<Bytes32>{}));
  Bytes variant = encode(CbqsClientFrameV2{Request{rid(9), session, req::GetSettings{}}});
  variant[1] = 4;
  EXPECT_EQ(refused(variant), std::make_pair(std::optional(code(ErrorCode::kMalformed)), std::optional<Bytes32>{}));
  Bytes short_frame = {2, 3};
  short_frame.resize(33, 0xab);
  EXPECT_EQ(refused(short_frame), std::make_pair(std::optional(code(ErrorCode::kMalformed)), std::optional<Bytes32>{}));

  // The connection, its session and its pending pair carry on.
  EXPECT_NE(body<resp::Settings>(request(*c, session, 10, req::GetSettings{})), nullptr);
  SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), challenge.session_id, challenge.challenge, {}};
  sign_proof(proof, holder);
  ASSERT_TRUE(c->send(CompleteSession{rid(11), proof}).ok());
  EXPECT_TRUE(std::holds_alternative<SessionOpened>(next(*c)));
}

TEST_F(ErrorsWireTest, AnyUpgradePathReachesTheBroker) {
  for (const char* path : {"/", "/cbqs", "/some/other/path?x=1"}) {
    auto c = connect(path);
    ASSERT_NE(c, nullptr) << path;
    EXPECT_NE(open_session(*c, grant(kAll)), Bytes32{}) << path;
  }
}

TEST_F(ErrorsWireTest, AddCreditOfZero) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  LaneId lane = create_lane(*c, session);
  append(*c, session, lane, "0123456789");
  ASSERT_NE(body<resp::CursorProgress>(request(*c, session, 30, req::Subscribe{SourceCursor{LaneScopeAny{}, StartAt{Sequence{1}}}, 0})),
            nullptr);
  EXPECT_TRUE(std::holds_alternative<DeliveryState>(next(*c)));  // CreditShort
  auto zero = request(*c, session, 31, req::AddCredit{rid(30), 0});
  EXPECT_NE(body<resp::Ok>(zero), nullptr) << error_text(zero);
  auto again = next(*c);  // re-armed: still short
  ASSERT_TRUE(std::holds_alternative<DeliveryState>(again)) << error_text(again);
  EXPECT_EQ(std::get<CreditShort>(std::get<DeliveryState>(again).state).needed_bytes, 130u);
  EXPECT_FALSE(c->receive(std::chrono::milliseconds(100)).ok());  // and no Delivery
}

TEST_F(ErrorsWireTest, CheckpointEdges) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  auto checkpoint = [&](std::optional<std::uint64_t> s) {
    return request(*c, session, next_id++, req::GetCheckpoint{s ? std::optional(Sequence{*s}) : std::nullopt});
  };
  EXPECT_EQ(error_code(checkpoint(std::nullopt)), code(ErrorCode::kCheckpointNotFound));  // no receipt yet
  EXPECT_EQ(error_code(checkpoint(0)), code(ErrorCode::kSequenceNotRetained));
  EXPECT_EQ(error_code(checkpoint(1)), code(ErrorCode::kCheckpointNotFound));
  append(*c, session, create_lane(*c, session), "x");
  auto first = checkpoint(1);
  ASSERT_NE(body<resp::Checkpoint>(first), nullptr) << error_text(first);
  EXPECT_EQ(body<resp::Checkpoint>(first)->receipt.last_sequence, Sequence{1});
  EXPECT_EQ(error_code(checkpoint(0)), code(ErrorCode::kSequenceNotRetained));
  EXPECT_EQ(error_code(checkpoint(2)), code(ErrorCode::kCheckpointNotFound));
}

TEST_F(ErrorsWireTest, HandshakeRefusals) {
  auto g = grant(kAll);
  auto c = connect();
  open_session(*c, g);  // so that the 1 ms handshake timeout below does not close the connection itself
  auto challenge_for = [&](std::uint64_t id) {
    EXPECT_TRUE(c->send(OpenSession{rid(id), g}).ok());
    auto ch = std::get<SessionChallenge>(next(*c));
    return SessionProofV2{g.chain_instance_id, g.stream_id, grant_id(g), ch.session_id, ch.challenge, {}};
  };
  auto complete = [&](std::uint64_t id, const SessionProofV2& p) {
    EXPECT_TRUE(c->send(CompleteSession{rid(id), p}).ok());
    return error_code(next(*c));
  };
  SessionProofV2 mismatch = challenge_for(1);
  mismatch.stream_id[0] ^= 1;
  sign_proof(mismatch, holder);
  EXPECT_EQ(complete(2, mismatch), code(ErrorCode::kProofMismatch));
  SessionProofV2 forged = challenge_for(3);
  sign_proof(forged, d->stream_admin());  // not the holder key
  EXPECT_EQ(complete(4, forged), code(ErrorCode::kBadProofSignature));

  ASSERT_TRUE(set_param("cbqs.session_handshake_timeout_ms", 1));
  await_refresh();
  SessionProofV2 late = challenge_for(5);
  sign_proof(late, holder);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(complete(6, late), code(ErrorCode::kChallengeExpired));
}

TEST_F(ErrorsWireTest, GrantRefusalsAtOpenSession) {
  const std::uint64_t now = clock.now_ms();
  auto mutated = [&](auto change) {
    StreamGrantV2 g = grant(kAll);
    change(g);
    return resigned(g);
  };
  EXPECT_EQ(open_error(mutated([](auto& g) { g.chain_instance_id[0] ^= 1; })), code(ErrorCode::kWrongChain));
  EXPECT_EQ(open_error(mutated([](auto& g) { g.stream_id[0] ^= 1; })), code(ErrorCode::kUnknownStream));
  EXPECT_EQ(open_error(mutated([](auto& g) { ++g.authorization_generation; })), code(ErrorCode::kGenerationMismatch));
  StreamGrantV2 wrong_signer = grant(kAll);
  sign_grant(wrong_signer, holder);
  EXPECT_EQ(open_error(wrong_signer), code(ErrorCode::kBadGrantSignature));
  EXPECT_EQ(open_error(mutated([&](auto& g) {
              g.not_before_ms = now + 3'600'000;
              g.expires_at_ms = now + 7'200'000;
            })),
            code(ErrorCode::kGrantNotYetValid));
  EXPECT_EQ(open_error(mutated([&](auto& g) {
              g.not_before_ms = now - 7'200'000;
              g.expires_at_ms = now - 3'600'000;
            })),
            code(ErrorCode::kGrantExpired));
  EXPECT_EQ(open_error(mutated([&](auto& g) {
              g.not_before_ms = now - 60'000;
              g.expires_at_ms = g.not_before_ms + Params{}.max_grant_ttl_ms + 1;
            })),
            code(ErrorCode::kGrantTtlExceeded));
  EXPECT_EQ(open_error(mutated([](auto& g) { g.lane_scope = LaneScopeSet{{LaneId{2}, LaneId{1}}}; })),
            code(ErrorCode::kInvalidLaneScope));
  EXPECT_EQ(open_error(mutated([](auto& g) { g.verbs = 0x0100; })), code(ErrorCode::kInvalidVerbs));
}

TEST_F(ErrorsWireTest, AClosedStreamRefusesOpenSession) {
  ASSERT_TRUE(owner->send_instruction(CloseStreamV2{stream_id})->ok());
  await_refresh();
  EXPECT_EQ(open_error(grant(kAll)), code(ErrorCode::kStreamClosed));
}

TEST_F(ErrorsWireTest, StatelessFieldChecks) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  LaneId lane = create_lane(*c, session);
  GroupConfigV2 numbered = valid_group_config(lane);
  numbered.group_id = GroupId{1};
  EXPECT_EQ(error_code(request(*c, session, 1, req::CreateGroup{numbered})), code(ErrorCode::kInvalidRequest));
  GroupConfigV2 zero = valid_group_config(lane);
  zero.visibility_timeout_ms = 0;
  EXPECT_EQ(error_code(request(*c, session, 2, req::CreateGroup{zero})), code(ErrorCode::kInvalidGroupConfig));
  EXPECT_EQ(error_code(request(*c, session, 3, req::UpdateSettings{StreamSettingsV2{}})),
            code(ErrorCode::kInvalidSettings));
  EXPECT_EQ(error_code(request(*c, session, 4, req::ListLanes{std::nullopt, 0})), code(ErrorCode::kInvalidPageLimit));
}

TEST_F(ErrorsWireTest, LaneStates) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  EXPECT_EQ(error_code(request(*c, session, 1, req::Append{{LaneId{42}, Bytes{1}}})), code(ErrorCode::kUnknownLane));
  LaneId lane = create_lane(*c, session);
  EXPECT_NE(body<resp::Ok>(request(*c, session, 2, req::CloseLane{lane})), nullptr);
  EXPECT_EQ(error_code(request(*c, session, 3, req::Append{{lane, Bytes{1}}})), code(ErrorCode::kLaneClosed));
}

TEST_F(ErrorsWireTest, AppendLimitsOfTheGrant) {
  auto c = connect();
  StreamGrantV2 small = grant(kAll);
  small.max_message_bytes = 16;
  small.max_append_bytes_per_sec = 64;  // a bucket of one second: 64 bytes of canonical(AppendRequestV2)
  Bytes32 session = open_session(*c, resigned(small));
  LaneId lane = create_lane(*c, session);
  EXPECT_EQ(error_code(request(*c, session, 1, req::Append{{lane, Bytes(17, 'x')}})), code(ErrorCode::kMessageTooLarge));
  EXPECT_NE(body<resp::Appended>(request(*c, session, 2, req::Append{{lane, Bytes(16, 'x')}})), nullptr);  // 28 bytes
  EXPECT_NE(body<resp::Appended>(request(*c, session, 3, req::Append{{lane, Bytes(16, 'x')}})), nullptr);  // 56
  auto limited = request(*c, session, 4, req::Append{{lane, Bytes(16, 'x')}});
  ASSERT_EQ(error_code(limited), code(ErrorCode::kRateLimited)) << error_text(limited);
  const auto& details = std::get<ErrorFrame>(limited).details;
  ASSERT_EQ(details.size(), 8u);  // u64 BE milliseconds to wait
  std::uint64_t wait = 0;
  for (auto b : details) wait = wait << 8 | b;
  EXPECT_GE(wait, 1u);
  EXPECT_LE(wait, 1'000u);
}

class ErrorsWireLimitsTest : public ErrorsWireTest {
 protected:
  testbed::DeploymentOptions options() override {
    testbed::DeploymentOptions o;
    o.parameters = {{"cbqs.max_lanes_per_stream", 1}, {"cbqs.max_groups_per_stream", 1}};
    return o;
  }
};

TEST_F(ErrorsWireLimitsTest, LaneAndGroupLimits) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  LaneId lane = create_lane(*c, session);
  EXPECT_EQ(error_code(request(*c, session, 1, req::CreateLane{})), code(ErrorCode::kLaneLimit));
  EXPECT_NE(body<resp::GroupCreated>(request(*c, session, 2, req::CreateGroup{valid_group_config(lane)})), nullptr);
  EXPECT_EQ(error_code(request(*c, session, 3, req::CreateGroup{valid_group_config(lane)})), code(ErrorCode::kGroupLimit));
}

// Two codes no honest request can reach without a fault: a 2^-64 collision of
// room-lane ids and an undecodable stored receipt. The fault is planted in the
// broker's store, then the request goes over the wire as usual.
class ErrorsWireStoreTest : public ErrorsWireTest {
 protected:
  testbed::DeploymentOptions options() override {
    testbed::DeploymentOptions o;
    o.memory_store = true;
    return o;
  }
  /// Writes straight into the store, as a damaged or foreign store would hold it.
  template <typename F>
  void plant(F put) {
    store::WriteBatch b;
    put(StreamLayout(stream_id), b);
    ASSERT_TRUE(memory->write(b, store::Sync::kYes).ok());
  }
};

TEST_F(ErrorsWireStoreTest, ARoomLaneIdHeldByAPlainLaneIsAConflict) {
  RoomLaneV2 room = RoomMessages{Bytes32{0x42}};
  LaneId id = room_lane_id(room);
  // A plain lane (no room commitment) at the room's id, before the stream is loaded.
  plant([&](const StreamLayout& layout, store::WriteBatch& b) { layout.put_lane(b, id, StoredLane{}); });
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  EXPECT_EQ(error_code(request(*c, session, 1, req::CreateLane{room})), code(ErrorCode::kLaneIdConflict));
}

TEST_F(ErrorsWireStoreTest, AnUnreadableReceiptIsInternal) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(kAll));
  std::uint64_t seq = append(*c, session, create_lane(*c, session), "x");
  plant([&](const StreamLayout& layout, store::WriteBatch& b) { layout.put_receipt(b, Sequence{seq}, as_bytes("not a receipt")); });
  EXPECT_EQ(error_code(request(*c, session, 1, req::GetCheckpoint{})), code(ErrorCode::kInternal));
}

}  // namespace
}  // namespace cowboy::cbqs::broker
