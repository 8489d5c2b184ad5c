// The CIP-11 chain plane's state (§7, §9, §10.1, §11.2): the Runner
// Registry, the Job Dispatcher's jobs and MRU records, and the chain
// parameters they run under. Data; machine.h changes it, codec.h encodes it.
//
// The records are RecordMaps (common/record_map.h), so the state knows what
// changed since its last commit(): a store writes exactly that for a block
// (the devchain's cip11_store.h) and rollback() undoes a block whose write
// failed. A state fresh from genesis or from a decoder is committed.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "cip11/pending.h"
#include "cip11/presence.h"
#include "cip11/selection.h"
#include "cip11/subset.h"
#include "common/crypto.h"
#include "common/ecvrf.h"
#include "common/record_map.h"

namespace cowboy::cip11::chain {

/// Fixed at genesis (docs/cip11.md, "Chain plane"). The five §13 flags default off.
struct ChainParams {
  std::uint64_t chain_id = 0;
  bool transport_enabled = false;              // CIP11_TRANSPORT_ENABLED: QUIC and push (Phase 1)
  bool presence_shadow_enabled = false;        // CIP11_PRESENCE_SHADOW_ENABLED: the CIP-11 draw as telemetry only
  bool present_first_enabled = false;          // CIP11_PRESENT_FIRST_ENABLED: the whole CIP-11 selection (Phase 2)
  bool poll_disabled = false;                  // CIP11_POLL_DISABLED: the poll endpoint answers 410 (Phase 3)
  bool presence_hard_exclude_enabled = false;  // PRESENCE_HARD_EXCLUDE_ENABLED: certificates; Mode A if the §8.4 guard holds
  // |ValidatorSetSnapshot(0)| > 1, as the genesis records it; selection reads
  // the snapshot active at each block instead (§3.2, docs/cip11.md choice 150).
  bool multi_validator = false;
  std::uint64_t heartbeat_timeout_blocks = kHeartbeatTimeoutBlocks;
  Height mru_activation_height{UINT64_MAX};          // MRU dormant, as deployed (§9.4)
  std::uint64_t mru_ttl_blocks = kMruTtlBlocks;
  std::uint64_t selection_seed_delay_views = 3;      // SELECTION_SEED_DELAY_VIEWS
  u128 min_stake = 1;                                // MIN_STAKE_CBY_WEI
  std::uint32_t max_selections = 3;                  // a job's committees before it is TimedOut
  ReputationConfig reputation;
  SubsetParams subset;                               // MIN_SUBSET, MAX_SUBSET (§5.1): k for Sub(R)
  std::uint32_t t_hard = 1;                          // Mode A receipt threshold; 1 = floor(k/2)+1 at |V| = 1
  bool operator==(const ChainParams&) const = default;
};

/// One entry of ValidatorSetSnapshot(0) (§5.4): a validator's Ed25519 peer key and its QUIC endpoint.
struct ValidatorEntry {
  crypto::Ed25519Public peer_key{};
  std::string endpoint;  // host:port of its QUIC listener
  /// The ECVRF key that proves the round seeds it leads (docs/cip11.md choice
  /// 100); absent in a genesis written before, where the peer key's seed proves.
  std::optional<crypto::ecvrf::PublicKey> vrf_key{};
  /// host:port of its devchain chain API, where the other validators send it
  /// blocks, transactions and presence views: named only by the governance
  /// change a validator joins by (docs/devchain.md D10, docs/cip11.md choice
  /// 130); empty for a genesis validator, which --peers lists name.
  std::string chain_api{};
  bool operator==(const ValidatorEntry&) const = default;
};

struct RunnerRecord {
  Address address{};
  crypto::Secp256k1Compressed key{};
  u128 stake = 0;
  std::uint32_t job_kinds = 0;  // bit k set: supports JobKind byte k
  std::vector<std::string> capabilities;
  std::uint32_t max_concurrent = 1;
  u128 price = 0;               // per job, what filter 5 compares with max_price
  HealthStatus health = HealthStatus::kHealthy;
  Height registered_at{};
  Height last_heartbeat{};
  std::uint32_t active_jobs = 0;
  std::uint64_t reputation_x1e9 = 1'000'000'000;
  /// Historical state for §9.2's block-S snapshots: (h, the record as it stood
  /// at the end of block h-1), oldest first, kept while a pending selection may
  /// read it (machine.cc, `edit_runner`). Versions never hold a history themselves.
  std::vector<std::pair<Height, RunnerRecord>> history;
  bool operator==(const RunnerRecord&) const = default;
};

/// A runner's Mode A presence (§8.3): the newest receipt height a certificate
/// proved, and the last block it keeps the runner present for.
struct PresenceProof {
  Height anchor{};                  // presence_anchor[runner]
  Height proven_until{};            // presence_proven_until[runner] = anchor + PRESENCE_PROOF_TTL_BLOCKS
  bool operator==(const PresenceProof&) const = default;
};

enum class JobState : std::uint8_t {
  kPendingSelection = 0,  // M > 1, waiting for its seed round (§9.2)
  kAssigned = 1,          // a committee (possibly under-filled) holds it until deadline_block
  kCompleted = 2,
  kTimedOut = 3,          // max_selections committees passed their deadlines
  kFailed = 4,            // every committee member revealed and no majority agreed
};
std::string_view job_state_name(JobState s);
constexpr bool terminal(JobState s) { return s >= JobState::kCompleted; }

struct Assignment {
  Address runner{};
  std::optional<Bytes32> commitment;
  Height committed_at{};
  std::optional<Bytes32> result_hash;  // keccak256 of the revealed result
  bool operator==(const Assignment&) const = default;
};

struct JobRecord {
  JobId job_id{};
  Address submitter{};
  JobKind kind = JobKind::kCustom;
  Bytes spec;                         // the dev JobSpec bytes, hashed by job_spec_hash (choice 19)
  std::uint64_t timeout_blocks = 0;
  std::uint32_t runners = 1;          // verification.runners = M
  u128 max_price = 0;
  Height submitted_at{};              // S
  JobState state = JobState::kAssigned;
  std::uint32_t selections = 0;       // committees drawn so far
  Height assignment_height{};
  Height deadline_block{};
  std::vector<Assignment> committee;  // the current committee, in draw order
  std::vector<Address> excluded;      // runners that timed out on this job (§11.2), sorted
  std::optional<PendingSelectionV1> pending;  // pending_by_job_key (§9.2) while kPendingSelection
  std::optional<Bytes32> selection_seed;      // its first committee's seed; re-selections derive from it (§11.2)
  Bytes result;                       // the agreed result once Completed
  Height finished_at{};
  bool operator==(const JobRecord&) const = default;

