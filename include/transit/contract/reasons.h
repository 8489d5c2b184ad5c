// Every reason a Transit rejection can give, in one catalogue: its wire name,
// its RejectionCode (and so its HTTP status) and what it means. A refusal
// names a Reason, never a string, and takes its code from here, so no site
// can spell a new reason or pair a reason with another code; the Rejection's
// `reason` is this enum on the wire, so the strict decoder refuses any name
// that is not catalogued (docs/transit.md, decision 12).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "transit/contract/values.h"

namespace cowboy::transit {

/// One code per rejection class; http_status() gives each its HTTP status.
enum class RejectionCode : std::uint8_t {
  kInvalidRequest,    // 400: malformed, non-canonical, foreign definition or realm, unknown version
  kTooLarge,          // 413: over a size bound
  kDenied,            // 403: unknown principal, bad signature, missing permission, revoked
  kConflict,          // 409: sequence taken by another body, sequence gap, stale revision, taken subject
  kInvalidProposal,   // 422: well-formed but impossible (unknown role or grant, revoking the root)
  kAdmissionClosed,   // 429: the journal admission ceiling is reached
  kControlCapacity,   // 429: the control reserve is used up too
  kServiceUncertain,  // 503: the outcome is unknown (storage, overload, deadline); resubmit the same bytes
  kClockUncertain,    // 503: trusted time regressed
  kStaleCut,          // 409: a continuation whose cut a later change expired (decision 6)
};
template <> struct EnumTraits<RejectionCode> {
  static constexpr std::array<std::string_view, 10> kNames = {
      "InvalidRequest",  "TooLarge",        "Denied",           "Conflict",       "InvalidProposal",
      "AdmissionClosed", "ControlCapacity", "ServiceUncertain", "ClockUncertain", "StaleCut"};
};

/// The HTTP status of a rejection class (the service contract owns the framing).
constexpr int http_status(RejectionCode code) {
  switch (code) {
    case RejectionCode::kInvalidRequest: return 400;
    case RejectionCode::kTooLarge: return 413;
    case RejectionCode::kDenied: return 403;
    case RejectionCode::kConflict: return 409;
    case RejectionCode::kInvalidProposal: return 422;
    case RejectionCode::kAdmissionClosed: return 429;
    case RejectionCode::kControlCapacity: return 429;
    case RejectionCode::kServiceUncertain: return 503;
    case RejectionCode::kClockUncertain: return 503;
    case RejectionCode::kStaleCut: return 409;
  }
  return 500;
}

// The catalogue: X(enumerator, wire name, code, meaning). Grouped by where the
// rule is checked; the order is the enum's and the schema's.
#define TRANSIT_REJECTION_REASONS(X)                                                                                  \
  /* the strict decoder (contract/json.cc, codec.h, envelope.cc) */                                                  \
  X(kSyntax, "syntax", kInvalidRequest, "not exactly one JSON value, or not valid UTF-8")                            \
  X(kTooDeep, "too_deep", kInvalidRequest, "JSON nested deeper than 16 levels")                                      \
  X(kDuplicateKey, "duplicate_key", kInvalidRequest, "an object names a key twice")                                  \
  X(kNotInteger, "not_integer", kInvalidRequest, "a number with a fraction or an exponent")                          \
  X(kNegativeInteger, "negative_integer", kInvalidRequest, "a negative number")                                      \
  X(kIntegerTooLarge, "integer_too_large", kInvalidRequest, "an integer above 2^53 - 1")                             \
  X(kUnknownVersion, "unknown_version", kInvalidRequest, "a version other than 1")                                   \
  X(kMissingDefinition, "missing_definition", kInvalidRequest, "no definition field")                                \
  X(kForeignDefinition, "foreign_definition", kInvalidRequest, "a definition other than this build's, in any spelling") \
  X(kMissingField, "missing_field", kInvalidRequest, "a declared field is absent")                                   \
  X(kFieldOrder, "field_order", kInvalidRequest, "fields out of declaration order")                                  \
  X(kUnknownField, "unknown_field", kInvalidRequest, "a field the type does not declare")                            \
  X(kUnknownVariant, "unknown_variant", kInvalidRequest, "a union key or enum name the contract does not have")      \
  X(kWrongType, "wrong_type", kInvalidRequest, "a JSON value of another type than the field's")                      \
  X(kBadLength, "bad_length", kInvalidRequest, "text, bytes or slots outside their length bounds")                   \
  X(kBadHex, "bad_hex", kInvalidRequest, "opaque bytes not spelled as lowercase hex pairs")                          \
  X(kUnknownPermission, "unknown_permission", kInvalidRequest, "a permission mask with an undefined bit")             \
  X(kTooManyItems, "too_many_items", kInvalidRequest, "a list longer than its bound")                                \
  X(kNonCanonical, "non_canonical", kInvalidRequest, "a value spelled other than its one canonical JSON")            \
  X(kTooLarge, "too_large", kTooLarge, "a body or canonical request over its size bound")                            \
  X(kZeroSequence, "zero_sequence", kInvalidRequest, "sequence 0 on a command")                                      \
  X(kUnexpectedBlocks, "unexpected_blocks", kInvalidRequest, "block bodies after a command without block descriptors") \
  X(kBlockMismatch, "block_mismatch", kInvalidRequest, "a block body differs from its descriptor's length or SHA-256") \
  /* rules beyond the types, checked before signing (contract/rules.cc) */                                           \
  X(kDuplicateMutationKey, "duplicate_mutation_key", kInvalidRequest, "a turn mutates one key twice")                \
  X(kDuplicateBlock, "duplicate_block", kInvalidRequest, "a turn names one block twice")                             \
  X(kBlockTooLarge, "block_too_large", kInvalidRequest, "a block of 0 bytes or over 64 KiB")                         \
  X(kBlocksTooLarge, "blocks_too_large", kInvalidRequest, "a turn's blocks over 128 KiB in all")                     \
  X(kDuplicateView, "duplicate_view", kInvalidRequest, "a turn views one resource twice")                            \
  X(kDuplicateName, "duplicate_name", kInvalidRequest, "a process requires one association name twice")             \
  X(kKeysNotAPrefix, "keys_not_a_prefix", kInvalidRequest, "read_entries keys do not fill a prefix of the slots")    \
  X(kDuplicateKeySlot, "duplicate_key_slot", kInvalidRequest, "read_entries asks for one key twice")                 \
  X(kNoKeys, "no_keys", kInvalidRequest, "read_entries asks for no key")                                             \
  X(kAmbiguousKeyCursor, "ambiguous_key_cursor", kInvalidRequest, "an entry listing with both a key and a cursor")   \
  /* the HTTP boundary (node/http_routes.cc) */                                                                      \
  X(kUnknownRoute, "unknown_route", kInvalidRequest, "a path other than /v1/command and /v1/query")                  \
  X(kMethodNotAllowed, "method_not_allowed", kInvalidRequest, "a method other than POST")                            \
  X(kDuplicateControlHint, "duplicate_control_hint", kInvalidRequest, "X-Transit-Control given twice")               \
  X(kUnknownControlHint, "unknown_control_hint", kInvalidRequest, "an X-Transit-Control value other than snapshot")  \
  X(kControlHintNotAllowed, "control_hint_not_allowed", kInvalidRequest, "X-Transit-Control on a request that may not carry it") \
  X(kForeignRealm, "foreign_realm", kInvalidRequest, "a realm this node does not serve")                             \
  X(kUnknownPrincipal, "unknown_principal", kDenied, "the signer is no principal of this realm")                     \
  X(kRevokedPrincipal, "revoked_principal", kDenied, "the signer is revoked")                                        \
  X(kBadSignature, "bad_signature", kDenied, "the signature does not verify with the signer's current key")          \
  /* the sequencer and admission (node/sequencer.cc, authority.cc) */                                                \
  X(kSequenceGap, "sequence_gap", kConflict, "a sequence beyond the signer's last accepted one plus 1")              \
  X(kSequenceReused, "sequence_reused", kConflict, "an accepted sequence signed again over another body")            \
  X(kAdmissionCeiling, "admission_ceiling", kAdmissionClosed, "the journal admission ceiling is reached")            \
  X(kControlReserve, "control_reserve", kControlCapacity, "the control reserve beyond the ceiling is used up")       \
  X(kClockRegressed, "clock_regressed", kClockUncertain, "trusted time is behind the last decision")                 \
  X(kOverloaded, "overloaded", kServiceUncertain, "the decision queue is full; resubmit the same bytes")             \
  X(kStopping, "stopping", kServiceUncertain, "the node is shutting down; resubmit the same bytes")                  \
  X(kStorageFailed, "storage_failed", kServiceUncertain, "a synced write failed; the node is failed closed until a restart") \
  X(kReceiptUnreadable, "receipt_unreadable", kServiceUncertain, "an accepted request's receipt could not be read back") \
  X(kAuthorityMoved, "authority_moved", kServiceUncertain, "the authority changed while a read was answered")        \
  /* authorization (node/authority.cc) */                                                                             \
  X(kNotPermitted, "not_permitted", kDenied, "the caller's current rights, within its PID scope, do not allow this") \
  X(kStaleRevision, "stale_revision", kConflict, "expected_revision is not the current policy revision")            \
  X(kZeroIdentity, "zero_identity", kInvalidProposal, "principal or PID 0")                                          \
  X(kSubjectTaken, "subject_taken", kConflict, "a principal id or PID that was allocated before")                    \
  X(kRoleNameTaken, "role_name_taken", kConflict, "a role of that name exists")                                      \
  X(kUnknownSubject, "unknown_subject", kInvalidProposal, "the principal the command names is unknown or revoked")    \
  X(kUnknownRole, "unknown_role", kInvalidProposal, "no such role (or, to bind, no such named role)")                \
  X(kAlreadyBound, "already_bound", kInvalidProposal, "the principal holds that role")                               \
  X(kPrivateRole, "private_role", kInvalidProposal, "a principal's private role cannot be unbound")                  \
  X(kNotBound, "not_bound", kInvalidProposal, "the principal does not hold that role")                               \
  X(kEmptyGrant, "empty_grant", kInvalidProposal, "a grant of no permission bits")                                   \
  X(kUnknownGrant, "unknown_grant", kInvalidProposal, "no such grant")                                               \
  X(kRootGrant, "root_grant", kInvalidProposal, "the root's genesis grant cannot be revoked")                        \
  X(kRootPrincipal, "root_principal", kInvalidProposal, "the root principal cannot be revoked")                      \
  /* resources and reads (node/resources.cc) */                                                                       \
  X(kBadCut, "bad_cut", kInvalidRequest, "a cursor whose cut is no position of this node")                           \
  X(kPolicyChanged, "policy_changed", kStaleCut, "the policy changed after the cut; list again")                     \
  X(kCatalogChanged, "catalog_changed", kStaleCut, "the listed catalog changed after the cut; list again")           \
  X(kUnknownResource, "unknown_resource", kInvalidProposal, "no such (live) resource")                               \
  X(kLifetimeEnded, "lifetime_ended", kDenied, "the resource is retired or its lifetime owner is")                   \
  X(kResourceRevisionChanged, "resource_revision_changed", kConflict, "the resource is no longer at the given revision") \
  X(kUnknownView, "unknown_view", kInvalidProposal, "no such view (of this resource)")                               \
  X(kViewRevisionMismatch, "view_revision_mismatch", kInvalidProposal, "the view holds another revision")            \
  X(kViewExpired, "view_expired", kDenied, "the view's process is retired")                                          \
  X(kNotExecutor, "not_executor", kDenied, "views are read only by their process's current executor")                \
  X(kNameTaken, "name_taken", kConflict, "resource names are reserved forever")                                      \
  X(kUnknownOwner, "unknown_owner", kInvalidProposal, "the lifetime owner is no live process")                       \
  X(kAlreadyRetired, "already_retired", kInvalidProposal, "the resource is retired")                                 \
  X(kAssociationExists, "association_exists", kConflict, "the process has an association of that name")             \
  X(kUnknownBlock, "unknown_block", kInvalidProposal, "no such block at the basis read")                             \
  /* processes (node/processes.cc) */                                                                                 \
  X(kUnknownProcess, "unknown_process", kInvalidProposal, "no such process")                                         \
  X(kRetired, "retired", kInvalidProposal, "the process is permanently retired")                                     \
  X(kStaleGeneration, "stale_generation", kConflict, "the process is at another generation")                         \
  X(kMissingDependency, "missing_dependency", kInvalidProposal, "a required association is missing or its lifetime ended") \
  X(kNotQuiescent, "not_quiescent", kConflict, "a process requiring the resource, or a borrower of it, is active") \
  X(kAlreadyInitialized, "already_initialized", kInvalidProposal, "the process is initialized")                      \
  X(kNotIdle, "not_idle", kInvalidProposal, "only an idle process can be owned")                                     \
  X(kUninitialized, "uninitialized", kInvalidProposal, "the process is not initialized")                             \
  X(kNotOwner, "not_owner", kInvalidProposal, "the caller is not the process's current owner")                       \
  X(kNotHead, "not_head", kInvalidProposal, "a turn or failure names an input other than the mailbox head")          \
  X(kNoResource, "no_resource", kInvalidProposal, "mutations or blocks without the writable resource")               \
  X(kNotAssociated, "not_associated", kInvalidProposal, "a turn writes or views only associated resources")          \
  X(kBlockExists, "block_exists", kInvalidProposal, "blocks are immutable once written")                             \
  X(kUnknownDestination, "unknown_destination", kInvalidProposal, "an output to no process")                         \
  X(kUnknownExecutor, "unknown_executor", kInvalidProposal, "an effect intent names no principal")                   \
  X(kExecutorNotPermitted, "executor_not_permitted", kInvalidProposal, "an effect's executor holds no effect permission at the PID") \
  X(kDeadlineRequired, "deadline_required", kInvalidProposal, "an effect of a finite caller needs a reconciliation deadline") \
  X(kNotBlocked, "not_blocked", kInvalidProposal, "retry of a process that is not blocked")                          \
  X(kFailureMismatch, "failure_mismatch", kInvalidProposal, "retry names another input than the recorded failure")   \
  X(kSuspended, "suspended", kInvalidProposal, "the process is suspended")                                           \
  X(kDeadlinePassed, "deadline_passed", kInvalidProposal, "a deadline at or before trusted time now")                \
  X(kNotSuspended, "not_suspended", kInvalidProposal, "resume of a process that is not suspended")                   \
  X(kUnknownOutput, "unknown_output", kInvalidProposal, "no such output")                                            \
  X(kResolved, "resolved", kInvalidProposal, "the output is delivered or disposed of")                               \
  X(kSourceTerminated, "source_terminated", kInvalidProposal, "the output's source is retired: termination fenced it") \
  X(kRouteOrder, "route_order", kConflict, "an older output of the same route is unresolved")                      \
  /* workers that fail over, processes that end (node/workers.cc) */                                                  \
  X(kUnchangedKey, "unchanged_key", kInvalidProposal, "rotate_worker to the worker's current key")                   \
  X(kRevokedWorker, "revoked_worker", kInvalidProposal, "rotate_worker of a revoked principal")                      \
  X(kForeignScope, "foreign_scope", kInvalidProposal, "the worker is not scoped to the process's PID")               \
  X(kWorkerKeyChanged, "worker_key_changed", kConflict, "the worker's current key is not the expected one")          \
  X(kWorkerMaskChanged, "worker_mask_changed", kConflict, "the worker's permissions at the PID are not the expected mask") \
  X(kWorkerNotExecutor, "worker_not_executor", kInvalidProposal, "the worker holds no inspect and execute at the PID") \
  X(kBlocked, "blocked", kInvalidProposal, "the process is blocked on a failed input")                               \
  X(kRetiredRole, "retired_role", kInvalidProposal, "the role is a replaced principal's retired private role")       \
  /* effects to closure (contract/rules.cc, node/effects.cc) */                                                       \
  X(kBadObservationBudget, "bad_observation_budget", kInvalidRequest, "an effect intent's observation budget outside 1..16") \
  X(kUnknownEffect, "unknown_effect", kInvalidProposal, "no such effect")                                            \
  X(kNotEffectExecutor, "not_effect_executor", kDenied, "only the effect's executor attempts or observes it")          \
  X(kCallerTerminated, "caller_terminated", kInvalidProposal, "the effect's caller is retired: termination fenced its unattempted effect") \
  X(kAlreadyAttempted, "already_attempted", kInvalidProposal, "the effect was attempted: once only, and it cannot be cancelled") \
  X(kNotAttempted, "not_attempted", kInvalidProposal, "the effect has no attempt to observe or abandon")             \
  X(kEffectClosed, "effect_closed", kInvalidProposal, "the effect is closed: it takes no new result or closure")     \
  X(kNotOrphaned, "not_orphaned", kInvalidProposal, "an administrator abandons only an attempt whose executor lost effect permission") \
  X(kDeadlineNotReached, "deadline_not_reached", kInvalidProposal, "trusted time's lower bound is short of the reconciliation deadline") \
  X(kCallerLive, "caller_live", kInvalidProposal, "cancel_effect needs a terminal (retired) caller")                  \
  X(kInconsistentEffect, "inconsistent_effect", kServiceUncertain, "a stored effect record's phase, observations and closure disagree; it is not used") \
  /* terminal dispositions for the maintenance process (node/maintenance.cc) */                                      \
  X(kSourceNotTerminated, "source_not_terminated", kInvalidProposal, "only an output of a terminated source is cancelled") \
  X(kNotEnded, "not_ended", kInvalidProposal, "the process has neither an expired suspension nor an ended dependency") \
  X(kRetirementRecorded, "retirement_recorded", kInvalidProposal, "the process's retirement is recorded already") \
  /* checkpoints and the history floor (node/history.cc) */                                                          \
  X(kHistoryTrimNotAllowed, "history_trim_not_allowed", kInvalidProposal, "the genesis does not opt in to history trimming (allow_history_trim)") \
  X(kFloorNotAdvancing, "floor_not_advancing", kConflict, "the history floor is already at or above that position") \
  X(kUnknownCheckpoint, "unknown_checkpoint", kInvalidProposal, "no committed checkpoint at that position (none there, or not yet durable)") \
  X(kCheckpointMismatch, "checkpoint_mismatch", kConflict, "the checkpoint's committed entry is incomplete or carries other roots") \
  /* leased snapshots (contract/rules.cc, node/http_routes.cc, node/snapshots.cc) */                                 \
  X(kBadLease, "bad_lease", kInvalidRequest, "a snapshot lease outside 1..60,000 ms")                                \
  X(kBadRangeLimit, "bad_range_limit", kInvalidRequest, "a snapshot_read limit outside 1..32")                       \
  X(kUnknownSnapshot, "unknown_snapshot", kInvalidProposal, "no snapshot of this token was opened by the caller on this node incarnation") \
  X(kSnapshotExpired, "snapshot_expired", kConflict, "the snapshot's lease ran out; open another")                   \
  X(kSnapshotClosed, "snapshot_closed", kInvalidProposal, "the snapshot was closed")                                 \
  X(kSnapshotRestarted, "snapshot_restarted", kConflict, "the token is of an earlier incarnation of this node: a restart ended every snapshot") \
  X(kSnapshotQuota, "snapshot_quota", kAdmissionClosed, "the caller holds as many open snapshots as one principal may") \
  X(kSnapshotCapacity, "snapshot_capacity", kAdmissionClosed, "the node holds as many open snapshots as it may") \
  /* payloads (contract/rules.cc, node/payloads.cc, node/payload_routes.cc) */                                        \
  X(kPayloadTooLarge, "payload_too_large", kInvalidRequest, "a declared payload length over 1 TiB")                  \
  X(kStandalonePayload, "standalone_payload", kInvalidProposal, "a payload of no process: every process lifetime here is finite") \
  X(kUnknownPayload, "unknown_payload", kInvalidProposal, "no such payload")                                         \
  X(kNotPublisher, "not_publisher", kDenied, "only the payload's publisher records its steps and moves its bytes")  \
  X(kPayloadNotDeclared, "payload_not_declared", kInvalidProposal, "the payload is past declared: ready, retired or deleted") \
  X(kPayloadBytesMissing, "payload_bytes_missing", kInvalidProposal, "the store holds no complete synced copy of the declared bytes") \
  X(kDeleteNotAllowed, "delete_not_allowed", kInvalidProposal, "the payload was declared without allow_delete")       \
  X(kProcessNotRetired, "process_not_retired", kInvalidProposal, "a payload is retired only once its process is")   \
  X(kPayloadRetired, "payload_retired", kInvalidProposal, "the payload is retired or deleted")                       \
  X(kPayloadNotRetired, "payload_not_retired", kInvalidProposal, "deletion evidence for a payload that is not retired") \
  X(kPayloadBytesPresent, "payload_bytes_present", kConflict, "the store still holds the payload's bytes (or is writing them)") \
  X(kPayloadNotReady, "payload_not_ready", kInvalidProposal, "a download of a payload that is not ready")            \
  X(kPayloadMismatch, "payload_mismatch", kInvalidRequest, "uploaded bytes differ from the declared length or SHA-256") \
  X(kPayloadBusy, "payload_busy", kConflict, "an upload of the payload is under way")                                \
  X(kMissingQueryHeader, "missing_query_header", kInvalidRequest, "a payload route request without one X-Transit-Query") \
  X(kTransfersFull, "transfers_full", kServiceUncertain, "the payload listener moves as many payloads as it may; try again") \
  /* runtime binding (node/runtime.cc) */                                                                            \
  X(kRuntimeBound, "runtime_bound", kInvalidProposal, "the PID is bound to a runtime placement: it runs through activate, not own or rotate_worker") \
  X(kNoRuntimeBinding, "no_runtime_binding", kInvalidProposal, "the PID has no runtime binding")                                  \
  X(kStaleOperation, "stale_operation", kConflict, "not the binding's current operation, or a new one that does not advance it") \
  X(kStaleObservation, "stale_observation", kConflict, "an older incarnation, or a status its incarnation is already at or past") \
  X(kProviderRunning, "provider_running", kInvalidProposal, "the binding's provider is not observed stopped")      \
  X(kNotReady, "not_ready", kInvalidProposal, "activation of an incarnation not observed ready")                   \
  X(kRevisionNotAdvancing, "revision_not_advancing", kConflict, "an upgrade to a revision at or below the current one") \
  X(kMissingEvidence, "missing_evidence", kInvalidProposal, "ready without bootstrap evidence, or evidence with another status") \
  X(kArtifactMismatch, "artifact_mismatch", kInvalidProposal, "the bootstrap evidence's artifact is not the operation's") \
  X(kConfigurationMismatch, "configuration_mismatch", kInvalidProposal, "the bootstrap evidence's configuration is not the operation's") \
  /* collection (contract/rules.cc, node/collection.cc) */                                                           \
  X(kCollectTarget, "collect_target", kInvalidRequest, "collect names a record exactly when its kind is not process") \
  X(kCollectionNotAllowed, "collection_not_allowed", kInvalidProposal, "the process was admitted without allow_collection") \
  X(kAlreadyCollected, "already_collected", kInvalidProposal, "the resource or process is a tombstone already")    \
  X(kNotOfProcess, "not_of_process", kInvalidProposal, "the record belongs to another process than the one named") \
  X(kOutputPending, "output_pending", kInvalidProposal, "a pending output: it is delivered or cancelled first")    \
  X(kEffectUnresolved, "effect_unresolved", kInvalidProposal, "an effect not closed")                              \
  X(kPayloadNotDeleted, "payload_not_deleted", kInvalidProposal, "a payload without confirmed deletion (payload_deleted)") \
  X(kResourceNotRetired, "resource_not_retired", kInvalidProposal, "a resource is collected only once retired")    \
  X(kViewLive, "view_live", kConflict, "a running process holds a view of the resource")                            \
  X(kVersionRetained, "version_retained", kConflict, "a retired, uncollected process retains a view of the resource") \
  X(kAssociationLive, "association_live", kConflict, "a running process is associated with the resource")          \
  X(kProcessLive, "process_live", kInvalidProposal, "a process is collected only once its permanent retirement is recorded") \
  X(kResourceNotRemoved, "resource_not_removed", kInvalidProposal, "a resource whose lifetime the process owns is not collected yet") \
  /* segmented results (contract/rules.cc) */                                                                          \
  X(kBadSegmentCursor, "bad_segment_cursor", kInvalidRequest, "a segment continuation that no segment can have written (index 0, no key after, more records than index pages hold)") \
  /* dependency budgets (node/processes.cc, resources.cc) and stored records (node/journal.cc) */                 \
  X(kDependencyBudget, "dependency_budget", kInvalidProposal, "more required resources, or more resources owned for their lifetime, than the node's configured budget") \
  X(kStorageCorrupt, "storage_corrupt", kServiceUncertain, "a stored record no longer decodes; the node does not read it as absent") \
  /* blocks (node/blocks.cc) */                                                                                        \
  X(kNotBlockOwner, "not_block_owner", kDenied, "only an administrator (pid_admin) of the block's owning process retires or deletes it") \
  X(kBlockRetired, "block_retired", kInvalidProposal, "the block is retired at the revision read, or retired already") \
  X(kBlockDeleted, "block_deleted", kInvalidProposal, "the block's body is deleted: only its record remains")        \
  X(kBlockNotRetired, "block_not_retired", kInvalidProposal, "only a retired block's body is deleted")               \
  X(kBlockViewed, "block_viewed", kConflict, "a view of a live process can still read the block")                    \
  X(kBlockSourceMismatch, "block_source_mismatch", kConflict, "the block was published at another revision or with another SHA-256") \
  X(kBlockCorrupt, "block_corrupt", kServiceUncertain, "the stored body no longer matches its recorded SHA-256; it is not served") \
  /* storage maintenance (node/storage.cc) */                                                                          \
  X(kStorageEpochChanged, "storage_epoch_changed", kConflict, "the fence names another storage epoch than the stored one") \
  X(kStorageFenced, "storage_fenced", kConflict, "a storage fence came after the prepared candidate's observed basis") \
  X(kStorageBasisAhead, "storage_basis_ahead", kInvalidProposal, "the prepared candidate's basis is past the stored epoch or position") \
  X(kNoEarlierFence, "no_earlier_fence", kInvalidProposal, "read-lease grace is recorded only once a fence has been accepted") \
  X(kReadLeaseGracePending, "read_lease_grace_pending", kConflict, "trusted time is short of the read-lease grace after the current epoch's fence") \
  X(kCompactionCursorChanged, "compaction_cursor_changed", kConflict, "the compaction names another cursor than the stored one") \
  X(kUnknownLeaf, "unknown_leaf", kInvalidProposal, "the leaf names no stored block, entry or record")

enum class Reason : std::uint8_t {
#define TRANSIT_REASON_ENUMERATOR(id, name, code, meaning) id,
  TRANSIT_REJECTION_REASONS(TRANSIT_REASON_ENUMERATOR)
#undef TRANSIT_REASON_ENUMERATOR
};

struct ReasonInfo {
  Reason reason;
  std::string_view name;
  RejectionCode code;
  std::string_view meaning;
};

inline constexpr ReasonInfo kReasons[] = {
#define TRANSIT_REASON_ROW(id, name, code, meaning) {Reason::id, name, RejectionCode::code, meaning},
    TRANSIT_REJECTION_REASONS(TRANSIT_REASON_ROW)
#undef TRANSIT_REASON_ROW
};

constexpr const ReasonInfo& info(Reason reason) { return kReasons[static_cast<std::size_t>(reason)]; }
constexpr RejectionCode code_of(Reason reason) { return info(reason).code; }
constexpr std::string_view name_of(Reason reason) { return info(reason).name; }

template <> struct EnumTraits<Reason> {
  static constexpr auto kNames = [] {
    std::array<std::string_view, std::size(kReasons)> names{};
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = kReasons[i].name;
    return names;
  }();
};

}  // namespace cowboy::transit
