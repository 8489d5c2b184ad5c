// Transit state over real HTTP on 127.0.0.1: resources and their entries read
// through bounded pages with cuts, read_entries and its rules, views of
// earlier revisions, processes and their mailboxes, turns and their bounds,
// failures and scoped retry, suspension and expiry, courier delivery, and a
// restart that recovers exactly what was published.
#include <gtest/gtest.h>

#include "state_fixture.h"
#include "transit/contract/signing.h"
#include "transit/node/http_routes.h"

namespace cowboy::transit {
namespace {

TEST_F(StateTest, EntryPagesAreDenseOrderedAndOnlyANullCursorEndsThem) {
  const ResourceId doc = resource("doc");
  process(doc);
  fill(doc, 20);
  const Revision revision = revision_of(doc);
  EXPECT_EQ(revision, Revision{6});  // created at 1, five turns
  std::vector<std::string> seen;
  std::optional<EntryCursor> cursor;
  int pages = 0;
  do {
    auto page = answer<EntryPage>(*admin_, ListEntries{CurrentBasis{doc, revision}, std::nullopt, cursor});
    ++pages;
    EXPECT_LE(page.items.items.size(), kPageRecords);
    for (const auto& e : page.items.items) seen.emplace_back(e.key.value.begin(), e.key.value.end());
    cursor = page.cursor;
  } while (cursor);
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(seen.size(), 20u);
  EXPECT_EQ(seen.front(), "k00");
  EXPECT_EQ(seen.back(), "k19");
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));

  // A direct key lookup, and the rule that it excludes a continuation.
  auto one = answer<EntryPage>(*admin_, ListEntries{CurrentBasis{doc, revision}, key("k07"), std::nullopt});
  ASSERT_EQ(one.items.items.size(), 1u);
  EXPECT_EQ(text(one.items.items[0].value), "vk07");
  EXPECT_EQ(one.items.items[0].revision, Revision{3});
  SignedQuery both = sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1},
                                ListEntries{CurrentBasis{doc, revision}, key("k07"), EntryCursor{Position{1}, {key("k01").value}}}},
                          testing::seed_of(0));
  auto ambiguous = post("/v1/query", to_json(both));
  EXPECT_EQ(ambiguous.status, 400);
  EXPECT_EQ(rejection_of(ambiguous).reason, Reason::kAmbiguousKeyCursor);
  auto local = admin_->query(ListEntries{CurrentBasis{doc, revision}, key("k07"), EntryCursor{Position{1}, {key("k01").value}}});
  ASSERT_FALSE(local.ok());
  EXPECT_EQ(local.error().kind, ClientError::Kind::kInvalid);  // refused before signing
}

TEST_F(StateTest, ContinuationsExpireOnGrantExpansionAndRevocationAndOtherwiseContinue) {
  const ResourceId doc = resource("doc");
  const ResourceId other = resource("other");
  process(doc);
  fill(doc, 20);
  const Revision revision = revision_of(doc);
  const Id role = principal(2, 100, ResourceScope{doc}, kInspect | kRead);
  Client reader(options(2, 100));
  const ListEntries first{CurrentBasis{doc, revision}, std::nullopt, std::nullopt};

  auto page1 = answer<EntryPage>(reader, first);
  ASSERT_TRUE(page1.cursor);
  auto page2 = answer<EntryPage>(reader, ListEntries{first.basis, std::nullopt, page1.cursor});
  EXPECT_EQ(page2.cut, page1.cut);  // nothing changed: the cut holds
  EXPECT_EQ(page2.items.items.size(), 8u);

  const Id expansion = grant(role, ResourceScope{other}, kInspect);
  auto stale = query_refused(reader, ListEntries{first.basis, std::nullopt, page1.cursor});
  EXPECT_EQ(stale.code, RejectionCode::kStaleCut);
  EXPECT_EQ(stale.reason, Reason::kPolicyChanged);
  EXPECT_EQ(http_status(stale.code), 409);

  auto again = answer<EntryPage>(reader, first);
  ASSERT_TRUE(again.cursor);
  ASSERT_TRUE(admin_->submit(RevokeGrant{expansion, std::nullopt}).ok());
  EXPECT_EQ(query_refused(reader, ListEntries{first.basis, std::nullopt, again.cursor}).code, RejectionCode::kStaleCut);

  // A resource catalog listing expires when the catalog changes, too.
  for (int i = 0; i < 8; ++i) resource(numbered("r", i));
  auto resources = answer<ResourcePage>(*admin_, ListResources{std::nullopt});
  ASSERT_TRUE(resources.cursor);
  resource("late");
  auto changed = query_refused(*admin_, ListResources{resources.cursor});
  EXPECT_EQ(changed.code, RejectionCode::kStaleCut);
  EXPECT_EQ(changed.reason, Reason::kCatalogChanged);

  // A current-resource read at a revision that has moved on is refused, not pinned.
  Turn t{kPid, 2, std::nullopt, doc, std::nullopt, {{{key("k00"), value("new")}}}, {}, {}, {}, std::nullopt};
  accept(*admin_, t);
  auto moved = query_refused(reader, ListEntries{first.basis, std::nullopt, page1.cursor});
  EXPECT_EQ(moved.code, RejectionCode::kConflict);
  EXPECT_EQ(moved.reason, Reason::kResourceRevisionChanged);
}

