// Workers that fail over and processes that end, over real HTTP
// (docs/transit.md, decisions 57-63): rotate_worker hands a process to a
// replacement key of the same worker and refuses everything else; a
// revocation racing it is decided by the order of the two decisions;
// termination retires a process for good and fences its unattempted outputs
// and effect intents; grant replacement retires the previous private role;
// spawn brings up a child; the control reserve admits exactly its operations.
#include <gtest/gtest.h>

#include <thread>

#include "state_fixture.h"
#include "transit/node/journal.h"

namespace cowboy::transit {
namespace {

using testing::key_of;
using testing::seed_of;

constexpr PrincipalId kWorker{10};
constexpr std::uint8_t kOldSeed = 110, kNewSeed = 111;
constexpr std::uint64_t kWorkerBits = kInspect | kRead | kWrite | kSend | kExecute;

class FailoverTest : public StateTest {
 protected:
  Turn empty_turn(auto pid, Id generation) {
    return Turn{testing::id<Pid>(pid), generation, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  }
  /// A worker principal scoped to `pid`, holding kWorkerBits there; returns its private role.
  template <typename W = PrincipalId, typename P = Pid>
  Id worker(W id = kWorker, P pid = kPid, std::uint8_t seed = kOldSeed) {
    return principal(id, seed, RealmScope{}, kWorkerBits, testing::id<Pid>(pid));
  }
  Client client_of(auto id, std::uint8_t seed) { return Client(options(id, seed)); }
  template <typename P = Pid, typename W = PrincipalId>
  RotateWorker rotation(Id generation, std::uint8_t from = kOldSeed, std::uint8_t to = kNewSeed, P pid = kPid,
                        W id = kWorker, std::uint64_t mask = kWorkerBits) {
    return RotateWorker{testing::id<Pid>(pid), generation, testing::id<PrincipalId>(id), key_of(seed_of(from)), Permissions{mask}, key_of(seed_of(to))};
  }
  Rejection refused_as(Client& c, Command op, Reason reason) {
    auto r = refused(c.submit(std::move(op)));
    EXPECT_EQ(r.reason, reason) << name_of(reason);
    EXPECT_EQ(r.code, code_of(reason));
    return r;
  }
  Rejection refused_as(Client&& c, Command op, Reason reason) { return refused_as(c, std::move(op), reason); }
  Position position_now() { return Position{admin_->identity().ok() ? node_->sequencer().stats().position : 0}; }
  /// A new realm with this admission ceiling and control reserve.
  void restart_with(Id ceiling, Id reserve) {
    admin_.reset();
    node_.reset();
    std::filesystem::remove_all(dir_);
    start(testing::sample_genesis(ceiling, reserve));
    admin_ = std::make_unique<Client>(root());
  }
  void restart_node() {
    restart();
    admin_ = std::make_unique<Client>(root());
  }
};

// The replacement signs as the same principal with its new key, continues its
// signed sequence and owns the process at the next generation; PID, mailbox,
// state and outputs are as they were, and the old key signs nothing more.
TEST_F(FailoverTest, RotateWorkerHandsTheProcessToTheReplacementKey) {
  const ResourceId doc = resource("doc");
  process(doc);
  const Id role = worker();
  Client old_worker = client_of(kWorker, kOldSeed);
  const Id owned = ok<ProcessChanged>(old_worker.submit(Own{kPid, 1})).generation;
  accept(*admin_, Send{kPid, value("one")});
  accept(*admin_, Send{kPid, value("two")});
  Turn first = empty_turn(kPid, owned);
  first.input = 1;
  first.resource = doc;
  first.mutations.items.push_back({key("seen"), value("one")});
  first.outputs.items.push_back({kPid, value("to self")});
  const auto published = ok<TurnPublished>(old_worker.submit(first));
  // The crashed worker's next turn, signed but never sent.
  Turn second = empty_turn(kPid, owned);
  second.input = 2;
  const SignedRequest prepared = sign(old_worker.build(second, 3), seed_of(kOldSeed));

  const Id revision = answer<Identity>(*admin_, IdentityQuery{}).policy_revision;
  const Position cut = position_now();
  const auto rotated = ok<WorkerRotated>(admin_->submit(rotation(owned)));
  EXPECT_EQ(rotated.pid, kPid);
  EXPECT_EQ(rotated.generation, owned + 1);
  EXPECT_EQ(rotated.worker, kWorker);
  EXPECT_EQ(rotated.credential_epoch, 2u);
  EXPECT_EQ(rotated.policy_revision, revision + 1);
  // A key change is a policy change: a listing cut before it expires.
  EXPECT_EQ(query_refused(*admin_, ListResources{first_page_at(cut)}).reason, Reason::kPolicyChanged);

  // The old key is refused, its prepared turn too (and it is stale besides).
  EXPECT_EQ(refused(old_worker.resubmit(prepared)).reason, Reason::kBadSignature);
  Client replacement = client_of(kWorker, kNewSeed);
  const auto me = replacement.identity();
  ASSERT_TRUE(me.ok());
  EXPECT_EQ(me->sequence, 2u);  // the worker's signed sequence goes on
  EXPECT_EQ(me->permissions.bits, kWorkerBits);
  const auto info = process_info(replacement);
  EXPECT_EQ(info.state, ProcessState::kOwned);
  EXPECT_EQ(info.owner, std::optional<PrincipalId>(kWorker));
  EXPECT_EQ(info.generation, owned + 1);
  ASSERT_TRUE(info.input);  // the head is released to the replacement, unconsumed
  EXPECT_EQ(info.input->input, 2u);
  EXPECT_EQ(text(EntryValue{info.input->value.value}), "two");
  // Its private role is the one it had: a grant to that role reaches the new key.
  grant(role, PidScope{kPid}, kEffect);
  EXPECT_EQ(replacement.identity()->permissions.bits, kWorkerBits | kEffect);

  second.generation = owned + 1;
  const auto finished = ok<TurnPublished>(replacement.submit(second));
  EXPECT_EQ(finished.consumed, std::optional<Id>(2));
  EXPECT_EQ(answer<EntryBatch>(*admin_, ReadEntries{doc, std::nullopt, std::nullopt, slots({"seen"})})
                .entries.items[0]->value,
            value("one"));
  EXPECT_TRUE(ok<Delivered>(admin_->submit(Deliver{published.outputs.items.at(0)})).input);  // outputs kept
}

// Every refusal leaves the process, the worker and the position as they were.
TEST_F(FailoverTest, RotateWorkerRefusesAllButAnExactTakeover) {
  const ResourceId doc = resource("doc");
  process(doc);
  worker();
  principal(11, 112, RealmScope{}, kWorkerBits, /*pid_scope=*/8);  // scoped elsewhere
  principal(12, 113, RealmScope{}, kWorkerBits);                   // not scoped at all
  principal(13, 114, RealmScope{}, kInspect, kPid);                // no execute
  principal(14, 115, RealmScope{}, kWorkerBits, kPid);
  accept(*admin_, RevokePrincipal{PrincipalId{14}, std::nullopt});
  principal(15, 116, PidScope{kPid}, kAllPermissions & ~kRealmControl);  // an administrator of 7, not root
  Client pid_admin = client_of(15, 116);

  const Position before = position_now();
  refused_as(pid_admin, rotation(1), Reason::kNotPermitted);
  refused_as(*admin_, rotation(1, kOldSeed, kOldSeed), Reason::kUnchangedKey);
  refused_as(*admin_, rotation(1, 115, kNewSeed, kPid, 14), Reason::kRevokedWorker);
  refused_as(*admin_, rotation(1, 112, kNewSeed, kPid, 11), Reason::kForeignScope);
  refused_as(*admin_, rotation(1, 113, kNewSeed, kPid, 12), Reason::kForeignScope);
  refused_as(*admin_, rotation(1, 99, kNewSeed), Reason::kWorkerKeyChanged);
  refused_as(*admin_, rotation(1, kOldSeed, kNewSeed, kPid, kWorker, kWorkerBits | kEffect), Reason::kWorkerMaskChanged);
  refused_as(*admin_, rotation(1, 114, kNewSeed, kPid, 13, kInspect), Reason::kWorkerNotExecutor);
  refused_as(*admin_, rotation(1, kOldSeed, kNewSeed, 99), Reason::kUnknownProcess);
  refused_as(*admin_, rotation(1, kOldSeed, kNewSeed, kPid, 99), Reason::kUnknownSubject);
  refused_as(*admin_, rotation(0), Reason::kStaleGeneration);
  // Another principal owns it.
  const Id owned = ok<ProcessChanged>(admin_->submit(Own{kPid, 1})).generation;
  refused_as(*admin_, rotation(owned), Reason::kNotOwner);
  EXPECT_EQ(position_now(), before + 1);  // only the own

  // Blocked, suspended, uninitialized, retired: none is executable.
  accept(*admin_, Send{kPid, value("x")});
  accept(*admin_, FailTurn{kPid, owned, 1, {"boom"}});
  refused_as(*admin_, rotation(owned), Reason::kBlocked);
  accept(*admin_, Retry{kPid, owned, 1});
  accept(*admin_, Suspend{kPid, owned + 1, clock_.trusted() + Millis{60'000}});
  refused_as(*admin_, rotation(owned + 1), Reason::kSuspended);
  accept(*admin_, CreateProcess{Pid{8}, {}});
  worker(16, 8, 117);
  refused_as(*admin_, rotation(0, 117, kNewSeed, 8, 16), Reason::kUninitialized);
  accept(*admin_, Initialize{Pid{8}, 0});
  accept(*admin_, Terminate{Pid{8}, 1});
  refused_as(*admin_, rotation(1, 117, kNewSeed, 8, 16), Reason::kRetired);
  const auto info = process_info(*admin_);
  EXPECT_EQ(info.generation, owned + 1);
  EXPECT_FALSE(info.owner);
  auto old_key = client_of(kWorker, kOldSeed).identity();
  ASSERT_TRUE(old_key.ok());  // the worker's key is still its old one
  EXPECT_EQ(old_key->sequence, 0u);
}

// The expected mask pins what the worker holds; the rotation adds nothing, so
// a permission removed before it stays removed after it: one at the PID, and
// one on a resource the process holds (the seed's "removed resource
// permission"), while a resource grant still in force goes on with the key.
TEST_F(FailoverTest, RotationCannotRenewARemovedPermission) {
  const ResourceId doc = resource("doc");
  process(doc);
  const Id role = principal(kWorker, kOldSeed, PidScope{kPid}, kInspect | kExecute, kPid);
  const Id effect = grant(role, PidScope{kPid}, kEffect);
  const Id write = grant(role, ResourceScope{doc}, kWrite);
  grant(role, ResourceScope{doc}, kInspect | kRead);
  accept(*admin_, RevokeGrant{effect, std::nullopt});
  accept(*admin_, RevokeGrant{write, std::nullopt});
  const auto removed = [&](Scope scope, std::uint64_t bits) {
    return !admin_->decision(kWorker, scope, Permissions{bits})->allowed;
  };
  ASSERT_TRUE(removed(PidScope{kPid}, kEffect) && removed(ResourceScope{doc}, kWrite));
  refused_as(*admin_, rotation(1, kOldSeed, kNewSeed, kPid, kWorker, kInspect | kExecute | kEffect),
             Reason::kWorkerMaskChanged);
  accept(*admin_, rotation(1, kOldSeed, kNewSeed, kPid, kWorker, kInspect | kExecute));
  EXPECT_TRUE(removed(PidScope{kPid}, kEffect));
  EXPECT_TRUE(removed(ResourceScope{doc}, kWrite));
  EXPECT_FALSE(removed(ResourceScope{doc}, kInspect | kRead));  // the private role and its grants stay
  Client replacement = client_of(kWorker, kNewSeed);
  auto me = replacement.identity();
  ASSERT_TRUE(me.ok());
  EXPECT_EQ(me->permissions.bits, kInspect | kExecute);  // as the expected mask said, without effect
  // The new key reads the resource and cannot write it.
  EXPECT_TRUE(replacement.query(ReadEntries{doc, std::nullopt, std::nullopt, slots({"k"})}).ok());
  const Id generation = process_info(replacement).generation;
  Turn turn = empty_turn(kPid, generation);
  turn.resource = doc;
  turn.mutations.items.push_back({key("k"), value("v")});
  EXPECT_EQ(refused(replacement.submit(turn)).reason, Reason::kNotPermitted);
}

// A revocation and a rotation of the same worker are two decisions of one
// sequencer: whichever comes first, the revocation applies. Revocation first:
// the rotation is refused and nothing moves. Rotation first: the revocation
// still ends the worker, new key included.
TEST_F(FailoverTest, ARevocationRacingARotationIsDecidedByTheirOrder) {
  const ResourceId doc = resource("doc");
  process(doc);
  process(doc, 8);
  worker(kWorker, kPid);
  worker(11, 8, 112);

  accept(*admin_, RevokePrincipal{kWorker, std::nullopt});
  refused_as(*admin_, rotation(1), Reason::kRevokedWorker);
  EXPECT_EQ(process_info(*admin_).generation, 1u);
  EXPECT_FALSE(process_info(*admin_).owner);

  accept(*admin_, rotation(1, 112, 113, 8, 11));
  accept(*admin_, RevokePrincipal{PrincipalId{11}, std::nullopt});
  const auto ended = refused(client_of(11, 113).submit(Send{Pid{8}, value("x")}));
  EXPECT_EQ(ended.code, RejectionCode::kDenied);  // a revoked signer's key is gone: decision 20
  EXPECT_EQ(ended.reason, Reason::kUnknownPrincipal);
  refused_as(*admin_, rotation(2, 113, 114, 8, 11), Reason::kRevokedWorker);
  EXPECT_FALSE(admin_->decision(PrincipalId{11}, PidScope{Pid{8}}, Permissions{kExecute})->allowed);

  // Sent at once from two administrators, many times: the order decides, and
  // the outcome is always one of the two above.
  principal(20, 120, RealmScope{}, kAllPermissions);
  Client other_admin = client_of(20, 120);
  for (Id round = 0; round < 8; ++round) {
    const Pid pid{100 + round};
    const PrincipalId id{200 + round};
    const auto seed = static_cast<std::uint8_t>(150 + round);
    process(doc, pid);
    worker(id, pid, seed);
    ClientResult<Receipt> rotated = Err{ClientError{}}, revoked = Err{ClientError{}};
    std::thread t([&] { rotated = admin_->submit(rotation(1, seed, 99, pid, id)); });
    revoked = other_admin.submit(RevokePrincipal{id, std::nullopt});
    t.join();
    ASSERT_TRUE(revoked.ok()) << revoked.error().message;
    const auto info = process_info(*admin_, pid);
    if (rotated.ok()) {
      EXPECT_LT(rotated->position, revoked->position);
      EXPECT_EQ(info.generation, 2u);
    } else {
      ASSERT_TRUE(rotated.error().rejection);
      EXPECT_EQ(rotated.error().rejection->reason, Reason::kRevokedWorker);
      EXPECT_EQ(info.generation, 1u);
    }
    EXPECT_FALSE(admin_->decision(id, PidScope{pid}, Permissions{kExecute})->allowed);
  }
}

// Termination by a pid_admin at its exact generation: retired for good, its
// unconsumed inputs cancelled, its pending outputs never delivered, its
// unattempted effect intent fenced, all at once and across a restart.
TEST_F(FailoverTest, TerminationRetiresForGoodAndFencesUnattemptedOutputsAndEffects) {
  const ResourceId doc = resource("doc");
  process(doc);
  process(resource("inbox"), 8);
  process(resource("lease", /*owner=*/kPid), 9);  // its required resource's lifetime is 7's
  principal(31, 131, PidScope{kPid}, kEffect);
  principal(32, 132, PidScope{Pid{8}}, kEffect);
  principal(33, 133, PidScope{kPid}, kExecute | kInspect);  // no pid_admin
  const Id generation = ok<ProcessChanged>(admin_->submit(Own{kPid, 1})).generation;
  for (const char* v : {"a", "b", "c"}) accept(*admin_, Send{kPid, value(v)});
  const TrustedMs later = clock_.trusted() + Millis{60'000};
  Turn turn = empty_turn(kPid, generation);
  turn.input = 1;
  turn.resource = doc;
  turn.views.items.push_back(doc);
  turn.outputs.items = {{Pid{8}, value("one")}, {Pid{8}, value("two")}};
  turn.effect = EffectIntent{PrincipalId{31}, later, Hex<256>{{1}}};
  const auto published = ok<TurnPublished>(admin_->submit(turn));
  const Id view = published.views.items.at(0);
  EXPECT_EQ(ok<Delivered>(admin_->submit(Deliver{published.outputs.items.at(0)})).input, std::optional<Id>(1));
  // Process 8 captures an effect too, and sends one output to 7.
  const Id owned8 = ok<ProcessChanged>(admin_->submit(Own{Pid{8}, 1})).generation;
  Turn from8 = empty_turn(8, owned8);
  from8.outputs.items = {{kPid, value("back")}};
  from8.effect = EffectIntent{PrincipalId{32}, later, Hex<256>{{2}}};
  const auto published8 = ok<TurnPublished>(admin_->submit(from8));

  refused_as(client_of(33, 133), Terminate{kPid, generation}, Reason::kNotPermitted);
  refused_as(*admin_, Terminate{kPid, generation - 1}, Reason::kStaleGeneration);
  EXPECT_EQ(process_info(*admin_, 9).state, ProcessState::kIdle);
  const auto ended = ok<ProcessTerminated>(admin_->submit(Terminate{kPid, generation}));
  EXPECT_EQ(ended.pid, kPid);
  EXPECT_EQ(ended.cancelled, 2u);  // b and c

  const auto check_fenced = [&] {
    const auto info = process_info(*admin_);
    EXPECT_EQ(info.state, ProcessState::kRetired);
    EXPECT_EQ(info.cancelled, 2u);
    EXPECT_FALSE(info.owner);
    EXPECT_FALSE(info.input);
    const auto listed = answer<ProcessPage>(*admin_, ListProcesses{std::nullopt}).items.items.at(0);
    EXPECT_EQ(listed.state, ProcessState::kRetired);  // recorded, not only judged
    EXPECT_EQ(listed.cancelled, 2u);
    refused_as(*admin_, Deliver{published.outputs.items.at(1)}, Reason::kSourceTerminated);
    EXPECT_EQ(process_info(*admin_, 8).tail, 1u);  // only the output delivered before termination
    refused_as(*admin_, empty_turn(kPid, generation), Reason::kRetired);
    refused_as(*admin_, Send{kPid, value("late")}, Reason::kRetired);
    refused_as(*admin_, Terminate{kPid, generation}, Reason::kRetired);
    refused_as(*admin_, Resume{kPid, generation}, Reason::kRetired);
    EXPECT_EQ(query_refused(*admin_, ReadEntries{doc, std::nullopt, view, slots({"a"})}).reason, Reason::kViewExpired);
    EXPECT_EQ(process_info(*admin_, 9).state, ProcessState::kFenced);  // the lease ended with 7
  };
  check_fenced();
  // Into it: disposed of, nothing enters its mailbox.
  EXPECT_FALSE(ok<Delivered>(admin_->submit(Deliver{published8.outputs.items.at(0)})).input);
  EXPECT_EQ(process_info(*admin_).tail, 3u);

  restart_node();
  check_fenced();
  // The effect records as recovered: 7's unattempted intent is fenced, 8's is not.
  node_.reset();
  auto journal = node::Journal::open(dir_, std::nullopt);
  ASSERT_TRUE(journal.ok()) << journal.error();
  auto authority = (*journal)->load();
  ASSERT_TRUE(authority.ok()) << authority.error();
  const auto* fenced = authority->effect(*published.effect);
  const auto* live = authority->effect(*published8.effect);
  ASSERT_TRUE(fenced && live);
  const auto fence = authority->termination_fence(fenced->info, clock_.trusted());
  ASSERT_TRUE(fence);
  EXPECT_EQ(fence->reason, Reason::kCallerTerminated);
  EXPECT_FALSE(authority->termination_fence(live->info, clock_.trusted()));
  (*journal).reset();
  start(genesis_);
}

// Ordinary grant replacement retires the previous private role - unbound, its
// grants gone, resource grants included - and binds a new one.
TEST_F(FailoverTest, GrantReplacementRetiresThePreviousPrivateRoleAndItsResourceRights) {
  const ResourceId doc = resource("doc");
  const Id old_role = principal(20, 120, PidScope{kPid}, kInspect);
  const Id old_grant = grant(old_role, ResourceScope{doc}, kInspect | kRead);
  const auto read = ReadEntries{doc, std::nullopt, std::nullopt, slots({"k"})};
  ASSERT_TRUE(client_of(20, 120).query(read).ok());

  const Id revision = answer<Identity>(*admin_, IdentityQuery{}).policy_revision;
  refused_as(*admin_, ReplaceGrant{PrincipalId{20}, RealmScope{}, Permissions{0}, std::nullopt}, Reason::kEmptyGrant);
  refused_as(*admin_, ReplaceGrant{PrincipalId{1}, RealmScope{}, Permissions{kInspect}, std::nullopt}, Reason::kRootGrant);
  refused_as(*admin_, ReplaceGrant{PrincipalId{99}, RealmScope{}, Permissions{kInspect}, std::nullopt}, Reason::kUnknownSubject);
  refused_as(*admin_, ReplaceGrant{PrincipalId{20}, RealmScope{}, Permissions{kInspect}, revision - 1}, Reason::kStaleRevision);
  const auto replaced = ok<GrantReplaced>(admin_->submit(ReplaceGrant{PrincipalId{20}, PidScope{Pid{8}}, Permissions{kInspect}, revision}));
  EXPECT_EQ(replaced.principal, PrincipalId{20});
  EXPECT_EQ(replaced.retired_role, old_role);
  EXPECT_NE(replaced.role, old_role);
  EXPECT_EQ(replaced.policy_revision, revision + 1);

  const auto check_retired = [&] {
    Client alice = client_of(20, 120);
    EXPECT_EQ(query_refused(alice, read).reason, Reason::kNotPermitted);
    EXPECT_FALSE(admin_->decision(PrincipalId{20}, ResourceScope{doc}, Permissions{kRead})->allowed);
    EXPECT_FALSE(admin_->decision(PrincipalId{20}, PidScope{kPid}, Permissions{kInspect})->allowed);
    EXPECT_TRUE(admin_->decision(PrincipalId{20}, PidScope{Pid{8}}, Permissions{kInspect})->allowed);
    refused_as(*admin_, Grant{old_role, ResourceScope{doc}, Permissions{kRead}, std::nullopt}, Reason::kRetiredRole);
    refused_as(*admin_, RevokeGrant{old_grant, std::nullopt}, Reason::kUnknownGrant);
    refused_as(*admin_, BindCredential{PrincipalId{20}, old_role, std::nullopt}, Reason::kUnknownRole);
    refused_as(*admin_, UnbindCredential{PrincipalId{20}, old_role, std::nullopt}, Reason::kPrivateRole);
  };
  check_retired();
  // The new private role is granted to like any: this does not revive the old rights.
  accept(*admin_, Grant{replaced.role, ResourceScope{doc}, Permissions{kInspect}, std::nullopt});
  EXPECT_FALSE(admin_->decision(PrincipalId{20}, ResourceScope{doc}, Permissions{kRead})->allowed);
  restart_node();
  check_retired();
}

TEST_F(FailoverTest, SpawnBringsUpAChildBoundToItsParentsResources) {
  const ResourceId doc = resource("doc");
  process(doc);
  accept(*admin_, CreateProcess{Pid{8}, {}});
  EXPECT_FALSE(process_info(*admin_, 8).allow_collection);  // the default
  accept(*admin_, CreateProcess{Pid{9}, {}, /*allow_collection=*/true});
  EXPECT_TRUE(process_info(*admin_, 9).allow_collection);

  const Id generation = ok<ProcessChanged>(admin_->submit(Own{kPid, 1})).generation;
  worker(kWorker, kPid);  // execute at 7 only: reaches no child PID
  refused_as(client_of(kWorker, kOldSeed), Spawn{kPid, generation, Pid{20}, {}, false}, Reason::kNotOwner);
  refused_as(*admin_, Spawn{kPid, generation - 1, Pid{20}, {}, false}, Reason::kStaleGeneration);
  refused_as(*admin_, Spawn{kPid, generation, Pid{8}, {}, false}, Reason::kSubjectTaken);
  refused_as(*admin_, Spawn{kPid, generation, Pid{20}, {{{"other"}}}, false}, Reason::kMissingDependency);
  // A PID-scoped worker running its own process reaches no other PID, so it spawns nothing.
  process(resource("inbox"), 30);
  worker(11, 30, 112);
  Client scoped = client_of(11, 112);
  const Id owned30 = ok<ProcessChanged>(scoped.submit(Own{Pid{30}, 1})).generation;
  refused_as(scoped, Spawn{Pid{30}, owned30, Pid{20}, {}, false}, Reason::kNotPermitted);
  auto duplicate = admin_->submit(Spawn{kPid, generation, Pid{20}, {{{"doc"}, {"doc"}}}, false});
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error().kind, ClientError::Kind::kInvalid);  // refused before signing

  const auto spawned = ok<ProcessChanged>(admin_->submit(Spawn{kPid, generation, Pid{20}, {{{"doc"}}}, true}));
  EXPECT_EQ(spawned.pid, Pid{20});
  EXPECT_EQ(spawned.generation, 1u);
  const auto child = process_info(*admin_, 20);
  EXPECT_EQ(child.state, ProcessState::kIdle);
  EXPECT_EQ(child.parent, std::optional<Pid>(kPid));
  EXPECT_TRUE(child.allow_collection);
  const auto inherited = answer<LookupResult>(*admin_, AssociationLookup{Pid{20}, {"doc"}}).association;
  ASSERT_TRUE(inherited);
  EXPECT_EQ(inherited->resource, doc);
  // It runs like any process.
  accept(*admin_, Send{Pid{20}, value("hi")});
  const Id owned = ok<ProcessChanged>(admin_->submit(Own{Pid{20}, 1})).generation;
  Turn t = empty_turn(20, owned);
  t.input = 1;
  t.resource = doc;
  t.mutations.items.push_back({key("child"), value("ran")});
  EXPECT_EQ(ok<TurnPublished>(admin_->submit(t)).consumed, std::optional<Id>(1));
  // Its required resource now has two dependents; both must be quiescent to retire it.
  EXPECT_EQ(refused(admin_->submit(RetireResource{doc})).reason, Reason::kNotQuiescent);
}

// The reserve admits exactly the control mutations: the three revocations and
// rotate_worker. Each is accepted at the ceiling, and refused at its end.
TEST_F(FailoverTest, TheControlReserveAdmitsEachControlOperationAndNothingElse) {
  restart_with(/*ceiling=*/40, /*reserve=*/4);
  const ResourceId doc = resource("doc");
  process(doc);
  process(doc, 8);
  worker(kWorker, kPid);
  worker(11, 8, 112);
  principal(20, 120, RealmScope{}, kInspect);
  principal(21, 121, RealmScope{}, kInspect);
  std::vector<Id> roles, grants;
  for (const char* name : {"r1", "r2"}) {
    roles.push_back(ok<RoleCreated>(admin_->submit(CreateRole{{name}, std::nullopt})).role);
    accept(*admin_, BindCredential{PrincipalId{20}, roles.back(), std::nullopt});
    grants.push_back(grant(roles.back(), RealmScope{}, kInspect));
  }
  // Fill up to the ceiling.
  for (int i = 0;; ++i) {
    auto r = admin_->submit(CreateRole{{numbered("fill", i)}, std::nullopt});
    if (!r.ok()) {
      ASSERT_TRUE(r.error().rejection);
      EXPECT_EQ(r.error().rejection->reason, Reason::kAdmissionCeiling);
      break;
    }
  }
  ASSERT_EQ(position_now(), Position{40});
  refused_as(*admin_, Terminate{kPid, 1}, Reason::kAdmissionCeiling);
  refused_as(*admin_, ReplaceGrant{PrincipalId{20}, RealmScope{}, Permissions{kInspect}, std::nullopt}, Reason::kAdmissionCeiling);
  refused_as(*admin_, Send{kPid, value("x")}, Reason::kAdmissionCeiling);

  const std::vector<std::pair<Command, Command>> controls = {
      {UnbindCredential{PrincipalId{20}, roles[0], std::nullopt}, UnbindCredential{PrincipalId{20}, roles[1], std::nullopt}},
      {RevokeGrant{grants[0], std::nullopt}, RevokeGrant{grants[1], std::nullopt}},
      {rotation(1), rotation(1, 112, 113, 8, 11)},
      {RevokePrincipal{PrincipalId{20}, std::nullopt}, RevokePrincipal{PrincipalId{21}, std::nullopt}},
  };
  for (const auto& [at_ceiling, at_end] : controls) accept(*admin_, at_ceiling);
  ASSERT_EQ(position_now(), Position{44});
  for (const auto& [at_ceiling, at_end] : controls) refused_as(*admin_, at_end, Reason::kControlReserve);
}

}  // namespace
}  // namespace cowboy::transit
