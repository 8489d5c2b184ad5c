#include "cip11/chain/snapshots.h"

#include <algorithm>
#include <cassert>

namespace cowboy::cip11::chain {

bool ValidatorSnapshot::has(const crypto::Ed25519Public& peer) const {
  return std::find(peers.begin(), peers.end(), peer) != peers.end();
}

ValidatorSnapshots ValidatorSnapshots::genesis(std::vector<crypto::Ed25519Public> peers, std::uint64_t overlap_blocks) {
  ValidatorSnapshots s;
  s.overlap_blocks_ = overlap_blocks;
  s.epochs_.push_back(ValidatorSnapshot{Epoch{0}, Height{0}, peers, validator_set_hash(peers)});
  return s;
}

ValidatorSnapshots ValidatorSnapshots::scheduled(std::vector<crypto::Ed25519Public> peers,
                                                 const std::vector<ValidatorSetChange>& changes,
                                                 std::uint64_t overlap_blocks) {
  ValidatorSnapshots s = genesis(std::move(peers), overlap_blocks);
  for (std::size_t i = 0; i < changes.size(); ++i) s.add(Epoch{i + 1}, changes[i].activation_height, changes[i].peer_keys);
  return s;
}

void ValidatorSnapshots::add(Epoch epoch, Height activation_height,
                             std::vector<crypto::Ed25519Public> peers) {
  assert(epoch > epochs_.back().epoch && activation_height > epochs_.back().activation_height);
  const Bytes32 hash = validator_set_hash(peers);
  epochs_.push_back(ValidatorSnapshot{epoch, activation_height, std::move(peers), hash});
}

const ValidatorSnapshot& ValidatorSnapshots::active(Height height) const {
  std::size_t i = 0;
  while (i + 1 < epochs_.size() && epochs_[i + 1].activation_height <= height) ++i;
  return epochs_[i];
}

std::vector<const ValidatorSnapshot*> ValidatorSnapshots::current(Height height) const {
  const ValidatorSnapshot& now = active(height);
  std::vector<const ValidatorSnapshot*> out{&now};
  const std::size_t i = static_cast<std::size_t>(&now - epochs_.data());
  // Saturating: a window that would run past the last height never ends.
  const Height end = now.activation_height > Height{UINT64_MAX - overlap_blocks_} ? Height{UINT64_MAX}
                                                                                : now.activation_height + overlap_blocks_;
  if (i > 0 && height < end) out.push_back(&epochs_[i - 1]);
  return out;
}

const ValidatorSnapshot* ValidatorSnapshots::select(Epoch subset_epoch, const Bytes32& validator_set_hash,
                                                    Height height) const {
  for (const ValidatorSnapshot* s : current(height))
    if (s->epoch == subset_epoch && s->hash == validator_set_hash) return s;
  return nullptr;
}

std::optional<Height> ValidatorSnapshots::cutoff(Epoch epoch) const {
  for (std::size_t i = 0; i + 1 < epochs_.size(); ++i)
    if (epochs_[i].epoch == epoch) {
      const Height a = epochs_[i + 1].activation_height;
      return a > Height{UINT64_MAX - overlap_blocks_} ? Height{UINT64_MAX} : a + overlap_blocks_;
    }
  return std::nullopt;
}

bool SharedSnapshots::withdraw(const std::vector<ValidatorSetChange>& changes) {
  auto held = get();
  const auto& epochs = held->epochs();
  std::size_t keep = 1;  // epoch 0, then each held epoch the chain still holds alike
  while (keep < epochs.size() && keep <= changes.size() &&
         changes[keep - 1].activation_height == epochs[keep].activation_height &&
         changes[keep - 1].peer_keys == epochs[keep].peers)
    ++keep;
  if (keep == epochs.size()) return false;
  ValidatorSnapshots next = ValidatorSnapshots::scheduled(epochs[0].peers, {}, held->overlap_blocks());
  for (std::size_t i = 1; i < keep; ++i) next.add(Epoch{i}, epochs[i].activation_height, epochs[i].peers);
  std::lock_guard lock(mu_);
  if (now_ != held) return false;  // another thread changed them meanwhile; the next read settles it
  now_ = std::make_shared<const ValidatorSnapshots>(std::move(next));
  return true;
}

bool SharedSnapshots::update(const std::vector<ValidatorSetChange>& changes) {
  auto held = get();
  const auto& epochs = held->epochs();
  if (changes.size() + 1 <= epochs.size()) return false;
  // The ones held must stay as they are: a schedule only grows.
  for (std::size_t i = 1; i < epochs.size(); ++i) {
    if (changes[i - 1].activation_height != epochs[i].activation_height || changes[i - 1].peer_keys != epochs[i].peers)
      return false;
  }
  ValidatorSnapshots next = *held;
  for (std::size_t i = epochs.size(); i <= changes.size(); ++i) {
    const auto& c = changes[i - 1];
    if (c.activation_height <= next.epochs().back().activation_height || c.peer_keys.empty()) return false;
    next.add(Epoch{i}, c.activation_height, c.peer_keys);
  }
  std::lock_guard lock(mu_);
  if (now_ != held) return false;  // another thread updated meanwhile; its view stands
  now_ = std::make_shared<const ValidatorSnapshots>(std::move(next));
  return true;
}

std::vector<EpochLink> runner_links(const ValidatorSnapshots& snapshots, const crypto::Secp256k1Compressed& runner_key,
                                    Height height, SubsetParams params) {
  std::vector<EpochLink> out;
  for (const ValidatorSnapshot* s : snapshots.current(height))
    for (std::size_t i : subset_of(runner_key, s->peers, params)) out.push_back(EpochLink{s->peers[i], s->pair()});
  return out;
}

std::optional<GoodbyeReason> admit_epoch_paired(const ValidatorSnapshots& snapshots, const crypto::Ed25519Public& me,
                                                const crypto::Secp256k1Compressed& runner_key, const EpochPair& pair,
                                                Height height, SubsetParams params) {
  // Membership and subset both in the snapshot the pair selects, never the other.
  const ValidatorSnapshot* s = snapshots.select(pair, height);
  if (s == nullptr || !s->has(me) || !in_subset(runner_key, s->peers, me, params)) return GoodbyeReason::kNotInSubset;
  return std::nullopt;
}

bool overlap_expired(const ValidatorSnapshots& snapshots, const EpochPair& pair, Height height) {
  return snapshots.select(pair, height) == nullptr;
}

LocalOffer offer_at(const ValidatorSnapshots& snapshots, std::uint64_t chain_id, Height height) {
  const auto now = snapshots.current(height);
  LocalOffer offer{chain_id, kProtocolVersion, now[0]->hash, now[0]->epoch, height};
  if (now.size() > 1) offer.overlap = now[1]->pair();
  return offer;
}

std::vector<EpochPair> current_pairs(const ValidatorSnapshots& snapshots, Height height) {
  std::vector<EpochPair> out;
  for (const ValidatorSnapshot* s : snapshots.current(height)) out.push_back(s->pair());
  return out;
}

std::optional<EpochPair> view_pair(const ValidatorSnapshots& snapshots, const crypto::Ed25519Public& me,
                                   Height height) {
  for (const ValidatorSnapshot* s : snapshots.current(height))
    if (s->has(me)) return s->pair();
  return std::nullopt;
}

std::vector<ViewSnapshot> view_snapshots(const ValidatorSnapshots& snapshots, Height height) {
  std::vector<ViewSnapshot> out;
  for (const ValidatorSnapshot* s : snapshots.current(height)) out.push_back(ViewSnapshot{s->pair(), s->peers});
  return out;
}

}  // namespace cowboy::cip11::chain
