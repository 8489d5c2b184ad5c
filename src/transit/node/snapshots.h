// Leased snapshots (docs/transit.md, decisions 70-78). SnapshotRegistry is
// the one owner of the open snapshots: tokens, leases, quotas, and a bounded
// memory of the ones that ended, so a late read is told why. It is volatile
// by design (nothing here reaches the journal; a restart ends every snapshot)
// and pure apart from its injected entropy: trusted time comes in as now_ms.
// answer_snapshot() answers the four snapshot queries from the registry, the
// authority's current rights and the immutable catalog. The sequencer owns
// the one registry and calls both on its decide thread only.
#pragma once

#include <deque>
#include <map>

#include "common/clock.h"
#include "transit/node/authority.h"

namespace cowboy::transit::node {

struct SnapshotLimits {
  std::size_t per_principal = 4;  // open snapshots one principal may hold
  std::size_t per_node = 256;     // open snapshots the node holds in all
};

class SnapshotRegistry {
 public:
  /// How many ended tokens are remembered (for snapshot_expired and
  /// snapshot_closed); an older one reads as unknown_snapshot.
  static constexpr std::size_t kEndedMemory = 1024;

  /// `started_ms`: trusted time as the node starts. With 8 random bytes it
  /// names this incarnation, the first half of every token it issues.
  SnapshotRegistry(Entropy& entropy, TrustedMs started_ms, SnapshotLimits limits);

  struct Snapshot {
    SnapshotToken token;
    PrincipalId principal{};
    ResourceId resource{};
    Revision revision{};
    Position position{};  // the published authority position it pins
    Millis lease_ms{};
    TrustedMs expires_at_ms{};
    SnapshotInfo info() const { return {token, resource, revision, position, expires_at_ms}; }
  };

  /// A new snapshot for `principal`, or why not (its quota, the node's capacity).
  Result<Snapshot, Refusal> open(PrincipalId principal, ResourceId resource, Revision revision, Position position, Millis lease_ms, TrustedMs now_ms);
  /// The caller's open snapshot of `token` now, or why there is none.
  Result<Snapshot*, Refusal> find(const SnapshotToken& token, PrincipalId principal, TrustedMs now_ms);
  /// A read through it succeeded: its lease runs again from now.
  void renew(Snapshot& snapshot, TrustedMs now_ms);
  /// Ends the caller's open snapshot of `token`; false when there was none to end.
  bool close(const SnapshotToken& token, PrincipalId principal, TrustedMs now_ms);

  std::size_t open_count() const { return open_.size(); }
  const SnapshotLimits& limits() const { return limits_; }

 private:
  enum class End { kExpired, kClosed };
  struct Ended {
    PrincipalId principal;
    End end;
  };
  using Key = std::array<std::uint8_t, kSnapshotTokenBytes>;  // a token's bytes (the decoder fixes their length)
  static Key key_of(const SnapshotToken& token);
  /// Moves every snapshot whose lease ran out to the ended memory.
  void reap(TrustedMs now_ms);
  void end(std::map<Key, Snapshot>::iterator it, End end);

  Entropy& entropy_;
  const SnapshotLimits limits_;
  std::array<std::uint8_t, 16> incarnation_{};  // started_ms (big-endian) and 8 random bytes
  TrustedMs started_ms_{};
  std::map<Key, Snapshot> open_;
  std::map<PrincipalId, std::size_t> held_;  // principal -> its open snapshots
  std::map<Key, Ended> ended_;
  std::deque<Key> ended_order_;  // oldest first, at most kEndedMemory
};

/// The answer to a snapshot query (kSnapshotQuery in operations.h): the
/// registry changes (an open, a renewed lease, a release) only when it is
/// answered; a refusal changes nothing.
Result<QueryResult, Refusal> answer_snapshot(const Authority& authority, SnapshotRegistry& registry, const Query& query,
                                             TrustedMs now_ms, const CatalogReader& catalog);

}  // namespace cowboy::transit::node
