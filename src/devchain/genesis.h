// A devchain genesis: a name, the governance admin, funded addresses and an
// optional explicit §15 parameter set (validated by §18 rule 1). The chain's
// chain_instance_id is derived from it, so two chains with different genesis
// never share an id.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "cbqs/chain/registry.h"
#include "devchain/cip11_genesis.h"

namespace cowboy::devchain {

struct GenesisSpec {
  std::string chain_name = "devchain";
  Address governance_admin{};
  std::vector<std::pair<Address, u128>> balances;
  std::vector<std::pair<std::string, std::uint64_t>> parameters;
  std::optional<Cip11Genesis> cip11;  // absent: a CIP-39-only chain with no runners
};

/// keccak256("cowboy/devchain-genesis/v1" || canonical(spec)), with balances
/// and parameters sorted so that their order in a file does not matter. A
/// CIP-11 section is hashed after them when present, so a CIP-39-only genesis
/// keeps the id it always had.
Bytes32 chain_instance_id_of(const GenesisSpec& spec);
cbqs::Genesis to_registry_genesis(const GenesisSpec& spec);

/// {"chain_name": "...", "governance_admin": "0x..", "balances": {"0x..": "123"},
///  "parameters": {"cbqs.name": 1}, "cip11": {…cip11_genesis.h}}; an error message names the bad field.
Result<GenesisSpec, std::string> genesis_from_json(const nlohmann::json& j);
nlohmann::json genesis_to_json(const GenesisSpec& spec);

}  // namespace cowboy::devchain
