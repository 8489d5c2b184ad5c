// What each operation needs and answers with: the capability it requires
// (the node reports capability::kSupported; the client refuses, before
// signing, an operation whose capability the peer does not report,
// docs/transit.md decision 42) and the Receipt outcome a command is answered
// with. A query is answered by the QueryResult alternative at its own index.
// The client and the wire reference both read these.
#pragma once

#include <array>
#include <string_view>

#include "transit/contract/types.h"

namespace cowboy::transit::capability {

inline constexpr std::string_view kDeclarativeAuthorization = "declarative_authorization";
inline constexpr std::string_view kIdentity = "identity";
inline constexpr std::string_view kDecision = "decision";
inline constexpr std::string_view kResources = "resources";
inline constexpr std::string_view kPagedCatalogs = "paged_catalogs";
inline constexpr std::string_view kProcessListing = "process_listing";
inline constexpr std::string_view kAssociationLookup = "association_lookup";
inline constexpr std::string_view kResourceReadAccess = "resource_read_access";
inline constexpr std::string_view kResourceReadBatch = "resource_read_batch";
inline constexpr std::string_view kProcesses = "processes";
inline constexpr std::string_view kScopedRetry = "scoped_retry";
inline constexpr std::string_view kCourierDelivery = "courier_delivery";
inline constexpr std::string_view kWorkerRotation = "worker_rotation";
inline constexpr std::string_view kEffectReconciliation = "effect_reconciliation";
// The maintenance process's work: route and ended-process listings, output
// cancellation and recorded retirement (docs/transit.md, decisions 50-56).
inline constexpr std::string_view kMaintenance = "maintenance";
// Root-history reclamation (decisions 64-69): reported by every node of this
// build; whether a realm uses it is its genesis's allow_history_trim.
inline constexpr std::string_view kCheckpoints = "checkpoints";
// Leased snapshots (decisions 70-78): open/entries/close, and snapshot_read.
inline constexpr std::string_view kLeasedSnapshots = "leased_snapshots";
inline constexpr std::string_view kSnapshotRead = "snapshot_read";
// Payloads (decisions 84-92): the four commands, the payload read and the payload route.
inline constexpr std::string_view kPayloads = "payloads";
// Runtime binding (decisions 120-129): runtime_intent/observe/upgrade, activate and the runtime read.
inline constexpr std::string_view kRuntimeBinding = "runtime_binding";
// Station's native profile (decision 128): ownership, resources and retained
// reads as Station uses them; a client for Station requires it (Client::require).
inline constexpr std::string_view kStation = "station";
// Working-catalog collection (decisions 110-117, 186-187): collect.
inline constexpr std::string_view kCollection = "collection";
// Blocks (decisions 100-109): their records, source-qualified reads, retirement and deletion.
inline constexpr std::string_view kBlocks = "blocks";
// Segmented results (decisions 150-154): read_segment and its complete-result evidence.
inline constexpr std::string_view kSegmentedResults = "segmented_results";
// Physical storage maintenance (decisions 140-149): storage_fence,
// storage_compact, prepared_turn, the storage read and compaction_needs (decision 183).
inline constexpr std::string_view kStorageMaintenance = "storage_maintenance";
// Reported, gating no operation of their own: what turns and views support.
inline constexpr std::string_view kRetainedReadVersions = "retained_read_versions";
inline constexpr std::string_view kTurnWithVersions = "turn_with_versions";

/// What this build's node reports, in this order.
inline constexpr std::array kSupported = {  // deduced: std::array<std::string_view, N>
    kDeclarativeAuthorization, kIdentity,           kDecision,           kResources,
    kPagedCatalogs,            kProcessListing,     kAssociationLookup,  kResourceReadAccess,
    kResourceReadBatch,        kProcesses,          kScopedRetry,        kCourierDelivery,
    kRetainedReadVersions,     kTurnWithVersions,
    kWorkerRotation,           kEffectReconciliation, kMaintenance,       kCheckpoints,
    kLeasedSnapshots,          kSnapshotRead,       kPayloads,
    kRuntimeBinding,           kStation,
    kCollection,               kBlocks,             kSegmentedResults,
    kStorageMaintenance};

template <typename Op, typename... Of> inline constexpr bool kOneOf = (std::is_same_v<Op, Of> || ...);

/// The capability `Op` needs; empty for the capabilities query, which is how a client learns them.
template <typename Op> constexpr std::string_view required() {
  if constexpr (kOneOf<Op, CapabilitiesQuery>) return {};
  else if constexpr (requires(Op op) { op.expected_revision; }) return kDeclarativeAuthorization;
  else if constexpr (kOneOf<Op, IdentityQuery>) return kIdentity;
  else if constexpr (kOneOf<Op, DecisionQuery>) return kDecision;
  else if constexpr (kOneOf<Op, CreateResource, RetireResource>) return kResources;
  else if constexpr (kOneOf<Op, ListResources, ListAssociations, ListEntries>) return kPagedCatalogs;
  else if constexpr (kOneOf<Op, ListProcesses>) return kProcessListing;
  else if constexpr (kOneOf<Op, AssociationLookup>) return kAssociationLookup;
  else if constexpr (kOneOf<Op, ReadAccess>) return kResourceReadAccess;
  else if constexpr (kOneOf<Op, ReadEntries>) return kResourceReadBatch;
  else if constexpr (kOneOf<Op, Retry>) return kScopedRetry;
  else if constexpr (kOneOf<Op, Deliver>) return kCourierDelivery;
  else if constexpr (kOneOf<Op, RotateWorker>) return kWorkerRotation;
  else if constexpr (kOneOf<Op, AttemptEffect, ObserveEffect, CloseEffect, CancelEffect, EffectRead, ListEffects>)
    return kEffectReconciliation;
  else if constexpr (kOneOf<Op, CancelOutput, RecordRetirement, ListRoutes, ListEnded>) return kMaintenance;
  else if constexpr (kOneOf<Op, Checkpoint, AdvanceFloor, CheckpointQuery>) return kCheckpoints;
  else if constexpr (kOneOf<Op, OpenSnapshot, SnapshotEntries, CloseSnapshot>) return kLeasedSnapshots;
  else if constexpr (kOneOf<Op, SnapshotRead>) return kSnapshotRead;
  else if constexpr (kOneOf<Op, DeclarePayload, PayloadReady, RetirePayload, PayloadDeleted, PayloadRead>) return kPayloads;
  else if constexpr (kOneOf<Op, RuntimeIntent, RuntimeObserve, RuntimeUpgrade, Activate, RuntimeQuery>)
    return kRuntimeBinding;
  else if constexpr (kOneOf<Op, Collect, ListCollectable>) return kCollection;
  else if constexpr (kOneOf<Op, ReadBlock, BlockRead, RetireBlock, DeleteBlock>) return kBlocks;
  else if constexpr (kOneOf<Op, ReadSegment>) return kSegmentedResults;
  else if constexpr (kOneOf<Op, StorageFence, StorageCompact, PreparedTurn, StorageQuery, CompactionNeedsQuery>)
    return kStorageMaintenance;
  else {
    static_assert(kOneOf<Op, CreateProcess, Associate, Initialize, Own, Send, Turn, FailTurn, Suspend, Resume,
                         ProcessRead, Terminate, Spawn>,
                  "every operation names its capability");
    return kProcesses;
  }
}

template <typename... A> constexpr std::string_view required(const std::variant<A...>& op) {
  return std::visit([](const auto& o) { return required<std::decay_t<decltype(o)>>(); }, op);
}

}  // namespace cowboy::transit::capability

