// Segmented results over real HTTP against a real transitd (docs/transit.md,
// decisions 150-154): a resource's whole entry set read as numbered
// segments whose chain ends in complete-result evidence; the evidence fixed
// by the basis alone; continuations across later turns (a view reads on, a
// current basis is refused); cursors no segment wrote refused before signing
// and by the node; current rights at every segment.
#include <fstream>

#include "state_fixture.h"
#include "transit/contract/codec.h"
#include "transit/contract/operations.h"
#include "transit/contract/signing.h"

namespace cowboy::transit {
namespace {

using testing::seed_of;

class SegmentTest : public StateTest {
 protected:
  ResourceId filled(int count) {
    const ResourceId doc = resource("doc");
    process(doc);
    generation_ = fill(doc, count);
    return doc;
  }
  /// Every record of the result and its evidence, through the client.
  std::pair<std::vector<Entry>, Completion> whole(Client& c, const Basis& basis) {
    std::vector<Entry> seen;
    auto done = c.read_result(basis, [&](const Entry& e) {
      seen.push_back(e);
      return true;
    });
    EXPECT_TRUE(done.ok()) << (done.ok() ? "" : done.error().message);
    return {seen, done.ok() ? *done : Completion{}};
  }
  static Digest chain_of(ResourceId doc, Revision revision, const std::vector<Entry>& entries) {
    Digest d = segment_origin(doc, revision);
    for (const auto& e : entries) d = segment_link(d, e);
    return d;
  }
  Id generation_ = 0;
};

TEST_F(SegmentTest, AWholeResultReadAsSegmentsEndsWithEvidenceOverEveryRecord) {
  const ResourceId doc = filled(20);
  const Revision revision = revision_of(doc);
  const Basis basis = CurrentBasis{doc, revision};

  auto first = admin_->segment(basis);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->index, 0u);
  EXPECT_EQ(first->records_before, 0u);
  ASSERT_EQ(first->items.items.size(), 8u);  // the ordinary page budget
  ASSERT_TRUE(first->next);
  EXPECT_FALSE(first->complete);  // a segment with more to read is no evidence of completion
  EXPECT_EQ(first->next->index, 1u);
  EXPECT_EQ(first->next->records, 8u);
  EXPECT_EQ(first->next->chain, first->chain);
  EXPECT_EQ(first->chain, chain_of(doc, revision, first->items.items));

  auto [entries, evidence] = whole(*admin_, basis);
  ASSERT_EQ(entries.size(), 20u);
  EXPECT_EQ(text(entries[0].value), "vk00");
  EXPECT_EQ(text(entries[19].value), "vk19");
  EXPECT_EQ(evidence.segments, 3u);  // 8 + 8 + 4
  EXPECT_EQ(evidence.records, 20u);
  EXPECT_EQ(evidence.digest, chain_of(doc, revision, entries));

