// The CIP-11 part of a devchain genesis: the u64 chain_id of every CIP-11
// preimage, ValidatorSetSnapshot(0) (§5.4: each validator's Ed25519 peer key
// and QUIC endpoint), the five §13 flags (each false unless given) and dev
// runners registered at height 0.
//
//   "cip11": {"chain_id": 7, "transport_enabled": true, "presence_shadow_enabled": false,
//             "presence_hard_exclude_enabled": false,
//             "validators": [{"peer_key": "0x…32 bytes", "endpoint": "127.0.0.1:7443",
//                             "vrf_key": "0x…32 bytes"}],
//             "present_first_enabled": true, "poll_disabled": false,
//             "heartbeat_timeout_blocks": 100, "mru_activation_height": 1000,
//             "runners": [{"key": "0x02…33 bytes", "stake": "1000", "job_kinds": ["Llm", "Http"],
//                          "max_concurrent": 4, "price": "0", "capabilities": ["gpu"]}],
//             "validator_set_changes": [{"activation_height": 40, "peer_keys": ["0x…32 bytes", …]}],
//             "overlap_blocks": 160, "finality_depth": 4}
//
// `vrf_key` (optional; every validator or none) is the ECVRF public key that
// proves the round seeds the validator leads, apart from its peer key
// (docs/cip11.md choice 100); without it the peer key's seed proves them.
// `validator_set_changes` schedules ValidatorSetSnapshot(1), (2), … (§5.4;
// docs/devchain.md D9): each from its activation height, its members genesis
// validators (their endpoints are the genesis entries'), kept in canonical
// order; `overlap_blocks` is §13's OVERLAP_BLOCKS for the §5.3 window.
// `finality_depth` (several validators only; 1 to kMaxRollbackDepth, absent:
// kMaxRollbackDepth) is F, how many blocks below the head a block is final
// (docs/devchain.md D12); with several validators a new chain's genesis must
// meet §9.2's selection-seed delay invariant as the devchain reads it,
// selection_seed_delay_views >= F + 1 (check_finality, at creation only).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "cip11/chain/instructions.h"
#include "cip11/chain/snapshots.h"
#include "cip11/chain/state.h"
#include "common/codec.h"
#include "devchain/fork.h"

namespace cowboy::devchain {

using Cip11Validator = cip11::chain::ValidatorEntry;

struct Cip11Genesis {
  cip11::chain::ChainParams params;  // multi_validator follows from `validators`
  std::vector<Cip11Validator> validators;
  std::vector<cip11::chain::RegisterRunner> runners;  // registered at height 0, stake minted
  std::vector<cip11::chain::ValidatorSetChange> validator_set_changes;  // epochs 1, 2, … (canonical order)
  std::uint64_t overlap_blocks = cip11::chain::kOverlapBlocks;
  std::uint64_t finality_depth = kDefaultFinalityDepth;  // F; read only with several validators
  bool operator==(const Cip11Genesis&) const = default;
};

/// ValidatorSetSnapshot(0)'s peer keys in snapshot order (what subsets and
/// validator_set_hash are computed over).
std::vector<crypto::Ed25519Public> validator_peer_keys(const Cip11Genesis& genesis);
/// The same keys in the canonical participant order of §5.4 (ascending
/// peer_pubkey): the order block proposers rotate in (devchain/block.h).
std::vector<crypto::Ed25519Public> canonical_validator_keys(const Cip11Genesis& genesis);

/// The ECVRF key that proves the round seeds a validator leads: its genesis
/// vrf_key, or, in a genesis that names none, its peer key (docs/cip11.md choice 100).
crypto::ecvrf::PublicKey vrf_key_of(const Cip11Validator& validator);
/// Those keys in the canonical order of canonical_validator_keys.
std::vector<crypto::ecvrf::PublicKey> canonical_vrf_keys(const Cip11Genesis& genesis);

/// The chain's finality depth: F with several genesis validators, 0 for a lone
/// producer, whose blocks are final when written (fork.h final_height).
std::uint64_t finality_depth_of(const Cip11Genesis& genesis);
/// The finality depth's range (what cip11_genesis_from_json checks): with
/// several validators 1 <= F <= kMaxRollbackDepth; a lone producer names no F.
Result<Unit, std::string> check_finality_depth(const Cip11Genesis& genesis);
/// §9.2's selection-seed delay invariant as the devchain meets it (docs/cip11.md
/// choice 157): check_finality_depth and, with several validators,
/// K = selection_seed_delay_views >= F + 1, so that, with every view from S's
/// to r_seed's committing a block, S is final before r_seed's seed is
/// revealed. The error says which rule failed. Checked only when a chain is
/// created (Node::open on an empty data directory): a chain created before F
/// was named (K = 3, F = 64) still opens and is still read.
Result<Unit, std::string> check_finality(const Cip11Genesis& genesis);

/// ValidatorSetSnapshot(0) and the scheduled changes (what every node reads
/// the active epoch and the §5.3 window from).
cip11::chain::ValidatorSnapshots validator_snapshots(const Cip11Genesis& genesis);

/// The registry at height 0: each genesis runner registered, Healthy, with a heartbeat at 0.
/// (cip11_genesis_from_json has checked that every key derives an address.)
cip11::chain::State cip11_genesis_state(const Cip11Genesis& genesis);
/// Canonical bytes for the chain_instance_id preimage.
void put_cip11_genesis(codec::Writer& w, const Cip11Genesis& genesis);

Result<Cip11Genesis, std::string> cip11_genesis_from_json(const nlohmann::json& j);
/// One change as the genesis and GET /v1/cip11/validator-sets spell it:
/// {"activation_height", "peer_keys"}; from_json checks the shape only.
nlohmann::json validator_set_change_to_json(const cip11::chain::ValidatorSetChange& c);
std::optional<cip11::chain::ValidatorSetChange> validator_set_change_from_json(const nlohmann::json& c);
nlohmann::json cip11_genesis_to_json(const Cip11Genesis& genesis);
/// One validator as the genesis and GET /v1/cip11/validators spell it:
/// {"peer_key", "endpoint", "vrf_key" when set, "chain_api" when set};
/// from_json checks the shape only.
nlohmann::json validator_entry_to_json(const Cip11Validator& v);
std::optional<Cip11Validator> validator_entry_from_json(const nlohmann::json& v);

}  // namespace cowboy::devchain
