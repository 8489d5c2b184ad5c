// transitd in-process over real HTTP on 127.0.0.1: grants and identity,
// sequences and exact retries, typed rejections with their statuses, the
// X-Transit-Control rules, admission limits, and refusals that come before any
// signature check and leave the state as it was.
#include <gtest/gtest.h>

#include <thread>

#include "node_fixture.h"

namespace cowboy::transit {
namespace {

using testing::key_of;
using testing::replace;
using testing::sample_genesis;
using testing::seed_of;

TEST_F(NodeTest, RootCreatesAPrincipalWhoseIdentityIsReadOnly) {
  start();
  auto client = root();
  auto receipt = client.submit(create(2, 100));
  ASSERT_TRUE(receipt.ok()) << receipt.error().message;
  EXPECT_EQ(receipt->position, Position{1});
  EXPECT_EQ(receipt->sequence, 1u);
  EXPECT_EQ(receipt->accepted_at_ms, TrustedMs{1'800'000'000'000});
  const auto& created = std::get<PrincipalCreated>(receipt->outcome);
  EXPECT_EQ(created.principal, PrincipalId{2});
  EXPECT_EQ(created.policy_revision, 2u);

  Client alice(options(2, 100));
  auto me = alice.identity();
  ASSERT_TRUE(me.ok()) << me.error().message;
  EXPECT_EQ(me->principal, PrincipalId{2});
  EXPECT_EQ(me->permissions.bits, kReadOnly);  // exactly read-only: inspect + read
  EXPECT_EQ(me->pid_scope, std::nullopt);
  EXPECT_EQ(me->policy_revision, 2u);
  EXPECT_EQ(alice.last_position(), Position{1});

  // Without realm_control alice administers nothing, and nothing changes.
  auto denied = alice.submit(CreateRole{{"ops"}, std::nullopt});
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().rejection->code, RejectionCode::kDenied);
  EXPECT_EQ(denied.error().rejection->reason, Reason::kNotPermitted);
  EXPECT_EQ(position(), Position{1});
}

TEST_F(NodeTest, GrantsBindingsAndRevocationsChangeDecisionsAndTheRevision) {
  start();
  auto client = root();
  ASSERT_TRUE(client.submit(create(2, 100, kInspect)).ok());
  auto role = client.submit(CreateRole{{"writers"}, 2});
  ASSERT_TRUE(role.ok()) << role.error().message;
  const Id writers = std::get<RoleCreated>(role->outcome).role;
  auto granted = client.submit(Grant{writers, PidScope{Pid{7}}, Permissions{kWrite | kSend}, 3});
  ASSERT_TRUE(granted.ok()) << granted.error().message;
  const Id grant = std::get<Granted>(granted->outcome).grant;

  auto before = client.decision(PrincipalId{2}, PidScope{Pid{7}}, Permissions{kWrite});
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(before->allowed);
  ASSERT_TRUE(client.submit(BindCredential{PrincipalId{2}, writers, std::nullopt}).ok());
  auto bound = client.decision(PrincipalId{2}, PidScope{Pid{7}}, Permissions{kWrite});
  ASSERT_TRUE(bound.ok());
  EXPECT_TRUE(bound->allowed);
  EXPECT_FALSE(client.decision(PrincipalId{2}, PidScope{Pid{8}}, Permissions{kWrite})->allowed);  // another PID
  // Coarse identity bits are realm-scope only: the PID grant does not show there.
  EXPECT_EQ(Client(options(2, 100)).identity()->permissions.bits, kInspect);

  ASSERT_TRUE(client.submit(RevokeGrant{grant, std::nullopt}).ok());
  auto revoked = client.decision(PrincipalId{2}, PidScope{Pid{7}}, Permissions{kWrite});
  EXPECT_FALSE(revoked->allowed);
  EXPECT_EQ(revoked->policy_revision, 6u);

  // Administration is revision-checked: a stale expectation is a conflict and changes nothing.
  auto stale = client.submit(CreateRole{{"late"}, 3});
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().rejection->code, RejectionCode::kConflict);
  EXPECT_EQ(stale.error().rejection->reason, Reason::kStaleRevision);
  EXPECT_EQ(client.identity()->policy_revision, 6u);
}

