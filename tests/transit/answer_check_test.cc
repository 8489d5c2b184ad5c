// The client's checks of what it is answered (docs/transit.md, decision 21),
// against a real transitd seen through a proxy on 127.0.0.1 that rewrites
// its answers: a receipt that is not the one of the request sent is a
// malformed success, resent as the same bytes and never turned into a new
// sequence; a response that does not answer the query asked is refused.
#include <gtest/gtest.h>

#include <mutex>

#include "net/http_server.h"
#include "state_fixture.h"

namespace cowboy::transit {
namespace {

using testing::replace;

using Rewrite = std::function<std::string(std::string)>;

/// A rewrite of a decoded answer of type T, spelled canonically again.
template <typename T> Rewrite edit(std::function<void(T&)> change) {
  return [change](std::string body) {
    auto value = from_json<T>(body, kMaxAnswerBytes);
    if (!value.ok()) return body;
    change(*value);
    return to_json(*value);
  };
}
Rewrite text(std::string from, std::string to) {
  return [from, to](std::string body) { return replace(std::move(body), from, to); };
}

class AnswerCheckTest : public StateTest {
 protected:
  void SetUp() override {
    StateTest::SetUp();
    proxy_ = std::make_unique<net::HttpServer>(
        [this](const net::HttpRequest& request) {
          net::HttpConnection node("127.0.0.1", node_->port());
          auto answer = node.post(request.target, request.body);
          if (!answer.ok()) return net::HttpReply{502, "text/plain", answer.error()};
          std::lock_guard lock(mutex_);
          const bool rewrite = answer->status == 200 && rewrite_ && request.target == target_;
          return net::HttpReply{answer->status, "application/json", rewrite ? rewrite_(answer->body) : answer->body};
        },
        "127.0.0.1", 0);
    proxy_->start();
  }
  void TearDown() override {
    proxy_->stop();
    StateTest::TearDown();
  }
  /// The root's client, through the proxy.
  Client proxied() {
    ClientOptions o = options(1, 0);
    o.port = proxy_->port();
    return Client(o);
  }
  void rewrite(std::string target, Rewrite r) {
    std::lock_guard lock(mutex_);
    target_ = std::move(target);
    rewrite_ = std::move(r);
  }