TEST_F(StateTest, AnEmptyFilteredPageCarriesACursorThatAdvances) {
  for (int i = 0; i < 70; ++i) resource(numbered("r", i));
  principal(2, 100, ResourceScope{ResourceId{70}}, kInspect);
  Client reader(options(2, 100));
  auto first = answer<ResourcePage>(reader, ListResources{std::nullopt});
  EXPECT_TRUE(first.items.items.empty());  // 64 hidden resources examined
  ASSERT_TRUE(first.cursor);
  EXPECT_EQ(first.cursor->after, 64u);
  auto second = answer<ResourcePage>(reader, ListResources{first.cursor});
  ASSERT_EQ(second.items.items.size(), 1u);
  EXPECT_EQ(second.items.items[0].resource, ResourceId{70});
  EXPECT_FALSE(second.cursor);  // complete
}

TEST_F(StateTest, HiddenAssociationNamesNeverAppearInPagesCursorsOrLookups) {
  const ResourceId visible = resource("visible");
  const ResourceId hidden = resource("hidden");
  accept(*admin_, CreateProcess{kPid, {}});
  for (int i = 0; i < 9; ++i) accept(*admin_, Associate{kPid, {numbered("secret-name-", i)}, hidden});
  accept(*admin_, Associate{kPid, {"public"}, visible});
  const Id role = principal(2, 100, PidScope{kPid}, kInspect);
  grant(role, ResourceScope{visible}, kInspect);
  Client reader(options(2, 100));

  std::vector<std::string> names;
  std::optional<Cursor> cursor;
  std::string every_page;
  do {
    auto r = reader.query(ListAssociations{kPid, cursor});
    ASSERT_TRUE(r.ok()) << r.error().message;
    every_page += to_json(*r);
    const auto& page = std::get<AssociationPage>(r->result);
    for (const auto& a : page.items.items) names.push_back(a.name.value);
    cursor = page.cursor;
  } while (cursor);
  EXPECT_EQ(names, std::vector<std::string>{"public"});
  EXPECT_EQ(every_page.find("secret"), std::string::npos);  // cursors are revision ids, never names

  auto absent = answer<LookupResult>(reader, AssociationLookup{kPid, {"no-such-name"}});
  auto concealed = answer<LookupResult>(reader, AssociationLookup{kPid, {"secret-name-0"}});
  EXPECT_FALSE(absent.association);
  EXPECT_FALSE(concealed.association);  // null for hidden, as for absent
  auto shown = answer<LookupResult>(reader, AssociationLookup{kPid, {"public"}});
  ASSERT_TRUE(shown.association);
  EXPECT_EQ(shown.association->resource, visible);
}

TEST_F(StateTest, InspectListsMetadataButReadingValuesNeedsReadAndRevokingReadDeniesReadAccess) {
  const ResourceId doc = resource("doc");
  process(doc);
  fill(doc, 4);
  principal(3, 103, ResourceScope{doc}, kInspect);
  Client inspector(options(3, 103));
  auto listed = answer<ResourcePage>(inspector, ListResources{std::nullopt});
  ASSERT_EQ(listed.items.items.size(), 1u);
  EXPECT_EQ(listed.items.items[0].name.value, "doc");
  auto denied = query_refused(inspector, ReadEntries{doc, std::nullopt, std::nullopt, slots({"k00"})});
  EXPECT_EQ(denied.code, RejectionCode::kDenied);

  const Id role = principal(4, 104, ResourceScope{doc}, kInspect);
  const Id read = grant(role, ResourceScope{doc}, kRead);
  Client reader(options(4, 104));
  EXPECT_EQ(answer<ResourceAccess>(reader, ReadAccess{doc}).resource.resource, doc);
  ASSERT_TRUE(admin_->submit(RevokeGrant{read, std::nullopt}).ok());
  EXPECT_EQ(query_refused(reader, ReadAccess{doc}).code, RejectionCode::kDenied);
  EXPECT_EQ(answer<ResourcePage>(reader, ListResources{std::nullopt}).items.items.size(), 1u);  // metadata still
}