TEST_F(NodeTest, ASubjectIsNeverAllocatedTwiceEvenAfterRevocation) {
  start();
  auto client = root();
  ASSERT_TRUE(client.submit(create(2, 100)).ok());
  ASSERT_TRUE(client.submit(RevokePrincipal{PrincipalId{2}, std::nullopt}).ok());
  auto again = client.submit(create(2, 101));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().rejection->code, RejectionCode::kConflict);
  EXPECT_EQ(again.error().rejection->reason, Reason::kSubjectTaken);
  // The revoked principal can no longer sign anything.
  auto gone = Client(options(2, 100)).identity();
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().rejection->code, RejectionCode::kDenied);
  auto root_revoke = client.submit(RevokePrincipal{PrincipalId{1}, std::nullopt});
  ASSERT_FALSE(root_revoke.ok());
  EXPECT_EQ(root_revoke.error().rejection->code, RejectionCode::kInvalidProposal);
}

TEST_F(NodeTest, AnExactRetryReturnsTheOriginalReceiptAndAnotherBodyIsAConflict) {
  start();
  Client client = root();
  const SignedRequest first = sign(client.build(create(2, 100), 1), seed_of(0));
  auto receipt = client.resubmit(first);
  ASSERT_TRUE(receipt.ok());
  ASSERT_TRUE(client.submit(create(3, 101)).ok());  // position 2

  auto retry = client.resubmit(first);
  ASSERT_TRUE(retry.ok()) << retry.error().message;
  EXPECT_EQ(to_json(*retry), to_json(*receipt));  // byte for byte, the original

  const SignedRequest other = sign(client.build(create(4, 102), 1), seed_of(0));
  auto conflict = post("/v1/command", to_json(other));
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(rejection_of(conflict).reason, Reason::kSequenceReused);
  const SignedRequest gap = sign(client.build(create(4, 102), 9), seed_of(0));
  auto skipped = post("/v1/command", to_json(gap));
  EXPECT_EQ(skipped.status, 409);
  EXPECT_EQ(rejection_of(skipped).reason, Reason::kSequenceGap);
  EXPECT_EQ(position(), Position{2});

  // Also after a restart: the receipt is read back from the journal.
  restart();
  Client again = root();
  auto after = again.resubmit(first);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(to_json(*after), to_json(*receipt));
}

TEST_F(NodeTest, RefusalsComeBeforeTheSignatureCheckAndChangeNothing) {
  start();
  Client client = root();
  ASSERT_TRUE(client.submit(create(2, 100)).ok());
  // A request signed by nobody: every decoding rule is reported before "bad_signature".
  SignedRequest forged = sign(client.build(create(3, 101), 2), seed_of(55));
  const std::string text = to_json(forged);
  struct Case {
    std::string body;
    int status;
    Reason reason;
  };
  const std::vector<Case> cases = {
      {replace(text, R"("version":1)", R"("version":2)"), 400, Reason::kUnknownVersion},
      {replace(text, "\"definition\":\"" + definition() + "\",", ""), 400, Reason::kMissingDefinition},
      {replace(text, definition(), "transit.v1:" + std::string(64, '0')), 400, Reason::kForeignDefinition},
      {replace(text, R"("sequence":2)", R"("sequence":9007199254740992)"), 400, Reason::kIntegerTooLarge},
      {replace(text, R"("sequence":2)", R"("sequence":2.5)"), 400, Reason::kNotInteger},
      {replace(text, R"("sequence":2,)", R"("sequence":2,"sequence":2,)"), 400, Reason::kDuplicateKey},
      {replace(text, R"("sequence":2,)", R"("sequence":2,"extra":true,)"), 400, Reason::kUnknownField},
      {replace(text, R"("sequence":2)", R"("sequence":0)"), 400, Reason::kZeroSequence},
      {replace(text, R"("realm":"dev")", R"("realm":"prod")"), 400, Reason::kForeignRealm},
      {text + " ", 400, Reason::kNonCanonical},
      {text + "\n", 400, Reason::kUnexpectedBlocks},  // a newline starts block bodies, which only a turn carries
      {std::string(kMaxEnvelopeBytes + 1, ' '), 413, Reason::kTooLarge},
      {replace(text, R"("principal":1,"sequence")", R"("principal":77,"sequence")"), 403, Reason::kUnknownPrincipal},
      {text, 403, Reason::kBadSignature},
  };
  for (const auto& c : cases) {
    auto answer = post("/v1/command", c.body);
    EXPECT_EQ(answer.status, c.status) << name_of(c.reason);
    EXPECT_EQ(rejection_of(answer).reason, c.reason);
  }
  auto me = client.identity();
  ASSERT_TRUE(me.ok());
  EXPECT_EQ(me->sequence, 1u);
  EXPECT_EQ(node_->sequencer().stats().position, 1u);
  EXPECT_EQ(node_->sequencer().stats().refused, 0u);  // none reached the sequencer
}

