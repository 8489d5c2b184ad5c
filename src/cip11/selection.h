// Runner selection (§9): the eligibility floor, the CIP-2 v3 weight, the v3
// seed, the candidates-snapshot Merkle root, and the present-first weighted draw.
// Everything here is consensus arithmetic: integers only, every overflow saturating.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "cip11/errc.h"
#include "cip11/presence.h"
#include "cip11/ids.h"
#include "common/bytes.h"

namespace cowboy::cip11 {

// §13 defaults.
constexpr std::uint64_t kHeartbeatTimeoutBlocks = 100;
constexpr std::uint64_t kMruTtlBlocks = 1280;
constexpr u128 kMruWeightMultiplier = 4;
constexpr std::size_t kHardMinSubset = 20;  // K_HARD_MIN

/// §9.4: CIP-11's own stable byte table for job_kind (independent of any enum's source order).
enum class JobKind : std::uint8_t {
  kLlm = 0x00,
  kHttp = 0x01,
  kMcp = 0x02,
  kCustom = 0x03,
  kPublishChainRoot = 0x04,
  kAgent = 0x05,
};
std::optional<JobKind> job_kind_named(std::string_view name);  // "Llm", "Http", ...
std::string_view job_kind_name(JobKind kind);

enum class HealthStatus : std::uint8_t { kHealthy, kUnhealthy, kPaused, kDeregistered };

/// §9.1 filter 1: Healthy and current - last_heartbeat <= timeout (saturating, so a
/// heartbeat recorded above the current height counts as fresh).
bool passes_liveness_floor(HealthStatus health, Height last_heartbeat, Height current_height,
                           std::uint64_t timeout_blocks = kHeartbeatTimeoutBlocks);

struct ReputationConfig {
  std::uint64_t reputation_normalizer = 1;       // CIP-2 REPUTATION_NORMALIZER at T
  std::uint64_t w_min_floor_x1e6 = 100'000;      // CIP-2 v3 w_min_floor = 0.1
  bool operator==(const ReputationConfig&) const = default;
};

u128 isqrt(u128 n);  // floor(sqrt(n))
u128 saturating_mul(u128 a, u128 b);  // a * b, or 2^128 - 1 when that overflows
/// effective_stake * max(isqrt(rep_x1e9 * 1e12 / (normalizer * 1e9)), w_min_floor_x1e6) / 1e6
u128 cip2_v3_weight(u128 effective_stake, std::uint64_t reputation_x1e9, const ReputationConfig& config);

/// A floor-eligible candidate with its block-T weight inputs.
struct Candidate {
  Address address{};
  std::optional<std::uint32_t> registry_index;  // its index in registry(H-1); none if registered later
  u128 effective_stake = 0;
  std::uint64_t reputation_x1e9 = 0;
  bool operator==(const Candidate&) const = default;
};

/// The address ordering candidates are drawn and committed in.
void sort_by_address(std::vector<Candidate>& candidates);

// ---- seed (§9.2) -----------------------------------------------------------

/// A consensus threshold-VRF seed for an absolute round.
/// scheme_id: 0x01 MinSig (48-byte G1); 0x02 MinPk is reserved, not active. The
/// devchain's seeds (chain/seed.h, docs/cip11.md choice 74): 0x10 a round leader's
/// ECVRF output, 0x11 an output everyone derives (genesis, nullified rounds), 64 bytes each.
inline constexpr std::uint8_t kSchemeMinSig = 0x01;
inline constexpr std::uint8_t kSchemeDevchainVrf = 0x10;
inline constexpr std::uint8_t kSchemeDevchainDerived = 0x11;
struct Beacon {
  RoundEpoch epoch{};  // Round(epoch, view), cip11/ids.h
  View view{};
  std::uint8_t scheme_id = kSchemeMinSig;
  Bytes signature;
  /// What makes `signature` checkable where it is not a signature itself: the
  /// devchain's 80-byte ECVRF proof for scheme 0x10. Never hashed.
  Bytes evidence{};
};
/// keccak256("cowboy-beacon-v1" || epoch_be8 || view_be8 || scheme_id || len_be2 || signature).
/// kBadBeaconScheme for a scheme other than MinSig and the devchain's, kWrongLength
/// for a signature not 48 bytes (MinSig) or 64 (the devchain's).
Res<Bytes32> beacon_hash_v1(const Beacon& beacon);

enum class SelectionMode : std::uint8_t { kImmediate = 0x00, kDelayed = 0x01 };  // M == 1 / M > 1
/// keccak256("cowboy-runner-select-v3:" || mode || beacon_hash || job_id || submitted_at_le8)
Bytes32 selection_seed_v3(SelectionMode mode, const Bytes32& beacon_hash, const JobId& job_id,
                          std::uint64_t submitted_at);
/// The CIP-2 v2 seed live selection uses while CIP11_PRESENT_FIRST_ENABLED is
/// off (§13). CIP-2 is not among our documents; this stand-in keeps its domain
/// and drops v3's mode byte, so the two preimages never collide (§9.2):
/// keccak256("cowboy-runner-select-v2:" || beacon_hash || job_id || submitted_at_le8)
Bytes32 selection_seed_v2(const Bytes32& beacon_hash, const JobId& job_id, std::uint64_t submitted_at);
/// §9.2 / §11.2: a timeout re-selection derives from the job's original seed,
/// never from a later beacon. Committee `selection` (2 for the first
/// re-selection) draws with
/// keccak256("cowboy-runner-reselect-v1:" || original_seed || selection_le4).
Bytes32 reselection_seed(const Bytes32& original_seed, std::uint32_t selection);

// ---- candidates_snapshot_root (§9.2) ---------------------------------------

Bytes32 candidate_leaf(std::uint32_t index, const Candidate& candidate, u128 base_weight);
/// Binary Merkle root over the ordered snapshot: empty root, one-leaf root = the
/// leaf, inner = keccak256("cowboy-candidates-inner-v1" || l || r), odd levels
/// duplicate their last node.
Bytes32 candidates_snapshot_root(std::span<const Candidate> ordered, const ReputationConfig& config);

// ---- the draw (§9.2, §9.3) -------------------------------------------------

/// Index into `weights` drawn with keccak256(seed || i_le8); nullopt when the
/// pool is empty or its total weight is zero.
std::optional<std::size_t> weighted_draw(std::span<const u128> weights, const Bytes32& seed, std::uint64_t i);

struct MruRecord {
  Address runner{};
  Height set_at_block{};
  bool operator==(const MruRecord&) const = default;
};
/// The MRU runner if the record exists and H - set_at <= ttl (saturating).
std::optional<Address> lookup_mru(const std::optional<MruRecord>& record, Height current_height,
                                  std::uint64_t ttl_blocks = kMruTtlBlocks);

/// §8.4 guard: Mode A has effect only with the flag set, effective_k >= K_HARD_MIN
/// and t_hard an honest majority of effective_k.
bool mode_a_effective(bool hard_exclude_flag, std::size_t effective_k, std::size_t t_hard,
                      std::size_t k_hard_min = kHardMinSubset);

struct CommitteeRequest {
  std::span<const Candidate> eligible;  // floor-filtered, address-sorted (block T)
  const PresentSet* presence = nullptr;  // PresenceInput(H); null or empty: no one is present
  std::uint32_t committee_size = 1;      // M
  Bytes32 seed{};
  std::optional<Address> mru;            // lookup_mru's result
  ReputationConfig config;
  bool multi_validator = false;          // |V| > 1
  bool mode_a = false;                   // mode_a_effective(...)
};
/// The committee in draw order; shorter than M when the pools run out.
std::vector<Address> select_committee(const CommitteeRequest& request);

/// §6.6: keccak256(chain_id_be8 || runner_address) as a 256-bit big-endian
/// integer, mod effective_cadence_blocks (which must be > 0).
std::uint64_t heartbeat_phase(std::uint64_t chain_id, const Address& runner, std::uint64_t effective_cadence_blocks);

}  // namespace cowboy::cip11
