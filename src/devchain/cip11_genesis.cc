#include "devchain/cip11_genesis.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cip11/chain/codec.h"
#include "cip11/chain/instructions.h"
#include "devchain/cip11_json.h"
#include "devchain/json.h"

namespace cowboy::devchain {

using Json = nlohmann::json;

std::vector<crypto::Ed25519Public> validator_peer_keys(const Cip11Genesis& genesis) {
  std::vector<crypto::Ed25519Public> keys;
  for (const auto& v : genesis.validators) keys.push_back(v.peer_key);
  return keys;
}

std::vector<crypto::Ed25519Public> canonical_validator_keys(const Cip11Genesis& genesis) {
  auto keys = validator_peer_keys(genesis);
  std::sort(keys.begin(), keys.end());
  return keys;
}

crypto::ecvrf::PublicKey vrf_key_of(const Cip11Validator& validator) {
  return validator.vrf_key.value_or(validator.peer_key);
}

std::vector<crypto::ecvrf::PublicKey> canonical_vrf_keys(const Cip11Genesis& genesis) {
  std::vector<const Cip11Validator*> order;
  for (const auto& v : genesis.validators) order.push_back(&v);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->peer_key < b->peer_key; });
  std::vector<crypto::ecvrf::PublicKey> keys;
  for (const auto* v : order) keys.push_back(vrf_key_of(*v));
  return keys;
}

cip11::chain::ValidatorSnapshots validator_snapshots(const Cip11Genesis& genesis) {
  return cip11::chain::ValidatorSnapshots::scheduled(validator_peer_keys(genesis), genesis.validator_set_changes,
                                                     genesis.overlap_blocks);
}

std::uint64_t finality_depth_of(const Cip11Genesis& genesis) {
  return genesis.validators.size() > 1 ? genesis.finality_depth : 0;
}

Result<Unit, std::string> check_finality_depth(const Cip11Genesis& genesis) {
  const std::uint64_t f = genesis.finality_depth;
  if (genesis.validators.size() <= 1) {
    if (f != kDefaultFinalityDepth)
      return Err{std::string("cip11.finality_depth is for several validators: a lone producer's blocks are final when written")};
    return Unit{};
  }
  if (f == 0 || f > kMaxRollbackDepth)
    return Err{"cip11.finality_depth must be from 1 to " + std::to_string(kMaxRollbackDepth) + " (the undo horizon), not " +
               std::to_string(f)};
  return Unit{};
}

Result<Unit, std::string> check_finality(const Cip11Genesis& genesis) {
  if (auto depth = check_finality_depth(genesis); !depth) return depth;
  const std::uint64_t f = genesis.finality_depth, k = genesis.params.selection_seed_delay_views;
  if (genesis.validators.size() > 1 && k < f + 1)
    return Err{"cip11.selection_seed_delay_views (K = " + std::to_string(k) + ") must be at least finality_depth + 1 (" +
               std::to_string(f + 1) + ") with several validators: block S must be final before the seed of round " +
               "r_submit + K is revealed (CIP-11 §9.2 selection-seed delay invariant)"};
  return Unit{};
}

cip11::chain::State cip11_genesis_state(const Cip11Genesis& genesis) {
  cip11::chain::State state;
  for (const auto& g : genesis.runners) {
    auto address = crypto::secp256k1_key_address(g.key);
    if (!address) continue;
    state.runners[*address] = cip11::chain::runner_record(g, *address, cip11::Height{0});
    state.index.register_runner(*address);
  }
  return state;
}

