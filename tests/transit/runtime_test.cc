// Runtime binding over real HTTP (docs/transit.md, decisions 120-129): an
// intent, its provider's observations with bootstrap evidence and an
// activation hand a process to the incarnation's fresh worker key; stale
// observations are fenced; a bound PID is never owned or rotated directly;
// upgrades move to a later revision; resume needs a stopped provider; the
// bindings survive a restart. One test per rule, each refusal by name.
#include <gtest/gtest.h>

#include <fstream>

#include "state_fixture.h"
#include "transit/contract/operations.h"

namespace cowboy::transit {
namespace {

using testing::key_of;
using testing::seed_of;

constexpr PrincipalId kWorker{10};
constexpr std::uint8_t kOldSeed = 110, kNewSeed = 111, kThirdSeed = 112;
constexpr std::uint64_t kWorkerBits = kInspect | kRead | kWrite | kSend | kExecute;

Digest digest(std::uint8_t fill) {
  Digest d{};
  d.fill(fill);
  return d;
}
const Digest kArtifact = digest(0xa1), kConfiguration = digest(0xc1);
const BootstrapEvidence kEvidence{kArtifact, kConfiguration};

class RuntimeTest : public StateTest {
 protected:
  void SetUp() override {
    StateTest::SetUp();
    doc_ = resource("doc");
    process(doc_);
    role_ = principal(kWorker, kOldSeed, RealmScope{}, kWorkerBits, kPid);
  }
  Client client_of(auto id, std::uint8_t seed) { return Client(options(id, seed)); }
  template <typename W = PrincipalId>
  RuntimeIntent intent(Id operation = 1, W worker = kWorker, std::string provider = "host-a") {
    return RuntimeIntent{kPid, operation, 3, Name{std::move(provider)}, testing::id<PrincipalId>(worker), kArtifact, kConfiguration};
  }
  RuntimeObserve observe(Id incarnation, RuntimeStatus status, Id operation = 1) {
    std::optional<BootstrapEvidence> evidence;
    if (status == RuntimeStatus::kReady) evidence = kEvidence;
    return RuntimeObserve{kPid, operation, incarnation, status, evidence};
  }
  Activate activation(Id generation, Id incarnation = 1, std::uint8_t from = kOldSeed, std::uint8_t to = kNewSeed,
                      Id operation = 1) {
    return Activate{kPid, generation, operation, incarnation, key_of(seed_of(from)), key_of(seed_of(to))};
  }
  /// Intent, starting, ready: incarnation 1 of operation 1 ready to activate.
  void ready() {
    ok<RuntimeChanged>(admin_->submit(intent()));
    ok<RuntimeChanged>(admin_->submit(observe(1, RuntimeStatus::kStarting)));
    ok<RuntimeChanged>(admin_->submit(observe(1, RuntimeStatus::kReady)));
  }
  Rejection refused_as(Client& c, Command op, Reason reason) {
    auto r = refused(c.submit(std::move(op)));
    EXPECT_EQ(r.reason, reason) << name_of(reason) << " expected, got " << name_of(r.reason) << ": " << r.message.value;
    EXPECT_EQ(r.code, code_of(reason));
    return r;
  }
  RuntimeInfo binding() {
    auto r = admin_->runtime(kPid);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : RuntimeInfo{};
  }
  Position position_now() { return Position{admin_->identity().ok() ? node_->sequencer().stats().position : 0}; }
  ResourceId doc_{};
  Id role_ = 0;  // the worker's private role
};

// Decisions 120, 121, 123: the recorded operation, revision and provider; the
// attributed bootstrap evidence; activation replacing the worker's key while
// its signed sequence, private role and credential epoch stay, recording the
// generation it handed the process over at.
TEST_F(RuntimeTest, AnActivationHandsTheProcessToTheReadyIncarnationsKey) {
  EXPECT_FALSE(binding().bound);
  Client old_worker = client_of(kWorker, kOldSeed);
  ASSERT_TRUE(old_worker.identity().ok());  // a query: no sequence spent
  accept(*admin_, Send{kPid, value("one")});

  const auto intended = ok<RuntimeChanged>(admin_->submit(intent()));
  EXPECT_EQ(intended.status, RuntimeStatus::kIntended);
  EXPECT_EQ(intended.operation, 1u);
  EXPECT_EQ(intended.incarnation, 0u);
  const Position intent_at = position_now();
  ok<RuntimeChanged>(admin_->submit(observe(1, RuntimeStatus::kStarting)));
  const auto readied = ok<RuntimeChanged>(admin_->submit(observe(1, RuntimeStatus::kReady)));
  EXPECT_EQ(readied.status, RuntimeStatus::kReady);
  EXPECT_EQ(readied.incarnation, 1u);
  const Position ready_at = position_now();

  const Id revision = answer<Identity>(*admin_, IdentityQuery{}).policy_revision;
  const auto activated = ok<RuntimeChanged>(admin_->submit(activation(1)));
  EXPECT_EQ(activated.generation, 2u);
  EXPECT_EQ(answer<Identity>(*admin_, IdentityQuery{}).policy_revision, revision + 1);  // a key is authority

  const auto r = binding();
  EXPECT_TRUE(r.bound);
  EXPECT_EQ(r.operation, 1u);
  EXPECT_EQ(r.revision, 3u);
  EXPECT_EQ(r.provider.value, "host-a");
  EXPECT_EQ(r.worker, kWorker);
  EXPECT_EQ(r.artifact, kArtifact);
  EXPECT_EQ(r.configuration, kConfiguration);
  EXPECT_EQ(r.operation_at, intent_at);
  ASSERT_TRUE(r.bootstrap);
  EXPECT_EQ(*r.bootstrap, (BootstrapRecord{1, kEvidence, PrincipalId{1}, ready_at}));  // attributed to the root that observed
  ASSERT_TRUE(r.activation);
  EXPECT_EQ(*r.activation, (ActivationRecord{1, 1, 2, ready_at + 1}));

  // The old key signs nothing more; the new one continues the same principal.
  EXPECT_EQ(refused(old_worker.submit(Own{kPid, 2})).reason, Reason::kBadSignature);
  Client incarnation = client_of(kWorker, kNewSeed);
  const auto me = incarnation.identity();
  ASSERT_TRUE(me.ok());
  EXPECT_EQ(me->sequence, 0u);  // its signed sequence is the one it had
  EXPECT_EQ(me->permissions.bits, kWorkerBits);
  const auto info = answer<ProcessInfo>(incarnation, ProcessRead{kPid});
  EXPECT_EQ(info.state, ProcessState::kOwned);
  EXPECT_EQ(info.owner, std::optional<PrincipalId>(kWorker));
  ASSERT_TRUE(info.input);  // the head is released to the activated worker
  Turn turn{kPid, 2, 1, doc_, std::nullopt, {}, {}, {}, {}, std::nullopt};
  turn.mutations.items.push_back({key("seen"), value("one")});
  EXPECT_EQ(ok<TurnPublished>(incarnation.submit(turn)).consumed, std::optional<Id>(1));
  // Its private role is the one it had: a grant to that role reaches the new key.
  grant(role_, PidScope{kPid}, kEffect);
  EXPECT_EQ(incarnation.identity()->permissions.bits, kWorkerBits | kEffect);
}

// Decision 122: once bound, a PID is run through activation only.
TEST_F(RuntimeTest, ABoundPidCannotUseDirectOwnOrRotateWorker) {
  ok<RuntimeChanged>(admin_->submit(intent()));
  const Position before = position_now();
  refused_as(*admin_, Own{kPid, 1}, Reason::kRuntimeBound);
  refused_as(*admin_,
             RotateWorker{kPid, 1, kWorker, key_of(seed_of(kOldSeed)), Permissions{kWorkerBits}, key_of(seed_of(kNewSeed))},
             Reason::kRuntimeBound);
  EXPECT_EQ(position_now(), before);
  // A stopped provider leaves the PID bound all the same.
  ok<RuntimeChanged>(admin_->submit(observe(1, RuntimeStatus::kStopped)));
  refused_as(*admin_, Own{kPid, 1}, Reason::kRuntimeBound);
  // An unbound PID is owned as before.
  accept(*admin_, CreateProcess{Pid{8}, {{{"doc"}}}});
  accept(*admin_, Associate{Pid{8}, {"doc"}, doc_});
  accept(*admin_, Initialize{Pid{8}, 0});
  EXPECT_EQ(ok<ProcessChanged>(admin_->submit(Own{Pid{8}, 1})).generation, 2u);
}

// Decision 124: observations of the current operation move forward only; an
// activation pins the incarnation it activated, so a report delayed past it
// is refused.
TEST_F(RuntimeTest, StaleObservationsAreFencedAndOnlyTheLatestReadyIncarnationIsActivated) {
  ok<RuntimeChanged>(admin_->submit(intent()));
  refused_as(*admin_, observe(0, RuntimeStatus::kStarting), Reason::kStaleObservation);  // no incarnation 0
  refused_as(*admin_, observe(1, RuntimeStatus::kIntended), Reason::kStaleObservation);  // recorded, never observed
  refused_as(*admin_, observe(1, RuntimeStatus::kStarting, 2), Reason::kStaleOperation);
  ok<RuntimeChanged>(admin_->submit(observe(1, RuntimeStatus::kStarting)));
  refused_as(*admin_, activation(1), Reason::kNotReady);  // starting, not ready
  refused_as(*admin_, observe(1, RuntimeStatus::kStarting), Reason::kStaleObservation);  // no repeat
  ok<RuntimeChanged>(admin_->submit(observe(2, RuntimeStatus::kStarting)));  // the provider restarted it
  refused_as(*admin_, observe(1, RuntimeStatus::kReady), Reason::kStaleObservation);  // an older incarnation
  ok<RuntimeChanged>(admin_->submit(observe(2, RuntimeStatus::kReady)));
  refused_as(*admin_, activation(1, 1), Reason::kStaleObservation);  // not the latest
  refused_as(*admin_, activation(1, 2, kOldSeed, kNewSeed, 2), Reason::kStaleOperation);
  ok<RuntimeChanged>(admin_->submit(activation(1, 2)));
  refused_as(*admin_, observe(2, RuntimeStatus::kStarting), Reason::kStaleObservation);  // behind the activation
  refused_as(*admin_, observe(1, RuntimeStatus::kStopped), Reason::kStaleObservation);
  EXPECT_EQ(binding().activation->incarnation, 2u);
  EXPECT_EQ(ok<RuntimeChanged>(admin_->submit(observe(2, RuntimeStatus::kStopped))).status, RuntimeStatus::kStopped);
}

// Decision 125 (seed 14.2): ready carries the local manager's bootstrap
// evidence, which must be the operation's artifact and configuration.
TEST_F(RuntimeTest, BootstrapEvidenceMustBeTheOperationsArtifactAndConfiguration) {
  ok<RuntimeChanged>(admin_->submit(intent()));
  ok<RuntimeChanged>(admin_->submit(observe(1, RuntimeStatus::kStarting)));
  refused_as(*admin_, RuntimeObserve{kPid, 1, 1, RuntimeStatus::kReady, std::nullopt}, Reason::kMissingEvidence);
  refused_as(*admin_, RuntimeObserve{kPid, 1, 2, RuntimeStatus::kStarting, kEvidence}, Reason::kMissingEvidence);
  refused_as(*admin_, RuntimeObserve{kPid, 1, 1, RuntimeStatus::kReady, BootstrapEvidence{digest(0xa2), kConfiguration}},
             Reason::kArtifactMismatch);
  refused_as(*admin_, RuntimeObserve{kPid, 1, 1, RuntimeStatus::kReady, BootstrapEvidence{kArtifact, digest(0xc2)}},
             Reason::kConfigurationMismatch);
  EXPECT_FALSE(binding().bootstrap);
  EXPECT_EQ(binding().status, RuntimeStatus::kStarting);
  // The manager is any pid_admin at the PID; the evidence names it.
  principal(20, 120, RealmScope{}, kPidAdmin | kInspect, kPid);  // scoped to the PID it manages
  Client manager = client_of(20, 120);
  ok<RuntimeChanged>(manager.submit(observe(1, RuntimeStatus::kReady)));
  const auto bootstrap = binding().bootstrap;
  ASSERT_TRUE(bootstrap);
  EXPECT_EQ(bootstrap->principal, PrincipalId{20});
}

// Decision 120: who may intend, at which operation, for which worker; one placement at a time.
TEST_F(RuntimeTest, AnIntentNeedsPidAdminAnAdvancingOperationAStoppedProviderAndAnExecutableWorker) {
  principal(11, 121, RealmScope{}, kWorkerBits, 8);      // scoped elsewhere
  principal(12, 122, RealmScope{}, kWorkerBits);         // not scoped
  principal(13, 123, RealmScope{}, kInspect, kPid);      // no execute
  principal(14, 124, RealmScope{}, kWorkerBits, kPid);
  accept(*admin_, RevokePrincipal{PrincipalId{14}, std::nullopt});
  principal(15, 125, RealmScope{}, kInspect | kExecute);  // no pid_admin
  Client stranger = client_of(15, 125);
  const Position before = position_now();
  refused_as(stranger, intent(), Reason::kNotPermitted);
  refused_as(*admin_, RuntimeIntent{Pid{99}, 1, 3, Name{"host-a"}, kWorker, kArtifact, kConfiguration}, Reason::kUnknownProcess);
  refused_as(*admin_, intent(0), Reason::kStaleOperation);
  refused_as(*admin_, intent(1, 99), Reason::kUnknownSubject);
  refused_as(*admin_, intent(1, 14), Reason::kRevokedWorker);
  refused_as(*admin_, intent(1, 11), Reason::kForeignScope);
  refused_as(*admin_, intent(1, 12), Reason::kForeignScope);
  refused_as(*admin_, intent(1, 13), Reason::kWorkerNotExecutor);
  refused_as(*admin_, observe(1, RuntimeStatus::kStarting), Reason::kNoRuntimeBinding);
  refused_as(*admin_, RuntimeUpgrade{kPid, 1, 2, 4, kArtifact, kConfiguration}, Reason::kNoRuntimeBinding);
  refused_as(*admin_, activation(1), Reason::kNoRuntimeBinding);
  EXPECT_EQ(position_now(), before);

  ok<RuntimeChanged>(admin_->submit(intent(5)));
  refused_as(*admin_, intent(6, kWorker, "host-b"), Reason::kProviderRunning);  // not observed stopped
  ok<RuntimeChanged>(admin_->submit(observe(1, RuntimeStatus::kStopped, 5)));
  refused_as(*admin_, intent(5, kWorker, "host-b"), Reason::kStaleOperation);
  const auto moved = ok<RuntimeChanged>(admin_->submit(intent(6, kWorker, "host-b")));
  EXPECT_EQ(moved.incarnation, 0u);  // another provider counts its incarnations afresh
  EXPECT_EQ(binding().provider.value, "host-b");

  accept(*admin_, Terminate{kPid, 1});
  refused_as(*admin_, intent(7), Reason::kRetired);
}

// Decision 127: an upgrade is a new operation at a later revision; the old
// operation's reports are stale, the running activation stays until the new
// incarnation is activated.
TEST_F(RuntimeTest, AnUpgradeMovesToALaterRevisionUnderANewOperation) {
  ready();
  ok<RuntimeChanged>(admin_->submit(activation(1)));
  const Digest artifact = digest(0xa4);
  refused_as(*admin_, RuntimeUpgrade{kPid, 2, 3, 4, artifact, kConfiguration}, Reason::kStaleOperation);
  refused_as(*admin_, RuntimeUpgrade{kPid, 1, 1, 4, artifact, kConfiguration}, Reason::kStaleOperation);
  refused_as(*admin_, RuntimeUpgrade{kPid, 1, 2, 3, artifact, kConfiguration}, Reason::kRevisionNotAdvancing);
  const auto upgraded = ok<RuntimeChanged>(admin_->submit(RuntimeUpgrade{kPid, 1, 2, 4, artifact, kConfiguration}));
  EXPECT_EQ(upgraded.status, RuntimeStatus::kIntended);
  EXPECT_EQ(binding().activation->operation, 1u);  // still running revision 3
  EXPECT_FALSE(binding().bootstrap);
  refused_as(*admin_, observe(1, RuntimeStatus::kStopped), Reason::kStaleOperation);
  refused_as(*admin_, observe(1, RuntimeStatus::kStarting, 2), Reason::kStaleObservation);  // the running incarnation
  ok<RuntimeChanged>(admin_->submit(observe(2, RuntimeStatus::kStarting, 2)));
  refused_as(*admin_, RuntimeObserve{kPid, 2, 2, RuntimeStatus::kReady, kEvidence}, Reason::kArtifactMismatch);
  ok<RuntimeChanged>(admin_->submit(RuntimeObserve{kPid, 2, 2, RuntimeStatus::kReady, BootstrapEvidence{artifact, kConfiguration}}));
  const auto activated = ok<RuntimeChanged>(admin_->submit(activation(2, 2, kNewSeed, kThirdSeed, 2)));
  EXPECT_EQ(activated.generation, 3u);
  EXPECT_EQ(*binding().activation, (ActivationRecord{2, 2, 3, position_now()}));
  EXPECT_EQ(binding().revision, 4u);
}

// Decision 123: activation's own rules - root authorization, the worker's
// expected key and a new one, and an executable process at its generation.
TEST_F(RuntimeTest, ActivationRefusesAllButAnExactTakeover) {
  ready();
  principal(15, 125, PidScope{kPid}, kAllPermissions & ~kRealmControl);  // an administrator of 7, not root
  Client pid_admin = client_of(15, 125);
  const Position before = position_now();
  refused_as(pid_admin, activation(1), Reason::kNotPermitted);
  refused_as(*admin_, Activate{Pid{99}, 1, 1, 1, key_of(seed_of(kOldSeed)), key_of(seed_of(kNewSeed))}, Reason::kUnknownProcess);
  refused_as(*admin_, activation(1, 1, 99), Reason::kWorkerKeyChanged);
  refused_as(*admin_, activation(1, 1, kOldSeed, kOldSeed), Reason::kUnchangedKey);
  refused_as(*admin_, activation(2), Reason::kStaleGeneration);
  EXPECT_EQ(position_now(), before);
  accept(*admin_, Suspend{kPid, 1, TrustedMs{1'900'000'000'000}});
  refused_as(*admin_, activation(1), Reason::kSuspended);
  EXPECT_EQ(binding().activation, std::nullopt);
}

// Decision 126: resume needs the generation, current dependencies and a stopped provider binding.
TEST_F(RuntimeTest, ResumeNeedsAStoppedProviderBinding) {
  ready();
  ok<RuntimeChanged>(admin_->submit(activation(1)));
  const Id suspended = ok<ProcessChanged>(admin_->submit(Suspend{kPid, 2, TrustedMs{1'900'000'000'000}})).generation;
  refused_as(*admin_, Resume{kPid, suspended}, Reason::kProviderRunning);
  ok<RuntimeChanged>(admin_->submit(observe(1, RuntimeStatus::kStopped)));
  refused_as(*admin_, Resume{kPid, suspended + 1}, Reason::kStaleGeneration);
  EXPECT_EQ(ok<ProcessChanged>(admin_->submit(Resume{kPid, suspended})).generation, suspended + 1);
}

// Decision 129: every binding is a journaled record; a restart reads it back.
TEST_F(RuntimeTest, BindingsSurviveARestart) {
  ready();
  ok<RuntimeChanged>(admin_->submit(activation(1)));
  const auto before = binding();
  admin_.reset();
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(binding(), before);
  refused_as(*admin_, Own{kPid, 2}, Reason::kRuntimeBound);
  refused_as(*admin_, observe(1, RuntimeStatus::kStarting), Reason::kStaleObservation);
  Client incarnation = client_of(kWorker, kNewSeed);
  EXPECT_EQ(answer<ProcessInfo>(incarnation, ProcessRead{kPid}).owner, std::optional<PrincipalId>(kWorker));
}

// Decisions 25, 128: the runtime read needs inspect or execute at the PID;
// the capabilities answer lists runtime_binding and station.
TEST_F(RuntimeTest, TheRuntimeReadNeedsInspectAtThePidAndTheCapabilitiesListBothNames) {
  ok<RuntimeChanged>(admin_->submit(intent()));
  principal(16, 126, PidScope{Pid{8}}, kInspect);
  Client other = client_of(16, 126);
  EXPECT_EQ(query_refused(other, RuntimeQuery{kPid}).reason, Reason::kNotPermitted);
  Client worker = client_of(kWorker, kOldSeed);
  EXPECT_TRUE(answer<RuntimeInfo>(worker, RuntimeQuery{kPid}).bound);
  EXPECT_EQ(query_refused(*admin_, RuntimeQuery{Pid{99}}).reason, Reason::kUnknownProcess);
  EXPECT_TRUE(admin_->require(capability::kRuntimeBinding).ok());
  EXPECT_TRUE(admin_->require(capability::kStation).ok());
  EXPECT_EQ(admin_->require("no_such_capability").error().kind, ClientError::Kind::kUnsupported);
}

// The wire spelling, byte for byte (also the fuzzer's seeds, scripts/fuzz-seeds.sh).
TEST(RuntimeContract, TheRuntimeOpsSpellAsTheirFixtures) {
  const auto fixture = [](const std::string& name) {
    std::ifstream in(std::string(COWBOY_FIXTURE_DIR) + "/transit/" + name);
    std::string line;
    std::getline(in, line);
    return line;
  };
  Digest artifact{}, configuration{};
  for (std::size_t i = 0; i < artifact.size(); ++i) {
    artifact[i] = static_cast<std::uint8_t>(i + 1);
    configuration[i] = static_cast<std::uint8_t>(32 - i);
  }
  PublicKey from{}, to{};
  from.fill(7);
  to.fill(9);
  const Definition definition{"transit.v1:fixture"};
  EXPECT_EQ(to_json(Request{Version{}, definition, {"dev"}, PrincipalId{1}, 4,
                            RuntimeObserve{Pid{7}, 1, 2, RuntimeStatus::kReady, BootstrapEvidence{artifact, configuration}}}),
            fixture("runtime_observe.json"));
  EXPECT_EQ(to_json(Request{Version{}, definition, {"dev"}, PrincipalId{1}, 5, Activate{Pid{7}, 3, 1, 2, from, to}}),
            fixture("activate.json"));
}

}  // namespace
}  // namespace cowboy::transit
