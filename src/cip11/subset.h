// Connectivity subsets (§5.1): which validators a runner keeps connections to.
//
//   Sub(R) = first k validators of V sorted by keccak256(R.auth_pubkey || v.peer_pubkey)
//   k      = min(|V|, clamp(ceil(log2 |V|) + 1, MIN_SUBSET, MAX_SUBSET))
//   validator_set_hash = keccak256(peer_pubkey_1 || ... || peer_pubkey_n), raw keys in snapshot order
#pragma once

#include <span>
#include <vector>

#include "cip11/ids.h"
#include "common/bytes.h"
#include "common/crypto.h"

namespace cowboy::cip11 {

struct SubsetParams {
  std::size_t min_subset = 3;  // §13 MIN_SUBSET
  std::size_t max_subset = 8;  // §13 MAX_SUBSET
  bool operator==(const SubsetParams&) const = default;
};

std::size_t subset_size(std::size_t validators, SubsetParams params = {});

/// Over the raw, untagged peer keys in the snapshot's canonical order (stake excluded).
Bytes32 validator_set_hash(std::span<const crypto::Ed25519Public> ordered_peers);

/// Indices into `ordered_peers` of Sub(R), in subset order. `runner_key` is the
/// raw 33-byte compressed key whose address matched the runner's registration.
std::vector<std::size_t> subset_of(const crypto::Secp256k1Compressed& runner_key,
                                   std::span<const crypto::Ed25519Public> ordered_peers, SubsetParams params = {});

/// One validator-set snapshot as a Hello, a receipt or a presence view names
/// it (§5.3: both fields select it, never one epoch's number with another's hash).
struct EpochPair {
  Epoch subset_epoch{};
  Bytes32 validator_set_hash{};
  bool operator==(const EpochPair&) const = default;
};

/// The §5.2 validator-side admission gate.
bool in_subset(const crypto::Secp256k1Compressed& runner_key, std::span<const crypto::Ed25519Public> ordered_peers,
               const crypto::Ed25519Public& validator, SubsetParams params = {});

}  // namespace cowboy::cip11
