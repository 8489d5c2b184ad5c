// The validator-set snapshots execution reads (§5.3-§5.4): the identities a
// Mode A receipt is checked against, and the |V| of the §8.4 guard.
//
// A snapshot is active from its activation_height until its successor's. For
// OVERLAP_BLOCKS from a successor's activation the predecessor still counts
// (§5.3 point 3), and at activation_height + OVERLAP_BLOCKS it stops, a cutoff
// tied to the executing block's height. A receipt's (subset_epoch,
// validator_set_hash) must name one of these snapshots with both fields
// (epoch-paired, never one epoch's hash with another's membership).
//
// The devchain has ValidatorSetSnapshot(0) only (genesis()); a chain that
// follows ValidatorSetActivated events appends snapshots with add().
#pragma once

#include <vector>

#include "common/crypto.h"

namespace cowboy::cip11::chain {

inline constexpr std::uint64_t kOverlapBlocks = 160;  // OVERLAP_BLOCKS (§13)

struct ValidatorSnapshot {
  std::uint64_t epoch = 0;
  std::uint64_t activation_height = 0;
  std::vector<crypto::Ed25519Public> peers;  // canonical order (§5.4)
  Bytes32 hash{};                            // validator_set_hash over `peers` (subset.h)
};

class ValidatorSnapshots {
 public:
  /// ValidatorSetSnapshot(0), active from height 0.
  static ValidatorSnapshots genesis(std::vector<crypto::Ed25519Public> peers);
  /// The next epoch's snapshot, active from `activation_height`. Precondition:
  /// epochs and activation heights both ascend.
  void add(std::uint64_t epoch, std::uint64_t activation_height, std::vector<crypto::Ed25519Public> peers);

  /// The snapshot active at `height`.
  const ValidatorSnapshot& active(std::uint64_t height) const;
  /// The active snapshot, or its predecessor within the overlap window, whose
  /// epoch and hash are both these; null for any other pair.
  const ValidatorSnapshot* select(std::uint64_t subset_epoch, const Bytes32& validator_set_hash,
                                  std::uint64_t height) const;

 private:
  ValidatorSnapshots() = default;
  std::vector<ValidatorSnapshot> epochs_;  // ascending; never empty
};

}  // namespace cowboy::cip11::chain
