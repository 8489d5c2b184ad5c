// The CIP-11 chain plane's reads, as the devchain serves them (docs/devchain.md):
// runners, jobs, a block's presence field and the CIP-2 poll view.
#pragma once

#include <vector>

#include "cip11/chain/machine.h"
#include "devchain/api.h"
#include "devchain/cip11_genesis.h"

namespace cowboy::devchain {

struct BlockPresence {
  std::uint64_t height = 0;
  std::optional<Bytes> field;        // the literal PresenceInputV1 bytes the block carries
  std::vector<std::uint32_t> present;  // the registry indices they stand for
};

class Cip11Api {
 public:
  virtual ~Cip11Api() = default;
  /// NotFound on a chain whose genesis has no CIP-11 section.
  virtual ApiResult<Cip11Genesis> cip11_genesis() = 0;
  /// Every registered runner, in registry (ACTIVE_RUNNERS_KEY) index order.
  virtual ApiResult<std::vector<cip11::chain::RunnerRecord>> runners() = 0;
  virtual ApiResult<cip11::chain::RunnerRecord> runner(const Address& runner) = 0;
  /// Mode A (§8.3): the runner's presence_anchor and presence_proven_until;
  /// NotFound until a certificate of its is applied.
  virtual ApiResult<cip11::chain::PresenceProof> presence_proof(const Address& runner) = 0;
  virtual ApiResult<cip11::chain::JobRecord> job(const cip11::JobId& job_id) = 0;
  /// The CIP-2 poll view (§14): the non-terminal jobs whose current committee holds `runner`.
  virtual ApiResult<std::vector<cip11::chain::JobRecord>> runner_jobs(const Address& runner) = 0;
  virtual ApiResult<BlockPresence> block_presence(std::uint64_t height) = 0;
  /// The assignments block `height` made and ended (consumed seeds left out):
  /// how a validator that does not produce the blocks learns what to push.
  virtual ApiResult<cip11::chain::Effects> block_assignments(std::uint64_t height) = 0;
  /// Every ValidatorSetSnapshot after the genesis one as the chain holds it
  /// now, the n-th as epoch n: the genesis schedule's, then those governance
  /// scheduled by transaction (docs/devchain.md D10).
  virtual ApiResult<std::vector<cip11::chain::ValidatorSetChange>> validator_set_changes() = 0;
  /// Every validator the chain has named, as where to reach it (docs/cip11.md
  /// choice 130): the genesis entries, then each validator a governance
  /// change named first with that change's entry (QUIC endpoint, VRF key,
  /// chain API), in the order named.
  virtual ApiResult<std::vector<cip11::chain::ValidatorEntry>> validators() = 0;
};

}  // namespace cowboy::devchain
