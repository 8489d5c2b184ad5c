// PID scope and grant scope against every command and query, over real HTTP
// (docs/transit.md, decision 25). Seven callers each hold every permission
// bit at one scope; four of them are scoped to PID 7. Each op is aimed at
// PID 7's side of the realm, at PID 8's, or at the realm as a whole, and is
// built so that, once past the permission check, a later rule refuses it (a
// taken name, an already retired resource, a stale generation...): a
// permitted caller meets that reason, a denied one `not_permitted`, and the
// state stays the same for every caller. Sends are accepted (harmless).
#include <gtest/gtest.h>

#include <functional>

#include "state_fixture.h"

namespace cowboy::transit {
namespace {

// The columns: who calls, with a grant of every bit at one scope.
//   A unscoped, realm grant      B unscoped, PID 7 grant     C unscoped, grant on r7
//   D scoped 7, realm grant      E scoped 7, PID 7 grant     F scoped 7, PID 8 grant
//   G scoped 7, grant on r7
// The expectations: 'Y' the op passes the permission check, '.' it is
// denied (not_permitted; for listings and lookups, the target is not shown),
// 'H' a lookup answers null (the target resource is hidden).
constexpr const char* kRealm = "Y......";   // the realm as a whole: only an unscoped realm grant
constexpr const char* kPid7 = "YY.YY..";    // PID 7: realm or PID 7 grants, scoped to 7 or not
constexpr const char* kPid8 = "Y......";    // PID 8: no scoped caller, whatever its grants
constexpr const char* kRes7 = "Y.YY..Y";    // r7 (owned by and associated with 7): realm or r7 grants
constexpr const char* kElsewhere = "Y......";  // r8, an unowned resource: no scoped caller
constexpr const char* kHome = "Y..YY..";    // identity, decision: inspect at the caller's own scope
constexpr const char* kAssociate7 = "Y..Y...";  // pid_admin at 7 and inspect on the resource
constexpr const char* kLookup7 = "YH.YH..";  // inspect at 7; the target shown only with inspect on r7

struct Caller {
  Id id;
  std::uint8_t seed;
  Scope scope;
  std::optional<Pid> pid_scope;
};

class ScopeTest : public StateTest {
 protected:
  void SetUp() override {
    StateTest::SetUp();
    // Processes 7 and 8, each requiring "doc": r7 and r8, each owned by its process.
    accept(*admin_, CreateProcess{Pid{7}, {{{"doc"}}}});
    accept(*admin_, CreateProcess{Pid{8}, {{{"doc"}}}});
    r7_ = resource("r7", 7);
    r8_ = resource("r8", 8);
    ru_ = resource("ru");
    accept(*admin_, Associate{Pid{7}, {"doc"}, r7_});
    accept(*admin_, Associate{Pid{8}, {"doc"}, r8_});
    accept(*admin_, Initialize{Pid{7}, 0});
    accept(*admin_, Initialize{Pid{8}, 0});
    // Retired resources, to aim retirements at; a role, to aim role names at.
    for (const auto& [name, owner] : std::vector<std::pair<std::string, std::optional<Id>>>{
             {"x7", 7}, {"x8", 8}, {"xu", std::nullopt}}) {
      const ResourceId id = resource(name, owner);
      accept(*admin_, RetireResource{id});
      retired_[name] = id;
    }
    accept(*admin_, CreateRole{{"ops"}, std::nullopt});
    // Two resolved outputs of PID 7: one delivered to 7 itself, one to 8.
    const Id generation = ok<ProcessChanged>(admin_->submit(Own{Pid{7}, 1})).generation;
    auto turn = ok<TurnPublished>(admin_->submit(Turn{Pid{7}, generation, std::nullopt, std::nullopt, std::nullopt, {}, {},
                                                      {}, {{{Pid{7}, value("a")}, {Pid{8}, value("b")}}}, std::nullopt}));
    to7_ = turn.outputs.items.at(0);
    to8_ = turn.outputs.items.at(1);
    accept(*admin_, Deliver{to7_});
    accept(*admin_, Deliver{to8_});
    // An effect of each process, executed by the root; 8 is left idle again.
    const auto intent = [&](auto pid_of, Id generation) {
      const Pid pid = testing::id<Pid>(pid_of);
      Turn t{pid, generation, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
      t.effect = EffectIntent{PrincipalId{1}, clock_.trusted() + Millis{60'000}, {}, 1};
      return ok<TurnPublished>(admin_->submit(t)).effect.value_or(0);
    };
    effect7_ = intent(7, generation);
    const Id owned8 = ok<ProcessChanged>(admin_->submit(Own{Pid{8}, 1})).generation;
    effect8_ = intent(8, owned8);
    accept(*admin_, Suspend{Pid{8}, owned8, clock_.trusted() + Millis{60'000}});
    accept(*admin_, Resume{Pid{8}, owned8});
    // Two pending ones, the heads of their routes.
    auto pending = ok<TurnPublished>(admin_->submit(Turn{Pid{7}, generation, std::nullopt, std::nullopt, std::nullopt, {},
                                                         {}, {}, {{{Pid{7}, value("c")}, {Pid{8}, value("d")}}}, std::nullopt}));
    pending7_ = pending.outputs.items.at(0);
    pending8_ = pending.outputs.items.at(1);

    callers_ = {{20, 120, RealmScope{}, std::nullopt}, {21, 121, PidScope{Pid{7}}, std::nullopt},
                {22, 122, ResourceScope{r7_}, std::nullopt}, {23, 123, RealmScope{}, Pid{7}},
                {24, 124, PidScope{Pid{7}}, Pid{7}},           {25, 125, PidScope{Pid{8}}, Pid{7}},
                {26, 126, ResourceScope{r7_}, Pid{7}}};
    for (const auto& c : callers_) {
      principal(c.id, c.seed, c.scope, kAllPermissions, c.pid_scope);
      clients_.push_back(std::make_unique<Client>(options(c.id, c.seed)));
      clients_.back()->set_next_sequence(1);  // some may not read their own identity
    }
  }

  static std::string outcome(const ClientResult<Receipt>& r) {
    if (r.ok()) return "ok";
    return r.error().rejection ? std::string(name_of(r.error().rejection->reason)) : r.error().message;
  }
  static std::string outcome(const ClientResult<Response>& r) {
    if (r.ok()) return "ok";
    return r.error().rejection ? std::string(name_of(r.error().rejection->reason)) : r.error().message;
  }

  struct Row {
    std::string what;
    std::function<std::string(Client&)> run;  // the outcome: "ok", a reason, "shown"...
    std::string yes;                          // the outcome once past the permission check
    const char* pattern;
    std::string no = "not_permitted";
  };
  Row command(std::string what, Command op, std::string yes, const char* pattern) {
    return Row{std::move(what), [op](Client& c) { return outcome(c.submit(op)); }, std::move(yes), pattern};
  }
  Row query(std::string what, QueryOp op, const char* pattern) {
    return Row{std::move(what), [op](Client& c) { return outcome(c.query(op)); }, "ok", pattern};
  }

  static Id id_of(const ResourceInfo& r) { return r.resource.value; }
  static Id id_of(const ProcessSummary& p) { return p.pid.value; }
  static Id id_of(const EffectInfo& e) { return e.effect; }
  static Id id_of(const RouteHead& h) { return h.output; }
  /// Whether the first page of a filtered listing shows `id`.
  template <typename Page> Row listing(std::string what, QueryOp op, auto shown, const char* pattern) {
    const Id id = testing::raw(shown);
    const auto run = [op, id](Client& c) {
      auto r = c.query(op);
      if (!r.ok()) return outcome(r);
      for (const auto& item : std::get<Page>(r->result).items.items)
        if (id_of(item) == id) return std::string("shown");
      return std::string("absent");
    };
    return Row{std::move(what), run, "shown", pattern, "absent"};
  }

  /// Every cell that differs from its expectation, one line each.
  std::string mismatches(const std::vector<Row>& rows) {
    std::string out;
    for (const auto& row : rows)
      for (std::size_t i = 0; i < callers_.size(); ++i) {
        const char want = row.pattern[i];
        const std::string expected = want == 'Y' ? row.yes : want == 'H' ? "hidden" : row.no;
        const std::string got = row.run(*clients_[i]);
        if (got != expected)
          out += row.what + ", caller " + std::string(1, static_cast<char>('A' + i)) + ": " + got + ", expected " +
                 expected + "\n";
      }
    return out;
  }

  ResourceId r7_{}, r8_{}, ru_{};
  Id to7_ = 0, to8_ = 0, effect7_ = 0, effect8_ = 0, pending7_ = 0, pending8_ = 0;
  std::map<std::string, ResourceId> retired_;
  std::vector<Caller> callers_;
  std::vector<std::unique_ptr<Client>> clients_;
};

TEST_F(ScopeTest, EveryCommandAppliesPidScopeAndGrantScope) {
  const auto turn = [](auto pid) { return Turn{testing::id<Pid>(pid), 999, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt}; };
  const std::vector<Row> rows = {
      // Administration acts on the realm as a whole.
      command("create_principal", CreatePrincipal{PrincipalId{1}, PublicKey{}, RealmScope{}, Permissions{kInspect}, std::nullopt, std::nullopt},
              "subject_taken", kRealm),
      command("create_role", CreateRole{{"ops"}, std::nullopt}, "role_name_taken", kRealm),
      command("bind_credential", BindCredential{PrincipalId{1}, 9999, std::nullopt}, "unknown_role", kRealm),
      command("unbind_credential", UnbindCredential{PrincipalId{1}, 1, std::nullopt}, "private_role", kRealm),
      command("grant", Grant{9999, RealmScope{}, Permissions{kInspect}, std::nullopt}, "unknown_role", kRealm),
      command("revoke_grant", RevokeGrant{1, std::nullopt}, "root_grant", kRealm),
      command("revoke_principal", RevokePrincipal{PrincipalId{1}, std::nullopt}, "root_principal", kRealm),
      // Resources: pid_admin at the lifetime owner's PID, or at the realm without one.
      command("create_resource owned by 7", CreateResource{{"r7"}, Pid{7}}, "name_taken", kPid7),
      command("create_resource owned by 8", CreateResource{{"r8"}, Pid{8}}, "name_taken", kPid8),
      command("create_resource unowned", CreateResource{{"ru"}, std::nullopt}, "name_taken", kRealm),
      command("retire_resource owned by 7", RetireResource{retired_["x7"]}, "already_retired", kPid7),
      command("retire_resource owned by 8", RetireResource{retired_["x8"]}, "already_retired", kPid8),
      command("retire_resource unowned", RetireResource{retired_["xu"]}, "already_retired", kRealm),
      // Processes: the right at the PID, and for associate inspect on the resource too.
      command("create 7", CreateProcess{Pid{7}, {}}, "subject_taken", kPid7),
      command("create 8", CreateProcess{Pid{8}, {}}, "subject_taken", kPid8),
      command("associate r7 to 7", Associate{Pid{7}, {"doc"}, r7_}, "association_exists", kAssociate7),
      command("associate r8 to 7", Associate{Pid{7}, {"doc"}, r8_}, "association_exists", kRealm),
      command("associate ru to 7", Associate{Pid{7}, {"doc"}, ru_}, "association_exists", kRealm),
      command("associate r8 to 8", Associate{Pid{8}, {"doc"}, r8_}, "association_exists", kPid8),
      command("initialize 7", Initialize{Pid{7}, 0}, "already_initialized", kPid7),
      command("initialize 8", Initialize{Pid{8}, 0}, "already_initialized", kPid8),
      command("own 7", Own{Pid{7}, 999}, "not_idle", kPid7),  // the root owns it
      command("own 8", Own{Pid{8}, 999}, "stale_generation", kPid8),
      command("send 7", Send{Pid{7}, value("s")}, "ok", kPid7),
      command("send 8", Send{Pid{8}, value("s")}, "ok", kPid8),
      command("turn 7", turn(7), "not_owner", kPid7),
      command("turn 8", turn(8), "not_owner", kPid8),
      command("fail_turn 7", FailTurn{Pid{7}, 999, 1, {""}}, "not_owner", kPid7),
      command("fail_turn 8", FailTurn{Pid{8}, 999, 1, {""}}, "not_owner", kPid8),
      command("retry 7", Retry{Pid{7}, 999, 1}, "not_blocked", kPid7),
      command("retry 8", Retry{Pid{8}, 999, 1}, "not_blocked", kPid8),
      command("suspend 7", Suspend{Pid{7}, 999, clock_.trusted() + Millis{60'000}}, "stale_generation", kPid7),
      command("suspend 8", Suspend{Pid{8}, 999, clock_.trusted() + Millis{60'000}}, "stale_generation", kPid8),
      command("resume 7", Resume{Pid{7}, 999}, "not_suspended", kPid7),
      command("resume 8", Resume{Pid{8}, 999}, "not_suspended", kPid8),
      command("deliver into 7", Deliver{to7_}, "resolved", kPid7),
      command("deliver into 8", Deliver{to8_}, "resolved", kPid8),
      // Workers that fail over, processes that end: rotation is root's, termination pid_admin's, spawn the
      // parent's executor's (and pid_admin's at the child, FailoverTest.SpawnBringsUpAChildBoundToItsParentsResources).
      command("rotate_worker 7", RotateWorker{Pid{7}, 999, PrincipalId{1}, PublicKey{}, Permissions{kInspect}, PublicKey{}}, "foreign_scope",
              kRealm),
      command("replace_grant", ReplaceGrant{PrincipalId{1}, RealmScope{}, Permissions{kInspect}, std::nullopt}, "root_grant", kRealm),
      command("terminate 7", Terminate{Pid{7}, 999}, "stale_generation", kPid7),
      command("terminate 8", Terminate{Pid{8}, 999}, "stale_generation", kPid8),
      command("spawn from 7", Spawn{Pid{7}, 999, Pid{9}, {}, false}, "not_owner", kPid7),  // the root owns it
      command("spawn from 8", Spawn{Pid{8}, 999, Pid{9}, {}, false}, "not_owner", kPid8),
      // Effects: the rights at the effect's process; the root executes both.
      command("attempt_effect of 7", AttemptEffect{effect7_}, "not_effect_executor", kPid7),
      command("attempt_effect of 8", AttemptEffect{effect8_}, "not_effect_executor", kPid8),
      command("observe_effect of 7", ObserveEffect{effect7_, value("r"), true}, "not_effect_executor", kPid7),
      command("observe_effect of 8", ObserveEffect{effect8_, value("r"), true}, "not_effect_executor", kPid8),
      command("close_effect of 7", CloseEffect{effect7_, CloseKind::kDeadline}, "deadline_not_reached", kPid7),
      command("close_effect of 8", CloseEffect{effect8_, CloseKind::kDeadline}, "deadline_not_reached", kPid8),
      command("cancel_effect of 7", CancelEffect{effect7_}, "caller_live", kPid7),
      command("cancel_effect of 8", CancelEffect{effect8_}, "caller_live", kPid8),
      // The maintenance process's commands: courier at the destination, pid_admin at the process.
      command("cancel_output into 7", CancelOutput{to7_}, "resolved", kPid7),
      command("cancel_output into 8", CancelOutput{to8_}, "resolved", kPid8),
      command("record_retirement 7", RecordRetirement{Pid{7}}, "not_ended", kPid7),
      command("record_retirement 8", RecordRetirement{Pid{8}}, "not_ended", kPid8),
      // Payloads: execute at the process to declare one (the later steps are its publisher's alone).
      command("declare_payload of 7", DeclarePayload{Pid{7}, 1, Digest{}, false}, "ok", kPid7),
      command("declare_payload of 8", DeclarePayload{Pid{8}, 1, Digest{}, false}, "ok", kPid8),
      // Runtime binding: pid_admin at the process for the local manager's records, root's to activate.
      command("runtime_intent 7", RuntimeIntent{Pid{7}, 1, 1, Name{"p"}, PrincipalId{999}, Digest{}, Digest{}}, "unknown_subject", kPid7),
      command("runtime_intent 8", RuntimeIntent{Pid{8}, 1, 1, Name{"p"}, PrincipalId{999}, Digest{}, Digest{}}, "unknown_subject", kPid8),
      command("runtime_observe 7", RuntimeObserve{Pid{7}, 1, 1, RuntimeStatus::kStarting, std::nullopt}, "no_runtime_binding",
              kPid7),
      command("runtime_upgrade 8", RuntimeUpgrade{Pid{8}, 1, 2, 2, Digest{}, Digest{}}, "no_runtime_binding", kPid8),
      command("activate 7", Activate{Pid{7}, 999, 1, 1, PublicKey{}, PublicKey{}}, "no_runtime_binding", kRealm),
      // Collection: pid_admin at the process, as create (neither allows collection).
      command("collect 7", Collect{Pid{7}, CollectKind::kProcess, std::nullopt}, "collection_not_allowed", kPid7),
      command("collect 8", Collect{Pid{8}, CollectKind::kProcess, std::nullopt}, "collection_not_allowed", kPid8),
      // Blocks: write on the resource first (then pid_admin at the block's owner, BlockTest.*).
      command("retire_block in r7", RetireBlock{r7_, key("b")}, "unknown_block", kRes7),
      command("retire_block in r8", RetireBlock{r8_, key("b")}, "unknown_block", kElsewhere),
      command("delete_block in r7", DeleteBlock{r7_, key("b")}, "unknown_block", kRes7),
      command("delete_block in r8", DeleteBlock{r8_, key("b")}, "unknown_block", kElsewhere),
      // Storage maintenance: realm_control at realm scope, never through a PID scope (decisions 141, 144).
      command("storage_fence", StorageFence{99, false}, "storage_epoch_changed", kRealm),
      command("storage_compact", StorageCompact{99, ProcessLeaf{Pid{7}}}, "compaction_cursor_changed", kRealm),
  };
  EXPECT_EQ(mismatches(rows), "");
}

TEST_F(ScopeTest, EveryQueryAppliesPidScopeAndGrantScope) {
  const auto lookup = [](auto pid_of) {
    const Pid pid = testing::id<Pid>(pid_of);
    return [pid](Client& c) {
      auto r = c.query(AssociationLookup{pid, {"doc"}});
      if (!r.ok()) return outcome(r);
      return std::string(std::get<LookupResult>(r->result).association ? "visible" : "hidden");
    };
  };
  const auto entries = [](auto resource_of) {
    const ResourceId resource = testing::id<ResourceId>(resource_of);
    return ReadEntries{resource, std::nullopt, std::nullopt, slots({"k"})};
  };
  // A payload of each process, declared by the root: read with read at its PID.
  const Id pay7 = ok<PayloadChanged>(admin_->submit(DeclarePayload{Pid{7}, 1, Digest{}, false})).payload;
  const Id pay8 = ok<PayloadChanged>(admin_->submit(DeclarePayload{Pid{8}, 1, Digest{}, false})).payload;
  std::vector<Row> rows = {
      query("payload of 7", PayloadRead{pay7}, kPid7),
      query("payload of 8", PayloadRead{pay8}, kPid8),
      query("identity", IdentityQuery{}, kHome),
      query("capabilities", CapabilitiesQuery{}, "YYYYYYY"),
      query("decision", DecisionQuery{PrincipalId{1}, RealmScope{}, Permissions{kInspect}}, kHome),
      listing<ResourcePage>("list_resources shows r7", ListResources{std::nullopt}, r7_, kRes7),
      listing<ResourcePage>("list_resources shows r8", ListResources{std::nullopt}, r8_, kElsewhere),
      listing<ResourcePage>("list_resources shows ru", ListResources{std::nullopt}, ru_, kElsewhere),
      query("list_associations 7", ListAssociations{Pid{7}, std::nullopt}, kPid7),
      query("list_associations 8", ListAssociations{Pid{8}, std::nullopt}, kPid8),
      Row{"association_lookup 7 doc", lookup(7), "visible", kLookup7},
      Row{"association_lookup 8 doc", lookup(8), "visible", kPid8},
      query("read_access r7", ReadAccess{r7_}, kRes7),
      query("read_access r8", ReadAccess{r8_}, kElsewhere),
      query("read_access ru", ReadAccess{ru_}, kElsewhere),
      query("read_entries r7", entries(r7_), kRes7),
      query("read_entries r8", entries(r8_), kElsewhere),
      query("read_entries ru", entries(ru_), kElsewhere),
      query("list_entries r7", ListEntries{CurrentBasis{r7_, Revision{1}}, std::nullopt, std::nullopt}, kRes7),
      query("list_entries r8", ListEntries{CurrentBasis{r8_, Revision{1}}, std::nullopt, std::nullopt}, kElsewhere),
      query("list_entries ru", ListEntries{CurrentBasis{ru_, Revision{1}}, std::nullopt, std::nullopt}, kElsewhere),
      query("process 7", ProcessRead{Pid{7}}, kPid7),
      query("process 8", ProcessRead{Pid{8}}, kPid8),
      query("runtime 7", RuntimeQuery{Pid{7}}, kPid7),
      query("runtime 8", RuntimeQuery{Pid{8}}, kPid8),
      listing<ProcessPage>("list_processes shows 7", ListProcesses{std::nullopt}, 7, kPid7),
      listing<ProcessPage>("list_processes shows 8", ListProcesses{std::nullopt}, 8, kPid8),
      query("effect of 7", EffectRead{effect7_}, kPid7),
      query("effect of 8", EffectRead{effect8_}, kPid8),
      query("list_effects 7", ListEffects{Pid{7}, EffectFilter::kAll, std::nullopt}, kPid7),
      query("list_effects 8", ListEffects{Pid{8}, EffectFilter::kAll, std::nullopt}, kPid8),
      listing<EffectPage>("list_effects shows 7's", ListEffects{std::nullopt, EffectFilter::kAll, std::nullopt}, effect7_, kPid7),
      listing<EffectPage>("list_effects shows 8's", ListEffects{std::nullopt, EffectFilter::kAll, std::nullopt}, effect8_, kPid8),
      listing<RoutePage>("list_routes shows the head into 7", ListRoutes{std::nullopt}, pending7_, kPid7),
      listing<RoutePage>("list_routes shows the head into 8", ListRoutes{std::nullopt}, pending8_, kPid8),
      query("list_ended", ListEnded{std::nullopt}, "YYYYYYY"),  // a filtered listing anyone may ask
      query("storage", StorageQuery{}, "YYYYYYY"),  // the storage head names no resource or process (decision 143)
      query("compaction_needs", CompactionNeedsQuery{}, kRealm),  // names leaves: realm_control at realm scope (decision 183)
  };
  Row block7 = query("read_block r7", ReadBlock{CurrentBasis{r7_, Revision{1}}, key("b"), std::nullopt}, kRes7);
  block7.yes = "unknown_block";
  rows.push_back(block7);
  Row block8 = query("read_block r8", ReadBlock{CurrentBasis{r8_, Revision{1}}, key("b"), std::nullopt}, kElsewhere);
  block8.yes = "unknown_block";
  rows.push_back(block8);
  Row info7 = query("block_info r7", BlockRead{r7_, key("b")}, kRes7);
  info7.yes = "unknown_block";
  rows.push_back(info7);
  Row info8 = query("block_info r8", BlockRead{r8_, key("b")}, kElsewhere);
  info8.yes = "unknown_block";
  rows.push_back(info8);
  EXPECT_EQ(mismatches(rows), "");
}

TEST_F(ScopeTest, APidScopedIdentityShowsTheBitsHeldAtItsPid) {
  for (const std::size_t scoped : {3, 4}) {  // D (a realm grant) and E (a PID 7 grant), both scoped to 7
    auto me = clients_[scoped]->identity();
    ASSERT_TRUE(me.ok()) << me.error().message;
    EXPECT_EQ(me->pid_scope, std::optional<Pid>(Pid{7}));
    EXPECT_EQ(me->permissions.bits, kAllPermissions) << scoped;
  }
  auto unscoped = clients_[0]->identity();
  ASSERT_TRUE(unscoped.ok());
  EXPECT_EQ(unscoped->permissions.bits, kAllPermissions);  // A: realm-wide
}

// The decision query answers what the node would decide: a PID-scoped
// principal's realm grant reaches only its own PID and what that PID reaches.
TEST_F(ScopeTest, DecisionsApplyTheSubjectsPidScope) {
  const std::vector<std::pair<Scope, const char*>> scopes = {
      {RealmScope{}, kRealm}, {PidScope{Pid{7}}, kPid7}, {PidScope{Pid{8}}, kPid8},
      {ResourceScope{r7_}, kRes7}, {ResourceScope{r8_}, kElsewhere}, {ResourceScope{ru_}, kElsewhere}};
  std::string out;
  for (const auto& [scope, pattern] : scopes)
    for (std::size_t i = 0; i < callers_.size(); ++i) {
      auto d = admin_->decision(PrincipalId{callers_[i].id}, scope, Permissions{kInspect});
      ASSERT_TRUE(d.ok()) << d.error().message;
      if (d->allowed != (pattern[i] == 'Y'))
        out += to_json(scope) + ", caller " + std::string(1, static_cast<char>('A' + i)) + ": " +
               (d->allowed ? "allowed" : "denied") + "\n";
    }
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace cowboy::transit
