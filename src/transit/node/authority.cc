#include "transit/node/authority.h"

#include "transit/contract/operations.h"
#include "transit/contract/codec.h"
#include "transit/node/layout.h"

namespace cowboy::transit::node {
namespace {

Err<Refusal> refuse(Reason reason, std::string message) {
  return Err{Refusal{reason, std::move(message)}};
}

Id id_of(const OutputRecord& r) { return r.output; }
Id id_of(const EffectRecord& r) { return r.info.effect; }
Id id_of(const PayloadRecord& r) { return r.info.payload; }
ResourceId id_of(const ResourceRecord& r) { return r.info.resource; }
Id id_of(const ViewRecord& r) { return r.view; }
Pid id_of(const RuntimeRecord& r) { return r.info.pid; }
std::pair<Pid, Id> id_of(const Association& r) { return {r.pid, r.revision}; }
constexpr std::string_view kind_of(const OutputRecord*) { return "output"; }
constexpr std::string_view kind_of(const EffectRecord*) { return "effect"; }
constexpr std::string_view kind_of(const PayloadRecord*) { return "payload"; }
constexpr std::string_view kind_of(const ResourceRecord*) { return "resource"; }
constexpr std::string_view kind_of(const ViewRecord*) { return "view"; }
constexpr std::string_view kind_of(const RuntimeRecord*) { return "runtime binding of"; }
constexpr std::string_view kind_of(const Association*) { return "association"; }
// A record's key in its table, and the id a CorruptRecord names.
std::string record_key(char table, auto id) { return layout::key(table, id); }
std::string record_key(char table, std::pair<Pid, Id> ids) { return layout::key(table, ids.first, ids.second); }
Id named(auto id) { return layout::wire(id); }
Id named(std::pair<Pid, Id> ids) { return ids.second; }
constexpr std::size_t kMaxStoredRecord = 256 * 1024;  // the journal's bound on a stored record

bool covers(const Scope& granted, const Scope& wanted) {
  if (std::holds_alternative<RealmScope>(granted)) return true;
  return granted == wanted;
}

}  // namespace

Authority::Authority(Genesis genesis) : genesis_(std::move(genesis)) {
  head_.location_definition = location_definition();  // decision 140
  // Position 0: the root principal, its private role and one realm-wide grant of everything.
  const PrincipalId root = genesis_.root_principal;
  const Id role = head_.next_role++;
  principals_[root] = PrincipalRecord{root, genesis_.root_public_key, role, std::nullopt, 0, false, 1};
  roles_[role] = RoleRecord{role, {}, root};
  credentials_.insert({root, role});
  const Id grant = head_.next_grant++;
  grants_[grant] = GrantRecord{grant, role, RealmScope{}, Permissions{kAllPermissions}, head_.policy_revision};
  grants_by_role_.insert({role, grant});
}

Authority::Authority(Genesis genesis, Published published)
    : genesis_(std::move(genesis)),
      head_(std::move(published.head)),
      principals_(std::move(published.principals)),
      roles_(std::move(published.roles)),
      grants_(std::move(published.grants)),
      credentials_(std::move(published.credentials)) {
  for (const auto& [id, g] : grants_) grants_by_role_.insert({g.role, id});
  may_have_ended_ = std::move(published.may_have_ended);  // stored, not rebuilt: processes stay on disk
  needs_ = std::move(published.needs);  // stored with every decision that changed them (decision 183)
  for (const auto& [leaf, need] : needs_) by_need_.emplace(~need, leaf);
  routes_position_ = ended_position_ = head_.position;
}

const PrincipalRecord* Authority::principal(PrincipalId id) const { return find(principals_, id); }
const RoleRecord* Authority::role(Id id) const { return find(roles_, id); }
const GrantRecord* Authority::grant(Id id) const { return find(grants_, id); }
// Touched has no emptiness of its own: what a decision has changed so far.
static bool changed_any(const Touched& t) {
  return !(t.principals.empty() && t.roles.empty() && t.grants_written.empty() && t.grants_removed.empty() &&
           t.credentials_added.empty() && t.credentials_removed.empty() && t.resources.empty() &&
           t.processes.empty() && t.views.empty() && t.outputs.empty() && t.effects.empty() && t.payloads.empty() &&
           t.runtime.empty() && t.associations.empty() && t.entries.empty() && t.inputs.empty() && t.blocks.empty() &&
           t.views_removed.empty() && t.outputs_removed.empty() && t.effects_removed.empty() &&
           t.payloads_removed.empty() && t.associations_removed.empty() && t.inputs_removed.empty() &&
           t.block_records.empty() && t.blocks_deleted.empty() && !t.trim_below && t.ended.empty());
}

const ProcessRecord* Authority::process(Pid pid) const {
  if (const auto* resident = processes_.find(pid)) return *resident ? &**resident : nullptr;
  if (!source_) return nullptr;
  auto stored = source_->process(pid, head_.position);
  if (!stored.ok()) {  // fails the decision or query under way (decide, answer): never "no such process"
    note_corrupt(stored.error());
    return nullptr;
  }
  if (!*stored) return nullptr;
  return &processes_.put(pid, std::move(**stored));
}

void Authority::visit_processes(Pid after, const std::function<bool(const ProcessRecord&)>& visit) const {
  if (source_) {
    if (auto corrupt = source_->processes(after, head_.position, visit)) note_corrupt(*corrupt);
    return;
  }
  processes_.each_after(after, visit);
}

void Authority::note_corrupt(CorruptRecord corrupt) const {
  if (!corrupt_) corrupt_ = corrupt;
  if (deciding_ && (changed_any(*deciding_) || !rows_.empty())) corrupt_after_change_ = true;
}

// Outputs, effects and payloads (decision 170), resources, associations,
// views and runtime bindings (decision 175): resident, or read from the
// source as decided so far and kept; a version that does not decode, or
// decodes as another record, fails the decision or query (decision 157).
template <typename T, typename Key> const T* Authority::stored(Resident<T, Key>& cache, char table, const Key& id) const {
  if (const auto* resident = cache.find(id)) return *resident ? &**resident : nullptr;
  if (!source_) return nullptr;
  auto text = source_->record(record_key(table, id), head_.position);
  if (!text) return nullptr;
  auto decoded = from_json<T>(*text, kMaxStoredRecord);
  if (!decoded.ok() || id_of(*decoded) != id) {
    note_corrupt(CorruptRecord{named(id), kind_of(static_cast<const T*>(nullptr))});
    return nullptr;
  }
  return &cache.put(id, std::move(*decoded));
}

template <typename T, typename Key>
void Authority::visit_stored(Resident<T, Key>& cache, char table, Key after,
                             const std::function<bool(const T&)>& visit) const {
  if (!source_) return cache.each_after(after, visit);
  bool corrupt = false;
  source_->records(table, layout::wire(after), head_.position, [&](Id id, std::string_view text) {
    auto decoded = from_json<T>(text, kMaxStoredRecord);
    if (!decoded.ok() || id_of(*decoded) != Key{id}) {
      note_corrupt(CorruptRecord{id, kind_of(static_cast<const T*>(nullptr))});
      corrupt = true;
      return false;
    }
    return visit(*decoded);
  });
  (void)corrupt;
}
template void Authority::visit_stored(Resident<OutputRecord>&, char, Id,
                                      const std::function<bool(const OutputRecord&)>&) const;
template void Authority::visit_stored(Resident<EffectRecord>&, char, Id,
                                      const std::function<bool(const EffectRecord&)>&) const;
template void Authority::visit_stored(Resident<PayloadRecord>&, char, Id,
                                      const std::function<bool(const PayloadRecord&)>&) const;
template void Authority::visit_stored(Resident<ResourceRecord, ResourceId>&, char, ResourceId,
                                      const std::function<bool(const ResourceRecord&)>&) const;
template void Authority::visit_stored(Resident<ViewRecord>&, char, Id, const std::function<bool(const ViewRecord&)>&) const;
template void Authority::visit_stored(Resident<RuntimeRecord, Pid>&, char, Pid,
                                      const std::function<bool(const RuntimeRecord&)>&) const;

// The stored indexes (decision 170). With a source, rows_ holds only the
// decision's own changes, over the source's rows; without one (a realm being
// created, a test's authority) it is the index, and a removal erases.
void Authority::put_row(std::string key, bool present) {
  forget_listed(key);
  if (!source_ && !present) rows_.erase(key);
  else rows_[std::move(key)] = present;
}

void Authority::visit_rows(const std::string& prefix, const std::string& after,
                           const std::function<bool(std::string_view)>& visit) const {
  auto own = after.empty() ? rows_.lower_bound(prefix) : rows_.upper_bound(after);
  bool go = true;
  // The decision's rows that sort before `limit` (all of them, when null).
  const auto own_before = [&](const std::string_view* limit) {
    for (; go && own != rows_.end() && own->first.starts_with(prefix) && (!limit || own->first < *limit); ++own)
      if (own->second) go = visit(own->first);
  };
  if (source_)
    source_->rows(prefix, after, [&](std::string_view key) {
      own_before(&key);
      if (!go) return false;
      if (rows_.count(std::string(key))) return true;  // the decision's say comes with its own rows
      return go = visit(key);
    });
  own_before(nullptr);
}

void Authority::visit_ids(const std::string& prefix, Id after, const std::function<bool(Id)>& visit) const {
  std::string from;
  if (after) {
    from = prefix;
    layout::put_be64(from, after);
  }
  visit_rows(prefix, from, [&](std::string_view key) { return visit(layout::last_id(key)); });
}

std::optional<Id> Authority::first_id(const std::string& prefix) const {
  std::optional<Id> first;
  visit_rows(prefix, {}, [&](std::string_view key) {
    first = layout::last_id(key);
    return false;
  });
  return first;
}

// Only the association tables' answers are kept: the rows of every other
// table change without a prefix to forget, and are not asked per turn.
static bool listed_table(std::string_view key) {
  return !key.empty() && (key[0] == layout::kAssociationNames || key[0] == layout::kAssociatedBy);
}

void Authority::forget_listed(const std::string& row) const {
  if (row.size() > 8 && listed_table(row)) first_listed_.forget(row.substr(0, row.size() - 8));
}

std::optional<Id> Authority::first_listed(const std::string& prefix) const {
  if (!listed_table(prefix)) return first_id(prefix);
  if (const auto* resident = first_listed_.find(prefix)) return *resident;
  const auto first = first_id(prefix);
  if (first) first_listed_.put(prefix, *first);
  else first_listed_.remove(prefix);
  return first;
}

bool Authority::has_row(const std::string& key) const {
  if (auto own = rows_.find(key); own != rows_.end()) return own->second;
  if (!source_) return false;
  bool found = false;
  source_->rows(key, {}, [&](std::string_view stored) {
    found = stored == key;
    return false;
  });
  return found;
}

std::optional<Id> Authority::route_head(Pid source, Pid destination) const {
  if (const auto* resident = route_heads_.find({source, destination})) return *resident;
  const auto head = first_id(layout::key(layout::kRoutes, source, destination));
  if (head) route_heads_.put({source, destination}, *head);
  else route_heads_.remove({source, destination});
  return head;
}

void Authority::set_route_head(Pid source, Pid destination, std::optional<Id> head) {
  if (head) route_heads_.put({source, destination}, *head);
  else route_heads_.remove({source, destination});
  routes_changed_.emplace_back(source, destination);
}

std::vector<Id> Authority::first_ids(const std::string& prefix, std::size_t limit) const {
  std::vector<Id> ids;
  if (limit == 0) return ids;
  visit_rows(prefix, {}, [&](std::string_view key) {
    ids.push_back(layout::last_id(key));
    return ids.size() < limit;
  });
  return ids;
}

std::vector<std::pair<Pid, Id>> Authority::associations_with(ResourceId resource_id, std::optional<Pid> pid) const {
  std::vector<std::pair<Pid, Id>> out;
  visit_rows(pid ? layout::key(layout::kAssociatedBy, resource_id, *pid) : layout::key(layout::kAssociatedBy, resource_id),
             {}, [&](std::string_view row) {
               out.emplace_back(Pid{layout::get_be64(row.substr(10))}, layout::last_id(row));
               return true;
             });
  return out;
}

std::vector<Pid> Authority::associated_pids(ResourceId resource_id) const {
  std::vector<Pid> pids;
  for (const auto& [pid, revision] : associations_with(resource_id))
    if (pids.empty() || pids.back() != pid) pids.push_back(pid);
  return pids;
}

// The least recently used go first, down to the bound (decision 158). Only
// here, as a decision or query starts: everything decided is staged by then,
// so the source holds what is dropped, and no pointer handed out is kept.
void Authority::bound_resident() const {
  if (!source_) return;  // without a source, everything stays resident
  processes_.bound(resident_limit_);
  resources_.bound(resident_limit_);
  associations_.bound(resident_limit_);
  views_.bound(resident_limit_);
  runtime_.bound(resident_limit_);
  outputs_.bound(resident_limit_);
  route_heads_.bound(resident_limit_);
  first_listed_.bound(resident_limit_);
  effects_.bound(resident_limit_);
  payloads_.bound(resident_limit_);
}
const ResourceRecord* Authority::resource(ResourceId id) const { return stored(resources_, layout::kResources, id); }
const ViewRecord* Authority::view(Id id) const { return stored(views_, layout::kViews, id); }
const OutputRecord* Authority::output(Id id) const { return stored(outputs_, layout::kOutputs, id); }
const EffectRecord* Authority::effect(Id id) const { return stored(effects_, layout::kEffects, id); }
const PayloadRecord* Authority::payload(Id id) const { return stored(payloads_, layout::kPayloads, id); }
const RuntimeRecord* Authority::runtime(Pid pid) const { return stored(runtime_, layout::kRuntime, pid); }
const Association* Authority::association(Pid pid, Id revision) const {
  return stored(associations_, layout::kAssociations, std::pair<Pid, Id>{pid, revision});
}

std::uint64_t Authority::rights(PrincipalId principal_id, const Scope& target) const {
  const auto* p = principal(principal_id);
  if (!p || p->revoked) return 0;
  if (p->pid_scope && !reaches(*p->pid_scope, target)) return 0;
  return granted(principal_id, target);
}

bool Authority::reaches(Pid pid, const Scope& target) const {
  if (const auto* t = std::get_if<PidScope>(&target)) return t->pid == pid;
  if (const auto* t = std::get_if<ResourceScope>(&target)) {
    const auto* r = resource(t->resource);
    return associated(pid, t->resource) || (r && r->info.owner == pid);
  }
  return false;  // the realm as a whole
}

std::uint64_t Authority::granted(PrincipalId principal_id, const Scope& scope) const {
  std::uint64_t bits = 0;
  for (auto it = credentials_.lower_bound({principal_id, Id{0}}); it != credentials_.end() && it->first == principal_id; ++it)
    for (auto g = grants_by_role_.lower_bound({it->second, 0}); g != grants_by_role_.end() && g->first == it->second; ++g)
      if (const auto& record = grants_.at(g->second); covers(record.scope, scope)) bits |= record.permissions.bits;
  return bits;
}

std::optional<Refusal> Authority::check_signer(PrincipalId principal_id) const {
  const auto* p = principal(principal_id);
  if (!p) return Refusal{Reason::kUnknownPrincipal, "no principal " + std::to_string(principal_id.value)};
  if (p->revoked) return Refusal{Reason::kRevokedPrincipal, "principal is revoked"};
  return std::nullopt;
}

Result<Receipt, Refusal> Authority::decide(const Request& request, const Digest& digest, TrustedMs now_ms,
                                           std::span<const Bytes> blocks, const CatalogReader& catalog,
                                           const PayloadFacts& payloads, Touched& touched) {
  // Admission: ordinary obligations stop at the ceiling, control mutations at its reserve's end.
  if (genesis_.admission_ceiling) {
    const Id ceiling = *genesis_.admission_ceiling;
    if (!is_control(request.op) && head_.position.value >= ceiling)
      return refuse(Reason::kAdmissionCeiling, "the journal admission ceiling is reached");
    if (head_.position.value >= ceiling + genesis_.control_reserve)
      return refuse(Reason::kControlReserve, "the control reserve is used up");
  }
  if (now_ms < head_.last_time_ms)
    return refuse(Reason::kClockRegressed, "trusted time is behind the last decision");
  if (failed_closed_)
    return refuse(Reason::kStorageCorrupt, "a corrupt stored record was met mid-decision; failed closed until a restart");
  bound_resident();
  take_corrupt();  // a record met outside a decision or answer is that read's concern
  const Head before = head_;
  Step step{request.principal, now_ms, blocks, catalog, touched, head_.position + 1, payloads};
  // Every rule is checked before anything changes, so a refusal leaves the state as it was.
  deciding_ = &touched;
  auto outcome = std::visit(
      [&](const auto& command) -> Result<Outcome, Refusal> {
        if constexpr (requires { command.expected_revision; }) return administer(request.principal, command, touched);
        else return apply(command, step);
      },
      request.op);
  deciding_ = nullptr;
  if (corrupt_) {  // decision 157: refused, whatever the rules said on what they could read
    const std::string message = corrupt_->message();
    corrupt_.reset();
    // What the decision changed in memory is dropped with the resident
    // records; beyond them, only a restart restores it, so the node stops
    // deciding until one when it had changed anything.
    processes_.clear();
    resources_.clear();
    collect_after_.clear();
    associations_.clear();
    views_.clear();
    runtime_.clear();
    outputs_.clear();
    effects_.clear();
    payloads_.clear();
    route_heads_.clear();
    routes_changed_.clear();
    first_listed_.clear();
    if (source_) rows_.clear();
    failed_closed_ = std::exchange(corrupt_after_change_, false);
    head_ = before;
    touched = {};
    return refuse(Reason::kStorageCorrupt, message);
  }
  if (!outcome.ok()) {
    head_ = before;
    touched = {};
    if (source_) {  // a refusal changes nothing (this is empty); answers read over its rows go with them
      for (const auto& [key, present] : rows_) forget_listed(key);
      rows_.clear();
    }
    for (const auto& route : routes_changed_) route_heads_.forget(route);  // as it is, should one have changed
    routes_changed_.clear();
    return Err{outcome.error()};
  }
  routes_changed_.clear();
  if (source_) {  // the decision's rows go to storage with it: the source reads them from now on
    for (auto& [key, present] : rows_) touched.rows.emplace_back(key, present);
    rows_.clear();
  }
  head_.position += 1;
  head_.last_time_ms = now_ms;
  if (!touched.processes.empty()) head_.processes_position = head_.position;  // a process listing's cut expires
  if (!touched.effects.empty() || !touched.effects_removed.empty())
    head_.effects_position = head_.position;  // and an effect listing's
  auto& signer = principals_.at(request.principal);
  signer.sequence = request.sequence;
  touched.principals.push_back(request.principal);
  note_needs(touched);
  return Receipt{Version{}, Definition{definition()}, genesis_.realm, head_.position, request.principal,
                 request.sequence, digest, now_ms, std::move(*outcome)};
}

template <typename C> Result<Outcome, Refusal> Authority::administer(PrincipalId caller, const C& command, Touched& touched) {
  // Administration of the graph needs realm-wide control authority, at the expected policy revision.
  if (!(rights(caller, RealmScope{}) & kRealmControl))
    return refuse(Reason::kNotPermitted, "requires realm_control at realm scope");
  if (command.expected_revision && *command.expected_revision != head_.policy_revision)
    return refuse(Reason::kStaleRevision,
                  "expected policy revision " + std::to_string(*command.expected_revision) + ", current is " +
                      std::to_string(head_.policy_revision));
  auto outcome = apply(caller, command, touched);
  if (outcome.ok()) {
    head_.policy_revision += 1;
    head_.policy_position = head_.position + 1;
  }
  return outcome;
}

Id Authority::add_grant(Id role, const Scope& scope, Permissions permissions, Touched& touched) {
  const Id id = head_.next_grant++;
  grants_[id] = GrantRecord{id, role, scope, permissions, head_.policy_revision + 1};
  grants_by_role_.insert({role, id});
  touched.grants_written.push_back(id);
  return id;
}

Result<Outcome, Refusal> Authority::apply(PrincipalId, const CreatePrincipal& op, Touched& touched) {
  if (op.principal.value == 0) return refuse(Reason::kZeroIdentity, "principal 0 is invalid");
  if (principals_.count(op.principal))
    return refuse(Reason::kSubjectTaken,
                  "principal " + std::to_string(op.principal.value) + " was allocated before");
  principals_[op.principal] = PrincipalRecord{op.principal, op.public_key, 0, op.pid_scope, 0, false, 1};
  const auto [role, grant] = add_private_role(op.principal, op.scope, op.permissions, touched);
  touched.principals.push_back(op.principal);
  return Outcome{PrincipalCreated{op.principal, role, grant, head_.policy_revision + 1}};
}

std::pair<Id, Id> Authority::add_private_role(PrincipalId principal_id, const Scope& scope, Permissions permissions,
                                              Touched& touched) {
  const Id role = head_.next_role++;
  roles_[role] = RoleRecord{role, {}, principal_id};
  credentials_.insert({principal_id, role});
  principals_.at(principal_id).role = role;
  touched.roles.push_back(role);
  touched.credentials_added.push_back({principal_id, role});
  return {role, add_grant(role, scope, permissions, touched)};
}

// Ordinary direct-native grant replacement (decision 61): the previous private
// role is retired - unbound, and every grant it held removed, resource grants
// included - and a new one bound, so no old resource right survives it.
Result<Outcome, Refusal> Authority::apply(PrincipalId, const ReplaceGrant& op, Touched& touched) {
  if (op.principal == genesis_.root_principal) return refuse(Reason::kRootGrant, "the root's genesis grant stays");
  const auto* p = principal(op.principal);
  if (!p || p->revoked) return refuse(Reason::kUnknownSubject, "no such live principal");
  if (op.permissions.bits == 0) return refuse(Reason::kEmptyGrant, "no permission bits");
  const Id retired = p->role;
  credentials_.erase({op.principal, retired});
  touched.credentials_removed.push_back({op.principal, retired});
  for (auto g = grants_by_role_.lower_bound({retired, 0}); g != grants_by_role_.end() && g->first == retired;) {
    grants_.erase(g->second);
    touched.grants_removed.push_back(g->second);
    g = grants_by_role_.erase(g);
  }
  roles_.at(retired).retired = true;
  touched.roles.push_back(retired);
  const auto [role, grant] = add_private_role(op.principal, op.scope, op.permissions, touched);
  touched.principals.push_back(op.principal);
  return Outcome{GrantReplaced{op.principal, role, retired, grant, head_.policy_revision + 1}};
}

Result<Outcome, Refusal> Authority::apply(PrincipalId, const CreateRole& op, Touched& touched) {
  for (const auto& [id, r] : roles_)
    if (r.name.value == op.name.value)
      return refuse(Reason::kRoleNameTaken, "a role named " + op.name.value + " exists");
  const Id role = head_.next_role++;
  roles_[role] = RoleRecord{role, {op.name.value}, std::nullopt};
  touched.roles.push_back(role);
  return Outcome{RoleCreated{role, head_.policy_revision + 1}};
}

Result<Outcome, Refusal> Authority::apply(PrincipalId, const BindCredential& op, Touched& touched) {
  const auto* p = principal(op.principal);
  if (!p || p->revoked) return refuse(Reason::kUnknownSubject, "no such live principal");
  const auto* r = role(op.role);
  if (!r || r->private_of) return refuse(Reason::kUnknownRole, "no such named role");
  if (!credentials_.insert({op.principal, op.role}).second)
    return refuse(Reason::kAlreadyBound, "the principal holds that role");
  touched.credentials_added.push_back({op.principal, op.role});
  return Outcome{PolicyChanged{head_.policy_revision + 1}};
}

Result<Outcome, Refusal> Authority::apply(PrincipalId, const UnbindCredential& op, Touched& touched) {
  const auto* r = role(op.role);
  if (r && r->private_of) return refuse(Reason::kPrivateRole, "a private role stays bound");
  if (!credentials_.erase({op.principal, op.role}))
    return refuse(Reason::kNotBound, "the principal does not hold that role");
  touched.credentials_removed.push_back({op.principal, op.role});
  return Outcome{PolicyChanged{head_.policy_revision + 1}};
}

Result<Outcome, Refusal> Authority::apply(PrincipalId, const Grant& op, Touched& touched) {
  const auto* r = role(op.role);
  if (!r) return refuse(Reason::kUnknownRole, "no such role");
  if (r->retired) return refuse(Reason::kRetiredRole, "a replaced private role holds no grant again");
  if (op.permissions.bits == 0) return refuse(Reason::kEmptyGrant, "no permission bits");
  const Id grant = add_grant(op.role, op.scope, op.permissions, touched);
  return Outcome{Granted{grant, head_.policy_revision + 1}};
}

Result<Outcome, Refusal> Authority::apply(PrincipalId, const RevokeGrant& op, Touched& touched) {
  if (op.grant == 1) return refuse(Reason::kRootGrant, "the root's genesis grant stays");
  auto it = grants_.find(op.grant);
  if (it == grants_.end()) return refuse(Reason::kUnknownGrant, "no such grant");
  grants_by_role_.erase({it->second.role, op.grant});
  grants_.erase(it);
  touched.grants_removed.push_back(op.grant);
  return Outcome{PolicyChanged{head_.policy_revision + 1}};
}

Result<Outcome, Refusal> Authority::apply(PrincipalId, const RevokePrincipal& op, Touched& touched) {
  if (op.principal == genesis_.root_principal)
    return refuse(Reason::kRootPrincipal, "the root principal cannot be revoked");
  auto it = principals_.find(op.principal);
  if (it == principals_.end() || it->second.revoked)
    return refuse(Reason::kUnknownSubject, "no such live principal");
  it->second.revoked = true;
  touched.principals.push_back(op.principal);
  return Outcome{PolicyChanged{head_.policy_revision + 1}};
}

Capabilities Authority::capabilities() const {
  Capabilities c;
  for (auto name : capability::kSupported) c.supported.items.push_back({std::string(name)});
  c.admission_ceiling = genesis_.admission_ceiling;
  c.control_reserve = genesis_.control_reserve;
  c.allow_history_trim = genesis_.allow_history_trim;
  c.history_reclamation = true;  // this build can trim; whether this realm may is allow_history_trim
  c.required_resource_budget = budgets_.required_resources;  // the node's, configured (decision 156)
  c.lifetime_owner_budget = budgets_.lifetime_owner;
  return c;
}

Result<QueryResult, Refusal> Authority::answer(const Query& query, TrustedMs now_ms,
                                               const CatalogReader& catalog) const {
  const PrincipalId caller = query.principal;
  const auto* p = principal(caller);
  bound_resident();
  return std::visit(
      [&](const auto& op) -> Result<QueryResult, Refusal> {
        using Op = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<Op, CapabilitiesQuery>) {
          return QueryResult{capabilities()};
        } else if constexpr (kSnapshotQuery<Op>) {
          // The sequencer answers these from its snapshot registry (answer_snapshot).
          return refuse(Reason::kUnknownVariant, "a snapshot query without a snapshot registry");
        } else if constexpr (!std::is_same_v<Op, IdentityQuery> && !std::is_same_v<Op, DecisionQuery>) {
          const Position checked_at = head_.position;
          auto result = read(ReadCtx{caller, now_ms, catalog}, op);
          if (auto corrupt = take_corrupt())  // decision 157: no answer built on a record that could not be read
            return refuse(Reason::kStorageCorrupt, corrupt->message());
          if (auto moved = fence(checked_at)) return Err{*moved};
          return result;
        } else {
          // Inspection at the caller's own scope: the realm, or its PID when it is PID-scoped.
          const Scope home = p->pid_scope ? Scope{PidScope{*p->pid_scope}} : Scope{RealmScope{}};
          const std::uint64_t bits = rights(caller, home);
          if (!(bits & kInspect)) return refuse(Reason::kNotPermitted, "requires inspect at the caller's own scope");
          if constexpr (std::is_same_v<Op, IdentityQuery>) {
            return QueryResult{Identity{caller, Permissions{bits}, p->pid_scope, head_.policy_revision, p->sequence}};
          } else {
            const bool allowed = (rights(op.principal, op.scope) & op.permissions.bits) == op.permissions.bits;
            return QueryResult{Decision{op.principal, allowed, head_.policy_revision}};
          }
        }
      },
      query.op);
}

}  // namespace cowboy::transit::node