TEST_F(StateTest, ReadEntriesKeepsSlotOrderAndRefusesMalformedSlotsAndStaleRevisions) {
  const ResourceId doc = resource("doc");
  process(doc);
  fill(doc, 8);
  const Revision revision = revision_of(doc);
  auto batch = answer<EntryBatch>(*admin_, ReadEntries{doc, revision, std::nullopt, slots({"k05", "zz", "k01"})});
  ASSERT_TRUE(batch.entries.items[0]);
  EXPECT_EQ(text(batch.entries.items[0]->value), "vk05");
  EXPECT_FALSE(batch.entries.items[1]);  // absent at this revision
  ASSERT_TRUE(batch.entries.items[2]);
  EXPECT_EQ(text(batch.entries.items[2]->value), "vk01");
  for (std::size_t i = 3; i < 8; ++i) EXPECT_FALSE(batch.entries.items[i]);
  EXPECT_EQ(batch.revision, revision);
  EXPECT_FALSE(batch.view);

  auto raw = [&](const ReadEntries& q) {
    return to_json(sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, q}, testing::seed_of(0)));
  };
  Slots<EntryKey, 8> gap = slots({"k00"});
  gap.items[2] = key("k02");
  const std::vector<std::pair<std::string, Reason>> cases = {
      {raw(ReadEntries{doc, std::nullopt, std::nullopt, gap}), Reason::kKeysNotAPrefix},
      {raw(ReadEntries{doc, std::nullopt, std::nullopt, Slots<EntryKey, 8>{}}), Reason::kNoKeys},
      {raw(ReadEntries{doc, std::nullopt, std::nullopt, slots({"k00", "k00"})}), Reason::kDuplicateKeySlot},
      {testing::replace(raw(ReadEntries{doc, std::nullopt, std::nullopt, slots({"k00"})}), "null]", "null,null]"),
       Reason::kBadLength},
  };
  for (const auto& [body, reason] : cases) {
    auto a = post("/v1/query", body);
    EXPECT_EQ(a.status, 400) << name_of(reason);
    EXPECT_EQ(rejection_of(a).reason, reason);
  }
  auto stale = query_refused(*admin_, ReadEntries{doc, revision - 1, std::nullopt, slots({"k00"})});
  EXPECT_EQ(stale.code, RejectionCode::kConflict);
  EXPECT_EQ(stale.reason, Reason::kResourceRevisionChanged);
}

TEST_F(StateTest, AViewReadsItsCapturedRootAfterChangesAndIsDeniedAfterRevocation) {
  const ResourceId doc = resource("doc");
  process(doc);
  // A PID-scoped worker: execute at its process, inspect/read/write on its resource.
  const Id role = principal(5, 105, PidScope{kPid}, kExecute | kInspect, kPid);
  const Id access = grant(role, ResourceScope{doc}, kInspect | kRead | kWrite);
  Client worker(options(5, 105));
  const Id generation = ok<ProcessChanged>(worker.submit(Own{kPid, 1})).generation;
  auto first = ok<TurnPublished>(worker.submit(
      Turn{kPid, generation, std::nullopt, doc, Revision{1}, {{{key("a"), value("one")}}}, {}, {{doc}}, {}, std::nullopt}));
  ASSERT_EQ(first.views.items.size(), 1u);
  const Id view = first.views.items[0];
  accept(worker, Turn{kPid, generation, std::nullopt, doc, Revision{2}, {{{key("a"), value("two")}, {key("b"), std::nullopt}}}, {}, {}, {}, std::nullopt});

  auto through_view = answer<EntryBatch>(worker, ReadEntries{doc, std::nullopt, view, slots({"a"})});
  EXPECT_EQ(through_view.view, view);
  EXPECT_EQ(through_view.revision, Revision{2});
  EXPECT_EQ(text(through_view.entries.items[0]->value), "one");
  auto current = answer<EntryBatch>(worker, ReadEntries{doc, std::nullopt, std::nullopt, slots({"a"})});
  EXPECT_EQ(current.revision, Revision{3});
  EXPECT_EQ(text(current.entries.items[0]->value), "two");
  auto listed = answer<EntryPage>(worker, ListEntries{ViewBasis{view}, std::nullopt, std::nullopt});
  ASSERT_EQ(listed.items.items.size(), 1u);
  EXPECT_EQ(listed.revision, Revision{2});

  // A view is no bearer capability: the root (not the executor) may not read through it...
  EXPECT_EQ(query_refused(*admin_, ReadEntries{doc, std::nullopt, view, slots({"a"})}).reason, Reason::kNotExecutor);
  // ...and the executor loses it with its resource grant.
  ASSERT_TRUE(admin_->submit(RevokeGrant{access, std::nullopt}).ok());
  EXPECT_EQ(query_refused(worker, ReadEntries{doc, std::nullopt, view, slots({"a"})}).code, RejectionCode::kDenied);
}

