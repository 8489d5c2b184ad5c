#include "cip11/selection.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "common/codec.h"
#include "common/crypto.h"

namespace cowboy::cip11 {
namespace {

constexpr u128 kU128Max = ~u128{0};

u128 saturating_add(u128 a, u128 b) { return a > kU128Max - b ? kU128Max : a + b; }

std::array<std::uint8_t, 8> le8(std::uint64_t v) {
  std::array<std::uint8_t, 8> out;
  for (int b = 0; b < 8; ++b) out[b] = static_cast<std::uint8_t>(v >> (8 * b));
  return out;
}

struct PoolEntry {
  Address address;
  u128 weight;  // the base weight, paired with its runner for the whole draw
};

}  // namespace

namespace {
constexpr std::pair<std::string_view, JobKind> kJobKinds[] = {
    {"Llm", JobKind::kLlm},       {"Http", JobKind::kHttp},
    {"Mcp", JobKind::kMcp},       {"Custom", JobKind::kCustom},
    {"PublishChainRoot", JobKind::kPublishChainRoot}, {"Agent", JobKind::kAgent}};
}  // namespace

u128 saturating_mul(u128 a, u128 b) { return a != 0 && b > kU128Max / a ? kU128Max : a * b; }

std::optional<JobKind> job_kind_named(std::string_view name) {
  for (const auto& [n, kind] : kJobKinds)
    if (n == name) return kind;
  return std::nullopt;
}

std::string_view job_kind_name(JobKind kind) {
  for (const auto& [n, k] : kJobKinds)
    if (k == kind) return n;
  return "Unknown";
}

bool passes_liveness_floor(HealthStatus health, Height last_heartbeat, Height current_height,
                           std::uint64_t timeout_blocks) {
  const std::uint64_t age = current_height > last_heartbeat ? current_height - last_heartbeat : 0;
  return health == HealthStatus::kHealthy && age <= timeout_blocks;
}

namespace {
// Newton's iteration from a power of two above the root; it decreases
// monotonically to floor(sqrt(n)). The same steps in either width give the
// same result; 64-bit division is several times faster, and most weights'
// radicands fit (a reputation of 1e9 over a normalizer of 1 is 1e12).
template <typename U>
U newton_isqrt(U n) {
  int bits = 0;
  for (U m = n; m; m >>= 1) ++bits;
  U x = U{1} << ((bits + 1) / 2);
  while (true) {
    const U y = (x + n / x) / 2;
    if (y >= x) return x;
    x = y;
  }
}
}  // namespace

u128 isqrt(u128 n) {
  if (n < 2) return n;
  if (n <= UINT64_MAX / 2) return newton_isqrt<std::uint64_t>(static_cast<std::uint64_t>(n));  // x + n/x cannot overflow
  return newton_isqrt<u128>(n);
}

u128 cip2_v3_weight(u128 effective_stake, std::uint64_t reputation_x1e9, const ReputationConfig& config) {
  // rep * 1e12 < 2^64 * 2^40 and normalizer * 1e9 < 2^64 * 2^30: both fit in u128.
  const u128 numerator = u128{reputation_x1e9} * 1'000'000'000'000ULL;
  const u128 denominator = u128{std::max<std::uint64_t>(config.reputation_normalizer, 1)} * 1'000'000'000ULL;
  const u128 factor = std::max(isqrt(numerator / denominator), u128{config.w_min_floor_x1e6});
  return saturating_mul(effective_stake, factor) / 1'000'000;
}

void sort_by_address(std::vector<Candidate>& candidates) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.address < b.address; });
}

Res<Bytes32> beacon_hash_v1(const Beacon& beacon) {
  std::size_t length = 0;
  switch (beacon.scheme_id) {
    case kSchemeMinSig: length = 48; break;
    case kSchemeDevchainVrf:
    case kSchemeDevchainDerived: length = 64; break;
    default: return Err{Errc::kBadBeaconScheme};
  }
  if (beacon.signature.size() != length) return Err{Errc::kWrongLength};
  codec::Writer w;
  w.raw("cowboy-beacon-v1");
  w.u64(beacon.epoch.value);
  w.u64(beacon.view.value);
  w.u8(beacon.scheme_id);
  w.u16(static_cast<std::uint16_t>(beacon.signature.size()));
  w.raw(beacon.signature);
  return crypto::keccak256(w.data());
}

Bytes32 selection_seed_v3(SelectionMode mode, const Bytes32& beacon_hash, const JobId& job_id,
                          std::uint64_t submitted_at) {
  codec::Writer w;
  w.raw("cowboy-runner-select-v3:");
  w.u8(static_cast<std::uint8_t>(mode));
  w.raw(beacon_hash);
  w.raw(job_id.value);
  w.raw(le8(submitted_at));
  return crypto::keccak256(w.data());
}

Bytes32 selection_seed_v2(const Bytes32& beacon_hash, const JobId& job_id, std::uint64_t submitted_at) {
  codec::Writer w;
  w.raw("cowboy-runner-select-v2:");
  w.raw(beacon_hash);
  w.raw(job_id.value);
  w.raw(le8(submitted_at));
  return crypto::keccak256(w.data());
}

