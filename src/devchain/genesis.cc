#include "devchain/genesis.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "devchain/json.h"

namespace cowboy::devchain {

Bytes32 chain_instance_id_of(const GenesisSpec& spec) {
  auto balances = spec.balances;
  auto parameters = spec.parameters;
  std::sort(balances.begin(), balances.end());
  std::sort(parameters.begin(), parameters.end());
  codec::Writer w(512);  // also keeps GCC 12 from a false -Wstringop-overflow on the first write
  w.raw(std::string_view("cowboy/devchain-genesis/v1"));
  w.bytes(as_bytes(spec.chain_name));
  w.fixed(spec.governance_admin);
  w.count(balances.size());
  for (const auto& [addr, amount] : balances) {
    w.fixed(addr);
    w.u128(amount);
  }
  w.count(parameters.size());
  for (const auto& [name, value] : parameters) {
    w.bytes(as_bytes(name));
    w.u64(value);
  }
  if (spec.cip11) put_cip11_genesis(w, *spec.cip11);
  return crypto::keccak256(w.data());
}

cbqs::Genesis to_registry_genesis(const GenesisSpec& spec) {
  cbqs::Genesis g;
  g.chain_instance_id = chain_instance_id_of(spec);
  g.governance_admin = spec.governance_admin;
  g.balances = spec.balances;
  g.parameters = spec.parameters;
  return g;
}

Result<GenesisSpec, std::string> genesis_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return Err{std::string("genesis must be a JSON object")};
  GenesisSpec spec;
  if (j.contains("chain_name")) {
    if (!j["chain_name"].is_string()) return Err{std::string("chain_name must be a string")};
    spec.chain_name = j["chain_name"];
  }
  if (!j.contains("governance_admin") || !j["governance_admin"].is_string())
    return Err{std::string("governance_admin (an address) is required")};
  auto admin = fixed_from_hex<20>(j["governance_admin"].get<std::string>());
  if (!admin) return Err{std::string("governance_admin is not a 20-byte hex address")};
  spec.governance_admin = *admin;
  if (j.contains("balances")) {
    if (!j["balances"].is_object()) return Err{std::string("balances must map addresses to decimal strings")};
    for (const auto& [key, value] : j["balances"].items()) {
      auto addr = fixed_from_hex<20>(key);
      auto amount = value.is_string() ? u128_from_string(value.get<std::string>()) : std::nullopt;
      if (!addr || !amount) return Err{"bad balance entry " + key};
      spec.balances.emplace_back(*addr, *amount);
    }
  }
  if (j.contains("parameters")) {
    if (!j["parameters"].is_object()) return Err{std::string("parameters must map cbqs.* names to integers")};
    for (const auto& [key, value] : j["parameters"].items()) {
      bool non_negative = value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
      if (!non_negative) return Err{"parameter " + key + " must be a non-negative integer"};
      spec.parameters.emplace_back(key, value.get<std::uint64_t>());
    }
  }
  if (j.contains("cip11")) {
    auto cip11 = cip11_genesis_from_json(j["cip11"]);
    if (!cip11) return Err{cip11.error()};
    spec.cip11 = std::move(*cip11);
  }
  if (auto state = cbqs::make_genesis(to_registry_genesis(spec)); !state)
    return Err{std::string("genesis refused by §18 rule 1: unknown cbqs.* key, a non-default value, "
                           "a duplicate or funded registry address")};
  return spec;
}

nlohmann::json genesis_to_json(const GenesisSpec& spec) {
  nlohmann::json balances = nlohmann::json::object(), parameters = nlohmann::json::object();
  for (const auto& [addr, amount] : spec.balances) balances[json::hex0x(addr)] = u128_to_string(amount);
  for (const auto& [name, value] : spec.parameters) parameters[name] = value;
  nlohmann::json out{{"chain_name", spec.chain_name},
                     {"governance_admin", json::hex0x(spec.governance_admin)},
                     {"balances", balances},
                     {"parameters", parameters}};
  if (spec.cip11) out["cip11"] = cip11_genesis_to_json(*spec.cip11);
  return out;
}

}  // namespace cowboy::devchain
