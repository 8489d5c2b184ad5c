#include "cip11/chain/snapshots.h"

#include <cassert>

#include "cip11/subset.h"

namespace cowboy::cip11::chain {

ValidatorSnapshots ValidatorSnapshots::genesis(std::vector<crypto::Ed25519Public> peers) {
  ValidatorSnapshots s;
  s.epochs_.push_back(ValidatorSnapshot{0, 0, peers, validator_set_hash(peers)});
  return s;
}

void ValidatorSnapshots::add(std::uint64_t epoch, std::uint64_t activation_height,
                             std::vector<crypto::Ed25519Public> peers) {
  assert(epoch > epochs_.back().epoch && activation_height > epochs_.back().activation_height);
  const Bytes32 hash = validator_set_hash(peers);
  epochs_.push_back(ValidatorSnapshot{epoch, activation_height, std::move(peers), hash});
}

const ValidatorSnapshot& ValidatorSnapshots::active(std::uint64_t height) const {
  std::size_t i = 0;
  while (i + 1 < epochs_.size() && epochs_[i + 1].activation_height <= height) ++i;
  return epochs_[i];
}

const ValidatorSnapshot* ValidatorSnapshots::select(std::uint64_t subset_epoch, const Bytes32& validator_set_hash,
                                                    std::uint64_t height) const {
  const ValidatorSnapshot& now = active(height);
  auto names = [&](const ValidatorSnapshot& s) { return s.epoch == subset_epoch && s.hash == validator_set_hash; };
  if (names(now)) return &now;
  const std::size_t i = static_cast<std::size_t>(&now - epochs_.data());
  if (i > 0 && height < now.activation_height + kOverlapBlocks && names(epochs_[i - 1])) return &epochs_[i - 1];
  return nullptr;
}

}  // namespace cowboy::cip11::chain
