// Working-catalog collection (docs/transit.md, decisions 110-117, 186-191): one
// finished record of a process that opted in, or at last the process itself,
// which stays as a permanent identity tombstone. Every gate is checked before
// anything is removed (a refusal changes nothing), each with its own reason;
// one command removes at most kCollectRemovals records and says whether it
// finished, so a large collection is a sequence of commands, each one synced
// decision, and a restart goes on from what was committed.
#include "transit/node/authority.h"
#include "transit/node/layout.h"

#include <limits>

namespace cowboy::transit::node {
namespace {

Err<Refusal> refuse(Reason reason, std::string message) { return Err{Refusal{reason, std::move(message)}}; }

std::string id_text(std::string_view what, Id id) { return std::string(what) + " " + std::to_string(id); }
template <typename Tag> std::string id_text(std::string_view what, StrongId<Tag, Id> id) { return id_text(what, id.value); }

}  // namespace

Result<Outcome, Refusal> Authority::apply(const Collect& op, Step& step) {
  if (!(rights(step.caller, PidScope{op.pid}) & kPidAdmin))
    return refuse(Reason::kNotPermitted, "requires pid_admin at the process");
  auto* found = process_mut(op.pid);
  if (!found) return refuse(Reason::kUnknownProcess, id_text("no process", op.pid));
  auto& p = *found;
  if (!p.allow_collection)
    return refuse(Reason::kCollectionNotAllowed, "the process was admitted without allow_collection");
  if (p.collected_at) return refuse(Reason::kAlreadyCollected, "the process is a tombstone");
  const Id record = op.record.value_or(op.pid.value);
  switch (op.kind) {
    case CollectKind::kOutput: return collect_output(p, record, step);
    case CollectKind::kEffect: return collect_effect(p, record, step);
    case CollectKind::kPayload: return collect_payload(p, record, step);
    case CollectKind::kResource: return collect_resource(p, ResourceId{record}, step);
    case CollectKind::kProcess: return collect_process(p, step);
  }
  return refuse(Reason::kCollectTarget, "unknown kind");
}

// An output the process sent, once resolved. The destination's input, if it
// was delivered, is the destination's own record and stays (decision 112).
Result<Outcome, Refusal> Authority::collect_output(ProcessRecord& p, Id id, Step& step) {
  const auto* o = output(id);
  if (!o) return refuse(Reason::kUnknownOutput, id_text("no output", id));
  if (o->source != p.pid) return refuse(Reason::kNotOfProcess, id_text("the output was sent by process", o->source));
  if (o->state == OutputState::kPending)
    return refuse(Reason::kOutputPending, "the output is pending: delivered or cancelled first");
  remove_output(id, step);
  return Outcome{Collected{p.pid, CollectKind::kOutput, id, 1, true}};
}

Result<Outcome, Refusal> Authority::collect_effect(ProcessRecord& p, Id id, Step& step) {
  const auto* e = effect(id);
  if (!e) return refuse(Reason::kUnknownEffect, id_text("no effect", id));
  if (e->info.pid != p.pid) return refuse(Reason::kNotOfProcess, id_text("the effect is of process", e->info.pid));
  if (e->info.phase != EffectPhase::kClosed) return refuse(Reason::kEffectUnresolved, "the effect is not closed");
  remove_effect(id, step);
  return Outcome{Collected{p.pid, CollectKind::kEffect, id, 1, true}};
}

Result<Outcome, Refusal> Authority::collect_payload(ProcessRecord& p, Id id, Step& step) {
  const auto* y = payload(id);
  if (!y) return refuse(Reason::kUnknownPayload, id_text("no payload", id));
  if (y->info.pid != p.pid) return refuse(Reason::kNotOfProcess, id_text("the payload is of process", y->info.pid));
  if (y->info.state != PayloadState::kDeleted)
    return refuse(Reason::kPayloadNotDeleted, "the payload's deletion is not confirmed (payload_deleted)");
  remove_payload(id, step);
  return Outcome{Collected{p.pid, CollectKind::kPayload, id, 1, true}};
}

// A resource whose lifetime the process owns, retired or ended with it (decision 114). Views of
// it held by a running process, views retained by a retired process not yet
// collected, and associations of running processes block; the owner's own
// views and retired processes' associations are unusable and go with it,
// then its grants and its live entries (decision 187), kCollectRemovals at a
// time, before its tombstone is written. An entry goes as a deletion version
// at a new revision, so every earlier revision reads what it read; its
// blocks stay (decision 187).
Result<Outcome, Refusal> Authority::collect_resource(ProcessRecord& p, ResourceId id, Step& step) {
  auto* found = resource_mut(id);
  if (!found) return refuse(Reason::kUnknownResource, id_text("no resource", id));
  auto& r = *found;
  if (r.info.owner != p.pid) return refuse(Reason::kNotOfProcess, "the process does not own the resource's lifetime");
  if (auto blocked = resource_gate(p, r, step.now_ms)) return Err{*blocked};
  std::vector<Id> views;  // the owner's own: unusable, they go with it
  for (Id v : first_ids(layout::key(layout::kViewsOn, id)))
    if (const auto* record = view(v); record && record->pid == p.pid) views.push_back(v);
  // (pid, association revision), of retired processes: the resource's, from its stored rows (decision 175).
  const std::vector<std::pair<Pid, Id>> associations = associations_with(id);
  Id removed = 0;
  for (std::size_t i = 0; i < views.size() && removed < kCollectRemovals; ++i, ++removed) remove_view(views[i], step);
  for (std::size_t i = 0; i < associations.size() && removed < kCollectRemovals; ++i, ++removed)
    detach(associations[i], step);
  // Its grants: policy, so the policy revision advances (cuts expire, decision 6) when one goes.
  std::vector<Id> grants;
  for (const auto& [grant, record] : grants_)
    if (record.scope == Scope{ResourceScope{id}}) grants.push_back(grant);
  const Id before_grants = removed;
  for (std::size_t i = 0; i < grants.size() && removed < kCollectRemovals; ++i, ++removed) {
    grants_by_role_.erase({grants_.at(grants[i]).role, grants[i]});
    grants_.erase(grants[i]);
    step.touched.grants_removed.push_back(grants[i]);
  }
  if (removed > before_grants) {
    head_.policy_revision += 1;
    head_.policy_position = step.position;
  }
  // Its live entries at its revision, as many as the budget leaves (at least
  // one asked, to know whether any is left); the scan reads its stored keys
  // from past the last one an earlier command removed at this revision
  // (decision 188), since entries go in key order.
  const bool room = removed < kCollectRemovals;
  std::optional<EntryKey> after;
  if (auto hint = collect_after_.find(id); hint != collect_after_.end() && hint->second.first == r.info.revision)
    after = hint->second.second;
  const auto live = step.catalog.entries(id, r.info.revision, after, room ? kCollectRemovals - removed : 1,
                                         std::numeric_limits<std::size_t>::max());
  collection_keys_visited_ += live.examined;  // decision 191
  if (room && !live.entries.empty()) {
    r.info.revision += 1;
    r.changed_at = step.position;
    head_.resources_position = step.position;
    for (const auto& e : live.entries) step.touched.entries.push_back({id, e.key, r.info.revision, std::nullopt});
    removed += live.entries.size();
    if (collect_after_.size() >= resident_limit_) collect_after_.clear();  // hints, bounded like the records
    collect_after_[id] = {r.info.revision, live.entries.back().key};
  }
  const bool entries_left = room ? !live.complete : !live.entries.empty();
  const bool rest_removed = removed == views.size() + associations.size() + grants.size() +
                                          (room ? live.entries.size() : 0) &&
                            !entries_left;
  // Last, the rows of the processes that wrote it without owning it (decision
  // 190), one removal each (its two rows): while any is left, such a writer's
  // collection waits, and when the last goes the resource is a tombstone.
  bool writers_left = false;
  if (rest_removed) {
    // One more than the budget leaves, to know whether any is left.
    const std::vector<Id> writers = first_ids(layout::key(layout::kWritersOf, id), kCollectRemovals - removed + 1);
    std::size_t taken = 0;
    for (; taken < writers.size() && removed < kCollectRemovals; ++taken, ++removed) {
      put_row(layout::key(layout::kWrittenBy, writers[taken], id), false);
      put_row(layout::key(layout::kWritersOf, id, writers[taken]), false);
    }
    writers_left = taken < writers.size();
  }
  const bool complete = rest_removed && !writers_left;
  if (complete || r.changed_at == step.position) step.touched.resources.push_back(id);
  if (complete) {
    r.collected_at = step.position;
    collect_after_.erase(id);
  }
  return Outcome{Collected{p.pid, CollectKind::kResource, id.value, removed, complete}};
}

// The process itself (decision 115): its retirement recorded, none of its
// work unresolved, the resources it owns collected. Then its views,
// associations, mailbox inputs and finished outputs, effects and payloads go,
// kCollectRemovals at a time, and last its record becomes a tombstone that
// keeps the PID allocated forever.
Result<Outcome, Refusal> Authority::collect_process(ProcessRecord& p, Step& step) {
  const Pid pid = p.pid;
  if (auto blocked = process_gate(p)) return Err{*blocked};

  Id removed = 0;
  auto budget = [&] { return removed < kCollectRemovals; };
  // The stored indexes (decisions 170, 175): the first rows left, as many as the budget allows.
  using layout::key;
  for (Id view : first_ids(key(layout::kViewsOf, pid), kCollectRemovals - removed)) {
    remove_view(view, step);
    ++removed;
  }
  for (Id revision : first_ids(key(layout::kAssociationsOf, pid), kCollectRemovals - removed)) {
    detach({pid, revision}, step);
    ++removed;
  }
  if (p.inputs_removed < p.tail && budget()) step.touched.processes.push_back(pid);  // its inputs_removed moves
  for (; p.inputs_removed < p.tail && budget(); ++removed) step.touched.inputs_removed.push_back({pid, ++p.inputs_removed});
  for (Id output : first_ids(key(layout::kOutputsOf, pid), kCollectRemovals - removed)) {
    remove_output(output, step);
    ++removed;
  }
  for (Id effect : first_ids(key(layout::kEffectsOf, pid), kCollectRemovals - removed)) {
    remove_effect(effect, step);
    ++removed;
  }
  for (Id payload : first_ids(key(layout::kPayloadsOf, pid), kCollectRemovals - removed)) {
    remove_payload(payload, step);
    ++removed;
  }
  const bool complete = !first_id(key(layout::kViewsOf, pid)) && !first_id(key(layout::kAssociationsOf, pid)) &&
                        p.inputs_removed == p.tail && !first_id(key(layout::kOutputsOf, pid)) &&
                        !first_id(key(layout::kEffectsOf, pid)) && !first_id(key(layout::kPayloadsOf, pid)) &&
                        !first_id(key(layout::kWrittenBy, pid));  // the tombstone waits for what it wrote (decision 190)
  if (complete) {
    p.collected_at = step.position;
    step.touched.processes.push_back(pid);
  }
  return Outcome{Collected{pid, CollectKind::kProcess, pid.value, removed, complete}};
}

// The gates, apart from what they remove, so that the maintenance process's
// listing asks exactly what collect will (decision 155).
std::optional<Refusal> Authority::resource_gate(const ProcessRecord& p, const ResourceRecord& r, TrustedMs now_ms) const {
  const auto id = r.info.resource;
  if (r.collected_at) return Refusal{Reason::kAlreadyCollected, "the resource is a tombstone"};
  // Retired, or its lifetime ended with its owner's retirement (decision 114).
  if (alive(r, now_ms)) return Refusal{Reason::kResourceNotRetired, "retire the resource (or its owner) first"};
  for (Id v : first_ids(layout::key(layout::kViewsOn, id))) {
    const auto* held = view(v);
    if (!held) return Refusal{Reason::kViewLive, id_text("view", v) + " of it does not read"};  // unreadable: blocks
    const Pid holder = held->pid;
    if (holder == p.pid) continue;
    const auto* q = process(holder);
    if (!q) return Refusal{Reason::kViewLive, id_text("a view of it is held by process", holder)};  // unreadable: blocks
    if (!retired(*q, now_ms)) return Refusal{Reason::kViewLive, id_text("a view of it is held by process", holder)};
    if (!q->collected_at) return Refusal{Reason::kVersionRetained, id_text("a view of it is retained by process", holder)};
  }
  for (Pid pid : associated_pids(id)) {
    const auto* q = process(pid);
    if (!q || !retired(*q, now_ms))
      return Refusal{Reason::kAssociationLive, id_text("a running process is associated with it:", pid)};
  }
  return std::nullopt;
}

std::optional<Refusal> Authority::process_gate(const ProcessRecord& p) const {
  const Pid pid = p.pid;
  if (p.collected_at) return Refusal{Reason::kAlreadyCollected, "the process is a tombstone"};
  if (!p.retired) return Refusal{Reason::kProcessLive, "the process's permanent retirement is not recorded"};
  if (auto running = check_provider_stopped(pid)) return running;  // a bound process's provider (decision 115)
  // Its routes, as source and as destination, from the stored route rows
  // (decision 170): the first route in (source, destination) order, as before.
  using layout::key;
  std::optional<std::pair<std::pair<Pid, Pid>, Id>> route;  // ((source, destination), its head)
  visit_rows(key(layout::kArriving, pid), {}, [&](std::string_view row) {  // (pid, source, output): the least source's head
    route.emplace(std::pair<Pid, Pid>{Pid{layout::get_be64(row.substr(10))}, pid}, layout::last_id(row));
    return false;
  });
  visit_rows(key(layout::kRoutes, pid), {}, [&](std::string_view row) {  // (pid, destination, output): its head
    const Pid destination{layout::get_be64(row.substr(10))};
    if (!route || std::pair<Pid, Pid>{pid, destination} < route->first)
      route.emplace(std::pair<Pid, Pid>{pid, destination}, layout::last_id(row));
    return false;
  });
  if (route) return Refusal{Reason::kOutputPending, id_text("a pending output on its route, output", route->second)};
  std::optional<Refusal> refusal;
  visit_ids(key(layout::kEffectsOf, pid), 0, [&](Id effect) {
    if (!has_row(key(layout::kUnresolved, effect))) return true;
    refusal = Refusal{Reason::kEffectUnresolved, id_text("effect", effect) + " is not closed"};
    return false;
  });
  if (refusal) return refusal;
  std::vector<Id> payloads;  // read after the scan, which holds the source's reader
  visit_ids(key(layout::kPayloadsOf, pid), 0, [&](Id payload) { return payloads.push_back(payload), true; });
  for (Id id : payloads)
    if (const auto* y = payload(id); !y || y->info.state != PayloadState::kDeleted)
      return Refusal{Reason::kPayloadNotDeleted, id_text("payload", id) + "'s deletion is not confirmed"};
  for (Id owned : first_ids(key(layout::kLifetimeOf, pid)))
    if (const auto* r = resource(ResourceId{owned}); !r || !r->collected_at)
      return Refusal{Reason::kResourceNotRemoved, id_text("it owns resource", owned) + ", not collected"};
  // A resource it wrote without owning it: its row goes with that resource's
  // collection (decision 190). While the process still holds a view, that is
  // released first - the resource's collection may be waiting on it
  // (version_retained) - and the tombstone waits instead.
  if (auto wrote = first_id(key(layout::kWrittenBy, pid)); wrote && !first_id(key(layout::kViewsOf, pid)))
    return Refusal{Reason::kResourceNotRemoved, id_text("it wrote resource", *wrote) + ", not collected"};
  return std::nullopt;
}

// A bounded scan of the process catalog from storage (processes are not all
// resident, decision 130): at most the scan budget of processes examined and
// a page of records listed, each one collect would take now. What does not
// fit is found by the next pass, as the cursor moves on past its process.
Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ListCollectable& q) const {
  CollectablePage page;
  page.cut = q.cursor ? q.cursor->cut : head_.position;
  if (q.cursor && (q.cursor->cut.value == 0 || q.cursor->cut > head_.position))
    return refuse(Reason::kBadCut, "the cursor's cut is no position of this node");
  std::size_t examined = 0;
  Pid last{q.cursor ? q.cursor->after : 0};
  bool more = false;
  std::vector<Pid> candidates;  // the records are read after the scan: visit_processes holds an iterator
  visit_processes(last, [&](const ProcessRecord& p) {
    if (examined == kScanBudget) {
      more = true;
      return false;
    }
    ++examined;
    last = p.pid;
    if (p.allow_collection && !p.collected_at && (rights(ctx.caller, PidScope{p.pid}) & kPidAdmin))
      candidates.push_back(p.pid);
    return true;
  });
  const auto full = [&] { return page.items.items.size() == kPageRecords; };
  const auto add = [&](Pid pid, CollectKind kind, Id record) {
    if (!full()) page.items.items.push_back(CollectableRecord{pid, kind, record});
  };
  for (Pid pid : candidates) {
    if (full()) {  // the rest from this process on: the next page
      last = Pid{pid.value - 1};
      more = true;
      break;
    }
    const auto* p = process(pid);
    if (!p) continue;
    // A process's records from the stored indexes (decision 170), as far as the page goes.
    const auto each = [&](char index, auto take) {
      std::vector<Id> ids;
      visit_ids(layout::key(index, pid), 0, [&](Id id) { return ids.push_back(id), ids.size() < kScanBudget; });
      for (Id id : ids)
        if (!full()) take(id);
    };
    each(layout::kOutputsOf, [&](Id o) {
      if (const auto* r = output(o); r && r->state != OutputState::kPending) add(pid, CollectKind::kOutput, o);
    });
    each(layout::kEffectsOf, [&](Id e) {
      if (!has_row(layout::key(layout::kUnresolved, e))) add(pid, CollectKind::kEffect, e);
    });
    each(layout::kPayloadsOf, [&](Id y) {
      if (const auto* r = payload(y); r && r->info.state == PayloadState::kDeleted) add(pid, CollectKind::kPayload, y);
    });
    for (Id owned : first_ids(layout::key(layout::kLifetimeOf, pid)))
      if (const auto* r = resource(ResourceId{owned}); r && !resource_gate(*p, *r, ctx.now_ms))
        add(pid, CollectKind::kResource, owned);
    if (!process_gate(*p)) add(pid, CollectKind::kProcess, pid.value);
  }
  if (more) page.cursor = Cursor{page.cut, last.value};
  return QueryResult{std::move(page)};
}