// A Rejection is JSON, so valid UTF-8, whatever the request it quotes: an
// invalid byte is escaped (as the text \xNN), and a message cut to its 512
// bytes is cut between characters, never inside one.
TEST_F(NodeTest, ARejectionIsValidUtf8WhateverItQuotes) {
  start();
  const std::string text = to_json(sign(root().build(create(2, 100), 1), seed_of(0)));
  std::string accents;  // 300 two-byte characters
  for (int i = 0; i < 300; ++i) accents += "\xc3\xa9";
  struct Case {
    std::string body;
    Reason reason;
  };
  const std::vector<Case> cases = {
      {replace(text, R"("realm":"dev")", "\"realm\":\"d\xffv\""), Reason::kSyntax},
      // Long quotes, at both parities, so that a cut at 512 bytes would fall inside a character.
      {replace(text, R"("realm":"dev")", "\"realm\":\"" + accents + "\xff\""), Reason::kSyntax},
      {replace(text, R"("realm":"dev")", "\"realm\":\"a" + accents + "\xff\""), Reason::kSyntax},
      {replace(text, R"("sequence":1,)", "\"sequence\":1,\"" + accents + "\":1,"), Reason::kUnknownField},
      {replace(text, R"("sequence":1,)", "\"sequence\":1,\"a" + accents + "\":1,"), Reason::kUnknownField},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    auto answer = post("/v1/command", c.body);
    EXPECT_EQ(answer.status, 400);
    auto rejection = from_json<Rejection>(answer.body, kMaxAnswerBytes);  // the strict decoder checks UTF-8
    if (!rejection.ok()) {
      ADD_FAILURE() << "case " << i << ": " << rejection.error().message();
      continue;
    }
    EXPECT_EQ(rejection->reason, c.reason);
    EXPECT_EQ(rejection->message.value.find('\xff'), std::string::npos);
    EXPECT_LE(rejection->message.value.size(), 512u);
  }
  EXPECT_NE(rejection_of(post("/v1/command", cases[0].body)).message.value.find("\\xff"), std::string::npos);
}