Bytes32 reselection_seed(const Bytes32& original_seed, std::uint32_t selection) {
  codec::Writer w;
  w.raw("cowboy-runner-reselect-v1:");
  w.raw(original_seed);
  w.raw(ByteView(le8(selection)).first(4));
  return crypto::keccak256(w.data());
}

Bytes32 candidate_leaf(std::uint32_t index, const Candidate& c, u128 base_weight) {
  codec::Writer w;
  w.raw("cowboy-candidates-leaf-v1");
  w.u32(index);
  w.raw(c.address);
  w.u128(c.effective_stake);
  w.u64(c.reputation_x1e9);
  w.u128(base_weight);
  return crypto::keccak256(w.data());
}

Bytes32 candidates_snapshot_root(std::span<const Candidate> ordered, const ReputationConfig& config) {
  if (ordered.empty()) return crypto::keccak256(as_bytes("cowboy-candidates-empty-v1"));
  std::vector<Bytes32> level;
  level.reserve(ordered.size());
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    const auto& c = ordered[i];
    level.push_back(candidate_leaf(static_cast<std::uint32_t>(i), c,
                                   cip2_v3_weight(c.effective_stake, c.reputation_x1e9, config)));
  }
  while (level.size() > 1) {
    if (level.size() % 2) level.push_back(level.back());
    std::vector<Bytes32> next;
    next.reserve(level.size() / 2);
    for (std::size_t i = 0; i < level.size(); i += 2)
      next.push_back(crypto::keccak256({as_bytes("cowboy-candidates-inner-v1"), level[i], level[i + 1]}));
    level = std::move(next);
  }
  return level[0];
}

std::optional<std::size_t> weighted_draw(std::span<const u128> weights, const Bytes32& seed, std::uint64_t i) {
  u128 total = 0;
  for (u128 w : weights) total = saturating_add(total, w);
  if (weights.empty() || total == 0) return std::nullopt;
  const Bytes32 h = crypto::keccak256({seed, le8(i)});
  std::uint64_t head = 0;
  for (int b = 7; b >= 0; --b) head = (head << 8) | h[b];  // u64::from_le_bytes(h[0..8])
  u128 ticket = u128{head} % total;
  for (std::size_t j = 0; j < weights.size(); ++j) {
    if (ticket < weights[j]) return j;
    ticket -= weights[j];
  }
  return weights.size() - 1;  // reached only if the total saturated
}

std::optional<Address> lookup_mru(const std::optional<MruRecord>& record, Height current_height,
                                  std::uint64_t ttl_blocks) {
  if (!record) return std::nullopt;
  const std::uint64_t age = current_height > record->set_at_block ? current_height - record->set_at_block : 0;
  if (age > ttl_blocks) return std::nullopt;
  return record->runner;
}

bool mode_a_effective(bool hard_exclude_flag, std::size_t effective_k, std::size_t t_hard, std::size_t k_hard_min) {
  return hard_exclude_flag && effective_k >= k_hard_min && t_hard >= effective_k / 2 + 1;
}

std::vector<Address> select_committee(const CommitteeRequest& req) {
  auto is_present = [&](const Candidate& c) {
    return req.presence && c.registry_index && req.presence->contains(*c.registry_index);
  };
  std::vector<PoolEntry> present;
  std::vector<PoolEntry> fallback;
  for (const auto& c : req.eligible) {
    PoolEntry entry{c.address, cip2_v3_weight(c.effective_stake, c.reputation_x1e9, req.config)};
    if (req.mode_a) {
      if (is_present(c)) present.push_back(entry);  // hard gate: the rest is not selectable
    } else if (req.multi_validator && req.committee_size > 1) {
      present.push_back(entry);  // membership over the full eligible set (§7.3 steering bound)
    } else {
      (is_present(c) ? present : fallback).push_back(entry);  // stable partition
    }
  }

  std::vector<Address> selected;
  std::vector<u128> weights;
  for (std::uint64_t i = 0; i < req.committee_size; ++i) {
    auto& pool = present.empty() ? fallback : present;
    if (pool.empty()) break;
    weights.clear();
    for (const auto& e : pool) weights.push_back(e.weight);
    if (i == 0 && req.mru) {
      for (std::size_t j = 0; j < pool.size(); ++j)
        if (pool[j].address == *req.mru) weights[j] = saturating_mul(weights[j], kMruWeightMultiplier);
    }
    auto drawn = weighted_draw(weights, req.seed, i);
    if (!drawn) break;
    selected.push_back(pool[*drawn].address);
    pool[*drawn] = pool.back();  // swap_remove: the residual order is replayed exactly as left
    pool.pop_back();
  }
  return selected;
}

std::uint64_t heartbeat_phase(std::uint64_t chain_id, const Address& runner, std::uint64_t effective_cadence_blocks) {
  assert(effective_cadence_blocks > 0);
  codec::Writer w;
  w.u64(chain_id);
  w.raw(runner);
  const Bytes32 h = crypto::keccak256(w.data());
  u128 remainder = 0;
  for (std::uint8_t b : h) remainder = ((remainder << 8) | b) % effective_cadence_blocks;
  return static_cast<std::uint64_t>(remainder);
}

}  // namespace cowboy::cip11