TEST_F(StateTest, AViewExtendsNoLifetime) {
  const ResourceId doc = resource("doc");
  process(doc);
  // A resource the process is associated with but does not require, so that
  // it may retire while the process runs (decision 36a).
  const ResourceId notes = resource("notes");
  accept(*admin_, Associate{kPid, {"notes"}, notes});
  const Id generation = fill(doc, 0);
  auto turn = ok<TurnPublished>(admin_->submit(
      Turn{kPid, generation, std::nullopt, notes, std::nullopt, {{{key("a"), value("one")}}}, {}, {{notes}}, {}, std::nullopt}));
  ASSERT_EQ(turn.views.items.size(), 1u);
  accept(*admin_, RetireResource{notes});
  auto retired = query_refused(*admin_, ReadEntries{notes, std::nullopt, turn.views.items[0], slots({"a"})});
  EXPECT_EQ(retired.reason, Reason::kLifetimeEnded);
  // The name stays reserved after retirement.
  EXPECT_EQ(refused(admin_->submit(CreateResource{{"notes"}, std::nullopt})).reason, Reason::kNameTaken);
}

TEST_F(StateTest, EachTurnBoundPlusOneIsRefusedAndNothingPartialIsPublished) {
  const ResourceId doc = resource("doc");
  const ResourceId elsewhere = resource("elsewhere");
  process(doc);
  const Id generation = fill(doc, 0);
  const Position before = position();
  auto base = [&] { return Turn{kPid, generation, std::nullopt, doc, std::nullopt, {}, {}, {}, {}, std::nullopt}; };

  Turn mutations = base();
  for (int i = 0; i < 5; ++i) mutations.mutations.items.push_back({key(numbered("m", i)), value("x")});
  Turn blocks = base();
  std::vector<Client::Bytes> bodies;
  for (int i = 0; i < 17; ++i) {
    bodies.push_back(Client::Bytes(10, static_cast<std::uint8_t>(i)));
    blocks.blocks.items.push_back({key(numbered("b", i)), 10, crypto::sha256(ByteView(bodies.back()))});
  }
  Turn views = base();
  views.views.items = {ResourceId{1}, ResourceId{2}, ResourceId{3}, ResourceId{4}, ResourceId{5}};
  Turn outputs = base();
  for (int i = 0; i < 5; ++i) outputs.outputs.items.push_back({kPid, value("o")});
  for (const auto& [turn, what] : std::vector<std::pair<Turn, std::string>>{
           {mutations, "mutations"}, {blocks, "blocks"}, {views, "views"}, {outputs, "outputs"}}) {
    auto r = refused(admin_->submit(turn, what == "blocks" ? bodies : std::vector<Client::Bytes>{}));
    EXPECT_EQ(r.code, RejectionCode::kInvalidRequest) << what;
    EXPECT_EQ(r.reason, Reason::kTooManyItems) << what;
  }
  // Sizes: a key of 33 bytes, a value of 257, a block of 64 KiB + 1, blocks of 128 KiB + 1.
  Turn long_key = base();
  long_key.mutations.items.push_back({key(std::string(33, 'k')), value("x")});
  EXPECT_EQ(refused(admin_->submit(long_key)).reason, Reason::kBadLength);
  Turn long_value = base();
  long_value.mutations.items.push_back({key("k"), value(std::string(257, 'v'))});
  EXPECT_EQ(refused(admin_->submit(long_value)).reason, Reason::kBadLength);
  Turn big_block = base();
  big_block.blocks.items.push_back({key("big"), kBlockBytes + 1, Digest{}});
  auto local = admin_->submit(big_block);
  ASSERT_FALSE(local.ok());
  EXPECT_EQ(local.error().kind, ClientError::Kind::kInvalid);
  Turn too_much = base();
  for (int i = 0; i < 3; ++i) too_much.blocks.items.push_back({key(numbered("t", i)), 43691, Digest{}});
  EXPECT_NE(admin_->submit(too_much).error().message.find("blocks_too_large"), std::string::npos);

  // One writable resource: a turn names it once, and it must be associated.
  Turn unassociated = base();
  unassociated.resource = elsewhere;
  unassociated.mutations.items.push_back({key("k"), value("x")});
  EXPECT_EQ(refused(admin_->submit(unassociated)).reason, Reason::kNotAssociated);
  Turn one = base();
  one.mutations.items.push_back({key("k"), value("x")});
  const SignedRequest signed_one = sign(admin_->build(one, *admin_->next_sequence()), testing::seed_of(0));
  const std::string twice = testing::replace(to_json(signed_one), "\"resource\":" + std::to_string(doc.value) + ",",
                                             "\"resource\":" + std::to_string(doc.value) + ",\"resource\":" +
                                                 std::to_string(elsewhere.value) + ",");
  EXPECT_EQ(rejection_of(post("/v1/command", twice)).reason, Reason::kDuplicateKey);

  // A turn refused by its last rule leaves no entry, revision, head or position behind.
  accept(*admin_, Send{kPid, value("in")});
  const Position after_send = position();
  Turn partial = base();
  partial.input = 1;
  partial.mutations.items.push_back({key("k"), value("x")});
  partial.outputs.items.push_back({Pid{99}, value("nowhere")});
  EXPECT_EQ(refused(admin_->submit(partial)).reason, Reason::kUnknownDestination);
  EXPECT_EQ(position(), after_send);
  EXPECT_EQ(after_send, before + 1);
  EXPECT_EQ(revision_of(doc), Revision{1});
  EXPECT_FALSE(answer<EntryBatch>(*admin_, ReadEntries{doc, std::nullopt, std::nullopt, slots({"k"})}).entries.items[0]);
  EXPECT_EQ(process_info(*admin_).head, 1u);
}

