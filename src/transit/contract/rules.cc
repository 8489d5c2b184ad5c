#include "transit/contract/rules.h"

#include <set>

namespace cowboy::transit {
namespace {

std::string bytes_of(const EntryKey& k) { return std::string(k.value.begin(), k.value.end()); }

DecodeError broken(Reason reason, std::string path, std::string detail) {
  return DecodeError{reason, std::move(path), std::move(detail)};
}

std::optional<DecodeError> check(const Turn& t) {
  std::set<std::string> keys;
  for (const auto& m : t.mutations.items)
    if (!keys.insert(bytes_of(m.key)).second) return broken(Reason::kDuplicateMutationKey, "op.turn.mutations", "one mutation per key");
  std::set<std::string> names;
  std::uint64_t total = 0;
  for (const auto& b : t.blocks.items) {
    if (!names.insert(bytes_of(b.name)).second) return broken(Reason::kDuplicateBlock, "op.turn.blocks", "one block per name");
    if (b.length == 0 || b.length > kBlockBytes)
      return broken(Reason::kBlockTooLarge, "op.turn.blocks", "a block holds 1.." + std::to_string(kBlockBytes) + " bytes");
    total += b.length;
  }
  if (total > kTurnBlockBytes)
    return broken(Reason::kBlocksTooLarge, "op.turn.blocks", "a turn's blocks hold at most " + std::to_string(kTurnBlockBytes) + " bytes");
  std::set<ResourceId> views(t.views.items.begin(), t.views.items.end());
  if (views.size() != t.views.items.size()) return broken(Reason::kDuplicateView, "op.turn.views", "one view per resource");
  if (t.effect && (t.effect->observation_budget == 0 || t.effect->observation_budget > kMaxObservations))
    return broken(Reason::kBadObservationBudget, "op.turn.effect.observation_budget",
                  "an effect takes 1.." + std::to_string(kMaxObservations) + " observations");
  return std::nullopt;
}

std::optional<DecodeError> distinct(const List<Name, kRequiredNames>& required, std::string path) {
  std::set<std::string> names;
  for (const auto& n : required.items)
    if (!names.insert(n.value).second) return broken(Reason::kDuplicateName, std::move(path), "required names are distinct");
  return std::nullopt;
}
std::optional<DecodeError> check(const CreateProcess& c) { return distinct(c.required, "op.create.required"); }
std::optional<DecodeError> check(const Spawn& s) { return distinct(s.required, "op.spawn.required"); }

std::optional<DecodeError> check(const ReadEntries& r) {
  std::set<std::string> keys;
  bool ended = false;
  for (const auto& slot : r.keys.items) {
    if (!slot) {
      ended = true;
      continue;
    }
    if (ended) return broken(Reason::kKeysNotAPrefix, "op.read_entries.keys", "keys fill a prefix of the slots, then nulls");
    if (!keys.insert(bytes_of(*slot)).second) return broken(Reason::kDuplicateKeySlot, "op.read_entries.keys", "keys are distinct");
  }
  if (keys.empty()) return broken(Reason::kNoKeys, "op.read_entries.keys", "at least one key");
  return std::nullopt;
}

std::optional<DecodeError> check(const ListEntries& l) {
  if (l.key && l.cursor) return broken(Reason::kAmbiguousKeyCursor, "op.list_entries", "a key lookup or a continuation, not both");
  return std::nullopt;
}

std::optional<DecodeError> lease(Millis lease_ms, std::string path) {
  if (lease_ms.value == 0 || lease_ms > kSnapshotLeaseMaxMs)
    return broken(Reason::kBadLease, std::move(path), "a lease of 1.." + std::to_string(kSnapshotLeaseMaxMs.value) + " ms");
  return std::nullopt;
}
std::optional<DecodeError> check(const OpenSnapshot& o) { return lease(o.lease_ms, "op.open_snapshot.lease_ms"); }

std::optional<DecodeError> check(const SnapshotEntries& s) {
  if (s.key && s.cursor) return broken(Reason::kAmbiguousKeyCursor, "op.snapshot_entries", "a key lookup or a continuation, not both");
  return std::nullopt;
}

std::optional<DecodeError> check(const SnapshotRead& r) {
  if (r.limit == 0 || r.limit > kSnapshotRangeRecords)
    return broken(Reason::kBadRangeLimit, "op.snapshot_read.limit", "a range of 1.." + std::to_string(kSnapshotRangeRecords) + " entries");
  if (const auto* acquire = std::get_if<AcquireSource>(&r.source))
    return lease(acquire->lease_ms, "op.snapshot_read.source.acquire.lease_ms");
  return std::nullopt;
}

std::optional<DecodeError> check(const DeclarePayload& d) {
  if (d.length > kMaxPayloadBytes)
    return broken(Reason::kPayloadTooLarge, "op.declare_payload.length", "a payload holds at most 2^40 bytes");
  return std::nullopt;
}

// The process itself is named by its pid alone; every other record by its id (decision 110).
std::optional<DecodeError> check(const Collect& c) {
  if ((c.kind == CollectKind::kProcess) == c.record.has_value())
    return broken(Reason::kCollectTarget, "op.collect.record", "null exactly when kind is process");
  return std::nullopt;
}

// What a segment's `next` can be (decision 151): the segment after the
// first, after a key the previous one examined, holding no more records than
// `index` pages.
std::optional<DecodeError> check(const ReadSegment& r) {
  if (!r.cursor) return std::nullopt;
  const auto& c = *r.cursor;
  if (c.index == 0 || c.after.value.empty() || c.records > c.index * kPageRecords)
    return broken(Reason::kBadSegmentCursor, "op.read_segment.cursor",
                  "index 1.., a key after, at most index x " + std::to_string(kPageRecords) + " records");
  return std::nullopt;
}

// A prepared turn is a turn: every rule of one (decision 143).
std::optional<DecodeError> check(const PreparedTurn& p) { return check(p.turn); }

}  // namespace

std::optional<DecodeError> check_rules(const Command& op) {
  return std::visit(
      [](const auto& c) -> std::optional<DecodeError> {
        if constexpr (requires { check(c); }) return check(c);
        return std::nullopt;
      },
      op);
}

std::optional<DecodeError> check_rules(const QueryOp& op) {
  return std::visit(
      [](const auto& q) -> std::optional<DecodeError> {
        if constexpr (requires { check(q); }) return check(q);
        return std::nullopt;
      },
      op);
}

}  // namespace cowboy::transit
