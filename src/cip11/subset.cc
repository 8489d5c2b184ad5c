#include "cip11/subset.h"

#include <algorithm>
#include <bit>

namespace cowboy::cip11 {

std::size_t subset_size(std::size_t n, SubsetParams p) {
  if (n == 0) return 0;
  const std::size_t ceil_log2 = std::bit_width(n - 1);  // ceil(log2 n) for n >= 1
  return std::min(n, std::clamp(ceil_log2 + 1, p.min_subset, p.max_subset));
}

Bytes32 validator_set_hash(std::span<const crypto::Ed25519Public> ordered_peers) {
  Bytes all;
  all.reserve(32 * ordered_peers.size());
  for (const auto& key : ordered_peers) all.insert(all.end(), key.begin(), key.end());
  return crypto::keccak256(all);
}

std::vector<std::size_t> subset_of(const crypto::Secp256k1Compressed& runner_key,
                                   std::span<const crypto::Ed25519Public> ordered_peers, SubsetParams params) {
  std::vector<std::pair<Bytes32, std::size_t>> keyed;
  keyed.reserve(ordered_peers.size());
  for (std::size_t i = 0; i < ordered_peers.size(); ++i)
    keyed.emplace_back(crypto::keccak256({runner_key, ordered_peers[i]}), i);
  // Pairs compare by hash first; the index only orders the (never seen) equal hashes.
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::size_t> out;
  const std::size_t k = subset_size(ordered_peers.size(), params);
  for (std::size_t i = 0; i < k; ++i) out.push_back(keyed[i].second);
  return out;
}

bool in_subset(const crypto::Secp256k1Compressed& runner_key, std::span<const crypto::Ed25519Public> ordered_peers,
               const crypto::Ed25519Public& validator, SubsetParams params) {
  for (std::size_t i : subset_of(runner_key, ordered_peers, params))
    if (ordered_peers[i] == validator) return true;
  return false;
}

}  // namespace cowboy::cip11