  // An empty result is one segment, complete, its digest the origin.
  const ResourceId empty = resource("empty");
  auto [none, nothing] = whole(*admin_, CurrentBasis{empty, Revision{1}});
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(nothing.segments, 1u);
  EXPECT_EQ(nothing.records, 0u);
  EXPECT_EQ(nothing.digest, segment_origin(empty, Revision{1}));
  EXPECT_NE(nothing.digest, segment_origin(doc, Revision{1}));  // the origin names the resource
}

TEST_F(SegmentTest, TheEvidenceIsFixedByTheBasisAndChangesWithAnyRecord) {
  const ResourceId doc = filled(12);
  const Revision revision = revision_of(doc);
  const auto one = whole(*admin_, CurrentBasis{doc, revision}).second;
  const auto again = whole(*admin_, CurrentBasis{doc, revision}).second;
  EXPECT_EQ(one, again);  // another reader of the same basis gets the same evidence

  // One value changed: same count, another digest; same value rewritten: another revision, another digest.
  accept(*admin_, Turn{kPid, generation_, std::nullopt, doc, std::nullopt, {{{key("k05"), value("other")}}}, {}, {}, {}, std::nullopt});
  const auto changed = whole(*admin_, CurrentBasis{doc, revision + 1}).second;
  EXPECT_EQ(changed.records, one.records);
  EXPECT_NE(changed.digest, one.digest);
}

TEST_F(SegmentTest, AViewReadsOnAcrossLaterTurnsAndACurrentBasisIsRefusedOnceItMoved) {
  const ResourceId doc = filled(12);
  auto captured = ok<TurnPublished>(admin_->submit(
      Turn{kPid, generation_, std::nullopt, doc, std::nullopt, {{{key("k00"), value("x")}}}, {}, {{doc}}, {}, std::nullopt}));
  ASSERT_EQ(captured.views.items.size(), 1u);
  const Id view = captured.views.items[0];
  const Revision at_view = *captured.revision;

  auto current = admin_->segment(CurrentBasis{doc, at_view});
  ASSERT_TRUE(current.ok()) << current.error().message;
  auto through_view = admin_->segment(ViewBasis{view});
  ASSERT_TRUE(through_view.ok()) << through_view.error().message;
  EXPECT_EQ(through_view->view, view);
  EXPECT_EQ(through_view->revision, at_view);

  // A later turn: the current basis's continuation is refused, nothing mixed...
  accept(*admin_, Turn{kPid, generation_, std::nullopt, doc, std::nullopt, {{{key("k01"), value("y")}}}, {}, {}, {}, std::nullopt});
  auto moved = admin_->segment(CurrentBasis{doc, at_view}, current->next);
  ASSERT_FALSE(moved.ok());
  ASSERT_TRUE(moved.error().rejection);
  EXPECT_EQ(moved.error().rejection->reason, Reason::kResourceRevisionChanged);
  EXPECT_EQ(moved.error().rejection->code, RejectionCode::kConflict);
  // ...while the view's result is the captured one to its end.
  std::vector<Entry> seen(through_view->items.items.begin(), through_view->items.items.end());
  auto cursor = through_view->next;
  std::optional<Completion> evidence;
  while (cursor) {
    auto s = admin_->segment(ViewBasis{view}, cursor);
    ASSERT_TRUE(s.ok()) << s.error().message;
    seen.insert(seen.end(), s->items.items.begin(), s->items.items.end());
    cursor = s->next;
    evidence = s->complete;
  }
  ASSERT_TRUE(evidence);
  ASSERT_EQ(seen.size(), 12u);
  EXPECT_EQ(text(seen[0].value), "x");
  EXPECT_EQ(text(seen[1].value), "vk01");  // not the later "y"
  EXPECT_EQ(evidence->digest, chain_of(doc, at_view, seen));
}

TEST_F(SegmentTest, ACursorNoSegmentCouldHaveWrittenIsRefusedBeforeSigningAndByTheNode) {
  const ResourceId doc = filled(12);
  const Revision revision = revision_of(doc);
  const Position position{node_->sequencer().stats().position};
  const Basis basis = CurrentBasis{doc, revision};
  const std::vector<SegmentCursor> broken = {
      {position, 0, {{'k'}}, 0, {}},   // index 0 is the first segment's, which has no cursor
      {position, 1, {}, 0, {}},        // no key after
      {position, 1, {{'k'}}, 9, {}},   // more records than one page holds
  };
  for (const auto& c : broken) {
    auto r = admin_->segment(basis, c);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ClientError::Kind::kInvalid) << r.error().message;
    // Sent anyway, the node refuses it as the contract's rule.
    auto a = post("/v1/query", to_json(sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, ReadSegment{basis, c}}, seed_of(0))));
    EXPECT_EQ(a.status, 400) << a.body;
    EXPECT_EQ(rejection_of(a).reason, Reason::kBadSegmentCursor);
  }
  // A cut that is no position of this node.
  auto future = admin_->segment(basis, SegmentCursor{position + 100, 1, {{'k'}}, 8, {}});
  ASSERT_FALSE(future.ok());
  ASSERT_TRUE(future.error().rejection);
  EXPECT_EQ(future.error().rejection->reason, Reason::kBadCut);
}

TEST_F(SegmentTest, EverySegmentNeedsCurrentReadRightsAndTheCapabilityIsReported) {
  const ResourceId doc = filled(12);
  const Revision revision = revision_of(doc);
  auto caps = admin_->capabilities();
  ASSERT_TRUE(caps.ok());
  bool listed = false;
  for (const auto& n : caps->supported.items) listed |= n.value == capability::kSegmentedResults;
  EXPECT_TRUE(listed);

  const Id role = principal(5, 105, RealmScope{}, kInspect);
  const Id access = grant(role, ResourceScope{doc}, kInspect | kRead);
  Client reader(options(5, 105));
  auto first = reader.segment(CurrentBasis{doc, revision});
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(first->next);
  ASSERT_TRUE(admin_->submit(RevokeGrant{access, std::nullopt}).ok());
  auto denied = reader.segment(CurrentBasis{doc, revision}, first->next);  // the continuation grants nothing
  ASSERT_FALSE(denied.ok());
  ASSERT_TRUE(denied.error().rejection);
  EXPECT_EQ(denied.error().rejection->reason, Reason::kNotPermitted);
}

TEST(SegmentContract, TheSegmentAndCollectableQueriesSpellAsTheirFixtures) {
  const auto fixture = [](const std::string& name) {
    std::ifstream in(std::string(COWBOY_FIXTURE_DIR) + "/transit/" + name);
    std::string line;
    std::getline(in, line);
    return line;
  };
  const Definition definition{"transit.v1:fixture"};
  Digest chain{};
  for (std::uint8_t i = 0; i < 32; ++i) chain[i] = i;
  const Query segment{Version{}, definition, {"dev"}, PrincipalId{1},
                      ReadSegment{CurrentBasis{ResourceId{1}, Revision{2}}, SegmentCursor{Position{5}, 1, {{'k', '0', '7'}}, 8, chain}}};
  EXPECT_EQ(to_json(segment), fixture("read_segment.json"));
  EXPECT_EQ(to_json(Query{Version{}, definition, {"dev"}, PrincipalId{1}, ListCollectable{Cursor{Position{5}, 7}}}), fixture("list_collectable.json"));
}

}  // namespace
}  // namespace cowboy::transit
