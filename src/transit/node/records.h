// What transitd persists, as field-listed records in the contract's codec (one
// codec for the wire and the disk). Internal to src/transit/node.
#pragma once

#include "transit/contract/types.h"

namespace cowboy::transit::node {

struct PrincipalRecord {
  static constexpr std::string_view kName = "PrincipalRecord";
  PrincipalId principal{};
  PublicKey public_key{};
  Id role = 0;  // its private role
  std::optional<Pid> pid_scope;
  Id sequence = 0;  // last accepted signed sequence
  bool revoked = false;
  Id credential_epoch = 1;
  bool operator==(const PrincipalRecord&) const = default;
};
template <typename V> void fields(V& v, PrincipalRecord& t) {
  v("principal", t.principal)("public_key", t.public_key)("role", t.role)("pid_scope", t.pid_scope)(
      "sequence", t.sequence)("revoked", t.revoked)("credential_epoch", t.credential_epoch);
}

struct RoleRecord {
  static constexpr std::string_view kName = "RoleRecord";
  Id role = 0;
  Text<0, 32> name;                // empty for a private role
  std::optional<PrincipalId> private_of;    // the principal whose private role this is
  bool retired = false;            // a private role replaced by replace_grant: unbound, no grants, forever
  bool operator==(const RoleRecord&) const = default;
};
template <typename V> void fields(V& v, RoleRecord& t) {
  v("role", t.role)("name", t.name)("private_of", t.private_of)("retired", t.retired);
}

struct GrantRecord {
  static constexpr std::string_view kName = "GrantRecord";
  Id grant = 0;
  Id role = 0;
  Scope scope;
  Permissions permissions;
  Id policy_revision = 0;  // the revision that made it
  bool operator==(const GrantRecord&) const = default;
};
template <typename V> void fields(V& v, GrantRecord& t) {
  v("grant", t.grant)("role", t.role)("scope", t.scope)("permissions", t.permissions)(
      "policy_revision", t.policy_revision);
}

/// The authority head: published with every decision, read first on open.
struct Head {
  static constexpr std::string_view kName = "Head";
  Version version;
  Definition definition;
  Position position{};
  Id policy_revision = 1;
  Position policy_position{};   // where the policy revision last changed (cuts, decision 6)
  Position resources_position{};  // where the resource catalog last changed
  Position processes_position{};  // where any process's recorded metadata last changed
  Position effects_position{};  // where any effect record last changed
  Id next_role = 1;
  Id next_grant = 1;
  Id next_resource = 1;
  Id next_association = 1;  // association revisions
  Id next_view = 1;
  Id next_output = 1;
  Id next_effect = 1;
  Id next_payload = 1;
  TrustedMs last_time_ms{};
  Id storage_epoch = 0;
  Id compaction_cursor = 0;
  Position floor{};       // journal entries below it are trimmed; its own entry, a checkpoint's, stays (0: none)
  Position checkpoint{};  // the latest checkpoint's position (0: none)
  Digest checkpoint_roots{};  // ... and the roots its receipt carries
  // Storage maintenance (decisions 140-149): storage_epoch and compaction_cursor above, and
  Digest location_definition{};  // the one current definition of locations; another is refused as it opens
  Position fenced_at{};              // the position of the fence that made storage_epoch (0: none)
  TrustedMs fenced_at_ms{};      // ... and its trusted time
  Id grace_below = 0;            // every read lease of an epoch below this has ended (0: none recorded)
  bool operator==(const Head&) const = default;
};
template <typename V> void fields(V& v, Head& t) {
  v("version", t.version)("definition", t.definition)("position", t.position)("policy_revision", t.policy_revision)(
      "policy_position", t.policy_position)("resources_position", t.resources_position)(
      "processes_position", t.processes_position)("effects_position", t.effects_position)("next_role", t.next_role)(
      "next_grant", t.next_grant)("next_resource", t.next_resource)("next_association", t.next_association)(
      "next_view", t.next_view)("next_output", t.next_output)("next_effect", t.next_effect)(
      "next_payload", t.next_payload)("last_time_ms", t.last_time_ms)("storage_epoch", t.storage_epoch)("compaction_cursor", t.compaction_cursor)(
      "floor", t.floor)("checkpoint", t.checkpoint)("checkpoint_roots", t.checkpoint_roots)(
      "location_definition", t.location_definition)("fenced_at", t.fenced_at)("fenced_at_ms", t.fenced_at_ms)(
      "grace_below", t.grace_below);
}

struct ResourceRecord {
  static constexpr std::string_view kName = "ResourceRecord";
  ResourceInfo info;
  Position created_at{};  // position
  Position changed_at{};  // position of its last revision
  std::optional<Position> collected_at = std::nullopt;  // a tombstone since (decision 114): its name stays reserved
  // The last process other than its lifetime owner whose turn changed its
  // entries or blocks (decision 190): a turn by another one writes that
  // process's written rows, so a turn by the same one reads nothing for them.
  std::optional<Pid> writer = std::nullopt;
  bool operator==(const ResourceRecord&) const = default;
};
template <typename V> void fields(V& v, ResourceRecord& t) {
  v("info", t.info)("created_at", t.created_at)("changed_at", t.changed_at)("collected_at", t.collected_at)(
      "writer", t.writer);
}

struct ProcessRecord {
  static constexpr std::string_view kName = "ProcessRecord";
  Pid pid{};
  Id generation = 0;
  bool initialized = false;
  std::optional<PrincipalId> owner;
  std::optional<Id> failure;
  Text<0, 256> failure_reason;
  std::optional<TrustedMs> resume_by_ms;  // set while suspended
  bool retired = false;
  List<Name, kRequiredNames> required;
  Id head = 1;
  Id tail = 0;
  Id cancelled = 0;
  Position associations_position{};  // where its association catalog last changed
  std::optional<Pid> parent = std::nullopt;  // the process that spawned it
  bool allow_collection = false;            // fixed at admission (create or spawn)
  std::optional<Ending> ending;  // how a recorded retirement came about; null: by a command (decision 52)
  Id inputs_removed = 0;                  // collection removed its mailbox inputs 1..this (decision 115)
  std::optional<Position> collected_at;       // a permanent identity tombstone since (decision 115)
  bool operator==(const ProcessRecord&) const = default;
};
template <typename V> void fields(V& v, ProcessRecord& t) {
  v("pid", t.pid)("generation", t.generation)("initialized", t.initialized)("owner", t.owner)("failure", t.failure)(
      "failure_reason", t.failure_reason)("resume_by_ms", t.resume_by_ms)("retired", t.retired)(
      "required", t.required)("head", t.head)("tail", t.tail)("cancelled", t.cancelled)(
      "associations_position", t.associations_position)("parent", t.parent)("allow_collection", t.allow_collection)(
      "ending", t.ending)("inputs_removed", t.inputs_removed)("collected_at", t.collected_at);
}

/// A retained committed view: `resource` as it stood at `revision`. Lives as long as its process.
struct ViewRecord {
  static constexpr std::string_view kName = "ViewRecord";
  Id view = 0;
  Pid pid{};
  ResourceId resource{};
  Revision revision{};
  bool operator==(const ViewRecord&) const = default;
};
template <typename V> void fields(V& v, ViewRecord& t) {
  v("view", t.view)("pid", t.pid)("resource", t.resource)("revision", t.revision);
}

struct OutputRecord {
  static constexpr std::string_view kName = "OutputRecord";
  Id output = 0;
  Pid source{};
  Pid destination{};
  InputValue value;
  OutputState state = OutputState::kPending;
  std::optional<Id> input;  // where it was admitted
  Position published_at{};  // the position of the turn that published it
  TrustedMs published_at_ms{};  // ... and its trusted time (the maintenance process's lag, decision 55)
  bool operator==(const OutputRecord&) const = default;
};
template <typename V> void fields(V& v, OutputRecord& t) {
  v("output", t.output)("source", t.source)("destination", t.destination)("value", t.value)("state", t.state)(
      "input", t.input)("published_at", t.published_at)("published_at_ms", t.published_at_ms);
}

/// An effect from its captured intent to its closure, as the effect read
/// shows it (decisions 43-49). Each step's fields are written once, by the
/// decision that takes it, and never again.
struct EffectRecord {
  static constexpr std::string_view kName = "EffectRecord";
  EffectInfo info;
  bool operator==(const EffectRecord&) const = default;
};
template <typename V> void fields(V& v, EffectRecord& t) { v("info", t.info); }

/// A payload's metadata (decisions 84-86); its bytes are the payload store's, never the journal's.
struct PayloadRecord {
  static constexpr std::string_view kName = "PayloadRecord";
  PayloadInfo info;
  bool operator==(const PayloadRecord&) const = default;
};
template <typename V> void fields(V& v, PayloadRecord& t) { v("info", t.info); }

/// A PID's runtime binding (decisions 120-129), written by the four runtime commands.
struct RuntimeRecord {
  static constexpr std::string_view kName = "RuntimeRecord";
  RuntimeInfo info;
  bool operator==(const RuntimeRecord&) const = default;
};
template <typename V> void fields(V& v, RuntimeRecord& t) { v("info", t.info); }

/// One accepted decision: the signed bytes decided and the receipt answered.
/// Stored in two tables (layout.h): the request under its position, the
/// receipt under (principal, sequence), so that trimming the first keeps the
/// second for exact retries (decision 67).
struct JournalEntry {
  static constexpr std::string_view kName = "JournalEntry";
  SignedRequest request;
  Receipt receipt;
  bool operator==(const JournalEntry&) const = default;
};
template <typename V> void fields(V& v, JournalEntry& t) { v("request", t.request)("receipt", t.receipt); }

/// A journal entry read back from its two tables: the canonical request text
/// stored under j/ and the receipt text under s/ (history.cc). None when either
/// does not decode or they do not belong together (the receipt names another
/// principal, sequence or request digest).
std::optional<JournalEntry> stored_entry(std::string_view request, std::string_view receipt);

}  // namespace cowboy::transit::node
