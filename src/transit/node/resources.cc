// Resources, associations and every read of them: rights, lifetimes, the one
// basis of an entry read, and the bounded pages with their cuts
// (docs/transit.md, decisions 6 and 24-30).
#include "transit/node/authority.h"
#include "transit/node/layout.h"

namespace cowboy::transit::node {
namespace {

Err<Refusal> refuse(Reason reason, std::string message) {
  return Err{Refusal{reason, std::move(message)}};
}

}  // namespace

std::optional<Refusal> Authority::stale_cut(Position cut, Position catalog_position) const {
  if (cut.value == 0 || cut > head_.position)
    return Refusal{Reason::kBadCut, "the cursor's cut is no position of this node"};
  if (head_.policy_position > cut)
    return Refusal{Reason::kPolicyChanged, "the policy changed after the cut; list again from the start"};
  if (catalog_position > cut)
    return Refusal{Reason::kCatalogChanged, "the catalog changed after the cut; list again from the start"};
  return std::nullopt;
}

// From the stored indexes (decision 175): one seek each, then the record.
const Association* Authority::associated(Pid pid, ResourceId resource_id) const {
  const auto revision = first_listed(layout::key(layout::kAssociatedBy, resource_id, pid));  // its first, as listed
  return revision ? association(pid, *revision) : nullptr;
}
const Association* Authority::associated(Pid pid, std::string_view name) const {
  const auto revision = first_listed(layout::association_name(pid, name));
  return revision ? association(pid, *revision) : nullptr;
}

bool Authority::alive(const ResourceRecord& r, TrustedMs now_ms) const {
  if (r.info.retired) return false;
  if (!r.info.owner) return true;
  const auto* owner = process(*r.info.owner);
  return owner && !retired(*owner, now_ms);
}

std::optional<Refusal> Authority::check_resource(PrincipalId caller, ResourceId resource_id, std::uint64_t wanted,
                                                 TrustedMs now_ms) const {
  const auto* r = resource(resource_id);
  if (!r) return Refusal{Reason::kUnknownResource, "no resource " + std::to_string(resource_id.value)};
  if ((rights(caller, ResourceScope{resource_id}) & wanted) != wanted)
    return Refusal{Reason::kNotPermitted, "the resource's grants do not allow this"};
  if (!alive(*r, now_ms)) return Refusal{Reason::kLifetimeEnded, "the resource is retired or its owner is"};
  return std::nullopt;
}

std::optional<Refusal> Authority::fence(Position checked_at) const {
  // Reads run on the decide thread between decisions, so the tail cannot
  // move; this keeps the rule checked should reads ever leave that thread.
  if (head_.position != checked_at)
    return Refusal{Reason::kAuthorityMoved, "the authority changed during the read; retry"};
  return std::nullopt;
}

Result<Authority::Selected, Refusal> Authority::select(const ReadCtx& ctx, ResourceId resource_id, std::optional<Revision> revision,
                                                       std::optional<Id> view_id) const {
  if (auto refusal = check_resource(ctx.caller, resource_id, kInspect | kRead, ctx.now_ms)) return Err{*refusal};
  const auto& r = *resource(resource_id);
  if (!view_id) {
    if (revision && *revision != r.info.revision)
      return refuse(Reason::kResourceRevisionChanged,
                    "the resource is at revision " + std::to_string(r.info.revision.value));
    return Selected{&r, r.info.revision, std::nullopt};
  }
  // A view is never a bearer capability: only its process's current executor reads through it.
  const auto* v = view(*view_id);
  if (!v || v->resource != resource_id)
    return refuse(Reason::kUnknownView, "no such view of this resource");
  if (revision && *revision != v->revision)
    return refuse(Reason::kViewRevisionMismatch, "the view holds another revision");
  const auto* p = process(v->pid);
  if (!p || retired(*p, ctx.now_ms)) return refuse(Reason::kViewExpired, "the view's process is retired");
  if (p->owner != ctx.caller || !(rights(ctx.caller, PidScope{v->pid}) & kExecute))
    return refuse(Reason::kNotExecutor, "views are read by their process's current executor");
  if (auto missing = check_required(*p, ctx.now_ms)) return Err{*missing};  // a fenced process reads no view
  return Selected{&r, v->revision, v->view};
}

Result<Authority::Selected, Refusal> Authority::select(const ReadCtx& ctx, const Basis& basis) const {
  if (const auto* current = std::get_if<CurrentBasis>(&basis))
    return select(ctx, current->resource, current->revision, std::nullopt);
  const auto* v = view(std::get<ViewBasis>(basis).view);
  if (!v) return refuse(Reason::kUnknownView, "no such view");
  return select(ctx, v->resource, v->revision, v->view);
}

// ---- commands ----------------------------------------------------------------------

Result<Outcome, Refusal> Authority::apply(const CreateResource& op, Step& step) {
  const auto scope = op.owner ? Scope{PidScope{*op.owner}} : Scope{RealmScope{}};
  if (!(rights(step.caller, scope) & kPidAdmin))
    return refuse(Reason::kNotPermitted, "requires pid_admin at the owner's scope");
  if (first_id(layout::resource_name(op.name.value)))
    return refuse(Reason::kNameTaken, "the name " + op.name.value + " is reserved");
  if (op.owner) {
    const auto* owner = process(*op.owner);
    if (!owner || retired(*owner, step.now_ms))
      return refuse(Reason::kUnknownOwner, "the lifetime owner is no live process");
    // The lifetime-owner budget bounds the quiescence walk over an owner's borrowers (decision 156).
    if (const auto owned = first_ids(layout::key(layout::kLifetimeOf, *op.owner)).size(); owned >= budgets_.lifetime_owner)
      return refuse(Reason::kDependencyBudget, "process " + std::to_string(op.owner->value) + " owns the lifetime of " +
                                                   std::to_string(owned) + " resources, the node's budget");
  }
  const ResourceId id{head_.next_resource++};
  resources_.put(id, ResourceRecord{ResourceInfo{id, op.name, op.owner, Revision{1}, false}, step.position, step.position, std::nullopt});
  put_row(layout::row(layout::resource_name(op.name.value), id), true);
  if (op.owner) put_row(layout::key(layout::kLifetimeOf, *op.owner, id), true);
  head_.resources_position = step.position;
  step.touched.resources.push_back(id);
  return Outcome{ResourceCreated{id, Revision{1}}};
}

Result<Outcome, Refusal> Authority::apply(const RetireResource& op, Step& step) {
  auto* record = resource_mut(op.resource);
  if (!record) return refuse(Reason::kUnknownResource, "no such resource");
  auto& info = record->info;
  const auto scope = info.owner ? Scope{PidScope{*info.owner}} : Scope{RealmScope{}};
  if (!(rights(step.caller, scope) & kPidAdmin))
    return refuse(Reason::kNotPermitted, "requires pid_admin at the owner's scope");
  if (info.retired) return refuse(Reason::kAlreadyRetired, "the resource is retired");
  if (auto busy = check_quiescent(op.resource, step.now_ms)) return Err{*busy};
  info.retired = true;  // the name stays reserved
  record->changed_at = step.position;
  head_.resources_position = step.position;
  step.touched.resources.push_back(op.resource);
  refresh_requiring(op.resource, step);  // processes requiring it are fenced: they have ended
  return Outcome{ResourceRetired{op.resource}};
}

Result<Outcome, Refusal> Authority::apply(const Associate& op, Step& step) {
  auto p = live_process(op.pid, step, kPidAdmin);
  if (!p.ok()) return Err{p.error()};
  const auto* r = resource(op.resource);
  if (!r || !alive(*r, step.now_ms)) return refuse(Reason::kUnknownResource, "no live resource");
  // Naming a resource for a process reaches it: a PID-scoped caller cannot widen its own reach.
  if (!(rights(step.caller, ResourceScope{op.resource}) & kInspect))
    return refuse(Reason::kNotPermitted, "requires inspect on the resource");
  if (associated(op.pid, op.name.value))
    return refuse(Reason::kAssociationExists, "the process has an association of that name");
  const Id revision = add_association(op.pid, op.name, op.resource, step);
  step.touched.processes.push_back(op.pid);
  return Outcome{Associated{op.pid, revision}};
}

Id Authority::add_association(Pid pid, const Name& name, ResourceId resource_id, Step& step) {
  const Id revision = head_.next_association++;
  associations_.put({pid, revision}, Association{pid, name, resource_id, revision});
  put_row(layout::key(layout::kAssociationsOf, pid, revision), true);
  put_row(layout::row(layout::association_name(pid, name.value), revision), true);
  put_row(layout::key(layout::kAssociatedBy, resource_id, pid, revision), true);
  process_mut(pid)->associations_position = step.position;
  step.touched.associations.push_back({pid, revision});
  return revision;
}

// ---- reads --------------------------------------------------------------------------

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ListResources& q) const {
  if (q.cursor)
    if (auto stale = stale_cut(q.cursor->cut, head_.resources_position))
      return Err{*stale};
  ResourcePage page;
  page.cut = q.cursor ? q.cursor->cut : head_.position;
  // From storage (decision 175): at most the scan budget, and one more to know whether any follow.
  std::vector<ResourceInfo> candidates;
  visit_stored<ResourceRecord>(resources_, layout::kResources, ResourceId{q.cursor ? q.cursor->after : 0},
                               [&](const ResourceRecord& r) {
                                 candidates.push_back(r.info);
                                 return candidates.size() <= kScanBudget;
                               });
  Id last = q.cursor ? q.cursor->after : 0;
  std::size_t examined = 0;
  for (; examined < candidates.size() && page.items.items.size() < kPageRecords && examined < kScanBudget; ++examined) {
    const auto& info = candidates[examined];
    last = info.resource.value;
    if (rights(ctx.caller, ResourceScope{info.resource}) & kInspect) page.items.items.push_back(info);
  }
  if (examined < candidates.size()) page.cursor = Cursor{page.cut, last};
  return QueryResult{std::move(page)};
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ListAssociations& q) const {
  if (!(rights(ctx.caller, PidScope{q.pid}) & kInspect))
    return refuse(Reason::kNotPermitted, "requires inspect at the process");
  const auto* p = process(q.pid);
  if (!p) return refuse(Reason::kUnknownProcess, "no such process");
  if (q.cursor)
    if (auto stale = stale_cut(q.cursor->cut, p->associations_position))
      return Err{*stale};
  AssociationPage page;
  page.cut = q.cursor ? q.cursor->cut : head_.position;
  page.pid = q.pid;
  // The cursor is an association revision, so a hidden association's name never leaves.
  Id last = q.cursor ? q.cursor->after : 0;
  std::vector<Id> revisions;  // from the stored index (decision 175), the scan budget and one more
  visit_ids(layout::key(layout::kAssociationsOf, q.pid), last, [&](Id revision) {
    revisions.push_back(revision);
    return revisions.size() <= kScanBudget;
  });
  std::size_t examined = 0;
  for (; examined < revisions.size() && page.items.items.size() < kPageRecords && examined < kScanBudget; ++examined) {
    last = revisions[examined];
    const auto* a = association(q.pid, last);
    if (!a) continue;  // unreadable: the answer is refused (decision 157)
    if (rights(ctx.caller, ResourceScope{a->resource}) & kInspect) page.items.items.push_back(*a);
  }
  if (examined < revisions.size()) page.cursor = Cursor{page.cut, last};
  return QueryResult{std::move(page)};
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ListEntries& q) const {
  auto selected = select(ctx, q.basis);
  if (!selected.ok()) return Err{selected.error()};
  if (q.cursor)
    if (auto stale = stale_cut(q.cursor->cut, Position{0})) return Err{*stale};
  EntryPage page;
  page.cut = q.cursor ? q.cursor->cut : head_.position;
  page.resource = selected->resource->info;
  page.revision = selected->revision;
  page.view = selected->view;
  const auto id = selected->resource->info.resource;
  if (q.key) {
    if (auto e = ctx.catalog.entry(id, *q.key, selected->revision)) page.items.items.push_back(std::move(*e));
    return QueryResult{std::move(page)};
  }
  std::optional<EntryKey> after;  // an empty cursor key is before the first (a first page at its cut)
  if (q.cursor && !q.cursor->after.value.empty()) after = EntryKey{q.cursor->after.value};
  auto scan = ctx.catalog.entries(id, selected->revision, after, kPageRecords, kScanBudget);
  page.items.items = std::move(scan.entries);
  if (!scan.complete && scan.last_key) page.cursor = EntryCursor{page.cut, {scan.last_key->value}};
  return QueryResult{std::move(page)};
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ReadEntries& q) const {
  auto selected = select(ctx, q.resource, q.revision, q.view);
  if (!selected.ok()) return Err{selected.error()};
  EntryBatch batch;
  batch.resource = selected->resource->info;
  batch.revision = selected->revision;
  batch.view = selected->view;
  // All keys at one revision: one observation, in the caller's order.
  for (std::size_t i = 0; i < kPageRecords; ++i)
    if (q.keys.items[i]) batch.entries.items[i] = ctx.catalog.entry(q.resource, *q.keys.items[i], selected->revision);
  return QueryResult{std::move(batch)};
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const AssociationLookup& q) const {
  if (!(rights(ctx.caller, PidScope{q.pid}) & kInspect))
    return refuse(Reason::kNotPermitted, "requires inspect at the process");
  LookupResult result{q.pid, q.name, std::nullopt};
  if (const auto* a = associated(q.pid, q.name.value))
    if (rights(ctx.caller, ResourceScope{a->resource}) & kInspect) result.association = *a;  // hidden reads as absent
  return QueryResult{std::move(result)};
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ReadAccess& q) const {
  if (auto refusal = check_resource(ctx.caller, q.resource, kInspect | kRead, ctx.now_ms)) return Err{*refusal};
  return QueryResult{ResourceAccess{resource(q.resource)->info}};
}

// read_block: blocks.cc.

}  // namespace cowboy::transit::node
