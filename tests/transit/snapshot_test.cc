// Leased snapshots over real HTTP against a real transitd (docs/transit.md,
// decisions 70-78): open, page and close; reads at the pinned position while
// later turns change the resource; leases on the injected clock; quotas;
// restarts; current authorization at every read; foreign and bad tokens; and
// the X-Transit-Control hint, accepted for releases only.
#include <fstream>

#include "common/bytes.h"

#include "state_fixture.h"
#include "transit/contract/codec.h"
#include "transit/contract/operations.h"
#include "transit/contract/signing.h"

namespace cowboy::transit {
namespace {

using testing::seed_of;

constexpr Id kLeaseMs = 1'000;  // for the test clock
constexpr Millis kLease{kLeaseMs};

class SnapshotTest : public StateTest {
 protected:
  /// `doc` written with `count` entries k00..: resource and its revision.
  ResourceId filled(int count) {
    const ResourceId doc = resource("doc");
    process(doc);
    generation_ = fill(doc, count);
    return doc;
  }
  SnapshotOpened open(Client& c, ResourceId doc, Millis lease = kLease) {
    auto r = c.open_snapshot(doc, std::nullopt, lease);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : SnapshotOpened{};
  }
  template <typename T> Rejection refused_with(const ClientResult<T>& r) {
    EXPECT_FALSE(r.ok());
    if (r.ok() || !r.error().rejection) return Rejection{};
    return *r.error().rejection;
  }
  /// Every entry of the snapshot, page by page to the null cursor.
  std::vector<Entry> all_entries(Client& c, const SnapshotToken& token, int* pages = nullptr) {
    std::vector<Entry> out;
    std::optional<EntryCursor> cursor;
    for (int n = 1;; ++n) {
      auto page = c.snapshot_entries(token, cursor);
      EXPECT_TRUE(page.ok()) << (page.ok() ? "" : page.error().message);
      if (!page.ok()) break;
      out.insert(out.end(), page->items.items.begin(), page->items.items.end());
      cursor = page->cursor;
      if (pages) *pages = n;
      if (!cursor) break;
    }
    return out;
  }
  Turn turn(ResourceId doc, std::vector<EntryMutation> mutations) {
    return Turn{kPid, generation_, std::nullopt, doc, std::nullopt, {std::move(mutations)}, {}, {}, {}, std::nullopt};
  }
  Id generation_ = 0;  // the process's, owned by fill()
};

TEST_F(SnapshotTest, OpenPageAndCloseAndCloseIsIdempotent) {
  const ResourceId doc = filled(20);
  auto opened = open(*admin_, doc);
  EXPECT_EQ(opened.snapshot.resource, doc);
  EXPECT_EQ(opened.snapshot.revision, revision_of(doc));
  EXPECT_EQ(opened.snapshot.position, Position{node_->sequencer().stats().position});  // pinned at the open's position
  EXPECT_EQ(opened.snapshot.expires_at_ms, TrustedMs{clock_.now_ms()} + kLease);
  EXPECT_EQ(opened.snapshot.token.value.size(), kSnapshotTokenBytes);

  int pages = 0;
  auto entries = all_entries(*admin_, opened.snapshot.token, &pages);
  EXPECT_EQ(pages, 3);  // 8 + 8 + 4: the ordinary page budget
  ASSERT_EQ(entries.size(), 20u);
  EXPECT_EQ(text(entries[0].value), "vk00");
  EXPECT_EQ(text(entries[19].value), "vk19");
  auto lookup = answer<SnapshotPage>(*admin_, SnapshotEntries{opened.snapshot.token, key("k07"), std::nullopt});
  ASSERT_EQ(lookup.items.items.size(), 1u);
  EXPECT_EQ(text(lookup.items.items[0].value), "vk07");
  EXPECT_FALSE(lookup.cursor);
  // A cursor carries the snapshot's position; any other cut is no cursor of it.
  EXPECT_EQ(query_refused(*admin_, SnapshotEntries{opened.snapshot.token, std::nullopt, EntryCursor{Position{1}, {}}}).reason,
            Reason::kBadCut);

  auto closed = admin_->close_snapshot(opened.snapshot.token);
  ASSERT_TRUE(closed.ok());
  EXPECT_TRUE(closed->released);
  auto again = admin_->close_snapshot(opened.snapshot.token);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->released);
  auto after_close = refused_with(admin_->snapshot_entries(opened.snapshot.token));
  EXPECT_EQ(after_close.reason, Reason::kSnapshotClosed);
  EXPECT_EQ(after_close.code, RejectionCode::kInvalidProposal);
}

TEST_F(SnapshotTest, ReadsSeeThePinnedPositionWhileLaterTurnsChangeTheResource) {
  const ResourceId doc = filled(4);
  auto opened = open(*admin_, doc, Millis{60'000});
  const Revision pinned = opened.snapshot.revision;
  accept(*admin_, turn(doc, {{key("k00"), value("changed")}, {key("k01"), std::nullopt}, {key("new"), value("x")}}));
  accept(*admin_, turn(doc, {{key("k02"), value("changed again")}}));
  ASSERT_EQ(revision_of(doc), pinned + 2);

  auto entries = all_entries(*admin_, opened.snapshot.token);
  ASSERT_EQ(entries.size(), 4u);  // k00..k03 as they were; not "new"
  EXPECT_EQ(text(entries[0].value), "vk00");
  EXPECT_EQ(text(entries[1].value), "vk01");
  EXPECT_EQ(text(entries[2].value), "vk02");
  for (const auto& e : entries) EXPECT_LE(e.revision, pinned);
  // The current resource shows the changes...
  auto now = answer<EntryBatch>(*admin_, ReadEntries{doc, std::nullopt, std::nullopt, slots({"k00", "k01", "new"})});
  EXPECT_EQ(text(now.entries.items[0]->value), "changed");
  EXPECT_FALSE(now.entries.items[1]);
  // ...and snapshot_read names both bases: captured entries, current metadata.
  auto range = admin_->snapshot_read(SnapshotRead{TokenSource{opened.snapshot.token}, std::nullopt, 32, false});
  ASSERT_TRUE(range.ok()) << range.error().message;
  EXPECT_EQ(range->snapshot.revision, pinned);
  EXPECT_EQ(range->current.revision, pinned + 2);
  ASSERT_EQ(range->items.items.size(), 4u);
  EXPECT_EQ(text(range->items.items[1].value), "vk01");
  EXPECT_FALSE(range->next);
  EXPECT_FALSE(range->released);
}

TEST_F(SnapshotTest, TheLeaseRunsOutOnTrustedTimeAndEveryReadRenewsIt) {
  const ResourceId doc = filled(2);
  const std::uint64_t t0 = clock_.now_ms();
  auto opened = open(*admin_, doc, kLease);
  clock_.set(t0 + kLeaseMs - 1);
  auto renewed = admin_->snapshot_entries(opened.snapshot.token);
  ASSERT_TRUE(renewed.ok()) << renewed.error().message;
  EXPECT_EQ(renewed->snapshot.expires_at_ms, TrustedMs{t0 + 2 * kLeaseMs - 1});
  clock_.set(t0 + 2 * kLeaseMs - 2);  // alive only because the read renewed it
  ASSERT_TRUE(admin_->snapshot_entries(opened.snapshot.token).ok());
  clock_.set(t0 + 3 * kLeaseMs - 2);  // exactly at the end of the lease the last read gave
  auto expired = refused_with(admin_->snapshot_entries(opened.snapshot.token));
  EXPECT_EQ(expired.reason, Reason::kSnapshotExpired);
  EXPECT_EQ(expired.code, RejectionCode::kConflict);
  auto close = admin_->close_snapshot(opened.snapshot.token);
  ASSERT_TRUE(close.ok());
  EXPECT_FALSE(close->released);  // nothing left to release
  EXPECT_EQ(refused_with(admin_->snapshot_entries(opened.snapshot.token)).reason, Reason::kSnapshotExpired);
}

TEST_F(SnapshotTest, ThePerPrincipalQuotaRefusesTypedAndFreesOnCloseOrExpiry) {
  const ResourceId doc = filled(1);
  const std::uint64_t t0 = clock_.now_ms();
  std::vector<SnapshotToken> held;
  for (int i = 0; i < 4; ++i) held.push_back(open(*admin_, doc, Millis{10'000u + i}).snapshot.token);
  auto full = refused_with(admin_->open_snapshot(doc, std::nullopt, kLease));
  EXPECT_EQ(full.reason, Reason::kSnapshotQuota);
  EXPECT_EQ(full.code, RejectionCode::kAdmissionClosed);
  // An acquiring snapshot_read holds a snapshot for its read, so it counts too.
  EXPECT_EQ(refused_with(admin_->snapshot_read(SnapshotRead{AcquireSource{doc, std::nullopt, kLease}, std::nullopt, 8, true}))
                .reason,
            Reason::kSnapshotQuota);
  // The quota is the principal's: another one opens.
  principal(5, 105, RealmScope{}, kReadOnly);
  Client reader(options(5, 105));
  open(reader, doc);
  // A close frees a place; so does a lease that ran out.
  ASSERT_TRUE(admin_->close_snapshot(held[3]).ok());
  open(*admin_, doc, Millis{60'000});
  EXPECT_EQ(refused_with(admin_->open_snapshot(doc, std::nullopt, kLease)).reason, Reason::kSnapshotQuota);
  clock_.set(t0 + 10'001);  // the one leased for 10,000 ms has ended
  open(*admin_, doc);
  auto caps = admin_->capabilities();
  ASSERT_TRUE(caps.ok());
  EXPECT_EQ(caps->snapshots_per_principal, 4u);
  EXPECT_EQ(caps->snapshots_per_node, 256u);
  EXPECT_EQ(caps->snapshot_lease_max_ms, kSnapshotLeaseMaxMs);
  EXPECT_EQ(caps->snapshot_range_records, kSnapshotRangeRecords);
}

class SmallSnapshotNodeTest : public SnapshotTest {
 protected:
  void SetUp() override {
    snapshot_limits_ = node::SnapshotLimits{2, 3};
    SnapshotTest::SetUp();
  }
};

TEST_F(SmallSnapshotNodeTest, TheNodeWideCapacityRefusesTypedWhateverThePrincipal) {
  const ResourceId doc = filled(1);
  principal(5, 105, RealmScope{}, kReadOnly);
  Client reader(options(5, 105));
  open(*admin_, doc);
  auto second = open(*admin_, doc);
  EXPECT_EQ(refused_with(admin_->open_snapshot(doc, std::nullopt, kLease)).reason, Reason::kSnapshotQuota);
  open(reader, doc);  // the node's third
  auto full = refused_with(reader.open_snapshot(doc, std::nullopt, kLease));
  EXPECT_EQ(full.reason, Reason::kSnapshotCapacity);
  EXPECT_EQ(full.code, RejectionCode::kAdmissionClosed);
  ASSERT_TRUE(admin_->close_snapshot(second.snapshot.token).ok());
  open(reader, doc);
  auto caps = reader.capabilities();
  ASSERT_TRUE(caps.ok());
  EXPECT_EQ(caps->snapshots_per_principal, 2u);
  EXPECT_EQ(caps->snapshots_per_node, 3u);
}

TEST_F(SnapshotTest, ARestartEndsEverySnapshotWithItsOwnRefusal) {
  const ResourceId doc = filled(3);
  auto opened = open(*admin_, doc, Millis{60'000});
  ASSERT_TRUE(admin_->snapshot_entries(opened.snapshot.token).ok());
  admin_.reset();
  restart();  // the same trusted time: the incarnation's random half tells the two apart
  admin_ = std::make_unique<Client>(root());
  auto gone = refused_with(admin_->snapshot_entries(opened.snapshot.token));
  EXPECT_EQ(gone.reason, Reason::kSnapshotRestarted);
  EXPECT_EQ(gone.code, RejectionCode::kConflict);
  EXPECT_EQ(refused_with(admin_->snapshot_read(SnapshotRead{TokenSource{opened.snapshot.token}, std::nullopt, 8, true}))
                .reason,
            Reason::kSnapshotRestarted);
  auto close = admin_->close_snapshot(opened.snapshot.token);
  ASSERT_TRUE(close.ok());
  EXPECT_FALSE(close->released);
  // Opening again works, at the recovered state; the old quota was not carried over.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(open(*admin_, doc).snapshot.revision, revision_of(doc));
}

TEST_F(SnapshotTest, CurrentAuthorizationGatesEveryReadThroughAnOpenSnapshot) {
  const ResourceId doc = filled(3);
  const Id role = principal(5, 105, PidScope{kPid}, kInspect, kPid);
  const Id access = grant(role, ResourceScope{doc}, kInspect | kRead);
  Client reader(options(5, 105));
  auto opened = open(reader, doc, Millis{60'000});
  ASSERT_EQ(all_entries(reader, opened.snapshot.token).size(), 3u);

  ASSERT_TRUE(admin_->submit(RevokeGrant{access, std::nullopt}).ok());
  auto denied = refused_with(reader.snapshot_entries(opened.snapshot.token));
  EXPECT_EQ(denied.reason, Reason::kNotPermitted);
  EXPECT_EQ(denied.code, RejectionCode::kDenied);
  EXPECT_EQ(refused_with(reader.snapshot_read(SnapshotRead{TokenSource{opened.snapshot.token}, std::nullopt, 8, true}))
                .reason,
            Reason::kNotPermitted);
  // Release needs no read right: the holder can always give it back.
  grant(role, ResourceScope{doc}, kInspect | kRead);  // and a new grant reads again while it is open
  ASSERT_EQ(all_entries(reader, opened.snapshot.token).size(), 3u);
  auto released = reader.close_snapshot(opened.snapshot.token);
  ASSERT_TRUE(released.ok());
  EXPECT_TRUE(released->released);
  // PID scope applies as to every read: a resource grant outside the caller's PID reaches nothing.
  const ResourceId other = resource("other");
  grant(role, ResourceScope{other}, kInspect | kRead);
  EXPECT_EQ(refused_with(reader.open_snapshot(other, std::nullopt, kLease)).reason, Reason::kNotPermitted);
  // Without inspect and read on the resource nothing opens.
  principal(6, 106, RealmScope{}, kInspect);
  Client inspector(options(6, 106));
  EXPECT_EQ(refused_with(inspector.open_snapshot(doc, std::nullopt, kLease)).reason, Reason::kNotPermitted);
}

TEST_F(SnapshotTest, ARetiredResourceIsReadNoMoreThroughItsSnapshot) {
  const ResourceId notes = resource("notes");  // required by no process, so it may retire
  auto opened = open(*admin_, notes, Millis{60'000});
  accept(*admin_, RetireResource{notes});
  EXPECT_EQ(refused_with(admin_->snapshot_entries(opened.snapshot.token)).reason, Reason::kLifetimeEnded);
}

TEST_F(SnapshotTest, AForeignOrBadTokenIsRefusedAndCloseDisclosesNothing) {
  const ResourceId doc = filled(2);
  principal(5, 105, RealmScope{}, kReadOnly);
  principal(6, 106, RealmScope{}, kReadOnly);
  Client alice(options(5, 105)), mallory(options(6, 106));
  auto opened = open(alice, doc, Millis{60'000});
  const auto& token = opened.snapshot.token;
  // Another principal's token reads as no snapshot at all, and its close ends nothing.
  auto foreign = refused_with(mallory.snapshot_entries(token));
  EXPECT_EQ(foreign.reason, Reason::kUnknownSnapshot);
  EXPECT_EQ(foreign.code, RejectionCode::kInvalidProposal);
  auto closed = mallory.close_snapshot(token);
  ASSERT_TRUE(closed.ok());
  EXPECT_FALSE(closed->released);
  ASSERT_TRUE(alice.snapshot_entries(token).ok());
  // A token of this incarnation that was never issued.
  SnapshotToken forged = token;
  forged.value.back() ^= 1;
  EXPECT_EQ(refused_with(alice.snapshot_entries(forged)).reason, Reason::kUnknownSnapshot);
  EXPECT_EQ(refused_with(alice.snapshot_entries(SnapshotToken{std::vector<std::uint8_t>(32, 0xff)})).reason,
            Reason::kUnknownSnapshot);
  // A token of another length is malformed: the strict decoder refuses it before the signature.
  Query q{Version{}, Definition{}, {"dev"}, PrincipalId{5}, SnapshotEntries{token, std::nullopt, std::nullopt}};
  std::string body = to_json(sign(q, seed_of(105)));
  const std::string hex = to_hex(ByteView(token.value));
  body.replace(body.find(hex), hex.size(), hex.substr(0, 62));
  auto short_token = post("/v1/query", body);
  EXPECT_EQ(short_token.status, 400);
  EXPECT_EQ(rejection_of(short_token).reason, Reason::kBadLength);
}

TEST_F(SnapshotTest, SnapshotReadAcquiresReadsRangesUnderItsOwnBudgetAndReleasesOnFinish) {
  const ResourceId doc = filled(40);
  auto first = admin_->snapshot_read(SnapshotRead{AcquireSource{doc, revision_of(doc), Millis{60'000}}, std::nullopt, 32, false});
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_EQ(first->items.items.size(), 32u);  // beyond the eight-record page
  ASSERT_TRUE(first->next);
  EXPECT_EQ(first->next->value, key("k31").value);
  EXPECT_FALSE(first->released);
  const SnapshotToken token = first->snapshot.token;
  auto last = admin_->snapshot_read(SnapshotRead{TokenSource{token}, first->next, 32, true});
  ASSERT_TRUE(last.ok()) << last.error().message;
  ASSERT_EQ(last->items.items.size(), 8u);
  EXPECT_EQ(text(last->items.items[7].value), "vk39");
  EXPECT_FALSE(last->next);
  EXPECT_TRUE(last->released);
  EXPECT_EQ(refused_with(admin_->snapshot_entries(token)).reason, Reason::kSnapshotClosed);
  // One shot: acquire, read and release in one query.
  auto once = admin_->snapshot_read(SnapshotRead{AcquireSource{doc, std::nullopt, kLease}, key("k37"), 32, true});
  ASSERT_TRUE(once.ok()) << once.error().message;
  EXPECT_EQ(once->items.items.size(), 2u);
  EXPECT_TRUE(once->released);
  // A stale revision acquires nothing.
  EXPECT_EQ(refused_with(admin_->snapshot_read(SnapshotRead{AcquireSource{doc, Revision{1}, kLease}, std::nullopt, 8, false})).reason,
            Reason::kResourceRevisionChanged);
  // The budgets are rules of the contract, refused before signing.
  for (Id limit : {Id{0}, Id{kSnapshotRangeRecords + 1}}) {
    auto r = admin_->snapshot_read(SnapshotRead{TokenSource{token}, std::nullopt, limit, false});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ClientError::Kind::kInvalid);
  }
  for (Millis lease : {Millis{0}, Millis{kSnapshotLeaseMaxMs.value + 1}}) {
    auto r = admin_->open_snapshot(doc, std::nullopt, lease);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ClientError::Kind::kInvalid);
  }
}

// One valid sample of every query kind, so that each reaches the hint check.
template <typename Op> Op sample_query(const SnapshotToken& token) {
  Op op{};
  if constexpr (requires { op.token; }) op.token = token;
  if constexpr (std::is_same_v<Op, ReadEntries>) op.keys = slots({"a"});
  if constexpr (std::is_same_v<Op, AssociationLookup>) op.name = {"doc"};
  if constexpr (std::is_same_v<Op, ReadBlock> || std::is_same_v<Op, BlockRead>) op.name = key("b");
  if constexpr (std::is_same_v<Op, OpenSnapshot>) op.lease_ms = kLease;
  if constexpr (std::is_same_v<Op, SnapshotRead>) op.source = TokenSource{token};
  return op;
}

TEST_F(SnapshotTest, TheControlHintAdmitsExactlyTheReleasesAndRefusesEveryOtherRequest) {
  const ResourceId doc = filled(1);
  auto post_hinted = [&](const QueryOp& op) {
    return post("/v1/query", to_json(sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, op}, seed_of(0))),
                {{"X-Transit-Control", "snapshot"}});
  };
  // Accepted: close_snapshot, and snapshot_read with finish.
  const auto a = open(*admin_, doc, Millis{60'000}).snapshot.token;
  const auto b = open(*admin_, doc, Millis{60'000}).snapshot.token;
  auto close = post_hinted(CloseSnapshot{a});
  ASSERT_EQ(close.status, 200) << close.body;
  auto closed = from_json<Response>(close.body, kMaxAnswerBytes);
  ASSERT_TRUE(closed.ok());
  EXPECT_TRUE(std::get<SnapshotClosed>(closed->result).released);
  auto finish = post_hinted(SnapshotRead{TokenSource{b}, std::nullopt, 8, true});
  ASSERT_EQ(finish.status, 200) << finish.body;
  EXPECT_TRUE(std::get<SnapshotRange>(from_json<Response>(finish.body, kMaxAnswerBytes)->result).released);
  EXPECT_EQ(post_hinted(SnapshotRead{AcquireSource{doc, std::nullopt, kLease}, std::nullopt, 8, true}).status, 200);

  // Refused: every other query kind, snapshot_read without finish included...
  std::size_t refused = 0;
  auto each = [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          using Op = std::variant_alternative_t<I, QueryOp>;
          const QueryOp op = sample_query<Op>(a);
          if (takes_control_hint(op)) return;
          auto answer = post_hinted(op);
          EXPECT_EQ(answer.status, 400) << Op::kName << ": " << answer.body;
          EXPECT_EQ(rejection_of(answer).reason, Reason::kControlHintNotAllowed) << Op::kName;
          ++refused;
        }(),
        ...);
  };
  each(std::make_index_sequence<std::variant_size_v<QueryOp>>{});
  EXPECT_EQ(refused, std::variant_size_v<QueryOp> - 1);  // all but close_snapshot; snapshot_read sampled without finish
  // ...and every command.
  auto command = post("/v1/command", to_json(sign(admin_->build(CreateRole{{"ops"}, std::nullopt}, 99), seed_of(0))),
                      {{"X-Transit-Control", "snapshot"}});
  EXPECT_EQ(rejection_of(command).reason, Reason::kControlHintNotAllowed);
  // The hint is no permission: a release still needs its signer's own snapshot.
  EXPECT_EQ(refused_with(admin_->snapshot_read(SnapshotRead{TokenSource{b}, std::nullopt, 8, true})).reason,
            Reason::kSnapshotClosed);
}

// The registry alone, on injected entropy and trusted time: its memory of
// ended snapshots is bounded, and a token of an incarnation that started
// earlier is told apart from one never issued (decisions 73, 77).
TEST(SnapshotRegistry, ItsMemoryOfEndedSnapshotsIsBoundedAndEarlierIncarnationsAreNamed) {
  SeededEntropy entropy(7);
  node::SnapshotRegistry earlier(entropy, TrustedMs{1'000}, {4, 8});
  auto old = earlier.open(PrincipalId{1}, ResourceId{1}, Revision{1}, Position{1}, Millis{100}, TrustedMs{1'000});
  ASSERT_TRUE(old.ok());
  node::SnapshotRegistry registry(entropy, TrustedMs{2'000}, {4, 8});
  EXPECT_EQ(registry.find(old->token, PrincipalId{1}, TrustedMs{2'000}).error().reason, Reason::kSnapshotRestarted);
  SnapshotToken later = old->token;
  later.value[0] = 0x80;  // an incarnation that started after this one: no token of it can exist here
  EXPECT_EQ(registry.find(later, PrincipalId{1}, TrustedMs{2'000}).error().reason, Reason::kUnknownSnapshot);

  auto first = registry.open(PrincipalId{1}, ResourceId{1}, Revision{1}, Position{1}, Millis{100}, TrustedMs{2'000});
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(registry.close(first->token, PrincipalId{1}, TrustedMs{2'000}));
  EXPECT_FALSE(registry.close(first->token, PrincipalId{1}, TrustedMs{2'000}));
  for (std::size_t i = 1; i < node::SnapshotRegistry::kEndedMemory; ++i) {
    auto s = registry.open(PrincipalId{1}, ResourceId{1}, Revision{1}, Position{1}, Millis{100}, TrustedMs{2'000});
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(registry.close(s->token, PrincipalId{1}, TrustedMs{2'000}));
  }
  EXPECT_EQ(registry.find(first->token, PrincipalId{1}, TrustedMs{2'000}).error().reason, Reason::kSnapshotClosed);  // the oldest remembered
  auto one_more = registry.open(PrincipalId{1}, ResourceId{1}, Revision{1}, Position{1}, Millis{100}, TrustedMs{2'000});
  ASSERT_TRUE(one_more.ok());
  ASSERT_TRUE(registry.close(one_more->token, PrincipalId{1}, TrustedMs{2'000}));
  EXPECT_EQ(registry.find(first->token, PrincipalId{1}, TrustedMs{2'000}).error().reason, Reason::kUnknownSnapshot);  // forgotten
  EXPECT_EQ(registry.open_count(), 0u);
}

TEST(SnapshotContract, TheSnapshotQueriesSpellAsTheirFixtures) {
  const auto fixture = [](const std::string& name) {
    std::ifstream in(std::string(COWBOY_FIXTURE_DIR) + "/transit/" + name);
    std::string line;
    std::getline(in, line);
    return line;
  };
  const Definition definition{"transit.v1:fixture"};
  EXPECT_EQ(to_json(Query{Version{}, definition, {"dev"}, PrincipalId{2}, OpenSnapshot{ResourceId{3}, Revision{5}, Millis{30'000}}}), fixture("open_snapshot.json"));
  SnapshotToken token;
  for (std::uint8_t b : {0x00, 0x00, 0x01, 0xa3, 0x18, 0x5c, 0x50, 0x00}) token.value.push_back(b);  // 1.8e12 ms
  for (int i = 1; i <= 8; ++i) token.value.push_back(static_cast<std::uint8_t>(0xa0 + i));
  for (int i = 0; i < 16; ++i) token.value.push_back(static_cast<std::uint8_t>(0xb0 + i));
  const Query read{Version{}, definition, {"dev"}, PrincipalId{2}, SnapshotRead{TokenSource{token}, key("k01"), 32, true}};
  EXPECT_EQ(to_json(read), fixture("snapshot_read.json"));
  EXPECT_TRUE(takes_control_hint(read.op));
}

}  // namespace
}  // namespace cowboy::transit