TEST_F(StateTest, BlocksTravelAfterTheEnvelopeAreCheckedAndImmutable) {
  const ResourceId doc = resource("doc");
  process(doc);
  const Id generation = fill(doc, 0);
  Client::Bytes body(kBlockBytes, 0x5a);
  Turn t{kPid, generation, std::nullopt, doc, std::nullopt, {}, {}, {}, {}, std::nullopt};
  t.blocks.items.push_back({key("blob"), body.size(), crypto::sha256(ByteView(body))});
  auto published = ok<TurnPublished>(admin_->submit(t, {body}));
  EXPECT_EQ(published.revision, Revision{2});
  auto read = answer<Block>(*admin_, ReadBlock{CurrentBasis{doc, Revision{2}}, key("blob"), std::nullopt});
  EXPECT_EQ(read.body.value, body);
  EXPECT_EQ(read.revision, Revision{2});

  // The same name again is refused: blocks are immutable once written.
  EXPECT_EQ(refused(admin_->submit(t, {body})).reason, Reason::kBlockExists);
  // A body that is not the descriptor's is refused before anything is decided.
  Turn other = t;
  other.blocks.items[0].name = key("blob2");
  const SignedRequest s = sign(admin_->build(other, *admin_->next_sequence()), testing::seed_of(0));
  Client::Bytes wrong = body;
  wrong[100] ^= 1;
  auto mismatch = post("/v1/command", command_body(to_json(s), {wrong}));
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_EQ(rejection_of(mismatch).reason, Reason::kBlockMismatch);
}