  std::unique_ptr<net::HttpServer> proxy_;
  std::mutex mutex_;
  std::string target_;
  Rewrite rewrite_;
};

TEST_F(AnswerCheckTest, AMalformedReceiptIsResentAsTheSameBytesAndNeverBecomesANewSequence) {
  const std::string unsafe = std::to_string(kMaxSafeInteger);
  const std::vector<std::tuple<std::string, Rewrite, std::string>> cases = {
      {"realm", edit<Receipt>([](Receipt& r) { r.realm.value = "other"; }), "receipt of another realm"},
      {"principal", edit<Receipt>([](Receipt& r) { r.principal.value += 1; }), "receipt for another request"},
      {"sequence", edit<Receipt>([](Receipt& r) { r.sequence += 1; }), "receipt for another request"},
      {"digest", edit<Receipt>([](Receipt& r) { r.request_digest[0] ^= 1; }), "receipt of another body"},
      {"position", edit<Receipt>([](Receipt& r) { r.position = Position{0}; }), "receipt at position 0"},
      {"outcome kind", edit<Receipt>([](Receipt& r) { r.outcome = RoleCreated{5, 9}; }), "receipt outcome of another kind"},
      {"outcome id", edit<Receipt>([](Receipt& r) { std::get<PrincipalCreated>(r.outcome).principal.value += 1; }),
       "receipt outcome of another kind"},
      {"version", text(R"("version":1)", R"("version":2)"), "unknown_version"},
      {"definition", text(definition(), "transit.v1:" + std::string(64, '0')), "foreign_definition"},
      {"unsafe integer",
       [unsafe](std::string body) {
         return replace(edit<Receipt>([](Receipt& r) { r.accepted_at_ms = TrustedMs{kMaxSafeInteger}; })(std::move(body)), unsafe,
                        "9007199254740992");
       },
       "integer_too_large"},
  };
  Client client = proxied();
  auto me = client.identity();
  ASSERT_TRUE(me.ok());
  Id sequence = me->sequence + 1;
  Id subject = 100;
  for (const auto& [what, rewrite_receipt, problem] : cases) {
    rewrite("/v1/command", rewrite_receipt);
    auto r = client.submit(create(subject, 100));
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.error().kind, ClientError::Kind::kUncertain) << what;
    EXPECT_NE(r.error().message.find(problem), std::string::npos) << what << ": " << r.error().message;
    ASSERT_TRUE(client.pending()) << what;
    EXPECT_EQ(client.pending()->request.sequence, sequence) << what;
    // Answered truthfully, the same bytes are the decision the node made: nothing new was signed.
    rewrite("", nullptr);
    auto settled = client.resubmit(*client.pending());
    ASSERT_TRUE(settled.ok()) << what << ": " << settled.error().message;
    EXPECT_EQ(settled->sequence, sequence) << what;
    EXPECT_EQ(std::get<PrincipalCreated>(settled->outcome).principal, PrincipalId{subject}) << what;
    EXPECT_FALSE(client.pending()) << what;
    ++sequence, ++subject;
  }
  EXPECT_EQ(admin_->identity()->policy_revision, 1 + cases.size());  // each decided once
}

TEST_F(AnswerCheckTest, AResponseThatDoesNotAnswerTheQueryAskedIsRefused) {
  // Material to ask about: nine resources (two pages), entries, a block, a process, a pending output.
  const ResourceId doc = resource("doc");
  for (int i = 0; i < 8; ++i) resource(numbered("r", i));
  process(doc);
  const Id generation = ok<ProcessChanged>(admin_->submit(Own{kPid, 1})).generation;
  Client::Bytes body(16, 0x5a);
  Turn t{kPid, generation, std::nullopt, doc, std::nullopt, {{{key("a"), value("1")}, {key("b"), value("2")}}},
         {{{key("blob"), body.size(), crypto::sha256(ByteView(body))}}}, {}, {{{kPid, value("o")}}}, std::nullopt};
  accept(*admin_, t, {body});
  Client client = proxied();
  ASSERT_TRUE(client.identity().ok());
  const auto first = std::get<ResourcePage>(client.query(ListResources{std::nullopt})->result);
  ASSERT_TRUE(first.cursor);

  struct Case {
    std::string what;
    QueryOp op;
    Rewrite rewrite;
    std::string problem;
  };
  const std::vector<Case> cases = {
      {"realm", IdentityQuery{}, edit<Response>([](Response& r) { r.realm.value = "other"; }), "response of another realm"},
      {"variant", IdentityQuery{}, edit<Response>([](Response& r) { r.result = Capabilities{}; }),
       "response of another query kind"},
      {"identity", IdentityQuery{}, edit<Response>([](Response& r) { std::get<Identity>(r.result).principal = PrincipalId{2}; }),
       "identity of another principal"},
      {"position", IdentityQuery{}, edit<Response>([](Response& r) { r.position = Position{1}; }),
       "response position went backwards"},
      {"version", IdentityQuery{}, text(R"("version":1)", R"("version":2)"), "unknown_version"},
      {"page order", ListResources{std::nullopt}, edit<Response>([](Response& r) {
         auto& items = std::get<ResourcePage>(r.result).items.items;
         std::reverse(items.begin(), items.end());
       }),
       "page out of order"},
      {"cursor cut", ListResources{std::nullopt}, edit<Response>([](Response& r) {
         std::get<ResourcePage>(r.result).cursor->cut += 1;
       }),
       "cursor of another cut"},
      {"continuation", ListResources{first.cursor}, edit<Response>([&](Response& r) {
         auto& page = std::get<ResourcePage>(r.result);
         page.items.items.clear();
         page.cursor = first.cursor;
       }),
       "continuation does not advance"},
      {"entry basis", ListEntries{CurrentBasis{doc, Revision{2}}, std::nullopt, std::nullopt}, edit<Response>([](Response& r) {
         std::get<EntryPage>(r.result).revision = Revision{1};
       }),
       "entries of another resource or revision"},
      {"entry slot", ReadEntries{doc, std::nullopt, std::nullopt, slots({"a", "b"})}, edit<Response>([](Response& r) {
         std::swap(std::get<EntryBatch>(r.result).entries.items[0], std::get<EntryBatch>(r.result).entries.items[1]);
       }),
       "slot 0 answers another key"},
      {"lookup", AssociationLookup{kPid, {"doc"}}, edit<Response>([](Response& r) {
         std::get<LookupResult>(r.result).name.value = "other";
       }),
       "lookup of another association"},
      {"read_access", ReadAccess{doc}, edit<Response>([](Response& r) {
         std::get<ResourceAccess>(r.result).resource.resource.value += 1;
       }),
       "access to another resource"},
      {"process", ProcessRead{kPid}, edit<Response>([](Response& r) { std::get<ProcessInfo>(r.result).pid.value += 1; }),
       "another process"},
      {"block", ReadBlock{CurrentBasis{doc, Revision{2}}, key("blob"), std::nullopt}, edit<Response>([](Response& r) {
         std::get<Block>(r.result).name = key("other");
       }),
       "another block"},
      {"block body", ReadBlock{CurrentBasis{doc, Revision{2}}, key("blob"), std::nullopt}, edit<Response>([](Response& r) {
         std::get<Block>(r.result).body.value.at(0) ^= 1;
       }),
       "a block body that does not match its SHA-256"},
      {"decision", DecisionQuery{PrincipalId{1}, RealmScope{}, Permissions{kInspect}}, edit<Response>([](Response& r) {
         std::get<Decision>(r.result).principal = PrincipalId{2};
       }),
       "decision for another principal"},
      {"route head", ListRoutes{std::nullopt}, edit<Response>([](Response& r) {
         std::get<RoutePage>(r.result).items.items.at(0).published_at = r.position + 1;
       }),
       "published after the response"},
      {"ended order", ListEnded{std::nullopt}, edit<Response>([](Response& r) {
         std::get<EndedPage>(r.result).items.items = {EndedProcess{Pid{5}, Ending::kSuspensionExpired, 0},
                                                      EndedProcess{Pid{5}, Ending::kSuspensionExpired, 0}};
       }),
       "page out of order"},
  };
  for (const auto& c : cases) {
    rewrite("/v1/query", c.rewrite);
    auto r = client.query(c.op);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.error().kind, ClientError::Kind::kMalformed) << c.what;
    EXPECT_NE(r.error().message.find(c.problem), std::string::npos) << c.what << ": " << r.error().message;
    rewrite("", nullptr);
    EXPECT_TRUE(client.query(c.op).ok()) << c.what;  // answered truthfully, the same query passes
  }
}

