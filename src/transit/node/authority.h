// The realm's authorization state and the rules that change it: principals,
// roles, credentials (principal-role bindings) and grants, the head (position,
// policy revision, trusted time), and the decision for one signed command or
// query. Pure: no storage, no threads; the sequencer owns the one instance and
// the journal persists what each decision touched.
#pragma once

#include <map>
#include <set>

#include "common/result.h"
#include "transit/node/records.h"

namespace cowboy::transit::node {

struct Refusal {
  RejectionCode code;
  std::string reason;
  std::string message;
};

/// What one accepted decision changed, for the journal to write.
struct Touched {
  std::vector<Id> principals, roles, grants_written, grants_removed;
  std::vector<std::pair<Id, Id>> credentials_added, credentials_removed;
};

/// The permission bits `principal` holds at `scope` (none when revoked or unknown).
class Authority {
 public:
  explicit Authority(Genesis genesis);  // the state at position 0
  /// Recovery: the published state read back from the journal.
  Authority(Genesis genesis, Head head, std::map<Id, PrincipalRecord> principals, std::map<Id, RoleRecord> roles,
            std::map<Id, GrantRecord> grants, std::set<std::pair<Id, Id>> credentials);

  /// A fresh command at sequence last + 1, signature already verified: its
  /// receipt (the head advanced, `touched` filled) or why not (nothing changed).
  Result<Receipt, Refusal> decide(const Request& request, const Digest& digest, std::uint64_t now_ms,
                                  Touched& touched);
  /// Refusals that come before the sequence rule: unknown or revoked principal.
  std::optional<Refusal> check_signer(Id principal) const;

  Result<QueryResult, Refusal> answer(const Query& query) const;

  std::uint64_t permissions(Id principal, const Scope& scope) const;

  const Genesis& genesis() const { return genesis_; }
  const Head& head() const { return head_; }
  const std::map<Id, PrincipalRecord>& principals() const { return principals_; }
  const PrincipalRecord* principal(Id id) const;
  const RoleRecord* role(Id id) const;
  const GrantRecord* grant(Id id) const;
  const std::set<std::pair<Id, Id>>& credentials() const { return credentials_; }
  Capabilities capabilities() const;

 private:
  Result<Outcome, Refusal> apply(Id caller, const Command& op, Touched& touched);
  Result<Outcome, Refusal> apply(Id caller, const CreatePrincipal& op, Touched& touched);
  Result<Outcome, Refusal> apply(Id caller, const CreateRole& op, Touched& touched);
  Result<Outcome, Refusal> apply(Id caller, const BindCredential& op, Touched& touched);
  Result<Outcome, Refusal> apply(Id caller, const UnbindCredential& op, Touched& touched);
  Result<Outcome, Refusal> apply(Id caller, const Grant& op, Touched& touched);
  Result<Outcome, Refusal> apply(Id caller, const RevokeGrant& op, Touched& touched);
  Result<Outcome, Refusal> apply(Id caller, const RevokePrincipal& op, Touched& touched);
  Id add_grant(Id role, const Scope& scope, Permissions permissions, Touched& touched);

  Genesis genesis_;
  Head head_;
  std::map<Id, PrincipalRecord> principals_;  // every subject ever allocated, revoked ones included
  std::map<Id, RoleRecord> roles_;
  std::map<Id, GrantRecord> grants_;
  std::set<std::pair<Id, Id>> credentials_;  // (principal, role)
  std::set<std::pair<Id, Id>> grants_by_role_;  // (role, grant), derived from grants_
};

/// Control mutations (docs/transit.md, decision 9) may use the reserve beyond
/// the admission ceiling: the ones that only take authority away.
bool is_control(const Command& op);

}  // namespace cowboy::transit::node
