// Every Transit v1 type, each declared once with its field list:
//   template <typename V> void fields(V& v, Type& t) { v("a", t.a)("b", t.b); }
// The canonical JSON writer, the strict decoder and transit-v1.schema.json all
// walk these lists (codec.h, schema.cc), so a field exists in one place only.
// Declaration order is wire order. A union alternative's kName is its key.
#pragma once

#include "transit/contract/effects.h"
#include "transit/contract/history.h"
#include "transit/contract/reasons.h"
#include "transit/contract/state.h"
#include "transit/contract/workers.h"
#include "transit/contract/maintenance.h"
#include "transit/contract/snapshots.h"
#include "transit/contract/payloads.h"
#include "transit/contract/runtime.h"
#include "transit/contract/collection.h"
#include "transit/contract/blocks.h"
#include "transit/contract/segments.h"
#include "transit/contract/storage.h"

namespace cowboy::transit {

// ---- scopes and the authorization graph ------------------------------------

struct RealmScope {
  static constexpr std::string_view kName = "realm";
  bool operator==(const RealmScope&) const = default;
};
template <typename V> void fields(V&, RealmScope&) {}

struct PidScope {
  static constexpr std::string_view kName = "pid";
  Pid pid{};
  bool operator==(const PidScope&) const = default;
};
template <typename V> void fields(V& v, PidScope& t) { v("pid", t.pid); }

struct ResourceScope {
  static constexpr std::string_view kName = "resource";
  ResourceId resource{};
  bool operator==(const ResourceScope&) const = default;
};
template <typename V> void fields(V& v, ResourceScope& t) { v("resource", t.resource); }

using Scope = std::variant<RealmScope, PidScope, ResourceScope>;

using RoleName = Text<1, 32>;

// ---- commands (declarative_authorization) ----------------------------------
// expected_revision: null applies unconditionally; a number must equal the
// realm's current policy revision, else the command is a Conflict.

struct CreatePrincipal {
  static constexpr std::string_view kName = "create_principal";
  PrincipalId principal{};
  PublicKey public_key{};
  Scope scope;
  Permissions permissions;
  std::optional<Pid> pid_scope;
  std::optional<Id> expected_revision;
  bool operator==(const CreatePrincipal&) const = default;
};
template <typename V> void fields(V& v, CreatePrincipal& t) {
  v("principal", t.principal)("public_key", t.public_key)("scope", t.scope)("permissions", t.permissions)(
      "pid_scope", t.pid_scope)("expected_revision", t.expected_revision);
}

struct CreateRole {
  static constexpr std::string_view kName = "create_role";
  RoleName name;
  std::optional<Id> expected_revision;
  bool operator==(const CreateRole&) const = default;
};
template <typename V> void fields(V& v, CreateRole& t) { v("name", t.name)("expected_revision", t.expected_revision); }

struct BindCredential {
  static constexpr std::string_view kName = "bind_credential";
  PrincipalId principal{};
  Id role = 0;
  std::optional<Id> expected_revision;
  bool operator==(const BindCredential&) const = default;
};
template <typename V> void fields(V& v, BindCredential& t) {
  v("principal", t.principal)("role", t.role)("expected_revision", t.expected_revision);
}

struct UnbindCredential {
  static constexpr std::string_view kName = "unbind_credential";
  PrincipalId principal{};
  Id role = 0;
  std::optional<Id> expected_revision;
  bool operator==(const UnbindCredential&) const = default;
};
template <typename V> void fields(V& v, UnbindCredential& t) {
  v("principal", t.principal)("role", t.role)("expected_revision", t.expected_revision);
}

struct Grant {
  static constexpr std::string_view kName = "grant";
  Id role = 0;
  Scope scope;
  Permissions permissions;
  std::optional<Id> expected_revision;
  bool operator==(const Grant&) const = default;
};
template <typename V> void fields(V& v, Grant& t) {
  v("role", t.role)("scope", t.scope)("permissions", t.permissions)("expected_revision", t.expected_revision);
}

struct RevokeGrant {
  static constexpr std::string_view kName = "revoke_grant";
  Id grant = 0;
  std::optional<Id> expected_revision;
  bool operator==(const RevokeGrant&) const = default;
};
template <typename V> void fields(V& v, RevokeGrant& t) { v("grant", t.grant)("expected_revision", t.expected_revision); }

struct RevokePrincipal {
  static constexpr std::string_view kName = "revoke_principal";
  PrincipalId principal{};
  std::optional<Id> expected_revision;
  bool operator==(const RevokePrincipal&) const = default;
};
template <typename V> void fields(V& v, RevokePrincipal& t) {
  v("principal", t.principal)("expected_revision", t.expected_revision);
}

/// Ordinary direct-native grant replacement: the principal's private role is
/// retired (unbound, its grants removed, resource grants included) and a new
/// private role bound, holding one grant made from these fields.
struct ReplaceGrant {
  static constexpr std::string_view kName = "replace_grant";
  PrincipalId principal{};
  Scope scope;
  Permissions permissions;
  std::optional<Id> expected_revision;
  bool operator==(const ReplaceGrant&) const = default;
};
template <typename V> void fields(V& v, ReplaceGrant& t) {
  v("principal", t.principal)("scope", t.scope)("permissions", t.permissions)("expected_revision", t.expected_revision);
}

using Command = std::variant<CreatePrincipal, CreateRole, BindCredential, UnbindCredential, Grant, RevokeGrant,
                             RevokePrincipal, CreateResource, RetireResource, CreateProcess, Associate, Initialize,
                             Own, Send, Turn, FailTurn, Retry, Suspend, Resume, Deliver,
                             // workers that fail over, processes that end (workers.h)
                             RotateWorker, ReplaceGrant, Terminate, Spawn,
                             // effects to closure (effects.h)
                             AttemptEffect, ObserveEffect, CloseEffect, CancelEffect,
                             // maintenance (maintenance.h)
                             CancelOutput, RecordRetirement,
                             // checkpoints and the history floor (history.h)
                             Checkpoint, AdvanceFloor,
                             // payloads (payloads.h)
                             DeclarePayload, PayloadReady, RetirePayload, PayloadDeleted,
                             // runtime binding (runtime.h)
                             RuntimeIntent, RuntimeObserve, RuntimeUpgrade, Activate,
                             // collection (collection.h)
                             Collect,
                             // blocks (blocks.h)
                             RetireBlock, DeleteBlock,
                             // storage maintenance (storage.h)
                             StorageFence, StorageCompact, PreparedTurn>;

struct Request {
  static constexpr std::string_view kName = "Request";
  Version version;
  Definition definition;
  Text<1, 64> realm;
  PrincipalId principal{};
  Id sequence = 0;
  Command op;
  bool operator==(const Request&) const = default;
};
template <typename V> void fields(V& v, Request& t) {
  v("version", t.version)("definition", t.definition)("realm", t.realm)("principal", t.principal)(
      "sequence", t.sequence)("op", t.op);
}

struct SignedRequest {
  static constexpr std::string_view kName = "SignedRequest";
  Request request;
  Signature signature{};
  bool operator==(const SignedRequest&) const = default;
};
template <typename V> void fields(V& v, SignedRequest& t) { v("request", t.request)("signature", t.signature); }

// ---- queries ------------------------------------------------------------------

struct IdentityQuery {
  static constexpr std::string_view kName = "identity";
  bool operator==(const IdentityQuery&) const = default;
};
template <typename V> void fields(V&, IdentityQuery&) {}

struct CapabilitiesQuery {
  static constexpr std::string_view kName = "capabilities";
  bool operator==(const CapabilitiesQuery&) const = default;
};
template <typename V> void fields(V&, CapabilitiesQuery&) {}

/// Would `principal` currently hold `permissions` at `scope`? Requires inspect.
struct DecisionQuery {
  static constexpr std::string_view kName = "decision";
  PrincipalId principal{};
  Scope scope;
  Permissions permissions;
  bool operator==(const DecisionQuery&) const = default;
};
template <typename V> void fields(V& v, DecisionQuery& t) {
  v("principal", t.principal)("scope", t.scope)("permissions", t.permissions);
}

/// The i-th query is answered by the i-th QueryResult alternative (the client checks it).
using QueryOp = std::variant<IdentityQuery, CapabilitiesQuery, DecisionQuery, ListResources, ListAssociations,
                             ListEntries, ReadEntries, AssociationLookup, ReadAccess, ProcessRead, ReadBlock,
                             ListProcesses,
                             // effects to closure (effects.h)
                             EffectRead, ListEffects,
                             // maintenance (maintenance.h)
                             ListRoutes, ListEnded,
                             // checkpoints and the history floor (history.h)
                             CheckpointQuery,
                             // leased snapshots (snapshots.h)
                             OpenSnapshot, SnapshotEntries, CloseSnapshot, SnapshotRead,
                             // payloads (payloads.h)
                             PayloadRead,
                             // runtime binding (runtime.h)
                             RuntimeQuery,
                             // blocks (blocks.h)
                             BlockRead,
                             // segmented results (segments.h)
                             ReadSegment,
                             // the maintenance process's collection listing (collection.h)
                             ListCollectable,
                             // storage maintenance (storage.h)
                             StorageQuery, CompactionNeedsQuery>;

struct Query {
  static constexpr std::string_view kName = "Query";
  Version version;
  Definition definition;
  Text<1, 64> realm;
  PrincipalId principal{};
  QueryOp op;
  bool operator==(const Query&) const = default;
};
template <typename V> void fields(V& v, Query& t) {
  v("version", t.version)("definition", t.definition)("realm", t.realm)("principal", t.principal)("op", t.op);
}

struct SignedQuery {
  static constexpr std::string_view kName = "SignedQuery";
  Query query;
  Signature signature{};
  bool operator==(const SignedQuery&) const = default;
};
template <typename V> void fields(V& v, SignedQuery& t) { v("query", t.query)("signature", t.signature); }

// ---- receipts -------------------------------------------------------------------

struct PrincipalCreated {
  static constexpr std::string_view kName = "principal_created";
  PrincipalId principal{};
  Id role = 0;   // its private role
  Id grant = 0;  // the grant made from the command's grant fields
  Id policy_revision = 0;
  bool operator==(const PrincipalCreated&) const = default;
};
template <typename V> void fields(V& v, PrincipalCreated& t) {
  v("principal", t.principal)("role", t.role)("grant", t.grant)("policy_revision", t.policy_revision);
}

struct RoleCreated {
  static constexpr std::string_view kName = "role_created";
  Id role = 0;
  Id policy_revision = 0;
  bool operator==(const RoleCreated&) const = default;
};
template <typename V> void fields(V& v, RoleCreated& t) { v("role", t.role)("policy_revision", t.policy_revision); }

struct Granted {
  static constexpr std::string_view kName = "granted";
  Id grant = 0;
  Id policy_revision = 0;
  bool operator==(const Granted&) const = default;
};
template <typename V> void fields(V& v, Granted& t) { v("grant", t.grant)("policy_revision", t.policy_revision); }

/// bind, unbind, revoke_grant and revoke_principal: the graph changed.
struct PolicyChanged {
  static constexpr std::string_view kName = "policy_changed";
  Id policy_revision = 0;
  bool operator==(const PolicyChanged&) const = default;
};
template <typename V> void fields(V& v, PolicyChanged& t) { v("policy_revision", t.policy_revision); }

struct GrantReplaced {
  static constexpr std::string_view kName = "grant_replaced";
  PrincipalId principal{};
  Id role = 0;          // its new private role
  Id retired_role = 0;  // the previous one, retired with its grants
  Id grant = 0;         // the grant made from the command's fields
  Id policy_revision = 0;
  bool operator==(const GrantReplaced&) const = default;
};
template <typename V> void fields(V& v, GrantReplaced& t) {
  v("principal", t.principal)("role", t.role)("retired_role", t.retired_role)("grant", t.grant)(
      "policy_revision", t.policy_revision);
}

using Outcome = std::variant<PrincipalCreated, RoleCreated, Granted, PolicyChanged, ResourceCreated, ResourceRetired, Associated,
                             ProcessChanged, Sent, TurnPublished, Delivered,
                             // workers that fail over, processes that end (workers.h)
                             WorkerRotated, GrantReplaced, ProcessTerminated,
                             // effects to closure (effects.h)
                             EffectChanged,
                             // maintenance (maintenance.h)
                             OutputCancelled, RetirementRecorded,
                             // checkpoints and the history floor (history.h)
                             Checkpointed, FloorAdvanced,
                             // payloads (payloads.h)
                             PayloadChanged,
                             // runtime binding (runtime.h)
                             RuntimeChanged,
                             // collection (collection.h)
                             Collected,
                             // blocks (blocks.h)
                             BlockChanged,
                             // storage maintenance (storage.h)
                             StorageFenced, StorageCompacted>;

struct Receipt {
  static constexpr std::string_view kName = "Receipt";
  Version version;
  Definition definition;
  Text<1, 64> realm;
  Position position{};  // the decision's authority position, >= 1
  PrincipalId principal{};
  Id sequence = 0;
  Digest request_digest{};  // the signed digest of the request decided
  TrustedMs accepted_at_ms{};   // trusted time recorded in the decision
  Outcome outcome;
  bool operator==(const Receipt&) const = default;
};
template <typename V> void fields(V& v, Receipt& t) {
  v("version", t.version)("definition", t.definition)("realm", t.realm)("position", t.position)(
      "principal", t.principal)("sequence", t.sequence)("request_digest", t.request_digest)(
      "accepted_at_ms", t.accepted_at_ms)("outcome", t.outcome);
}

// ---- query responses ------------------------------------------------------------

/// The caller's own current identity; no key, no resource grant.
struct Identity {
  static constexpr std::string_view kName = "identity";
  PrincipalId principal{};
  Permissions permissions;  // coarse: realm-scope grants of its bound roles
  std::optional<Pid> pid_scope;
  Id policy_revision = 0;
  Id sequence = 0;  // the caller's last accepted sequence (0: none yet)
  bool operator==(const Identity&) const = default;
};
template <typename V> void fields(V& v, Identity& t) {
  v("principal", t.principal)("permissions", t.permissions)("pid_scope", t.pid_scope)(
      "policy_revision", t.policy_revision)("sequence", t.sequence);
}

using CapabilityName = Text<1, 32>;

/// The default of the resources one process may own the lifetime of (decision 156).
inline constexpr Id kLifetimeOwnerBudget = 64;

struct Capabilities {
  static constexpr std::string_view kName = "capabilities";
  List<CapabilityName, 32> supported;
  std::optional<Id> admission_ceiling;
  Id control_reserve = 0;
  bool allow_history_trim = false;
  bool history_reclamation = false;  // whether this build can reclaim root history at all
  Id max_request_bytes = kMaxRequestBytes;
  Id page_records = kPageRecords;
  // The node's configured dependency budgets (decision 156): the required
  // names one process may declare (1..kRequiredNames), and the resources one
  // process may own the lifetime of, which bound the quiescence walk.
  Id required_resource_budget = kRequiredNames;
  Id lifetime_owner_budget = kLifetimeOwnerBudget;
  // Leased snapshots (decisions 70-78): the longest lease, the open snapshots
  // one principal and the whole node may hold, snapshot_read's range budget.
  Millis snapshot_lease_max_ms = kSnapshotLeaseMaxMs;
  Id snapshots_per_principal = 0;
  Id snapshots_per_node = 0;
  Id snapshot_range_records = kSnapshotRangeRecords;
  // Payloads (decisions 84-92): the largest payload, and the route's chunk.
  Id max_payload_bytes = kMaxPayloadBytes;
  Id payload_chunk_bytes = kPayloadChunkBytes;
  bool operator==(const Capabilities&) const = default;
};
template <typename V> void fields(V& v, Capabilities& t) {
  v("supported", t.supported)("admission_ceiling", t.admission_ceiling)("control_reserve", t.control_reserve)(
      "allow_history_trim", t.allow_history_trim)("history_reclamation", t.history_reclamation)(
      "max_request_bytes", t.max_request_bytes)("page_records", t.page_records)(
      "required_resource_budget", t.required_resource_budget)("lifetime_owner_budget", t.lifetime_owner_budget)(
      "snapshot_lease_max_ms", t.snapshot_lease_max_ms)("snapshots_per_principal", t.snapshots_per_principal)(
      "snapshots_per_node", t.snapshots_per_node)("snapshot_range_records", t.snapshot_range_records)(
      "max_payload_bytes", t.max_payload_bytes)("payload_chunk_bytes", t.payload_chunk_bytes);
}

struct Decision {
  static constexpr std::string_view kName = "decision";
  PrincipalId principal{};
  bool allowed = false;
  Id policy_revision = 0;
  bool operator==(const Decision&) const = default;
};
template <typename V> void fields(V& v, Decision& t) {
  v("principal", t.principal)("allowed", t.allowed)("policy_revision", t.policy_revision);
}

using QueryResult = std::variant<Identity, Capabilities, Decision, ResourcePage, AssociationPage, EntryPage,
                                 EntryBatch, LookupResult, ResourceAccess, ProcessInfo, Block, ProcessPage,
                                 // effects to closure (effects.h)
                                 EffectInfo, EffectPage,
                                 // maintenance (maintenance.h)
                                 RoutePage, EndedPage,
                                 // checkpoints and the history floor (history.h)
                                 CheckpointStatus,
                                 // leased snapshots (snapshots.h)
                                 SnapshotOpened, SnapshotPage, SnapshotClosed, SnapshotRange,
                                 // payloads (payloads.h)
                                 PayloadInfo,
                                 // runtime binding (runtime.h)
                                 RuntimeInfo,
                                 // blocks (blocks.h)
                                 BlockInfo,
                                 // segmented results (segments.h)
                                 Segment,
                                 // the maintenance process's collection listing (collection.h)
                                 CollectablePage,
                                 // storage maintenance (storage.h)
                                 StorageStatus, CompactionNeeds>;
static_assert(std::variant_size_v<QueryResult> == std::variant_size_v<QueryOp>);

struct Response {
  static constexpr std::string_view kName = "Response";
  Version version;
  Definition definition;
  Text<1, 64> realm;
  Position position{};  // the authority position the result was read at
  QueryResult result;
  bool operator==(const Response&) const = default;
};
template <typename V> void fields(V& v, Response& t) {
  v("version", t.version)("definition", t.definition)("realm", t.realm)("position", t.position)("result", t.result);
}

// ---- rejections -------------------------------------------------------------------

struct Rejection {
  static constexpr std::string_view kName = "Rejection";
  Version version;
  Definition definition;
  Text<1, 64> realm;
  RejectionCode code = RejectionCode::kInvalidRequest;  // always code_of(reason)
  Reason reason = Reason::kSyntax;  // the rule broken, from the catalogue (reasons.h)
  Text<0, 512> message;             // for people; valid UTF-8
  bool operator==(const Rejection&) const = default;
};
template <typename V> void fields(V& v, Rejection& t) {
  v("version", t.version)("definition", t.definition)("realm", t.realm)("code", t.code)("reason", t.reason)(
      "message", t.message);
}

// ---- genesis ----------------------------------------------------------------------

struct Genesis {
  static constexpr std::string_view kName = "Genesis";
  Version version;
  Definition definition;
  Text<1, 64> realm;
  PrincipalId root_principal{1};
  PublicKey root_public_key{};
  std::optional<Id> admission_ceiling;  // journal positions; null: unlimited
  Id control_reserve = 0;               // positions beyond the ceiling for control mutations
  bool allow_history_trim = false;
  bool operator==(const Genesis&) const = default;
};
template <typename V> void fields(V& v, Genesis& t) {
  v("version", t.version)("definition", t.definition)("realm", t.realm)("root_principal", t.root_principal)(
      "root_public_key", t.root_public_key)("admission_ceiling", t.admission_ceiling)(
      "control_reserve", t.control_reserve)("allow_history_trim", t.allow_history_trim);
}

}  // namespace cowboy::transit