void put_cip11_genesis(codec::Writer& w, const Cip11Genesis& genesis) {
  w.raw(std::string_view("cowboy/devchain-genesis-cip11/v1"));
  cip11::chain::put_params(w, genesis.params);
  w.count(genesis.validators.size());
  for (const auto& v : genesis.validators) {
    w.fixed(v.peer_key);
    w.bytes(as_bytes(v.endpoint));
  }
  w.count(genesis.runners.size());
  for (const auto& r : genesis.runners) w.bytes(cip11::chain::encode_instruction(r));
  // Only a chain that schedules changes names them, and only one that names
  // VRF keys hashes them, so every older genesis keeps its chain_instance_id.
  if (!genesis.validator_set_changes.empty() || genesis.overlap_blocks != cip11::chain::kOverlapBlocks) {
    w.raw(std::string_view("validator-set-changes/v1"));
    w.u64(genesis.overlap_blocks);
    w.count(genesis.validator_set_changes.size());
    for (const auto& c : genesis.validator_set_changes) {
      w.u64(c.activation_height.value);
      w.count(c.peer_keys.size());
      for (const auto& k : c.peer_keys) w.fixed(k);
    }
  }
  // Only a genesis that names a finality depth other than the default hashes
  // it, so every older genesis keeps its chain_instance_id (D12).
  if (genesis.finality_depth != kDefaultFinalityDepth) {
    w.raw(std::string_view("finality-depth/v1"));
    w.u64(genesis.finality_depth);
  }
  if (genesis.validators.empty() || !genesis.validators.front().vrf_key) return;  // all or none (cip11_genesis_from_json)
  w.raw(std::string_view("validator-vrf-keys/v1"));
  for (const auto& v : genesis.validators) w.fixed(*v.vrf_key);
}

Json validator_set_change_to_json(const cip11::chain::ValidatorSetChange& c) {
  Json keys = Json::array();
  for (const auto& k : c.peer_keys) keys.push_back(json::hex0x(k));
  return {{"activation_height", c.activation_height.value}, {"peer_keys", keys}};
}

std::optional<cip11::chain::ValidatorSetChange> validator_set_change_from_json(const Json& c) {
  if (!c.is_object() || !c.contains("activation_height") || !c["activation_height"].is_number_unsigned() ||
      !c.contains("peer_keys") || !c["peer_keys"].is_array())
    return std::nullopt;
  cip11::chain::ValidatorSetChange out{cip11::Height{c["activation_height"].get<std::uint64_t>()}, {}};
  for (const auto& k : c["peer_keys"]) {
    auto key = k.is_string() ? fixed_from_hex<32>(k.get<std::string>()) : std::nullopt;
    if (!key) return std::nullopt;
    out.peer_keys.push_back(*key);
  }
  return out;
}

Json validator_entry_to_json(const Cip11Validator& v) {
  Json out{{"peer_key", json::hex0x(v.peer_key)}, {"endpoint", v.endpoint}};
  if (v.vrf_key) out["vrf_key"] = json::hex0x(*v.vrf_key);
  if (!v.chain_api.empty()) out["chain_api"] = v.chain_api;
  return out;
}

std::optional<Cip11Validator> validator_entry_from_json(const Json& v) {
  const auto text = [&](const char* key) { return v.contains(key) && v[key].is_string(); };
  if (!v.is_object() || !text("peer_key") || !text("endpoint")) return std::nullopt;
  auto key = fixed_from_hex<32>(v["peer_key"].get<std::string>());
  if (!key) return std::nullopt;
  Cip11Validator out{*key, v["endpoint"].get<std::string>()};
  if (v.contains("vrf_key")) {
    auto vrf = text("vrf_key") ? fixed_from_hex<32>(v["vrf_key"].get<std::string>()) : std::nullopt;
    if (!vrf) return std::nullopt;
    out.vrf_key = *vrf;
  }
  if (v.contains("chain_api")) {
    if (!text("chain_api")) return std::nullopt;
    out.chain_api = v["chain_api"].get<std::string>();
  }
  return out;
}

namespace {

using Error = std::string;

std::optional<std::uint64_t> u64_field(const Json& j, const char* key) {
  if (!j.contains(key)) return std::nullopt;
  const auto& v = j[key];
  if (v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0)) return v.get<std::uint64_t>();
  return std::nullopt;
}

Result<std::uint32_t, Error> kinds_from_json(const Json& j) {
  if (!j.is_array() || j.empty()) return Err{Error("job_kinds must be a non-empty list of §9.4 names")};
  std::uint32_t mask = 0;
  for (const auto& name : j) {
    auto kind = name.is_string() ? cip11::job_kind_named(name.get<std::string>()) : std::nullopt;
    if (!kind) return Err{"unknown job kind " + name.dump()};
    mask |= 1u << static_cast<unsigned>(*kind);
  }
  return mask;
}

