// CIP11_PRESENCE_SHADOW_ENABLED's book (§14 Phase 1, docs/cip11.md choices
// 37 and 136): per job, what its CIP-11 shadow draw drew from - the v3 seed
// its re-selections derive from, and for M > 1 the seed round it waits for
// and its block-S candidates. Beside the chain state, never in it: no
// state_root covers it, the machine reads it through BlockContext::shadow and
// writes it only through Effects::shadow_writes, which the node applies once
// the block is written. Telemetry must not change execution (§13, §14).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "cip11/chain/rounds.h"
#include "cip11/selection.h"

namespace cowboy::cip11::chain {

/// An M > 1 shadow draw waiting for its seed round r_seed, as a live
/// PendingSelectionV1 would (§9.2).
struct ShadowPending {
  Height submitted_at{};  // S
  RoundEpoch seed_epoch{};
  View seed_view{};
  /// The block-S snapshot as a live selection commits to it (snapshot_candidates
  /// at S), address-sorted; each registry_index is read again at the pass.
  std::vector<Candidate> candidates;
  std::vector<Address> live;  // the live first committee, drawn at S, to compare with
  // r_submit and K, from which the pass maps the seed round as a live record's (choice 140).
  RoundEpoch submission_epoch{};
  View submission_view{};
  std::uint64_t seed_delay_views = 0;
  bool operator==(const ShadowPending&) const = default;
};

struct ShadowRecord {
  /// The seed of the first shadow committee; the shadow re-selections derive
  /// from it as live ones do (choice 39). Unset while `pending` waits.
  std::optional<Bytes32> seed;
  std::optional<ShadowPending> pending;
  bool operator==(const ShadowRecord&) const = default;
};

/// One change a block makes to the book: the job's record, or none (it goes).
struct ShadowWrite {
  JobId job_id{};
  std::optional<ShadowRecord> record;
  bool operator==(const ShadowWrite&) const = default;
};

class ShadowBook {
 public:
  const ShadowRecord* find(const JobId& job) const;
  /// The jobs whose pending shadow draw waits for a round named before `round`,
  /// in (seed round, job_id) order (the pass maps each round again, choice 140).
  std::vector<JobId> pending_before(Round round) const;
  /// The lowest round r_submit of a shadow draw still waiting: the node keeps
  /// the seeds from it on, as for a live pending selection (docs/cip11.md
  /// choice 155), or the draw would wait for a forgotten round for ever.
  std::optional<Round> oldest_pending_submission() const;
  /// A written block's writes, in order.
  void apply(const std::vector<ShadowWrite>& writes);
  void clear();
  std::size_t size() const { return records_.size(); }

 private:
  std::map<JobId, ShadowRecord> records_;
  std::set<std::tuple<RoundEpoch, View, JobId>> pending_;  // (seed epoch, seed view, job)
};

}  // namespace cowboy::cip11::chain
