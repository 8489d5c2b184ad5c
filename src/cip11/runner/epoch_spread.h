// §5.3 point 1, spread: when a new validator-set snapshot activates, a running
// runner takes up its epoch-(E+1) links at a runner-specific phase within the
// first blocks of the overlap window instead of at the activation block, so
// that thousands of runners do not all hand-shake with the new epoch's
// validators in the same second (docs/cip11.md choice 163). Until its phase
// it keeps the links it held at activation - 1, which stay valid through the
// window (§5.3 points 1-3); the spread is at most half the window, so every
// runner holds its epoch-(E+1) links long before the cutoff. Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "cip11/chain/snapshots.h"
#include "cip11/ids.h"

namespace cowboy::cip11 {

/// The spread, in blocks, at the default OVERLAP_BLOCKS (160): 16 blocks.
inline constexpr std::uint64_t kEpochSpreadBlocks = 16;

/// The runner's phase: heartbeat_phase(chain_id, runner, spread) (§6.6's
/// runner-specific keccak bucket), spread = min(kEpochSpreadBlocks,
/// overlap_blocks / 2); 0 when that spread is below 2.
std::uint64_t epoch_switch_phase(std::uint64_t chain_id, const Address& runner, std::uint64_t overlap_blocks);

/// The height whose links (chain::runner_links, chain::offer_at) the runner
/// holds at `height`: `height`, except within its first `phase` blocks after
/// an activation, where it is activation - 1. Only for an overlap that does
/// not itself begin inside its predecessor's (then `height` as before).
Height link_height(const chain::ValidatorSnapshots& snapshots, std::uint64_t chain_id, const Address& runner,
                   Height height);

/// One link the runner holds and the offer its Hello makes on it.
struct HeldLink {
  chain::EpochLink link;
  LocalOffer offer;
};

/// The links the runner holds at `height`: those of link_height, one per
/// validator (the newest epoch's). Each offers its own pair and accepts the
/// other pair current at `height` itself, not at link_height: the validators
/// answer with their offer at the real height, {E+1, overlap E} from the
/// activation on, so a runner still on its epoch-E links inside its phase
/// must accept E+1 (choice 163).
std::vector<HeldLink> held_links(const chain::ValidatorSnapshots& snapshots, std::uint64_t chain_id,
                                 const Address& runner, const crypto::Secp256k1Compressed& runner_key,
                                 Height height, SubsetParams subset);

}  // namespace cowboy::cip11