Result<cip11::chain::RegisterRunner, Error> runner_from_json(const Json& j) {
  if (!j.is_object() || !j.contains("key") || !j["key"].is_string()) return Err{Error("a runner needs its key")};
  cip11::chain::RegisterRunner r;
  auto key = fixed_from_hex<33>(j["key"].get<std::string>());
  if (!key || !crypto::secp256k1_key_address(*key)) return Err{Error("runner key is not a compressed secp256k1 key")};
  r.key = *key;
  auto amount = [&](const char* name) -> std::optional<u128> {
    if (!j.contains(name)) return u128{0};
    return j[name].is_string() ? u128_from_string(j[name].get<std::string>()) : std::nullopt;
  };
  auto stake = amount("stake"), price = amount("price");
  if (!stake || !price) return Err{Error("stake and price are decimal strings")};
  r.stake = *stake;
  r.price = *price;
  auto kinds = kinds_from_json(j.value("job_kinds", Json::array({"Custom"})));
  if (!kinds) return Err{kinds.error()};
  r.job_kinds = *kinds;
  auto max = j.contains("max_concurrent") ? u64_field(j, "max_concurrent") : std::optional<std::uint64_t>(1);
  if (!max || *max == 0 || *max > UINT32_MAX) return Err{Error("max_concurrent must be 1..2^32-1")};
  r.max_concurrent = static_cast<std::uint32_t>(*max);
  if (j.contains("capabilities")) {
    const auto& caps = j["capabilities"];
    if (!caps.is_array() || caps.size() > cip11::chain::kMaxCapabilities)
      return Err{Error("capabilities must be a list of at most 16 strings")};
    for (const auto& c : caps) {
      if (!c.is_string() || c.get<std::string>().size() > cip11::chain::kMaxCapabilityBytes)
        return Err{Error("a capability is a string of at most 64 bytes")};
      r.capabilities.push_back(c.get<std::string>());
    }
  }
  return r;
}

// A validator's "vrf_key" (docs/cip11.md choice 100): a valid ECVRF public
// key (RFC 9381 ECVRF_validate_key, prime-order subgroup) that is not its peer
// key, so the two secrets stay apart.
Result<std::optional<crypto::ecvrf::PublicKey>, Error> vrf_key_from_json(const Json& v,
                                                                         const crypto::Ed25519Public& peer_key) {
  if (!v.contains("vrf_key")) return std::optional<crypto::ecvrf::PublicKey>{};
  auto key = v["vrf_key"].is_string() ? fixed_from_hex<32>(v["vrf_key"].get<std::string>()) : std::nullopt;
  if (!key) return Err{Error("a validator's vrf_key is 32 bytes of hex")};
  if (auto valid = crypto::ecvrf::validate_key(*key); !valid)
    return Err{"a validator's vrf_key is not an ECVRF public key (" + std::string(crypto::ecvrf::to_string(valid.error())) +
               ")"};
  if (*key == peer_key) return Err{Error("a validator's vrf_key must not be its peer_key")};
  return std::optional<crypto::ecvrf::PublicKey>(*key);
}

// Every validator names a vrf_key or none does, and no two name the same.
Result<Unit, Error> check_vrf_keys(const std::vector<Cip11Validator>& validators) {
  std::vector<crypto::ecvrf::PublicKey> keys;
  for (const auto& v : validators)
    if (v.vrf_key) keys.push_back(*v.vrf_key);
  if (!keys.empty() && keys.size() != validators.size())
    return Err{Error("either every validator names a vrf_key or none does")};
  std::sort(keys.begin(), keys.end());
  if (std::adjacent_find(keys.begin(), keys.end()) != keys.end())
    return Err{Error("two validators name the same vrf_key")};
  return Unit{};
}

