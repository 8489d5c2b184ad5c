// §7 grant, proof and standing checks, in the seed's order, with its overflow-safe arithmetic.
#include "cbqs/broker/auth.h"

#include <gtest/gtest.h>

#include "cbqs/wire/ids.h"
#include "fakes.h"

namespace cowboy::cbqs::broker {
namespace {

using testing::seed;

class AuthTest : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kNow = 1'800'000'000'000;
  ChainView view;
  StreamGrantV2 grant;

  void SetUp() override {
    view.height = 500;
    view.chain_instance_id[0] = 0xc1;
    StreamRecordV2 s;
    s.chain_instance_id = view.chain_instance_id;
    s.stream_id[0] = 0x5e;
    s.admin_key = ed25519_public_key(seed(1));
    s.authorization_generation = 3;
    view.streams[s.stream_id] = s;
    grant.chain_instance_id = view.chain_instance_id;
    grant.stream_id = s.stream_id;
    grant.authorization_generation = 3;
    grant.holder_signing_key = ed25519_public_key(seed(2));
    grant.verbs = verb::kAppend | verb::kReplay;
    grant.lane_scope = LaneScopeAny{};
    grant.group_scope = GroupScopeAny{};
    grant.not_before_ms = kNow - 1'000;
    grant.expires_at_ms = kNow + 60'000;
    sign();
  }
  void sign() { sign_grant(grant, seed(1)); }
  std::optional<ErrorCode> check() { return check_grant(grant, view, kNow); }
};

TEST_F(AuthTest, AValidGrantPasses) { EXPECT_EQ(check(), std::nullopt); }

TEST_F(AuthTest, Check1ChainAndStream) {
  grant.chain_instance_id[0] = 0;
  sign();
  EXPECT_EQ(check(), ErrorCode::kWrongChain);
  SetUp();
  grant.stream_id[0] = 0;
  sign();
  EXPECT_EQ(check(), ErrorCode::kUnknownStream);
  SetUp();
  view.streams.begin()->second.status = StreamStatusV2::kClosed;
  EXPECT_EQ(check(), ErrorCode::kStreamClosed);
}

TEST_F(AuthTest, Check2Generation) {
  view.streams.begin()->second.authorization_generation = 4;
  EXPECT_EQ(check(), ErrorCode::kGenerationMismatch);
}

TEST_F(AuthTest, Check3AdminSignature) {
  sign_grant(grant, seed(9));
  EXPECT_EQ(check(), ErrorCode::kBadGrantSignature);
}

TEST_F(AuthTest, Check4SkewAppliesToNotBeforeOnly) {
  grant.not_before_ms = kNow + 5'000;  // exactly the default skew
  sign();
  EXPECT_EQ(check(), std::nullopt);
  grant.not_before_ms = kNow + 5'001;
  sign();
  EXPECT_EQ(check(), ErrorCode::kGrantNotYetValid);
  SetUp();
  grant.expires_at_ms = kNow - 1;  // past its raw expiry: no skew admits it
  grant.not_before_ms = kNow - 10;
  sign();
  EXPECT_EQ(check(), ErrorCode::kGrantExpired);
  grant.expires_at_ms = kNow;  // now <= expires_at_ms
  sign();
  EXPECT_EQ(check(), std::nullopt);
}

TEST_F(AuthTest, Check4And5NeverOverflowOnPeerChosenExtremes) {
  grant.not_before_ms = 0;  // not_before - skew would underflow
  grant.expires_at_ms = UINT64_MAX;  // expires + skew would overflow
  sign();
  EXPECT_EQ(check(), ErrorCode::kGrantTtlExceeded);
  grant.not_before_ms = UINT64_MAX;
  grant.expires_at_ms = 0;
  sign();
  EXPECT_EQ(check(), ErrorCode::kGrantNotYetValid);
}

TEST_F(AuthTest, Check5OrderingBeforeSubtractionAndTheTtlCap) {
  grant.not_before_ms = kNow + 10;
  grant.expires_at_ms = kNow + 10;  // not_before == expires: refused before subtracting
  sign();
  EXPECT_EQ(check(), ErrorCode::kGrantTtlExceeded);
  grant.not_before_ms = kNow - 1'000;
  grant.expires_at_ms = grant.not_before_ms + view.params.max_grant_ttl_ms;
  sign();
  EXPECT_EQ(check(), std::nullopt);
  grant.expires_at_ms += 1;
  sign();
  EXPECT_EQ(check(), ErrorCode::kGrantTtlExceeded);
}

TEST_F(AuthTest, Check5LaneSetShape) {
  grant.lane_scope = LaneScopeSet{{LaneId{7}}};  // one element: Exact already says it
  sign();
  EXPECT_EQ(check(), ErrorCode::kInvalidLaneScope);
  grant.lane_scope = LaneScopeSet{{LaneId{9}, LaneId{7}}};
  sign();
  EXPECT_EQ(check(), ErrorCode::kInvalidLaneScope);
  grant.lane_scope = LaneScopeSet{{LaneId{7}, LaneId{7}}};
  sign();
  EXPECT_EQ(check(), ErrorCode::kInvalidLaneScope);
  grant.lane_scope = LaneScopeSet{{LaneId{7}, LaneId{9}}};
  sign();
  EXPECT_EQ(check(), std::nullopt);
}

TEST_F(AuthTest, Check6VerbBitsAboveSeven) {
  grant.verbs = 0x00ff;
  sign();
  EXPECT_EQ(check(), std::nullopt);
  grant.verbs = 0x0100;
  sign();
  EXPECT_EQ(check(), ErrorCode::kInvalidVerbs);
}

TEST_F(AuthTest, PrecedenceFollowsTheCheckOrder) {
  // Wrong generation AND bad signature AND expired: check 2 comes first.
  view.streams.begin()->second.authorization_generation = 4;
  grant.expires_at_ms = kNow - 1;
  sign_grant(grant, seed(9));
  EXPECT_EQ(check(), ErrorCode::kGenerationMismatch);
}

TEST_F(AuthTest, ProofChecks) {
  Bytes32 id = grant_id(grant);
  SessionProofV2 proof{grant.chain_instance_id, grant.stream_id, id, Bytes32{}, Bytes32{}, {}};
  sign_proof(proof, seed(2));
  EXPECT_EQ(check_proof(proof, grant, id), std::nullopt);
  auto other = proof;
  other.grant_id[0] ^= 1;
  sign_proof(other, seed(2));
  EXPECT_EQ(check_proof(other, grant, id), ErrorCode::kProofMismatch);
  sign_proof(proof, seed(3));  // not the holder
  EXPECT_EQ(check_proof(proof, grant, id), ErrorCode::kBadProofSignature);
}

TEST_F(AuthTest, StandingEndsOnRevocationRotationClosureAndExpiry) {
  SigningPublicKey admin = view.streams.begin()->second.admin_key;
  EXPECT_EQ(check_standing(grant, admin, view, kNow), std::nullopt);
  EXPECT_EQ(check_standing(grant, admin, view, grant.expires_at_ms + 1), ErrorCode::kGrantExpired);
  auto& s = view.streams.begin()->second;
  s.authorization_generation = 4;
  EXPECT_EQ(check_standing(grant, admin, view, kNow), ErrorCode::kGenerationMismatch);
  s.authorization_generation = 3;
  s.admin_key = ed25519_public_key(seed(7));
  EXPECT_EQ(check_standing(grant, admin, view, kNow), ErrorCode::kBadGrantSignature);
  s.status = StreamStatusV2::kClosed;
  EXPECT_EQ(check_standing(grant, admin, view, kNow), ErrorCode::kStreamClosed);
}

TEST(Scope, VerbsScopeAndIntersection) {
  EXPECT_EQ(required_verbs(req::Append{}), verb::kAppend);
  EXPECT_EQ(required_verbs(req::Subscribe{SourceCursor{}, 0}), verb::kReplay);
  EXPECT_EQ(required_verbs(req::Subscribe{SourceGroup{}, 0}), verb::kConsume);
  EXPECT_EQ(required_verbs(req::GetCheckpoint{}), verb::kConsume | verb::kReplay);
  EXPECT_EQ(required_verbs(req::ListLanes{}), 0);
  EXPECT_TRUE(lane_in_scope(LaneScopeSet{{LaneId{2}, LaneId{4}, LaneId{8}}}, LaneId{4}));
  EXPECT_FALSE(lane_in_scope(LaneScopeSet{{LaneId{2}, LaneId{4}, LaneId{8}}}, LaneId{5}));
  EXPECT_FALSE(lane_in_scope(LaneScopeExact{LaneId{3}}, LaneId{4}));
  EXPECT_FALSE(group_in_scope(GroupScopeExact{GroupId{1}}, GroupId{2}));
  EXPECT_EQ(intersect(LaneScopeAny{}, LaneScopeExact{LaneId{3}}), LaneScope{LaneScopeExact{LaneId{3}}});
  EXPECT_EQ(intersect(LaneScopeSet{{LaneId{1}, LaneId{2}, LaneId{3}}}, LaneScopeSet{{LaneId{2}, LaneId{3}, LaneId{4}}}),
            (LaneScope{LaneScopeSet{{LaneId{2}, LaneId{3}}}}));
  EXPECT_EQ(intersect(LaneScopeSet{{LaneId{1}, LaneId{2}}}, LaneScopeSet{{LaneId{2}, LaneId{5}}}), LaneScope{LaneScopeExact{LaneId{2}}});
  EXPECT_EQ(intersect(LaneScopeExact{LaneId{1}}, LaneScopeExact{LaneId{2}}), std::nullopt);
}

}  // namespace
}  // namespace cowboy::cbqs::broker
