// The CIP-11 chain plane's state (§7, §9, §10.1, §11.2): the Runner
// Registry, the Job Dispatcher's jobs and MRU records, and the chain
// parameters they run under. Plain data; machine.h changes it, codec.h
// stores it.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "cip11/pending.h"
#include "cip11/presence.h"
#include "cip11/selection.h"
#include "common/crypto.h"

namespace cowboy::cip11::chain {

/// Fixed at genesis (docs/cip11.md, "Chain plane"). The five §13 flags default off.
struct ChainParams {
  std::uint64_t chain_id = 0;
  bool transport_enabled = false;              // CIP11_TRANSPORT_ENABLED: QUIC and push (Phase 1)
  bool presence_shadow_enabled = false;        // CIP11_PRESENCE_SHADOW_ENABLED: the CIP-11 draw as telemetry only
  bool present_first_enabled = false;          // CIP11_PRESENT_FIRST_ENABLED: the whole CIP-11 selection (Phase 2)
  bool poll_disabled = false;                  // CIP11_POLL_DISABLED: the poll endpoint answers 410 (Phase 3)
  bool presence_hard_exclude_enabled = false;  // PRESENCE_HARD_EXCLUDE_ENABLED: Mode A, never effective here
  bool multi_validator = false;        // |ValidatorSetSnapshot(0)| > 1
  std::uint64_t heartbeat_timeout_blocks = kHeartbeatTimeoutBlocks;
  std::uint64_t mru_activation_height = UINT64_MAX;  // MRU dormant, as deployed (§9.4)
  std::uint64_t mru_ttl_blocks = kMruTtlBlocks;
  std::uint64_t selection_seed_delay_views = 3;      // SELECTION_SEED_DELAY_VIEWS
  u128 min_stake = 1;                                // MIN_STAKE_CBY_WEI
  std::uint32_t max_selections = 3;                  // a job's committees before it is TimedOut
  ReputationConfig reputation;
  bool operator==(const ChainParams&) const = default;
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
  std::uint64_t registered_at = 0;
  std::uint64_t last_heartbeat = 0;
  std::uint32_t active_jobs = 0;
  std::uint64_t reputation_x1e9 = 1'000'000'000;
  /// Historical state for §9.2's block-S snapshots: (h, the record as it stood
  /// at the end of block h-1), oldest first, kept while a pending selection may
  /// read it (machine.cc, `edit_runner`). Versions never hold a history themselves.
  std::vector<std::pair<std::uint64_t, RunnerRecord>> history;
  bool operator==(const RunnerRecord&) const = default;
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
  std::uint64_t committed_at = 0;
  std::optional<Bytes32> result_hash;  // keccak256 of the revealed result
  bool operator==(const Assignment&) const = default;
};

struct JobRecord {
  Bytes32 job_id{};
  Address submitter{};
  JobKind kind = JobKind::kCustom;
  Bytes spec;                         // the dev JobSpec bytes, hashed by job_spec_hash (choice 19)
  std::uint64_t timeout_blocks = 0;
  std::uint32_t runners = 1;          // verification.runners = M
  u128 max_price = 0;
  std::uint64_t submitted_at = 0;     // S
  JobState state = JobState::kAssigned;
  std::uint32_t selections = 0;       // committees drawn so far
  std::uint64_t assignment_height = 0;
  std::uint64_t deadline_block = 0;
  std::vector<Assignment> committee;  // the current committee, in draw order
  std::vector<Address> excluded;      // runners that timed out on this job (§11.2), sorted
  std::optional<PendingSelectionV1> pending;  // pending_by_job_key (§9.2) while kPendingSelection
  std::optional<Bytes32> selection_seed;      // its first committee's seed; re-selections derive from it (§11.2)
  Bytes result;                       // the agreed result once Completed
  std::uint64_t finished_at = 0;
  bool operator==(const JobRecord&) const = default;

  const Assignment* assignment_of(const Address& runner) const;
  Assignment* assignment_of(const Address& runner);
};

/// pending_due_round_index_key (§9.2): the order of the seed's iterable index.
struct DueKey {
  std::uint64_t seed_epoch = 0, seed_view = 0, submitted_at = 0;
  Bytes32 job_id{};
  auto operator<=>(const DueKey&) const = default;
};
DueKey due_key(const PendingSelectionV1& pending);

struct State {
  std::map<Address, RunnerRecord> runners;
  ActiveRunners index;                       // ACTIVE_RUNNERS_KEY: append-only (§7.2, §8.5)
  std::map<Bytes32, JobRecord> jobs;
  std::map<std::pair<Address, JobKind>, MruRecord> mru;  // mru_key (§9.4)
  std::set<DueKey> pending_due;              // one per job in kPendingSelection; derived from them, not stored
  std::uint64_t jobs_submitted = 0;
  bool operator==(const State&) const = default;
};

}  // namespace cowboy::cip11::chain
