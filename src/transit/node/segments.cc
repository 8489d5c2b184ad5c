// read_segment: a resource's entries at one basis as numbered segments with
// a digest chain and, on the last, the complete-result evidence
// (docs/transit.md, decisions 150-154). The same rights, basis and cut rules
// as list_entries (resources.cc); the chain is carried by the continuation.
#include "transit/node/authority.h"

namespace cowboy::transit::node {

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ReadSegment& q) const {
  auto selected = select(ctx, q.basis);  // current rights, lifetime, exact revision or a readable view
  if (!selected.ok()) return Err{selected.error()};
  // The entries at a revision never change, so only an invalid cut expires a
  // continuation; a current basis whose resource moved was refused above.
  if (q.cursor)
    if (auto stale = stale_cut(q.cursor->cut, Position{0})) return Err{*stale};
  Segment segment;
  segment.cut = q.cursor ? q.cursor->cut : head_.position;
  segment.resource = selected->resource->info;
  segment.revision = selected->revision;
  segment.view = selected->view;
  segment.index = q.cursor ? q.cursor->index : 0;
  segment.records_before = q.cursor ? q.cursor->records : 0;
  const auto id = selected->resource->info.resource;
  std::optional<EntryKey> after;
  if (q.cursor) after = EntryKey{q.cursor->after.value};
  auto scan = ctx.catalog.entries(id, selected->revision, after, kPageRecords, kScanBudget);
  Digest chain = q.cursor ? q.cursor->chain : segment_origin(id, selected->revision);
  for (const auto& e : scan.entries) chain = segment_link(chain, e);
  segment.chain = chain;
  const Id records = segment.records_before + scan.entries.size();
  segment.items.items = std::move(scan.entries);
  if (!scan.complete && scan.last_key)
    segment.next = SegmentCursor{segment.cut, segment.index + 1, {scan.last_key->value}, records, chain};
  else
    segment.complete = Completion{segment.index + 1, records, chain};
  return QueryResult{std::move(segment)};
}

}  // namespace cowboy::transit::node