namespace cowboy::transit {

/// The Receipt outcome a command is answered with.
template <typename Op> struct OutcomeFor {
  using type = ProcessChanged;  // create, initialize, own, fail_turn, retry, suspend, resume, spawn
};
template <> struct OutcomeFor<CreatePrincipal> { using type = PrincipalCreated; };
template <> struct OutcomeFor<CreateRole> { using type = RoleCreated; };
template <> struct OutcomeFor<Grant> { using type = Granted; };
template <> struct OutcomeFor<BindCredential> { using type = PolicyChanged; };
template <> struct OutcomeFor<UnbindCredential> { using type = PolicyChanged; };
template <> struct OutcomeFor<RevokeGrant> { using type = PolicyChanged; };
template <> struct OutcomeFor<RevokePrincipal> { using type = PolicyChanged; };
template <> struct OutcomeFor<CreateResource> { using type = ResourceCreated; };
template <> struct OutcomeFor<RetireResource> { using type = ResourceRetired; };
template <> struct OutcomeFor<Associate> { using type = Associated; };
template <> struct OutcomeFor<Send> { using type = Sent; };
template <> struct OutcomeFor<Turn> { using type = TurnPublished; };
template <> struct OutcomeFor<Deliver> { using type = Delivered; };
template <> struct OutcomeFor<RotateWorker> { using type = WorkerRotated; };
template <> struct OutcomeFor<ReplaceGrant> { using type = GrantReplaced; };
template <> struct OutcomeFor<Terminate> { using type = ProcessTerminated; };
template <> struct OutcomeFor<AttemptEffect> { using type = EffectChanged; };
template <> struct OutcomeFor<ObserveEffect> { using type = EffectChanged; };
template <> struct OutcomeFor<CloseEffect> { using type = EffectChanged; };
template <> struct OutcomeFor<CancelEffect> { using type = EffectChanged; };
template <> struct OutcomeFor<CancelOutput> { using type = OutputCancelled; };
template <> struct OutcomeFor<RecordRetirement> { using type = RetirementRecorded; };
template <> struct OutcomeFor<Checkpoint> { using type = Checkpointed; };
template <> struct OutcomeFor<AdvanceFloor> { using type = FloorAdvanced; };
template <> struct OutcomeFor<DeclarePayload> { using type = PayloadChanged; };
template <> struct OutcomeFor<PayloadReady> { using type = PayloadChanged; };
template <> struct OutcomeFor<RetirePayload> { using type = PayloadChanged; };
template <> struct OutcomeFor<PayloadDeleted> { using type = PayloadChanged; };
template <> struct OutcomeFor<RuntimeIntent> { using type = RuntimeChanged; };
template <> struct OutcomeFor<RuntimeObserve> { using type = RuntimeChanged; };
template <> struct OutcomeFor<RuntimeUpgrade> { using type = RuntimeChanged; };
template <> struct OutcomeFor<Activate> { using type = RuntimeChanged; };
template <> struct OutcomeFor<Collect> { using type = Collected; };
template <> struct OutcomeFor<RetireBlock> { using type = BlockChanged; };
template <> struct OutcomeFor<DeleteBlock> { using type = BlockChanged; };
template <> struct OutcomeFor<StorageFence> { using type = StorageFenced; };
template <> struct OutcomeFor<StorageCompact> { using type = StorageCompacted; };
template <> struct OutcomeFor<PreparedTurn> { using type = TurnPublished; };
template <typename Op> using OutcomeOf = typename OutcomeFor<Op>::type;

/// The control mutations, which the control reserve admits beyond the
/// admission ceiling (docs/transit.md, decisions 9 and 63): the ones that only
/// take authority away, and rotate_worker, which hands a process to a
/// replacement worker. The snapshot-closing controls are queries, not
/// mutations: their reserve is the one of takes_control_hint below.
template <typename Op>
inline constexpr bool kControl = capability::kOneOf<Op, UnbindCredential, RevokeGrant, RevokePrincipal, RotateWorker>;
inline bool is_control(const Command& op) {
  return std::visit([](const auto& c) { return kControl<std::decay_t<decltype(c)>>; }, op);
}

/// The queries that may carry `X-Transit-Control: snapshot` and so take the
/// reserved control admission (decision 76): the ones that release a
/// snapshot, close_snapshot and snapshot_read with finish. Any other query,
/// and every command, with the hint is control_hint_not_allowed.
inline bool takes_control_hint(const QueryOp& op) {
  if (std::holds_alternative<CloseSnapshot>(op)) return true;
  const auto* read = std::get_if<SnapshotRead>(&op);
  return read && read->finish;
}

/// The queries a node answers from its snapshot registry rather than the authority alone.
template <typename Op>
inline constexpr bool kSnapshotQuery = capability::kOneOf<Op, OpenSnapshot, SnapshotEntries, CloseSnapshot, SnapshotRead>;

}  // namespace cowboy::transit
