// What a validator knows of the Runner Registry (§7.1, §8.5) and the
// admission gate built on it (§6.2, §5.2): a runner is admitted when the
// chain's latest applied block holds it registered and not deregistered, and
// this validator is in its Sub(R) - during a §5.3 overlap, in the Sub of the
// snapshot the runner's Hello names (epoch-paired).
//
// Admission reads the runner's record through the chain port at each Hello,
// so a deregistration counts from the block that applies it; each block's
// deregistrations also arrive with its effects (on_block), which is how a
// runner's open connections are closed at that block. The directory keeps
// each runner's registry index (fixed for life) for the presence field, read
// with the whole registry when an admitted runner is not yet known.
//
// Thread-safe: admission runs on signature worker threads, the block path on
// the service's.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "cip11/chain/port.h"
#include "cip11/handshake.h"
#include "cip11/presence.h"

namespace cowboy::cip11 {

class RunnerDirectory {
 public:
  explicit RunnerDirectory(chain::ChainPort& chain) : chain_(chain) {}

  /// Reads the whole registry again. False (and the old view kept) if the chain cannot answer.
  bool refresh();
  /// The runner's registry index, refreshing once if it is not known yet (a newer registration).
  std::optional<std::uint32_t> index_of(const Address& runner);
  /// The runner's record in the chain's latest applied block; nullopt when it
  /// is not registered or the chain does not answer.
  std::optional<chain::RunnerRecord> current(const Address& runner);
  /// A block's deregistrations: from now on these runners count as deregistered here.
  void on_deregistered(const std::vector<Address>& runners);
  /// Whether a block this directory saw deregistered `runner` (and no later
  /// admission read found it registered again).
  bool deregistered(const Address& runner) const;
  /// §8.1: the present set over registry(H-1) - only runners whose index is
  /// below `registry_size` (registered as of the parent block).
  PresentSet present_set(const std::vector<Address>& runners, std::uint32_t registry_size) const;
  /// |registry| as of the directory's last read (the indices it knows are 0..size-1).
  std::uint32_t size() const;
  /// Reads the registry again when it knows fewer than `registry_size` runners.
  void know(std::uint32_t registry_size);
  /// The auth key of the runner at registry `index`; nullopt beyond the last read.
  std::optional<crypto::Secp256k1Compressed> key_at(std::uint32_t index) const;

 private:
  chain::ChainPort& chain_;
  mutable std::mutex mu_;
  std::map<Address, std::uint32_t> index_;
  std::vector<crypto::Secp256k1Compressed> keys_;  // by registry index
  std::set<Address> deregistered_;
};

class RegistryAdmission final : public Admission {
 public:
  /// `validators`: ValidatorSetSnapshot(0)'s peer keys in snapshot order; `me` among them.
  /// `subset`: the chain's MIN_SUBSET and MAX_SUBSET (k for Sub(R)). The Hello's
  /// pair is the handshake's to check (one epoch).
  RegistryAdmission(RunnerDirectory& directory, std::vector<crypto::Ed25519Public> validators,
                    const crypto::Ed25519Public& me, SubsetParams subset = {})
      : directory_(directory), validators_(std::move(validators)), me_(me), subset_(subset) {}
  /// Epoch-paired (§5.3): the Hello's (subset_epoch, validator_set_hash) must
  /// name a snapshot current at `height` (the validator's latest applied
  /// block), `me` must be in it and in its Sub(R).
  /// `snapshots` change as the chain schedules validator sets (D10); they outlive this.
  RegistryAdmission(RunnerDirectory& directory, const chain::SharedSnapshots& snapshots, const crypto::Ed25519Public& me,
                    SubsetParams subset, const std::atomic<Height>& height)
      : directory_(directory), me_(me), subset_(subset), snapshots_(&snapshots), height_(&height) {}
  /// kAuthFailed for a key that is no registered, live runner in the latest
  /// applied block; kNotInSubset when this validator is not in its Sub(R).
  std::optional<GoodbyeReason> admit(const Hello& peer) override;

 private:
  RunnerDirectory& directory_;
  const std::vector<crypto::Ed25519Public> validators_;
  const crypto::Ed25519Public me_;
  const SubsetParams subset_;
  const chain::SharedSnapshots* snapshots_ = nullptr;
  const std::atomic<Height>* height_ = nullptr;
};

}  // namespace cowboy::cip11
