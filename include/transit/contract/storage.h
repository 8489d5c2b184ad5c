// Physical storage maintenance (docs/transit.md, decisions 140-149): the
// storage fence, compaction one leaf at a time, a turn prepared against an
// observed storage basis, and the storage read.
//
//   storage_fence    realm_control at realm scope, trusted time: epoch E -> E + 1
//   storage_compact  realm_control at realm scope: cursor C -> C + 1, one leaf relocated
//   prepared_turn    a turn published only if no fence came after its observed basis
//
// Neither maintenance command changes what any read answers or what history
// is retained. Same conventions as types.h: one field list per type,
// declaration order is wire order.
#pragma once

#include "transit/contract/snapshots.h"
#include "transit/contract/state.h"

namespace cowboy::transit {

/// The read-lease grace a later fence waits out before it records that every
/// lease taken under an earlier epoch has ended: the longest snapshot lease.
inline constexpr Millis kReadLeaseGraceMs = kSnapshotLeaseMaxMs;

// ---- leaves: what one storage_compact relocates ----------------------------------

/// A block: its body and every version of its record (decisions 100, 161).
struct BlockLeaf {
  static constexpr std::string_view kName = "block";
  ResourceId resource{};
  EntryKey name;
  bool operator==(const BlockLeaf&) const = default;
};
template <typename V> void fields(V& v, BlockLeaf& t) { v("resource", t.resource)("name", t.name); }

/// A catalog leaf: every version of one entry of a resource.
struct EntryLeaf {
  static constexpr std::string_view kName = "entry";
  ResourceId resource{};
  EntryKey key;
  bool operator==(const EntryLeaf&) const = default;
};
template <typename V> void fields(V& v, EntryLeaf& t) { v("resource", t.resource)("key", t.key); }

/// A catalog leaf: every stored version of one process record (decision 130).
struct ProcessLeaf {
  static constexpr std::string_view kName = "process";
  Pid pid{};
  bool operator==(const ProcessLeaf&) const = default;
};
template <typename V> void fields(V& v, ProcessLeaf& t) { v("pid", t.pid); }

/// A policy leaf: every stored version of one principal's record (decision 161).
struct PrincipalLeaf {
  static constexpr std::string_view kName = "principal";
  PrincipalId principal{};
  bool operator==(const PrincipalLeaf&) const = default;
};
template <typename V> void fields(V& v, PrincipalLeaf& t) { v("principal", t.principal); }

/// A policy leaf: every stored version of one role's record.
struct RoleLeaf {
  static constexpr std::string_view kName = "role";
  Id role = 0;
  bool operator==(const RoleLeaf&) const = default;
};
template <typename V> void fields(V& v, RoleLeaf& t) { v("role", t.role); }

/// A policy leaf: every stored version of one grant's record, a revocation's included.
struct GrantLeaf {
  static constexpr std::string_view kName = "grant";
  Id grant = 0;
  bool operator==(const GrantLeaf&) const = default;
};
template <typename V> void fields(V& v, GrantLeaf& t) { v("grant", t.grant); }

// The other record leaves (decision 185): every stored version of one
// record of a table that grows with the work, or of a credential binding.

/// Every stored version of one resource's record (its revision, policy, lifetime).
struct ResourceLeaf {
  static constexpr std::string_view kName = "resource_record";
  ResourceId resource{};
  bool operator==(const ResourceLeaf&) const = default;
};
template <typename V> void fields(V& v, ResourceLeaf& t) { v("resource", t.resource); }

/// A policy leaf: every stored version of one (principal, role) credential binding.
struct CredentialLeaf {
  static constexpr std::string_view kName = "credential_record";
  PrincipalId principal{};
  Id role = 0;
  bool operator==(const CredentialLeaf&) const = default;
};
template <typename V> void fields(V& v, CredentialLeaf& t) { v("principal", t.principal)("role", t.role); }

/// Every stored version of one association of a process, by its revision.
struct AssociationLeaf {
  static constexpr std::string_view kName = "association_record";
  Pid pid{};
  Id revision = 0;
  bool operator==(const AssociationLeaf&) const = default;
};
template <typename V> void fields(V& v, AssociationLeaf& t) { v("pid", t.pid)("revision", t.revision); }

/// Every stored version of one view's record.
struct ViewLeaf {
  static constexpr std::string_view kName = "view_record";
  Id view = 0;
  bool operator==(const ViewLeaf&) const = default;
};
template <typename V> void fields(V& v, ViewLeaf& t) { v("view", t.view); }

/// Every stored version of one output's record.
struct OutputLeaf {
  static constexpr std::string_view kName = "output_record";
  Id output = 0;
  bool operator==(const OutputLeaf&) const = default;
};
template <typename V> void fields(V& v, OutputLeaf& t) { v("output", t.output); }

/// Every stored version of one effect's record.
struct EffectLeaf {
  static constexpr std::string_view kName = "effect_record";
  Id effect = 0;
  bool operator==(const EffectLeaf&) const = default;
};
template <typename V> void fields(V& v, EffectLeaf& t) { v("effect", t.effect); }

/// Every stored version of one payload's record (its bytes are the payload store's).
struct PayloadLeaf {
  static constexpr std::string_view kName = "payload_record";
  Id payload = 0;
  bool operator==(const PayloadLeaf&) const = default;
};
template <typename V> void fields(V& v, PayloadLeaf& t) { v("payload", t.payload); }

/// Every stored version of one process's runtime binding.
struct RuntimeLeaf {
  static constexpr std::string_view kName = "runtime_record";
  Pid pid{};
  bool operator==(const RuntimeLeaf&) const = default;
};
template <typename V> void fields(V& v, RuntimeLeaf& t) { v("pid", t.pid); }

/// Every stored version of one mailbox input of a process.
struct InputLeaf {
  static constexpr std::string_view kName = "input_record";
  Pid pid{};
  Id input = 0;
  bool operator==(const InputLeaf&) const = default;
};
template <typename V> void fields(V& v, InputLeaf& t) { v("pid", t.pid)("input", t.input); }

using StorageLeaf = std::variant<BlockLeaf, EntryLeaf, ProcessLeaf, PrincipalLeaf, RoleLeaf, GrantLeaf, ResourceLeaf,
                                 CredentialLeaf, AssociationLeaf, ViewLeaf, OutputLeaf, EffectLeaf, PayloadLeaf,
                                 RuntimeLeaf, InputLeaf>;

/// What a prepared candidate observed (the storage read's epoch and position).
struct StorageBasis {
  static constexpr std::string_view kName = "StorageBasis";
  Id epoch = 0;
  Position position{};
  bool operator==(const StorageBasis&) const = default;
};
template <typename V> void fields(V& v, StorageBasis& t) { v("epoch", t.epoch)("position", t.position); }

// ---- commands ----------------------------------------------------------------------

/// Advances the stored storage epoch from `epoch` (which must be the current
/// one) to epoch + 1. With record_grace, it also records that every read
/// lease taken before the current epoch's fence has ended: trusted time is at
/// least kReadLeaseGraceMs past that fence (decision 142).
struct StorageFence {
  static constexpr std::string_view kName = "storage_fence";
  Id epoch = 0;
  bool record_grace = false;
  bool operator==(const StorageFence&) const = default;
};
template <typename V> void fields(V& v, StorageFence& t) { v("epoch", t.epoch)("record_grace", t.record_grace); }

/// Relocates `leaf` and advances the head's compaction cursor from `cursor`
/// (which must be the current one) to cursor + 1 (decision 144).
struct StorageCompact {
  static constexpr std::string_view kName = "storage_compact";
  Id cursor = 0;
  StorageLeaf leaf;
  bool operator==(const StorageCompact&) const = default;
};
template <typename V> void fields(V& v, StorageCompact& t) { v("cursor", t.cursor)("leaf", t.leaf); }

/// `turn`, prepared at `basis`: published only while the storage epoch is
/// still the observed one and no fence came after the observed position
/// (decision 143). Its receipt is the turn's, turn_published.
struct PreparedTurn {
  static constexpr std::string_view kName = "prepared_turn";
  StorageBasis basis;
  Turn turn;
  bool operator==(const PreparedTurn&) const = default;
};
template <typename V> void fields(V& v, PreparedTurn& t) { v("basis", t.basis)("turn", t.turn); }

// ---- receipts ------------------------------------------------------------------------

struct StorageFenced {
  static constexpr std::string_view kName = "storage_fenced";
  Id epoch = 0;         // the new storage epoch
  TrustedMs fenced_at_ms{};  // trusted time at the fence
  Id grace_below = 0;   // every read lease of an epoch below this has ended (0: none recorded)
  bool operator==(const StorageFenced&) const = default;
};
template <typename V> void fields(V& v, StorageFenced& t) {
  v("epoch", t.epoch)("fenced_at_ms", t.fenced_at_ms)("grace_below", t.grace_below);
}

struct StorageCompacted {
  static constexpr std::string_view kName = "storage_compacted";
  Id cursor = 0;  // the new compaction cursor: this relocation's number
  StorageLeaf leaf;
  Id epoch = 0;   // the storage epoch it was accepted in
  bool operator==(const StorageCompacted&) const = default;
};
template <typename V> void fields(V& v, StorageCompacted& t) { v("cursor", t.cursor)("leaf", t.leaf)("epoch", t.epoch); }

// ---- the storage read ----------------------------------------------------------------------

/// The stored head's storage fields; what a prepared candidate observes.
struct StorageQuery {
  static constexpr std::string_view kName = "storage";
  bool operator==(const StorageQuery&) const = default;
};
template <typename V> void fields(V&, StorageQuery&) {}

struct StorageStatus {
  static constexpr std::string_view kName = "storage";
  Digest location_definition{};  // the one current definition of page and block locations
  Id epoch = 0;
  Position fenced_at{};     // the position of the fence that made `epoch` (0: none yet)
  TrustedMs fenced_at_ms{};  // ... and its trusted time
  Id grace_below = 0;   // every read lease of an epoch below this has ended (0: none recorded)
  Id compaction_cursor = 0;
  Millis read_lease_grace_ms = kReadLeaseGraceMs;
  bool operator==(const StorageStatus&) const = default;
};
template <typename V> void fields(V& v, StorageStatus& t) {
  v("location_definition", t.location_definition)("epoch", t.epoch)("fenced_at", t.fenced_at)(
      "fenced_at_ms", t.fenced_at_ms)("grace_below", t.grace_below)("compaction_cursor", t.compaction_cursor)(
      "read_lease_grace_ms", t.read_lease_grace_ms);
}

// ---- what is worth compacting (decision 183) ------------------------------------------

/// A leaf is listed once this many keys were written into its ranges since
/// its last relocation: one key alone sits in one place, nothing to gather.
inline constexpr Id kMinCompactionNeed = 2;
/// The leaves one compaction_needs answer lists, at most.
inline constexpr std::size_t kNeedsPage = kPageRecords;

/// The leaves most worth relocating now, needing realm_control at realm
/// scope as compaction does (they name resources, entries and processes).
struct CompactionNeedsQuery {
  static constexpr std::string_view kName = "compaction_needs";
  bool operator==(const CompactionNeedsQuery&) const = default;
};
template <typename V> void fields(V&, CompactionNeedsQuery&) {}

/// One leaf and its need: the keys written into its ranges since its last
/// relocation (or since the node began counting), at least kMinCompactionNeed.
struct LeafNeed {
  static constexpr std::string_view kName = "LeafNeed";
  StorageLeaf leaf;
  Id need = 0;
  bool operator==(const LeafNeed&) const = default;
};
template <typename V> void fields(V& v, LeafNeed& t) { v("leaf", t.leaf)("need", t.need); }

struct CompactionNeeds {
  static constexpr std::string_view kName = "compaction_needs";
  List<LeafNeed, kNeedsPage> leaves;  // most needy first; ties in leaf key order
  bool operator==(const CompactionNeeds&) const = default;
};
template <typename V> void fields(V& v, CompactionNeeds& t) { v("leaves", t.leaves); }

}  // namespace cowboy::transit