// The §5.4 rules a schedule must keep: activation heights strictly ascending
// from 1, every member a genesis validator, no member twice, and each set
// different from the one before (an unchanged list is no reconfiguration).
Result<Unit, Error> changes_from_json(const Json& j, Cip11Genesis& g) {
  if (j.contains("overlap_blocks")) {
    auto v = u64_field(j, "overlap_blocks");
    if (!v || *v == 0) return Err{Error("cip11.overlap_blocks must be a positive u64")};
    g.overlap_blocks = *v;
  }
  if (!j.contains("validator_set_changes")) return Unit{};
  const auto& list = j["validator_set_changes"];
  if (!list.is_array()) return Err{Error("cip11.validator_set_changes must be a list")};
  const auto genesis_keys = validator_peer_keys(g);
  std::vector<crypto::Ed25519Public> previous = canonical_validator_keys(g);  // the same set, compared in one order
  std::uint64_t last = 0;
  for (const auto& c : list) {
    auto height = c.is_object() ? u64_field(c, "activation_height") : std::nullopt;
    if (!height || *height <= last)
      return Err{Error("each validator set change needs an activation_height above the one before (and above 0)")};
    if (!c.contains("peer_keys") || !c["peer_keys"].is_array() || c["peer_keys"].empty())
      return Err{Error("a validator set change lists its peer_keys")};
    cip11::chain::ValidatorSetChange change{cip11::Height{*height}, {}};
    for (const auto& k : c["peer_keys"]) {
      auto key = k.is_string() ? fixed_from_hex<32>(k.get<std::string>()) : std::nullopt;
      if (!key || std::find(genesis_keys.begin(), genesis_keys.end(), *key) == genesis_keys.end())
        return Err{Error("a validator set change names a key that is not a genesis validator's peer key")};
      change.peer_keys.push_back(*key);
    }
    std::sort(change.peer_keys.begin(), change.peer_keys.end());  // canonical (§5.4)
    if (std::adjacent_find(change.peer_keys.begin(), change.peer_keys.end()) != change.peer_keys.end())
      return Err{Error("a validator set change names a key twice")};
    if (change.peer_keys == previous) return Err{Error("a validator set change must change the ordered peer keys")};
    previous = change.peer_keys;
    last = *height;
    g.validator_set_changes.push_back(std::move(change));
  }
  return Unit{};
}

}  // namespace