TEST_F(StateTest, AFailedTurnBlocksTheHeadAndOnlyAScopedRetryClearsIt) {
  const ResourceId doc = resource("doc");
  process(doc);
  principal(5, 105, PidScope{kPid}, kExecute | kInspect, kPid);
  Client worker(options(5, 105));
  const Id generation = ok<ProcessChanged>(worker.submit(Own{kPid, 1})).generation;
  EXPECT_EQ(ok<Sent>(admin_->submit(Send{kPid, value("first")})).input, 1u);
  EXPECT_EQ(process_info(worker).input->value, value("first"));  // released to its executor
  accept(worker, FailTurn{kPid, generation, 1, {"handler threw"}});

  auto blocked = process_info(*admin_);
  EXPECT_EQ(blocked.state, ProcessState::kBlocked);
  EXPECT_EQ(blocked.failure, 1u);
  EXPECT_FALSE(blocked.owner);
  EXPECT_FALSE(blocked.input);  // inspection discloses no input
  // Later sends are admitted behind the failed head.
  EXPECT_EQ(ok<Sent>(admin_->submit(Send{kPid, value("second")})).input, 2u);
  EXPECT_EQ(refused(worker.submit(Own{kPid, generation})).reason, Reason::kNotIdle);
  EXPECT_EQ(refused(worker.submit(Retry{kPid, generation, 1})).code, RejectionCode::kDenied);  // no pid_admin
  EXPECT_EQ(refused(admin_->submit(Retry{kPid, generation + 1, 1})).reason, Reason::kStaleGeneration);
  EXPECT_EQ(refused(admin_->submit(Retry{kPid, generation, 2})).reason, Reason::kFailureMismatch);
  EXPECT_EQ(process_info(*admin_).state, ProcessState::kBlocked);  // each refusal changed nothing

  const Id retried = ok<ProcessChanged>(admin_->submit(Retry{kPid, generation, 1})).generation;
  EXPECT_EQ(retried, generation + 1);
  auto idle = process_info(*admin_);
  EXPECT_EQ(idle.state, ProcessState::kIdle);
  EXPECT_EQ(idle.head, 1u);  // nothing consumed
  EXPECT_EQ(idle.tail, 2u);
  const Id owned = ok<ProcessChanged>(worker.submit(Own{kPid, retried})).generation;
  auto next = process_info(worker);
  ASSERT_TRUE(next.input);
  EXPECT_EQ(next.input->input, 1u);  // the failed input again, not the one behind it
  EXPECT_EQ(refused(worker.submit(Turn{kPid, owned, 2, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt})).reason,
            Reason::kNotHead);
  accept(worker, Turn{kPid, owned, 1, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt});
  EXPECT_EQ(process_info(worker).input->value, value("second"));
}

TEST_F(StateTest, AnExpiredSuspensionRetiresForGoodAndCountsItsInputCancelled) {
  const ResourceId doc = resource("doc");
  process(doc);
  const TrustedMs deadline = clock_.trusted() + Millis{1000};
  accept(*admin_, Suspend{kPid, 1, deadline});
  EXPECT_EQ(process_info(*admin_).state, ProcessState::kSuspended);
  EXPECT_EQ(refused(admin_->submit(Own{kPid, 1})).reason, Reason::kNotIdle);
  accept(*admin_, Send{kPid, value("a")});
  accept(*admin_, Send{kPid, value("b")});
  EXPECT_EQ(refused(admin_->submit(Suspend{kPid, 1, clock_.trusted() + Millis{5}})).reason, Reason::kSuspended);

  clock_.set(deadline + Millis{1});
  auto retired = process_info(*admin_);
  EXPECT_EQ(retired.state, ProcessState::kRetired);
  EXPECT_EQ(retired.cancelled, 2u);
  EXPECT_EQ(refused(admin_->submit(Resume{kPid, 1})).reason, Reason::kRetired);
  EXPECT_EQ(refused(admin_->submit(Send{kPid, value("c")})).reason, Reason::kRetired);
  EXPECT_EQ(refused(admin_->submit(Retry{kPid, 1, 1})).reason, Reason::kRetired);
}