// Decision 22: the canonical inner request (or query) is measured on the raw
// body before anything is parsed; at 16 KiB it goes on to the decoder, one
// byte more is too_large - though the envelope around it is within its limit.
TEST_F(NodeTest, TheCanonicalRequestBoundIsReachedBeforeParsing) {
  start();
  const std::vector<std::pair<std::string, std::string>> envelopes = {
      {"/v1/command", to_json(sign(root().build(create(2, 100), 1), seed_of(0)))},
      {"/v1/query", to_json(sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, IdentityQuery{}}, seed_of(0)))}};
  for (const auto& [route, text] : envelopes) {
    const std::size_t inner = text.rfind(R"(,"signature":[)") - text.find(':') - 1;
    // The realm padded so that the inner text is exactly `bytes` long.
    const auto padded = [&, &text = text](std::size_t bytes) {
      return replace(text, R"("realm":"dev")", "\"realm\":\"" + std::string(3 + bytes - inner, 'd') + "\"");
    };
    ASSERT_LE(padded(kMaxRequestBytes + 1).size(), kMaxEnvelopeBytes);
    auto at_bound = post(route, padded(kMaxRequestBytes));
    EXPECT_EQ(at_bound.status, 400) << route;
    EXPECT_EQ(rejection_of(at_bound).reason, Reason::kBadLength) << route;  // the decoder's: a realm of 1-64 bytes
    auto over = post(route, padded(kMaxRequestBytes + 1));
    EXPECT_EQ(over.status, 413) << route;
    EXPECT_EQ(rejection_of(over).reason, Reason::kTooLarge) << route;
  }
  EXPECT_EQ(node_->sequencer().stats().refused, 0u);  // none reached the sequencer
}

TEST_F(NodeTest, ACommandSignatureIsNotAQuerySignature) {
  start();
  const Request r = root().build(create(2, 100), 1);
  const SignedRequest s = sign(r, seed_of(0));
  // The same signature over a query whose body the root really sends.
  SignedQuery q{Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, IdentityQuery{}}, s.signature};
  auto answer = post("/v1/query", to_json(q));
  EXPECT_EQ(answer.status, 403);
  EXPECT_EQ(rejection_of(answer).reason, Reason::kBadSignature);
  // And a query envelope is not a command.
  auto wrong_route = post("/v1/command", to_json(sign(q.query, seed_of(0))));
  EXPECT_EQ(wrong_route.status, 400);
  EXPECT_EQ(rejection_of(wrong_route).reason, Reason::kUnknownField);
}

TEST_F(NodeTest, TheControlHeaderRules) {
  start();
  const std::string query = to_json(sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, IdentityQuery{}}, seed_of(0)));
  EXPECT_EQ(post("/v1/query", query).status, 200);
  auto hinted = post("/v1/query", query, {{"X-Transit-Control", "snapshot"}});
  EXPECT_EQ(hinted.status, 400);
  EXPECT_EQ(rejection_of(hinted).reason, Reason::kControlHintNotAllowed);
  auto unknown = post("/v1/query", query, {{"X-Transit-Control", "urgent"}});
  EXPECT_EQ(rejection_of(unknown).reason, Reason::kUnknownControlHint);
  auto twice = post("/v1/query", query, {{"X-Transit-Control", "snapshot"}, {"x-transit-control", "snapshot"}});
  EXPECT_EQ(rejection_of(twice).reason, Reason::kDuplicateControlHint);
  EXPECT_EQ(rejection_of(post("/v1/commands", query)).reason, Reason::kUnknownRoute);
}

TEST_F(NodeTest, TheAdmissionCeilingAndTheControlReserve) {
  start(sample_genesis(/*ceiling=*/2, /*reserve=*/1));
  Client client = root();
  ASSERT_TRUE(client.submit(create(2, 100)).ok());
  ASSERT_TRUE(client.submit(create(3, 101)).ok());
  auto closed = client.submit(create(4, 102));
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.error().rejection->code, RejectionCode::kAdmissionClosed);
  // A control mutation may use the reserve; after it, control is closed too.
  ASSERT_TRUE(client.submit(RevokePrincipal{PrincipalId{3}, std::nullopt}).ok());
  auto full = client.submit(RevokePrincipal{PrincipalId{2}, std::nullopt});
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().rejection->code, RejectionCode::kControlCapacity);
  EXPECT_EQ(post("/v1/command", to_json(sign(client.build(RevokePrincipal{PrincipalId{2}, std::nullopt}, 4), seed_of(0)))).status, 429);
  // Exact retries and reads remain, also after a restart (the accounting is the journal's position).
  const SignedRequest first = sign(client.build(create(2, 100), 1), seed_of(0));
  EXPECT_TRUE(client.resubmit(first).ok());
  restart();
  Client again = root();
  EXPECT_TRUE(again.identity().ok());
  auto still = again.submit(RevokePrincipal{PrincipalId{2}, std::nullopt});
  ASSERT_FALSE(still.ok());
  EXPECT_EQ(still.error().rejection->code, RejectionCode::kControlCapacity);
  auto caps = again.capabilities();
  ASSERT_TRUE(caps.ok());
  EXPECT_EQ(caps->admission_ceiling, std::optional<Id>(2));
  EXPECT_EQ(caps->control_reserve, 1u);
}

