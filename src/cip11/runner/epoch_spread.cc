#include "cip11/runner/epoch_spread.h"

#include <algorithm>

#include "cip11/selection.h"

namespace cowboy::cip11 {

std::uint64_t epoch_switch_phase(std::uint64_t chain_id, const Address& runner, std::uint64_t overlap_blocks) {
  const std::uint64_t spread = std::min(kEpochSpreadBlocks, overlap_blocks / 2);
  return spread < 2 ? 0 : heartbeat_phase(chain_id, runner, spread);
}

Height link_height(const chain::ValidatorSnapshots& snapshots, std::uint64_t chain_id, const Address& runner,
                   Height height) {
  const auto now = snapshots.current(height);
  if (now.size() < 2) return height;  // no overlap running
  const Height activation = now[0]->activation_height;
  if (activation.value == 0 || snapshots.current(Height{activation.value - 1}).size() > 1) return height;
  const std::uint64_t phase = epoch_switch_phase(chain_id, runner, snapshots.overlap_blocks());
  return height.value < activation.value + phase ? Height{activation.value - 1} : height;
}

std::vector<HeldLink> held_links(const chain::ValidatorSnapshots& snapshots, std::uint64_t chain_id,
                                 const Address& runner, const crypto::Secp256k1Compressed& runner_key,
                                 Height height, SubsetParams subset) {
  const Height at = link_height(snapshots, chain_id, runner, height);
  const LocalOffer now = chain::offer_at(snapshots, chain_id, height);
  const EpochPair active{now.subset_epoch, now.validator_set_hash};
  std::vector<HeldLink> out;
  for (const auto& t : chain::runner_links(snapshots, runner_key, at, subset)) {
    if (std::any_of(out.begin(), out.end(), [&](const HeldLink& h) { return h.link.validator == t.validator; }))
      continue;
    LocalOffer offer = now;
    offer.subset_epoch = t.pair.subset_epoch;
    offer.validator_set_hash = t.pair.validator_set_hash;
    offer.overlap = t.pair == active ? now.overlap : std::optional<EpochPair>(active);
    out.push_back(HeldLink{t, offer});
  }
  return out;
}

}  // namespace cowboy::cip11