TEST_F(StateTest, SuspendAndResumeFenceTheGeneration) {
  const ResourceId doc = resource("doc");
  process(doc);
  accept(*admin_, Suspend{kPid, 1, clock_.trusted() + Millis{60'000}});
  EXPECT_EQ(refused(admin_->submit(Resume{kPid, 0})).reason, Reason::kStaleGeneration);
  EXPECT_EQ(ok<ProcessChanged>(admin_->submit(Resume{kPid, 1})).generation, 2u);
  EXPECT_EQ(process_info(*admin_).state, ProcessState::kIdle);
}

TEST_F(StateTest, ACourierDeliversOutputsInRouteOrder) {
  const ResourceId doc = resource("doc");
  const ResourceId inbox = resource("inbox");
  process(doc);
  process(inbox, 8);
  const Id generation = fill(doc, 0);
  auto turn = ok<TurnPublished>(admin_->submit(Turn{kPid, generation, std::nullopt, std::nullopt, std::nullopt, {}, {}, {},
                                                    {{{Pid{8}, value("one")}, {Pid{8}, value("two")}}}, std::nullopt}));
  ASSERT_EQ(turn.outputs.items.size(), 2u);
  const Id first = turn.outputs.items[0], second = turn.outputs.items[1];
  principal(6, 106, PidScope{Pid{8}}, kCourier);
  Client courier(options(6, 106));
  courier.set_next_sequence(1);  // without inspect it cannot ask for its identity
  auto early = refused(courier.submit(Deliver{second}));
  EXPECT_EQ(early.reason, Reason::kRouteOrder);
  EXPECT_EQ(ok<Delivered>(courier.submit(Deliver{first})).input, 1u);
  EXPECT_EQ(ok<Delivered>(courier.submit(Deliver{second})).input, 2u);
  EXPECT_EQ(refused(courier.submit(Deliver{second})).reason, Reason::kResolved);
  EXPECT_EQ(process_info(*admin_, 8).tail, 2u);
  // The destination's input keeps its origin.
  principal(9, 109, PidScope{Pid{8}}, kExecute);
  Client worker(options(9, 109));
  worker.set_next_sequence(1);
  accept(worker, Own{Pid{8}, 1});
  auto head = process_info(worker, 8).input;
  ASSERT_TRUE(head);
  EXPECT_EQ(head->value, value("one"));
  EXPECT_EQ(head->origin.output, first);
  EXPECT_EQ(head->origin.source, kPid);
}

TEST_F(StateTest, ARestartRecoversThePublishedStateExactly) {
  const ResourceId doc = resource("doc");
  process(doc);
  const Id generation = fill(doc, 12);
  accept(*admin_, Send{kPid, value("pending")});
  const Revision revision = revision_of(doc);
  auto before = answer<EntryPage>(*admin_, ListEntries{CurrentBasis{doc, revision}, std::nullopt, std::nullopt});
  const auto process_before = process_info(*admin_);
  admin_.reset();
  restart();
  admin_ = std::make_unique<Client>(root());
  auto after = answer<EntryPage>(*admin_, ListEntries{CurrentBasis{doc, revision}, std::nullopt, std::nullopt});
  EXPECT_EQ(to_json(after.items), to_json(before.items));
  EXPECT_EQ(to_json(process_info(*admin_)), to_json(process_before));
  // And it goes on where it stopped.
  auto turn = ok<TurnPublished>(admin_->submit(Turn{kPid, generation, 1, doc, revision, {{{key("k00"), std::nullopt}}}, {}, {}, {}, std::nullopt}));
  EXPECT_EQ(turn.revision, revision + 1);
  auto gone = answer<EntryBatch>(*admin_, ReadEntries{doc, std::nullopt, std::nullopt, slots({"k00", "k01"})});
  EXPECT_FALSE(gone.entries.items[0]);  // deleted at the new revision
  EXPECT_TRUE(gone.entries.items[1]);
}

TEST_F(StateTest, ProcessListsShowRecordedMetadataOnlyToThoseWhoMayInspectIt) {
  const ResourceId doc = resource("doc");
  for (Pid pid{1}; pid <= Pid{10}; pid = Pid{pid.value + 1})
    if (pid != kPid) accept(*admin_, CreateProcess{pid, {}});
  process(doc);
  std::vector<Id> seen;
  std::optional<Cursor> cursor;
  Position cut{};
  do {
    auto page = answer<ProcessPage>(*admin_, ListProcesses{cursor});
    if (cut.value == 0) cut = page.cut;
    EXPECT_EQ(page.cut, cut);
    for (const auto& p : page.items.items) seen.push_back(p.pid.value);
    cursor = page.cursor;
  } while (cursor);
  EXPECT_EQ(seen, (std::vector<Id>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));

  // A PID-scoped principal sees its own process only, whatever its realm grant says.
  principal(2, 100, RealmScope{}, kInspect, Id{3});
  Client scoped(options(2, 100));
  auto own = answer<ProcessPage>(scoped, ListProcesses{std::nullopt});
  ASSERT_EQ(own.items.items.size(), 1u);
  EXPECT_EQ(own.items.items[0].pid, Pid{3});
  EXPECT_FALSE(own.cursor);
  // A principal holding inspect at one PID's scope sees that one; without inspect or execute, none.
  principal(3, 101, PidScope{Pid{5}}, kInspect);
  Client one(options(3, 101));
  auto five = answer<ProcessPage>(one, ListProcesses{std::nullopt});
  ASSERT_EQ(five.items.items.size(), 1u);
  EXPECT_EQ(five.items.items[0].pid, Pid{5});
  principal(4, 102, PidScope{Pid{5}}, kSend);
  Client sender(options(4, 102));
  EXPECT_TRUE(answer<ProcessPage>(sender, ListProcesses{std::nullopt}).items.items.empty());

  // Recorded metadata: an expired suspension still lists as suspended; the process read judges it retired.
  const TrustedMs deadline = clock_.trusted() + Millis{1000};
  accept(*admin_, Suspend{kPid, 1, deadline});
  accept(*admin_, Send{kPid, value("a")});
  clock_.set(deadline + Millis{1});
  auto listed = answer<ProcessPage>(*admin_, ListProcesses{Cursor{position(), 6}});
  ASSERT_FALSE(listed.items.items.empty());
  EXPECT_EQ(listed.items.items[0].pid, kPid);
  EXPECT_EQ(listed.items.items[0].state, ProcessState::kSuspended);
  EXPECT_EQ(listed.items.items[0].resume_by_ms, deadline);
  EXPECT_EQ(listed.items.items[0].tail, 1u);
  EXPECT_EQ(process_info(*admin_).state, ProcessState::kRetired);

  // Any change to a process's recorded metadata expires a listing's cut.
  auto first = answer<ProcessPage>(*admin_, ListProcesses{std::nullopt});
  ASSERT_TRUE(first.cursor);
  EXPECT_EQ(refused(admin_->submit(Send{Pid{1}, value("x")})).reason, Reason::kUninitialized);  // changes nothing
  EXPECT_EQ(answer<ProcessPage>(*admin_, ListProcesses{first.cursor}).cut, first.cut);
  accept(*admin_, Initialize{Pid{1}, 0});
  auto stale = query_refused(*admin_, ListProcesses{first.cursor});
  EXPECT_EQ(stale.code, RejectionCode::kStaleCut);
  EXPECT_EQ(stale.reason, Reason::kCatalogChanged);
}

TEST_F(StateTest, AReadOnlyInspectorListsCatalogsAtItsIdentityObservationsPositionUntilAGrantChanges) {
  const ResourceId doc = resource("doc");
  process(doc);
  fill(doc, 12);
  const Revision revision = revision_of(doc);
  for (int i = 0; i < 9; ++i) resource(numbered("r", i));
  principal(2, 100, RealmScope{}, kReadOnly);
  Client inspector(options(2, 100));
  auto seen = inspector.observe();
  ASSERT_TRUE(seen.ok()) << seen.error().message;
  EXPECT_TRUE(seen->read_only());
  const Position at = seen->position;

  // Every catalog's first page at the observation's position, and its continuation.
  auto resources = answer<ResourcePage>(inspector, ListResources{first_page_at(at)});
  EXPECT_EQ(resources.cut, at);
  EXPECT_EQ(resources.items.items.size(), 8u);
  ASSERT_TRUE(resources.cursor);
  EXPECT_EQ(answer<ResourcePage>(inspector, ListResources{resources.cursor}).items.items.size(), 2u);
  auto processes = answer<ProcessPage>(inspector, ListProcesses{first_page_at(at)});
  EXPECT_EQ(processes.cut, at);
  ASSERT_EQ(processes.items.items.size(), 1u);
  auto associations = answer<AssociationPage>(inspector, ListAssociations{kPid, first_page_at(at)});
  EXPECT_EQ(associations.cut, at);
  EXPECT_EQ(associations.items.items.size(), 1u);
  auto entries = answer<EntryPage>(inspector, ListEntries{CurrentBasis{doc, revision}, std::nullopt, first_entries_at(at)});
  EXPECT_EQ(entries.cut, at);
  EXPECT_EQ(entries.items.items.size(), 8u);
  EXPECT_EQ(text(entries.items.items[0].value), "vk00");

  // A grant change - anyone's - expires that cut explicitly, first pages included.
  const Id role = principal(3, 101, ResourceScope{doc}, kInspect);
  for (QueryOp op : {QueryOp{ListResources{first_page_at(at)}}, QueryOp{ListProcesses{first_page_at(at)}},
                     QueryOp{ListAssociations{kPid, first_page_at(at)}},
                     QueryOp{ListEntries{CurrentBasis{doc, revision}, std::nullopt, first_entries_at(at)}}}) {
    auto stale = query_refused(inspector, op);
    EXPECT_EQ(stale.code, RejectionCode::kStaleCut);
    EXPECT_EQ(stale.reason, Reason::kPolicyChanged);
  }
  // A new observation lists again, until its catalog changes; a position not yet reached is no cut.
  auto again = inspector.observe();
  ASSERT_TRUE(again.ok());
  EXPECT_GT(again->position, at);
  EXPECT_EQ(answer<ResourcePage>(inspector, ListResources{first_page_at(again->position)}).cut, again->position);
  resource("late");
  EXPECT_EQ(query_refused(inspector, ListResources{first_page_at(again->position)}).reason, Reason::kCatalogChanged);
  EXPECT_EQ(query_refused(inspector, ListResources{first_page_at(again->position + 100)}).reason, Reason::kBadCut);

  // An identity with more than inspect and read is not exactly read-only.
  grant(role, RealmScope{}, kReadOnly | kWrite);
  Client writer(options(3, 101));
  auto more = writer.observe();
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(more->read_only());
}

}  // namespace
}  // namespace cowboy::transit
