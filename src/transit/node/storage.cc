// Storage maintenance's rules (docs/transit.md, decisions 140-149): the
// fence, compaction of one leaf, a turn prepared at an observed storage basis,
// and the storage read. Every rule is checked before the head changes, so a
// refusal leaves the state as it was. What a relocation does to the disk is
// the relocator's (storage_relocator.cc), once the decision is durable.
#include "transit/node/authority.h"
#include "transit/node/layout.h"

namespace cowboy::transit::node {
namespace {

Err<Refusal> refuse(Reason reason, std::string message) {
  return Err{Refusal{reason, std::move(message)}};
}

std::string number(Id id) { return std::to_string(id); }

}  // namespace

// Realm-wide administrative authority: realm_control at realm scope, held
// now (a PID-scoped principal never reaches the realm, decision 25).
std::optional<Refusal> Authority::check_storage_admin(PrincipalId caller) const {
  if (!(rights(caller, RealmScope{}) & kRealmControl))
    return Refusal{Reason::kNotPermitted, "storage maintenance requires realm_control at realm scope"};
  return std::nullopt;
}

// Any stored key of the leaf will do: a removed grant's versions, a deleted
// entry's, a collected process's tombstone are still there to relocate.
std::optional<Refusal> Authority::check_leaf(const StorageLeaf& leaf, const CatalogReader& catalog) const {
  if (!catalog.stores(leaf)) return Refusal{Reason::kUnknownLeaf, "no stored record is that leaf"};
  return std::nullopt;
}

// Decisions 141-142: one acceptance, one epoch; the grace is recorded only
// once trusted time is past the current epoch's fence by the longest lease.
Result<Outcome, Refusal> Authority::apply(const StorageFence& op, Step& step) {
  if (auto refusal = check_storage_admin(step.caller)) return Err{*refusal};
  if (op.epoch != head_.storage_epoch)
    return refuse(Reason::kStorageEpochChanged,
                  "the fence names epoch " + number(op.epoch) + "; the stored epoch is " + number(head_.storage_epoch));
  Id grace_below = head_.grace_below;
  if (op.record_grace) {
    if (head_.fenced_at.value == 0) return refuse(Reason::kNoEarlierFence, "no fence has been accepted: no earlier epoch's leases to wait out");
    if (step.now_ms < head_.fenced_at_ms + kReadLeaseGraceMs)
      return refuse(Reason::kReadLeaseGracePending,
                    "trusted time " + number(step.now_ms.value) + " is short of the fence at " + number(head_.fenced_at_ms.value) +
                        " ms plus the read-lease grace of " + number(kReadLeaseGraceMs.value) + " ms");
    // Every lease taken under an epoch below the current one was taken before its fence, and has ended by now.
    grace_below = head_.storage_epoch;
  }
  head_.storage_epoch += 1;
  head_.fenced_at = step.position;
  head_.fenced_at_ms = step.now_ms;
  head_.grace_below = grace_below;
  purge_past_grace(step);
  return Outcome{StorageFenced{head_.storage_epoch, step.now_ms, grace_below}};
}

// Decision 180: a deleted block's body goes in the first fence's write once
// every read lease of the epoch it was deleted in has ended - its epoch is
// below the recorded grace - at most kPurgesPerFence of them a fence, oldest
// epoch first; the rest wait for the next fence, which any later one is.
void Authority::purge_past_grace(Step& step) {
  std::vector<std::string> due;
  const std::string end = layout::purges_below(head_.grace_below);
  visit_rows(layout::table(layout::kPurges), {}, [&](std::string_view row) {
    if (row >= end) return false;
    due.emplace_back(row);
    return due.size() < kPurgesPerFence;
  });
  for (auto& row : due) {
    auto parsed = layout::parse_purge(row);
    if (parsed) step.touched.blocks_deleted.emplace_back(parsed->resource, std::move(parsed->name));
    put_row(std::move(row), false);  // a row of another shape is not this build's: dropped, nothing deleted by it
  }
}

// Decision 144: the cursor and the ledger record in this decision's write;
// the leaf's bytes move after it is durable, changing no key and no value.
Result<Outcome, Refusal> Authority::apply(const StorageCompact& op, Step& step) {
  if (auto refusal = check_storage_admin(step.caller)) return Err{*refusal};
  if (op.cursor != head_.compaction_cursor)
    return refuse(Reason::kCompactionCursorChanged, "the compaction names cursor " + number(op.cursor) +
                                                        "; the stored cursor is " + number(head_.compaction_cursor));
  if (auto refusal = check_leaf(op.leaf, step.catalog)) return Err{*refusal};
  head_.compaction_cursor += 1;
  step.touched.compaction = CompactionRecord{head_.compaction_cursor, op.leaf, step.position, head_.storage_epoch};
  return Outcome{StorageCompacted{head_.compaction_cursor, op.leaf, head_.storage_epoch}};
}

// Decision 143: a candidate prepared at (epoch, position) is published only
// if no fence came after what it observed; then it is the turn it carries.
Result<Outcome, Refusal> Authority::apply(const PreparedTurn& op, Step& step) {
  const StorageBasis& b = op.basis;
  if (b.epoch > head_.storage_epoch || b.position > head_.position)
    return refuse(Reason::kStorageBasisAhead, "the basis (epoch " + number(b.epoch) + ", position " + number(b.position.value) +
                                                  ") is past the stored epoch " + number(head_.storage_epoch) +
                                                  " at position " + number(head_.position.value));
  if (b.epoch < head_.storage_epoch || b.position < head_.fenced_at)
    return refuse(Reason::kStorageFenced, "prepared at epoch " + number(b.epoch) + ", position " + number(b.position.value) +
                                              "; the fence at position " + number(head_.fenced_at.value) + " made epoch " +
                                              number(head_.storage_epoch));
  return apply(op.turn, step);
}

// Decision 183: a leaf's need is how many accepted decisions wrote into its
// ranges since its last relocation - a record's new version (of any record
// table, decision 185), a block body written or purged. One decision's keys go in one write and sit together;
// each later decision's may sit in another table file, so the need counts
// the places a relocation gathers into one. The leaf a storage_compact
// relocates starts again from nothing, with what that decision wrote.
// Bounded: a leaf first written while kNeedsBound leaves are kept takes the
// place of the least needy only when that one is no candidate (need below
// kMinCompactionNeed), so a listed need never exceeds the decisions that
// really wrote; otherwise it is not counted until relocations make room.
void Authority::note_needs(Touched& t) {
  using namespace layout;
  std::set<std::string> written;
  for (PrincipalId id : t.principals) written.insert(key(kPrincipals, id));
  for (Id id : t.roles) written.insert(key(kRoles, id));
  for (Id id : t.grants_written) written.insert(key(kGrants, id));
  for (Id id : t.grants_removed) written.insert(key(kGrants, id));
  for (Pid pid : t.processes) written.insert(process_versions(pid));
  for (const auto& e : t.entries) written.insert(entry_versions(e.resource, e.key));
  for (const auto& r : t.block_records) written.insert(block_record(r.resource, r.name));
  for (const auto& b : t.blocks) written.insert(block_record(b.resource, b.name));  // the body: the block's leaf
  for (const auto& [resource, name] : t.blocks_deleted) written.insert(block_record(resource, name));
  // The other record tables' versions, removals included (decision 185).
  for (ResourceId id : t.resources) written.insert(key(kResources, id));
  for (const auto& [p, r] : t.credentials_added) written.insert(key(kCredentials, p, r));
  for (const auto& [p, r] : t.credentials_removed) written.insert(key(kCredentials, p, r));
  for (const auto& [pid, revision] : t.associations) written.insert(key(kAssociations, pid, revision));
  for (const auto& [pid, revision] : t.associations_removed) written.insert(key(kAssociations, pid, revision));
  for (const auto* ids : {&t.views, &t.views_removed}) for (Id id : *ids) written.insert(key(kViews, id));
  for (const auto* ids : {&t.outputs, &t.outputs_removed}) for (Id id : *ids) written.insert(key(kOutputs, id));
  for (const auto* ids : {&t.effects, &t.effects_removed}) for (Id id : *ids) written.insert(key(kEffects, id));
  for (const auto* ids : {&t.payloads, &t.payloads_removed}) for (Id id : *ids) written.insert(key(kPayloads, id));
  for (Pid pid : t.runtime) written.insert(key(kRuntime, pid));
  for (const auto& w : t.inputs) written.insert(key(kInputs, w.pid, w.input.input));
  for (const auto& [pid, input] : t.inputs_removed) written.insert(key(kInputs, pid, input));
  const auto set = [&](const std::string& leaf, Id from, Id to) {
    if (from) by_need_.erase({~from, leaf});
    if (to) {
      by_need_.emplace(~to, leaf);
      needs_[leaf] = to;
    } else {
      needs_.erase(leaf);
    }
    // Only candidates are stored: a leaf at 1 is counted in memory and
    // forgotten by a restart (an under-count, never an over-count).
    if (to >= kMinCompactionNeed || from >= kMinCompactionNeed)
      t.needs.emplace_back(leaf, to ? std::optional<Id>(to) : std::nullopt);
  };
  if (t.compaction) {  // relocated once this decision is durable, with what it wrote
    const std::string leaf = leaf_key(t.compaction->leaf);
    written.erase(leaf);
    if (auto it = needs_.find(leaf); it != needs_.end()) set(leaf, it->second, 0);
  }
  for (const auto& leaf : written) {
    auto it = needs_.find(leaf);
    if (it != needs_.end()) {
      set(leaf, it->second, it->second + 1);
      continue;
    }
    if (needs_.size() >= kNeedsBound) {
      const auto least = std::prev(by_need_.end());  // the least needy, the last in key order among equals
      if (~least->first >= kMinCompactionNeed) continue;  // full of candidates: not counted
      const std::string evicted = least->second;
      set(evicted, ~least->first, 0);
    }
    set(leaf, 0, 1);
  }
}

// Decision 183: the most needy leaves, at most a page, none below
// kMinCompactionNeed; realm_control at realm scope, as compaction needs.
Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const CompactionNeedsQuery&) const {
  if (auto refusal = check_storage_admin(ctx.caller)) return Err{*refusal};
  CompactionNeeds answer;
  for (const auto& [inverted, key] : by_need_) {
    if (~inverted < kMinCompactionNeed || answer.leaves.items.size() == kNeedsPage) break;
    if (auto leaf = leaf_of(key)) answer.leaves.items.push_back(LeafNeed{std::move(*leaf), ~inverted});
  }
  return QueryResult{std::move(answer)};
}

// Any live principal: the storage fields name no resource or process.
Result<QueryResult, Refusal> Authority::read(const ReadCtx&, const StorageQuery&) const {
  return QueryResult{StorageStatus{head_.location_definition, head_.storage_epoch, head_.fenced_at,
                                   head_.fenced_at_ms, head_.grace_below, head_.compaction_cursor, kReadLeaseGraceMs}};
}

}  // namespace cowboy::transit::node
