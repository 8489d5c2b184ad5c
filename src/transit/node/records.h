// What transitd persists, as field-listed records in the contract's codec (one
// codec for the wire and the disk). Internal to src/transit/node.
#pragma once

#include "transit/contract/types.h"

namespace cowboy::transit::node {

struct PrincipalRecord {
  static constexpr std::string_view kName = "PrincipalRecord";
  Id principal = 0;
  PublicKey public_key{};
  Id role = 0;  // its private role
  std::optional<Id> pid_scope;
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
  std::optional<Id> private_of;    // the principal whose private role this is
  bool operator==(const RoleRecord&) const = default;
};
template <typename V> void fields(V& v, RoleRecord& t) { v("role", t.role)("name", t.name)("private_of", t.private_of); }

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
  Id position = 0;
  Id policy_revision = 1;
  Id next_role = 1;
  Id next_grant = 1;
  Id last_time_ms = 0;
  Id storage_epoch = 0;
  Id compaction_cursor = 0;
  bool operator==(const Head&) const = default;
};
template <typename V> void fields(V& v, Head& t) {
  v("version", t.version)("definition", t.definition)("position", t.position)("policy_revision", t.policy_revision)(
      "next_role", t.next_role)("next_grant", t.next_grant)("last_time_ms", t.last_time_ms)(
      "storage_epoch", t.storage_epoch)("compaction_cursor", t.compaction_cursor);
}

/// One accepted decision: the signed bytes decided and the receipt answered.
struct JournalEntry {
  static constexpr std::string_view kName = "JournalEntry";
  SignedRequest request;
  Receipt receipt;
  bool operator==(const JournalEntry&) const = default;
};
template <typename V> void fields(V& v, JournalEntry& t) { v("request", t.request)("receipt", t.receipt); }

}  // namespace cowboy::transit::node