// A removed record stays known absent in its cache until the decision is staged (decision 170).
void Authority::remove_output(Id id, Step& step) {
  put_row(layout::key(layout::kOutputsOf, output(id)->source, id), false);
  outputs_.remove(id);
  step.touched.outputs_removed.push_back(id);
}

void Authority::remove_effect(Id id, Step& step) {
  put_row(layout::key(layout::kEffectsOf, effect(id)->info.pid, id), false);
  effects_.remove(id);
  step.touched.effects_removed.push_back(id);
}

void Authority::remove_payload(Id id, Step& step) {
  put_row(layout::key(layout::kPayloadsOf, payload(id)->info.pid, id), false);
  payloads_.remove(id);
  step.touched.payloads_removed.push_back(id);
}

// Views and associations, and their stored rows (decision 175), the same way.
void Authority::remove_view(Id id, Step& step) {
  const auto* v = view(id);
  if (!v) return;  // unreadable: the decision is refused (decision 157)
  put_row(layout::key(layout::kViewsOf, v->pid, id), false);
  put_row(layout::key(layout::kViewsOn, v->resource, id), false);
  views_.remove(id);
  step.touched.views_removed.push_back(id);
}

void Authority::detach(std::pair<Pid, Id> key, Step& step) {
  const auto [pid, revision] = key;
  const auto* found = association(pid, revision);
  if (!found) return;  // unreadable: the decision is refused (decision 157)
  const Association a = *found;
  put_row(layout::key(layout::kAssociationsOf, pid, revision), false);
  put_row(layout::row(layout::association_name(pid, a.name.value), revision), false);
  put_row(layout::key(layout::kAssociatedBy, a.resource, pid, revision), false);
  associations_.remove(key);
  auto& p = *process_mut(pid);
  p.associations_position = step.position;  // its association listing's cut expires
  step.touched.processes.push_back(pid);
  step.touched.associations_removed.push_back(key);
}

}  // namespace cowboy::transit::node