// An effect answer outside the phase x closure matrix, or not of the effect
// or listing asked, is refused (decision 47).
TEST_F(AnswerCheckTest, AnEffectAnswerOutsideThePhaseClosureMatrixIsRefused) {
  process(resource("doc"));
  const Id generation = ok<ProcessChanged>(admin_->submit(Own{kPid, 1})).generation;
  Turn t{kPid, generation, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  t.effect = EffectIntent{PrincipalId{1}, clock_.trusted() + Millis{60'000}, {}, 2};
  const Id effect = ok<TurnPublished>(admin_->submit(t)).effect.value_or(0);
  accept(*admin_, AttemptEffect{effect});
  accept(*admin_, ObserveEffect{effect, value("pending"), false});
  Client client = proxied();
  ASSERT_TRUE(client.identity().ok());
  const auto info = [](Response& r) -> EffectInfo& { return std::get<EffectInfo>(r.result); };
  const auto first = [](Response& r) -> EffectInfo& { return std::get<EffectPage>(r.result).items.items.at(0); };
  const ListEffects unresolved{std::nullopt, EffectFilter::kUnresolved, std::nullopt};
  const std::vector<std::tuple<std::string, QueryOp, Rewrite, std::string>> cases = {
      {"another effect", EffectRead{effect}, edit<Response>([&](Response& r) { info(r).effect += 1; }), "another effect"},
      {"closed without a closure", EffectRead{effect},
       edit<Response>([&](Response& r) { info(r).phase = EffectPhase::kClosed; }), "a closure without the closed phase"},
      {"observed without a final result", EffectRead{effect}, edit<Response>([&](Response& r) {
         info(r).phase = EffectPhase::kClosed;
         info(r).closure = EffectClosure{ClosureKind::kObserved, info(r).observations.items.back().step, std::nullopt};
       }),
       "without a final observation"},
      {"deadline short of the deadline", EffectRead{effect}, edit<Response>([&](Response& r) {
         info(r).phase = EffectPhase::kClosed;
         auto step = info(r).observations.items.back().step;
         step.position += 1;
         info(r).closure = EffectClosure{ClosureKind::kDeadline, step, *info(r).intent.deadline_ms - Millis{1}};
       }),
       "short of the reconciliation deadline"},
      {"a step after the response", EffectRead{effect},
       edit<Response>([&](Response& r) { info(r).observations.items.back().step.position = r.position + 1; }),
       "after the position it was read at"},
      {"a listing of another filter", unresolved,
       edit<Response>([](Response& r) { std::get<EffectPage>(r.result).filter = EffectFilter::kAll; }),
       "another process or filter"},
      {"a closed effect listed as unresolved", unresolved, edit<Response>([&](Response& r) {
         first(r).phase = EffectPhase::kClosed;
         first(r).closure = EffectClosure{ClosureKind::kObservationBudget, first(r).observations.items.back().step,
                                          std::nullopt};
         first(r).intent.observation_budget = 1;
       }),
       "a closed effect in a listing of open ones"},
  };
  for (const auto& [what, op, change, problem] : cases) {
    rewrite("/v1/query", change);
    auto r = client.query(op);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.error().kind, ClientError::Kind::kMalformed) << what;
    EXPECT_NE(r.error().message.find(problem), std::string::npos) << what << ": " << r.error().message;
    rewrite("", nullptr);
    EXPECT_TRUE(client.query(op).ok()) << what;
  }
}

// History (decisions 64-69): the floor is a checkpoint's position, so it is
// never above the latest checkpoint, and neither is after the response.
TEST_F(AnswerCheckTest, ACheckpointStatusWithAFloorAboveItsCheckpointsIsRefused) {
  Client client = proxied();
  ASSERT_TRUE(client.identity().ok());
  const std::vector<std::pair<std::string, Rewrite>> cases = {
      {"floor without checkpoint", edit<Response>([](Response& r) { std::get<CheckpointStatus>(r.result).floor = Position{1}; })},
      {"checkpoint after the response", edit<Response>([](Response& r) {
         std::get<CheckpointStatus>(r.result).latest = CheckpointInfo{r.position + 1, {}};
       })},
  };
  for (const auto& [what, change] : cases) {
    rewrite("/v1/query", change);
    auto r = client.query(CheckpointQuery{});
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.error().kind, ClientError::Kind::kMalformed) << what;
    EXPECT_NE(r.error().message.find("a floor above its latest checkpoint, or a checkpoint after the response"),
              std::string::npos)
        << what << ": " << r.error().message;
    rewrite("", nullptr);
    EXPECT_TRUE(client.query(CheckpointQuery{}).ok()) << what;
  }
}

// Segmented results (decisions 150-154): a segment's chain is its records',
// its continuation carries that chain and count on, and its evidence closes
// the result with them; a segment that drops, changes or adds a record, or
// claims a completion it did not reach, is refused.
TEST_F(AnswerCheckTest, ASegmentWhoseChainOrEvidenceIsNotItsRecordsIsRefused) {
  const ResourceId doc = resource("doc");
  process(doc);
  fill(doc, 10);
  Client client = proxied();
  ASSERT_TRUE(client.capabilities().ok());  // asked once, before any rewrite
  const Revision revision = answer<ResourceAccess>(*admin_, ReadAccess{doc}).resource.revision;
  const Basis basis = CurrentBasis{doc, revision};
  auto first = admin_->segment(basis);
  ASSERT_TRUE(first.ok() && first->next);
  const auto seg = [](Response& r) -> Segment& { return std::get<Segment>(r.result); };
  const std::vector<std::tuple<std::string, std::optional<SegmentCursor>, Rewrite, std::string>> cases = {
      {"a record dropped", std::nullopt, edit<Response>([&](Response& r) { seg(r).items.items.pop_back(); }),
       "a segment whose chain is not its records'"},
      {"a value changed", std::nullopt, edit<Response>([&](Response& r) { seg(r).items.items[0].value = value("forged"); }),
       "a segment whose chain is not its records'"},
      {"a count not carried on", std::nullopt, edit<Response>([&](Response& r) { seg(r).next->records += 1; }),
       "a continuation that does not carry the segment on"},
      {"both next and complete", std::nullopt, edit<Response>([&](Response& r) {
         auto& s = seg(r);
         s.complete = Completion{1, s.next->records, s.chain};
       }),
       "a segment with both or neither of next and complete"},
      {"evidence of another segment count", std::nullopt, edit<Response>([&](Response& r) {
         auto& s = seg(r);
         s.complete = Completion{2, s.next->records, s.chain};
         s.next.reset();
       }),
       "complete-result evidence that is not the segments'"},
      {"evidence of another count", first->next, edit<Response>([&](Response& r) { seg(r).complete->records -= 1; }),
       "complete-result evidence that is not the segments'"},
      {"another index", first->next, edit<Response>([&](Response& r) { seg(r).index = 0; }),
       "a segment at another index or count"},
  };
  for (const auto& [what, cursor, change, message] : cases) {
    rewrite("/v1/query", change);
    auto r = client.segment(basis, cursor);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.error().kind, ClientError::Kind::kMalformed) << what;
    EXPECT_NE(r.error().message.find(message), std::string::npos) << what << ": " << r.error().message;
    rewrite("", nullptr);
    EXPECT_TRUE(client.segment(basis, cursor).ok()) << what;
  }
}