TEST_F(NodeTest, ARegressingClockIsAnUncertainClockAndNothingIsDecided) {
  start();
  Client client = root();
  ASSERT_TRUE(client.submit(create(2, 100)).ok());
  clock_.set(1'700'000'000'000);
  auto r = post("/v1/command", to_json(sign(client.build(create(3, 101), 2), seed_of(0))));
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(rejection_of(r).code, RejectionCode::kClockUncertain);
  clock_.set(1'800'000'000'001);
  EXPECT_TRUE(client.submit(create(3, 101)).ok());
  EXPECT_EQ(node_->sequencer().stats().position, 2u);
}

TEST_F(NodeTest, ConcurrentClientsGetDenseDistinctPositions) {
  start();
  Client client = root();
  constexpr int kClients = 8, kEach = 15;
  for (int i = 0; i < kClients; ++i)
    ASSERT_TRUE(client.submit(create(100 + i, static_cast<std::uint8_t>(10 + i), kAllPermissions)).ok());
  std::vector<std::vector<Position>> positions(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i)
    threads.emplace_back([&, i] {
      Client c(options(100 + i, static_cast<std::uint8_t>(10 + i)));
      c.set_next_sequence(1);
      for (int k = 0; k < kEach; ++k) {
        auto r = c.submit(create(1000 + i * kEach + k, 200));
        if (r.ok()) positions[i].push_back(r->position);
      }
    });
  for (auto& t : threads) t.join();
  std::set<Position> all;
  for (const auto& p : positions) {
    EXPECT_EQ(p.size(), static_cast<std::size_t>(kEach));
    EXPECT_TRUE(std::is_sorted(p.begin(), p.end()));
    all.insert(p.begin(), p.end());
  }
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kClients * kEach));
  EXPECT_EQ(*all.begin(), Position{kClients + 1});
  EXPECT_EQ(*all.rbegin(), Position{kClients + kClients * kEach});
}

TEST_F(NodeTest, AnUncertainOutcomeIsResentAsTheSameBytesBeforeAnythingNew) {
  start();
  const std::uint16_t port = node_->port();
  ClientOptions o = options(1, 0);
  Client client(o);
  ASSERT_TRUE(client.submit(create(2, 100)).ok());
  node_.reset();  // the node is gone: the next outcome is unknown
  auto lost = client.submit(create(3, 101));
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.error().kind, ClientError::Kind::kUncertain);
  ASSERT_TRUE(client.pending().has_value());
  const SignedRequest kept = *client.pending();
  EXPECT_EQ(kept.request.sequence, 2u);

  node::NodeConfig config;  // back on the same port, from the same journal
  config.data_dir = dir_;
  config.port = port;
  auto n = node::Node::open(config, clock_);
  ASSERT_TRUE(n.ok()) << n.error();
  node_ = std::move(*n);
  auto next = client.submit(create(4, 102));
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->sequence, 3u);  // the kept request took 2; nothing new was signed at 2
  EXPECT_FALSE(client.pending().has_value());
  auto me = client.identity();
  EXPECT_EQ(me->sequence, 3u);
  EXPECT_EQ(node_->sequencer().stats().position, 3u);
  EXPECT_TRUE(client.decision(PrincipalId{3}, RealmScope{}, Permissions{kInspect})->allowed);  // principal 3 exists
}

}  // namespace
}  // namespace cowboy::transit
