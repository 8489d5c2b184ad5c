// The validator-set snapshots (§5.3-§5.4): the identities a Mode A receipt is
// checked against, the |V| of the §8.4 guard, and what the transport reacts
// to when the set changes.
//
// A snapshot is active from its activation_height until its successor's. For
// overlap_blocks (OVERLAP_BLOCKS, §13) from a successor's activation the
// predecessor still counts (§5.3 points 1-3), and at activation_height +
// overlap_blocks it stops, a cutoff tied to the block height and the same for
// every node (point 4). A (subset_epoch, validator_set_hash) pair - a
// receipt's, a Hello's - must name one of the current snapshots with both
// fields (epoch-paired, never one epoch's hash with another's membership).
//
// The devchain fills it from its genesis: ValidatorSetSnapshot(0) and the
// scheduled changes (docs/devchain.md D9); a chain that follows
// ValidatorSetActivated events appends snapshots with add().
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "cip11/frames.h"
#include "cip11/handshake.h"
#include "cip11/presence_gossip.h"
#include "cip11/subset.h"
#include "common/crypto.h"

namespace cowboy::cip11::chain {

inline constexpr std::uint64_t kOverlapBlocks = 160;  // OVERLAP_BLOCKS (§13)

struct ValidatorSnapshot {
  Epoch epoch{};
  Height activation_height{};
  std::vector<crypto::Ed25519Public> peers;  // canonical order (§5.4)
  Bytes32 hash{};                            // validator_set_hash over `peers` (subset.h)
  EpochPair pair() const { return EpochPair{epoch, hash}; }
  bool has(const crypto::Ed25519Public& peer) const;
};

/// A later ValidatorSetSnapshot (§5.4) as a chain fixes it: from
/// `activation_height` on, these peer keys in canonical order (ascending).
/// The n-th change of a chain is epoch n.
struct ValidatorSetChange {
  Height activation_height{};
  std::vector<crypto::Ed25519Public> peer_keys;
  bool operator==(const ValidatorSetChange&) const = default;
};

class ValidatorSnapshots {
 public:
  /// ValidatorSetSnapshot(0), active from height 0, its peers in the order given.
  static ValidatorSnapshots genesis(std::vector<crypto::Ed25519Public> peers,
                                    std::uint64_t overlap_blocks = kOverlapBlocks);
  /// ValidatorSetSnapshot(0) and then the n-th change as epoch n (a schedule
  /// that a genesis has checked: heights ascending, each set changed).
  static ValidatorSnapshots scheduled(std::vector<crypto::Ed25519Public> peers,
                                      const std::vector<ValidatorSetChange>& changes, std::uint64_t overlap_blocks);
  /// The next epoch's snapshot, active from `activation_height`. Precondition:
  /// epochs and activation heights both ascend.
  void add(Epoch epoch, Height activation_height, std::vector<crypto::Ed25519Public> peers);

  /// The snapshot active at `height`.
  const ValidatorSnapshot& active(Height height) const;
  /// The active snapshot, or its predecessor within the overlap window, whose
  /// epoch and hash are both these; null for any other pair.
  const ValidatorSnapshot* select(Epoch subset_epoch, const Bytes32& validator_set_hash,
                                  Height height) const;
  const ValidatorSnapshot* select(const EpochPair& pair, Height height) const {
    return select(pair.subset_epoch, pair.validator_set_hash, height);
  }
  /// The snapshots current at `height`: the active one, then its predecessor
  /// while the overlap window runs (§5.3: at most two).
  std::vector<const ValidatorSnapshot*> current(Height height) const;
  /// The first height at which `epoch` no longer counts (its successor's
  /// activation + overlap_blocks); nullopt while it has no successor.
  std::optional<Height> cutoff(Epoch epoch) const;

  std::uint64_t overlap_blocks() const { return overlap_blocks_; }
  const std::vector<ValidatorSnapshot>& epochs() const { return epochs_; }

