#include "devchain/proposers.h"

#include <algorithm>
#include <map>

#include "devchain/block.h"

namespace cowboy::devchain {

Proposers Proposers::of(const Cip11Genesis& genesis, const cip11::chain::ValidatorSnapshots& snapshots,
                        const std::vector<ScheduleValidatorSet>& governance) {
  // Each validator's ECVRF key, from the first entry that names it.
  std::map<crypto::Ed25519Public, crypto::ecvrf::PublicKey> vrf;
  for (const auto& v : genesis.validators) vrf.emplace(v.peer_key, vrf_key_of(v));
  for (const auto& s : governance)
    for (const auto& v : s.validators) vrf.emplace(v.peer_key, v.vrf_key.value_or(v.peer_key));
  Proposers out;
  for (const auto& snapshot : snapshots.epochs()) {
    EpochValidators e{snapshot.epoch.value, snapshot.activation_height.value, snapshot.peers, {}};
    std::sort(e.peers.begin(), e.peers.end());  // epoch 0's snapshot order is the genesis's
    for (const auto& p : e.peers) {
      auto it = vrf.find(p);
      e.vrf_keys.push_back(it == vrf.end() ? p : it->second);
    }
    out.epochs_.push_back(std::move(e));
  }
  return out;
}

const EpochValidators* Proposers::at(std::uint64_t height) const {
  const EpochValidators* found = nullptr;
  for (const auto& e : epochs_) {
    if (e.activation_height > height) break;
    found = &e;
  }
  return found && !found->peers.empty() ? found : nullptr;
}

std::optional<std::uint32_t> Proposers::leader(std::uint64_t height, cip11::View view) const {
  const auto* e = at(height);
  if (!e) return std::nullopt;
  return leader_of(view, e->peers.size());
}

std::optional<std::uint32_t> Proposers::index_of(std::uint64_t height, const crypto::Ed25519Public& peer) const {
  const auto* e = at(height);
  if (!e) return std::nullopt;
  auto it = std::find(e->peers.begin(), e->peers.end(), peer);
  if (it == e->peers.end()) return std::nullopt;
  return static_cast<std::uint32_t>(it - e->peers.begin());
}

}  // namespace cowboy::devchain