Result<Cip11Genesis, std::string> cip11_genesis_from_json(const Json& j) {
  if (!j.is_object()) return Err{Error("cip11 must be an object")};
  Cip11Genesis g;
  auto& p = g.params;
  auto chain_id = u64_field(j, "chain_id");
  if (!chain_id) return Err{Error("cip11.chain_id (a u64) is required")};
  p.chain_id = *chain_id;
  for (auto [key, flag] : {std::pair{"transport_enabled", &p.transport_enabled},
                           std::pair{"presence_shadow_enabled", &p.presence_shadow_enabled},
                           std::pair{"present_first_enabled", &p.present_first_enabled},
                           std::pair{"poll_disabled", &p.poll_disabled},
                           std::pair{"presence_hard_exclude_enabled", &p.presence_hard_exclude_enabled}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_boolean()) return Err{std::string("cip11.") + key + " must be true or false"};
    *flag = j[key].get<bool>();
  }
  for (auto [key, value] : {std::pair{"heartbeat_timeout_blocks", &p.heartbeat_timeout_blocks},
                            std::pair{"mru_activation_height", &p.mru_activation_height.value},
                            std::pair{"selection_seed_delay_views", &p.selection_seed_delay_views}}) {
    if (!j.contains(key) || j[key].is_null()) continue;
    auto v = u64_field(j, key);
    if (!v) return Err{std::string("cip11.") + key + " must be a u64"};
    *value = *v;
  }
  if (p.heartbeat_timeout_blocks == 0) return Err{Error("cip11.heartbeat_timeout_blocks must be positive")};
  // Mode A's operating point (§8.4): MIN_SUBSET/MAX_SUBSET size k, t_hard its receipt threshold.
  for (auto [key, value] : {std::pair{"min_subset", &p.subset.min_subset}, std::pair{"max_subset", &p.subset.max_subset}}) {
    if (!j.contains(key)) continue;
    auto v = u64_field(j, key);
    if (!v || *v == 0 || *v > 1024) return Err{std::string("cip11.") + key + " must be a count from 1 to 1024"};
    *value = static_cast<std::size_t>(*v);
  }
  if (p.subset.max_subset < p.subset.min_subset) return Err{Error("cip11.max_subset must be at least min_subset")};
  if (j.contains("t_hard")) {
    auto v = u64_field(j, "t_hard");
    if (!v || *v == 0 || *v > 1024) return Err{Error("cip11.t_hard must be a count from 1 to 1024")};
    p.t_hard = static_cast<std::uint32_t>(*v);
  }
  if (j.contains("validators")) {
    if (!j["validators"].is_array()) return Err{Error("cip11.validators must be a list")};
    for (const auto& v : j["validators"]) {
      auto key = v.is_object() && v.contains("peer_key") && v["peer_key"].is_string()
                     ? fixed_from_hex<32>(v["peer_key"].get<std::string>())
                     : std::nullopt;
      if (!key || !v.contains("endpoint") || !v["endpoint"].is_string())
        return Err{Error("a validator is {\"peer_key\": 32 bytes of hex, \"endpoint\": \"host:port\"}")};
      g.validators.push_back({*key, v["endpoint"].get<std::string>()});
      if (auto vrf = vrf_key_from_json(v, *key); !vrf)
        return Err{vrf.error()};
      else
        g.validators.back().vrf_key = *vrf;
    }
    if (auto checked = check_vrf_keys(g.validators); !checked) return Err{checked.error()};
  }
  p.multi_validator = g.validators.size() > 1;
  if (j.contains("finality_depth")) {
    auto v = u64_field(j, "finality_depth");
    if (!v) return Err{Error("cip11.finality_depth must be a u64")};
    g.finality_depth = *v;
  }
  // Only the depth's range: §9.2's K >= F + 1 is checked where a chain is
  // created (check_finality), so a chain made before F was named still reads.
  if (auto checked = check_finality_depth(g); !checked) return Err{checked.error()};
  if (auto changes = changes_from_json(j, g); !changes) return Err{changes.error()};
  if (j.contains("runners")) {
    if (!j["runners"].is_array()) return Err{Error("cip11.runners must be a list")};
    for (const auto& r : j["runners"]) {
      auto runner = runner_from_json(r);
      if (!runner) return Err{runner.error()};
      g.runners.push_back(std::move(*runner));
    }
  }
  return g;
}

Json cip11_genesis_to_json(const Cip11Genesis& g) {
  Json validators = Json::array(), runners = Json::array();
  for (const auto& v : g.validators) validators.push_back(validator_entry_to_json(v));
  for (const auto& r : g.runners) {
    runners.push_back({{"key", json::hex0x(r.key)}, {"stake", u128_to_string(r.stake)},
                       {"job_kinds", json::job_kinds_to_json(r.job_kinds)},
                       {"max_concurrent", r.max_concurrent}, {"price", u128_to_string(r.price)},
                       {"capabilities", r.capabilities}});
  }
  Json changes = Json::array();
  for (const auto& c : g.validator_set_changes) changes.push_back(validator_set_change_to_json(c));
  const auto& p = g.params;
  Json out = {{"chain_id", p.chain_id},
          {"transport_enabled", p.transport_enabled},
          {"presence_shadow_enabled", p.presence_shadow_enabled},
          {"present_first_enabled", p.present_first_enabled},
          {"poll_disabled", p.poll_disabled},
          {"presence_hard_exclude_enabled", p.presence_hard_exclude_enabled},
          {"heartbeat_timeout_blocks", p.heartbeat_timeout_blocks},
          {"mru_activation_height", p.mru_activation_height.value},
          {"selection_seed_delay_views", p.selection_seed_delay_views},
          {"min_subset", p.subset.min_subset},
          {"max_subset", p.subset.max_subset},
          {"t_hard", p.t_hard},
          {"validators", validators},
          {"runners", runners}};
  if (!changes.empty()) out["validator_set_changes"] = changes;  // what an older genesis never had, only when set
  if (g.overlap_blocks != cip11::chain::kOverlapBlocks) out["overlap_blocks"] = g.overlap_blocks;
  if (g.finality_depth != kDefaultFinalityDepth) out["finality_depth"] = g.finality_depth;
  return out;
}

}  // namespace cowboy::devchain