 private:
  ValidatorSnapshots() = default;
  std::vector<ValidatorSnapshot> epochs_;  // ascending; never empty
  std::uint64_t overlap_blocks_ = kOverlapBlocks;
};

/// The snapshots as a follower of the chain holds them while they change: a
/// validator set scheduled by transaction (docs/devchain.md D10) reaches the
/// services as they re-read the chain. Readers take the snapshots current
/// when they ask and keep them for the one decision; any thread.
class SharedSnapshots {
 public:
  explicit SharedSnapshots(ValidatorSnapshots initial)
      : now_(std::make_shared<const ValidatorSnapshots>(std::move(initial))) {}
  std::shared_ptr<const ValidatorSnapshots> get() const {
    std::lock_guard lock(mu_);
    return now_;
  }
  /// Takes `changes` (every snapshot after epoch 0, as the chain holds them
  /// now) when they add epochs to those held and keep the ones held; true when
  /// they did. Heights that do not ascend, or a rewritten epoch, are ignored.
  bool update(const std::vector<ValidatorSetChange>& changes);
  /// After the chain un-applied blocks (docs/devchain.md D11): drops the
  /// epochs held beyond what `changes` (the chain's list now) still holds,
  /// from the first that differs; true when it dropped any. Epoch 0 stays.
  bool withdraw(const std::vector<ValidatorSetChange>& changes);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const ValidatorSnapshots> now_;
};

// The transport's reaction (§5.3, §6.2), pure functions of the snapshots and
// a height that every node computes alike.

/// One connection a runner holds: to `validator` under `pair`.
struct EpochLink {
  crypto::Ed25519Public validator{};
  EpochPair pair;
  bool operator==(const EpochLink&) const = default;
};

/// §5.3 point 1: the connections a runner holds at `height`, for each current
/// snapshot (the active one first) each validator of its Sub_epoch(R). During
/// an overlap a validator in both subsets appears twice, once per epoch: a
/// connection is bound to the pair it was admitted under (docs/cip11.md choice 79).
std::vector<EpochLink> runner_links(const ValidatorSnapshots& snapshots, const crypto::Secp256k1Compressed& runner_key,
                                    Height height, SubsetParams params);

/// §5.3 point 2 at a validator: may `me` admit `runner_key` under the offered
/// `pair` at `height`? nullopt: yes; kNotInSubset unless the pair names one
/// current snapshot with both fields, `me` is in that snapshot and in that
/// snapshot's Sub(runner).
std::optional<GoodbyeReason> admit_epoch_paired(const ValidatorSnapshots& snapshots, const crypto::Ed25519Public& me,
                                                const crypto::Secp256k1Compressed& runner_key, const EpochPair& pair,
                                                Height height, SubsetParams params);

/// §5.3 point 4: a connection admitted under `pair` no longer counts at
/// `height` (the validator says Goodbye{OverlapExpired} to it).
bool overlap_expired(const ValidatorSnapshots& snapshots, const EpochPair& pair, Height height);

/// What this end offers in a Hello at `height`: the active snapshot's pair,
/// and during an overlap its predecessor's as the second it admits.
LocalOffer offer_at(const ValidatorSnapshots& snapshots, std::uint64_t chain_id, Height height);

/// The pairs of the snapshots current at `height`, the active one first.
std::vector<EpochPair> current_pairs(const ValidatorSnapshots& snapshots, Height height);

// §8.2 presence views across a reconfiguration (§5.3 point 3, as a receipt).

/// The pair validator `me` states its view at `height` under: the newest
/// current snapshot it is in. nullopt when it is in none (a validator that
/// left states no view once its last epoch's overlap has ended).
std::optional<EpochPair> view_pair(const ValidatorSnapshots& snapshots, const crypto::Ed25519Public& me,
                                   Height height);
/// What a view taken at `height` may name, for check_view: the snapshots current at that height.
std::vector<ViewSnapshot> view_snapshots(const ValidatorSnapshots& snapshots, Height height);

}  // namespace cowboy::cip11::chain
