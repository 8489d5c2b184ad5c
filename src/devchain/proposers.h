// devchain::Proposers: who proposes the blocks at each height of a devchain
// with several validators (docs/devchain.md D2, D9). The consensus epoch of a
// height is the ValidatorSetSnapshot active there (the genesis's, the genesis
// schedule's, then governance's, D10); its validators, in the canonical order
// of §5.4 (ascending peer_pubkey), take turns by view: the leader of view v at
// height h is validators_E[v mod N_E], it signs the block with its peer key
// and proves the block's round seed with its ECVRF key. So a validator named
// in a later snapshot proposes from its activation height on, whether or not
// the genesis names it, and one left out of the active snapshot proposes
// nothing there. Pure: built from the genesis and the changes governance
// scheduled; every node builds the same.
#pragma once

#include <optional>
#include <vector>

#include "cip11/chain/snapshots.h"
#include "common/ecvrf.h"
#include "devchain/cip11_genesis.h"
#include "devchain/validator_set_tx.h"

namespace cowboy::devchain {

/// One consensus epoch's block producers.
struct EpochValidators {
  std::uint64_t epoch = 0;
  std::uint64_t activation_height = 0;
  std::vector<crypto::Ed25519Public> peers;        // canonical order (§5.4)
  std::vector<crypto::ecvrf::PublicKey> vrf_keys;  // each peer's ECVRF key, in the same order
};

class Proposers {
 public:
  Proposers() = default;  // a chain with no validator: nobody proposes
  /// Epoch 0 from the genesis validators, each later snapshot of `snapshots`
  /// with the VRF keys its entries name: a genesis validator's (vrf_key_of),
  /// or the one the governance change that named it first carries.
  static Proposers of(const Cip11Genesis& genesis, const cip11::chain::ValidatorSnapshots& snapshots,
                      const std::vector<ScheduleValidatorSet>& governance);

  /// The validators of the epoch active at `height`; null with none.
  const EpochValidators* at(std::uint64_t height) const;
  /// The canonical index of the leader of `view` at `height`.
  std::optional<std::uint32_t> leader(std::uint64_t height, cip11::View view) const;
  /// `peer`'s index among the validators active at `height`; nullopt when it is not one.
  std::optional<std::uint32_t> index_of(std::uint64_t height, const crypto::Ed25519Public& peer) const;
  const std::vector<EpochValidators>& epochs() const { return epochs_; }

 private:
  std::vector<EpochValidators> epochs_;  // ascending activation heights
};

}  // namespace cowboy::devchain