  const Assignment* assignment_of(const Address& runner) const;
  Assignment* assignment_of(const Address& runner);
};

/// Jobs by the block at which begin_block must next look at them (machine.h
/// next_due: after a pending job's seed view, after an assigned job's
/// deadline), so that a block's work is what is due, not every job ever
/// submitted; and the block-S heights of the pending selections among them,
/// which a runner's `history` must keep readable (machine.cc, edit_runner).
/// Derived from the jobs: never stored, rebuilt from them (machine.cc brings
/// it up to date with every job changed since it last looked).
class DueIndex {
 public:
  /// When `job` is next due, and its submitted_at while it is a pending
  /// selection; a nullopt height takes it out (it ended).
  void set(const JobId& job, std::optional<Height> height, std::optional<Height> pending_since = std::nullopt);
  /// The jobs due at or before `height`, by (due height, job_id).
  std::vector<JobId> due_by(Height height) const;
  /// The distinct submission heights of the pending selections, ascending.
  std::vector<Height> pending_submissions() const;
  /// How many pending selections each submission height has.
  const std::map<Height, std::uint32_t>& pending_counts() const { return pending_; }
  /// The submission height `job` is pending since, as last set.
  std::optional<Height> pending_since(const JobId& job) const {
    auto it = of_job_.find(job);
    return it == of_job_.end() ? std::nullopt : it->second.pending_since;
  }
  std::size_t size() const { return of_job_.size(); }

 private:
  struct Due {
    Height height{};
    std::optional<Height> pending_since;
    bool operator==(const Due&) const = default;
  };
  std::set<std::pair<Height, JobId>> by_height_;
  std::map<JobId, Due> of_job_;
  std::map<Height, std::uint32_t> pending_;  // submitted_at -> how many pending selections
};

struct State {
  RecordMap<Address, RunnerRecord> runners;
  ActiveRunners index;                       // ACTIVE_RUNNERS_KEY: append-only (§7.2, §8.5)
  RecordMap<JobId, JobRecord> jobs;
  RecordMap<std::pair<Address, JobKind>, MruRecord> mru;  // mru_key (§9.4)
  RecordMap<Address, PresenceProof> presence;             // Mode A certificates' anchors (§8.3)
  std::uint64_t jobs_submitted = 0;
  DueIndex due;  // kept up to date from the jobs by begin_block

  /// The registry's length and the job counter as of the last commit: the
  /// index entries from committed_registry_size() on are new.
  std::uint32_t committed_registry_size() const { return committed_registry_size_; }
  std::uint64_t committed_jobs_submitted() const { return committed_jobs_submitted_; }
  /// The current state becomes the committed one (its store has it).
  void commit();
  /// Back to the committed state.
  void rollback();
  /// The records and counters; not the journal, not the derived index.
  bool operator==(const State& other) const;

 private:
  std::uint32_t committed_registry_size_ = 0;
  std::uint64_t committed_jobs_submitted_ = 0;
};

}  // namespace cowboy::cip11::chain