// Leased snapshots (decisions 70-78): an answer names the snapshot asked,
// pinned where it was opened, with entries of its captured revision only, in
// order, and the release that was asked.
TEST_F(AnswerCheckTest, ASnapshotAnswerOfAnotherSnapshotRevisionOrReleaseIsRefused) {
  const ResourceId doc = resource("doc");
  process(doc);
  fill(doc, 3);
  Client client = proxied();
  ASSERT_TRUE(client.capabilities().ok());  // asked once, before any rewrite
  auto opened = admin_->open_snapshot(doc, std::nullopt, Millis{60'000});
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  const SnapshotToken token = opened->snapshot.token;
  const QueryOp open = OpenSnapshot{doc, std::nullopt, Millis{1}};  // a lease of 1 ms: trusted time ends each before the next
  const QueryOp entries = SnapshotEntries{token, std::nullopt, std::nullopt};
  const QueryOp range = SnapshotRead{TokenSource{token}, std::nullopt, 8, false};
  struct Case {
    std::string what;
    QueryOp op;
    Rewrite rewrite;
    std::string problem;
  };
  const std::vector<Case> cases = {
      {"an open at another revision", open, edit<Response>([](Response& r) {
         ++std::get<SnapshotOpened>(r.result).snapshot.revision;
       }),
       "a snapshot of another revision"},
      {"an open pinned before its response", open, edit<Response>([](Response& r) {
         auto& at = std::get<SnapshotOpened>(r.result).snapshot.position;
          at = at - 1;
       }),
       "not pinned at the position it was opened at"},
      {"a page of another snapshot", entries, edit<Response>([](Response& r) {
         std::get<SnapshotPage>(r.result).snapshot.token.value[31] ^= 1;
       }),
       "a page of another snapshot"},
      {"an entry newer than the snapshot", entries, edit<Response>([](Response& r) {
         auto& page = std::get<SnapshotPage>(r.result);
         page.items.items[0].revision = page.snapshot.revision + 1;
       }),
       "an entry newer than the snapshot's revision"},
      {"a range out of order", range, edit<Response>([](Response& r) {
         auto& items = std::get<SnapshotRange>(r.result).items.items;
         std::reverse(items.begin(), items.end());
       }),
       "page out of order"},
      {"current metadata of another resource", range, edit<Response>([](Response& r) {
         ++std::get<SnapshotRange>(r.result).current.resource.value;
       }),
       "current metadata of another resource"},
      {"a release that was not asked", range, edit<Response>([](Response& r) {
         std::get<SnapshotRange>(r.result).released = true;
       }),
       "a release that was not asked"},
  };
  for (const auto& c : cases) {
    rewrite("/v1/query", c.rewrite);
    auto r = client.query(c.op);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.error().kind, ClientError::Kind::kMalformed) << c.what;
    EXPECT_NE(r.error().message.find(c.problem), std::string::npos) << c.what << ": " << r.error().message;
    rewrite("", nullptr);
    EXPECT_TRUE(client.query(c.op).ok()) << c.what;
    clock_.set(clock_.now_ms() + 1);  // the quota holds 4: the 1 ms opens end here
  }
}

}  // namespace
}  // namespace cowboy::transit
