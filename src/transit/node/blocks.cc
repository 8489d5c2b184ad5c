// Blocks: their source-qualified, checksummed read, their record, and their
// retirement and deletion by an administrator of the process that owns them
// (docs/transit.md, decisions 100-109). Bodies and records are read through
// the CatalogReader, like entries: they grow with the catalog, not held in memory.
#include "common/crypto.h"
#include "transit/node/layout.h"
#include "transit/node/refusals.h"

namespace cowboy::transit::node {
namespace {

std::string state_name(BlockState s) { return std::string(EnumTraits<BlockState>::kNames[static_cast<int>(s)]); }

}  // namespace

Result<BlockInfo, Refusal> Authority::owned_block(ResourceId resource_id, const EntryKey& name, const Step& step) const {
  // The resource's own rule first (decision 24): a block step changes the
  // resource, as publishing one did, so it needs write there and a live resource.
  if (auto refusal = check_resource(step.caller, resource_id, kWrite, step.now_ms)) return Err{*refusal};
  auto record = step.catalog.block_record(resource_id, name);
  if (!record) return refuse(Reason::kUnknownBlock, "no block of that name in resource " + std::to_string(resource_id.value));
  // Ownership: the process whose turn published it. Write on a shared resource
  // is not enough to take away another process's block (decision 102).
  if (!(rights(step.caller, PidScope{record->pid}) & kPidAdmin))
    return refuse(Reason::kNotBlockOwner, "requires pid_admin at process " + std::to_string(record->pid.value) +
                                              ", which published the block");
  return std::move(*record);
}

Result<Outcome, Refusal> Authority::apply(const RetireBlock& op, Step& step) {
  auto found = owned_block(op.resource, op.name, step);
  if (!found.ok()) return Err{found.error()};
  BlockInfo block = std::move(*found);
  if (block.state == BlockState::kDeleted) return refuse(Reason::kBlockDeleted, "the block is deleted");
  if (block.state != BlockState::kPublished) return refuse(Reason::kBlockRetired, "the block is retired already");
  // Retirement is a new revision of the resource, so that the state at every
  // revision stays exact: before it the block reads, from it on it does not
  // (decision 105).
  auto& r = *resource_mut(op.resource);
  r.info.revision += 1;
  r.changed_at = step.position;
  head_.resources_position = step.position;
  step.touched.resources.push_back(op.resource);
  block.state = BlockState::kRetired;
  block.retired_revision = r.info.revision;
  block.retired_at = step.position;
  step.touched.block_records.push_back(block);
  return Outcome{BlockChanged{op.resource, op.name, r.info.revision, BlockState::kRetired}};
}

Result<Outcome, Refusal> Authority::apply(const DeleteBlock& op, Step& step) {
  auto found = owned_block(op.resource, op.name, step);
  if (!found.ok()) return Err{found.error()};
  BlockInfo block = std::move(*found);
  if (block.state == BlockState::kDeleted) return refuse(Reason::kBlockDeleted, "the block is deleted already");
  if (block.state != BlockState::kRetired)
    return refuse(Reason::kBlockNotRetired, "the block is " + state_name(block.state) + ": retire it first");
  // A view captured while the block was published still reads it (decision
  // 26: nothing later changes what an earlier view shows); its body goes only
  // once every such view's process is retired, when no read can reach it (decision 106).
  for (Id id : first_ids(layout::key(layout::kViewsOn, op.resource))) {  // the resource's views (decision 175)
    const auto* v = view(id);
    if (!v) continue;  // unreadable: the decision is refused (decision 157)
    if (v->revision < block.revision || v->revision >= *block.retired_revision) continue;
    if (const auto* p = process(v->pid); p && !retired(*p, step.now_ms))
      return refuse(Reason::kBlockViewed, "view " + std::to_string(id) + " of process " + std::to_string(v->pid.value) +
                                              " can still read it");
  }
  block.state = BlockState::kDeleted;
  block.deleted_at = step.position;
  step.touched.block_records.push_back(block);
  // No read is answered from the body from now on, but one that began before
  // may still be under way: the body goes once a fence has recorded the
  // read-lease grace past this epoch (decision 180, storage.cc).
  put_row(layout::purge(head_.storage_epoch, op.resource, op.name), true);
  return Outcome{BlockChanged{op.resource, op.name, resource(op.resource)->info.revision, BlockState::kDeleted}};
}

// A block read at one basis (decision 27), qualified by its source when the
// caller names one, and checked against its recorded SHA-256 before a byte
// is disclosed (decisions 101, 103, 104).
Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ReadBlock& q) const {
  auto selected = select(ctx, q.basis);
  if (!selected.ok()) return Err{selected.error()};
  const auto id = selected->resource->info.resource;
  auto record = ctx.catalog.block_record(id, q.name);
  if (!record || record->revision > selected->revision)
    return refuse(Reason::kUnknownBlock, "no such block at revision " + std::to_string(selected->revision.value));
  if (q.source && (q.source->revision != record->revision || q.source->sha256 != record->sha256))
    return refuse(Reason::kBlockSourceMismatch,
                  "the block was published at revision " + std::to_string(record->revision.value) + " with another source");
  if (record->state == BlockState::kDeleted) return refuse(Reason::kBlockDeleted, "only its record remains");
  if (!readable_at(*record, selected->revision))
    return refuse(Reason::kBlockRetired, "retired at revision " + std::to_string(record->retired_revision->value));
  auto body = ctx.catalog.block(id, q.name);
  if (!body || body->second.size() != record->length ||
      crypto::sha256(ByteView(body->second.data(), body->second.size())) != record->sha256)
    return refuse(Reason::kBlockCorrupt, "the stored body does not match its recorded SHA-256");
  return QueryResult{Block{id, record->revision, q.name, record->sha256, Hex<kBlockBytes>{std::move(body->second)}}};
}

// The record is metadata: inspect on the resource, like the resource's own
// (decision 25); retired and deleted blocks are read too - their tombstone.
Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const BlockRead& q) const {
  if (!resource(q.resource)) return refuse(Reason::kUnknownResource, "no resource " + std::to_string(q.resource.value));
  if (!(rights(ctx.caller, ResourceScope{q.resource}) & kInspect))
    return refuse(Reason::kNotPermitted, "requires inspect on the resource");
  auto record = ctx.catalog.block_record(q.resource, q.name);
  if (!record) return refuse(Reason::kUnknownBlock, "no block of that name");
  return QueryResult{std::move(*record)};
}

}  // namespace cowboy::transit::node
