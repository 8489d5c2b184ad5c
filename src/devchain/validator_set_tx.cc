#include "devchain/validator_set_tx.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/ecvrf.h"
#include "devchain/cip11_genesis.h"

namespace cowboy::devchain {

namespace {
constexpr std::uint8_t kVersion = 1;
constexpr std::uint8_t kVersionChainApi = 2;  // each entry also names its chain API (choice 130)
// peer key, vrf key and an endpoint's length: the least one entry takes (version 2: and a chain API's length).
constexpr std::size_t kMinEntryBytes = 32 + 32 + 4;

bool names_chain_api(const ScheduleValidatorSet& s) {
  return std::any_of(s.validators.begin(), s.validators.end(), [](const auto& v) { return !v.chain_api.empty(); });
}
}  // namespace

Bytes encode_schedule_validator_set(const ScheduleValidatorSet& s) {
  // Version 1 while no entry names a chain API: a change written before
  // choice 130 keeps its bytes, and so the state roots that cover it.
  const bool v2 = names_chain_api(s);
  codec::Writer w;
  w.u8(v2 ? kVersionChainApi : kVersion);
  w.u64(s.epoch);
  w.u64(s.activation_height);
  w.count(s.validators.size());
  for (const auto& v : s.validators) {
    w.fixed(v.peer_key);
    w.fixed(v.vrf_key.value_or(crypto::ecvrf::PublicKey{}));
    w.bytes(as_bytes(v.endpoint));
    if (v2) w.bytes(as_bytes(v.chain_api));
  }
  return std::move(w).take();
}

Result<ScheduleValidatorSet, codec::DecodeError> decode_schedule_validator_set(ByteView bytes) {
  codec::Reader r(bytes);
  ScheduleValidatorSet s;
  const std::uint8_t version = r.u8();
  if (r.ok() && version != kVersion && version != kVersionChainApi) r.fail(codec::DecodeError::kBadVersion);
  const bool v2 = version == kVersionChainApi;
  s.epoch = r.u64();
  s.activation_height = r.u64();
  const std::uint32_t n = r.count(kMaxDecodedSetValidators, kMinEntryBytes + (v2 ? 4 : 0));
  s.validators.reserve(n);
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    cip11::chain::ValidatorEntry v;
    v.peer_key = r.fixed<32>();
    v.vrf_key = r.fixed<32>();
    Bytes endpoint = r.bytes(kMaxValidatorEndpointBytes);
    v.endpoint.assign(endpoint.begin(), endpoint.end());
    if (v2) {
      Bytes api = r.bytes(kMaxValidatorEndpointBytes);
      v.chain_api.assign(api.begin(), api.end());
    }
    s.validators.push_back(std::move(v));
  }
  r.finish();
  // One encoding per value: version 2 names at least one chain API.
  if (r.ok() && v2 && !names_chain_api(s)) r.fail(codec::DecodeError::kBadVersion);
  if (!r.ok()) return Err{r.error()};
  return s;
}

std::string_view validator_set_refusal_name(ValidatorSetRefusal r) {
  switch (r) {
    case ValidatorSetRefusal::kCip11NotEnabled: return "Cip11NotEnabled";
    case ValidatorSetRefusal::kNotGovernanceAdmin: return "NotGovernanceAdmin";
    case ValidatorSetRefusal::kMalformedValidatorSet: return "MalformedValidatorSet";
    case ValidatorSetRefusal::kWrongEpoch: return "WrongEpoch";
    case ValidatorSetRefusal::kChangePending: return "ChangePending";
    case ValidatorSetRefusal::kLeadTooShort: return "LeadTooShort";
    case ValidatorSetRefusal::kEmptySet: return "EmptySet";
    case ValidatorSetRefusal::kTooManyValidators: return "TooManyValidators";
    case ValidatorSetRefusal::kDuplicateKey: return "DuplicateKey";
    case ValidatorSetRefusal::kBadVrfKey: return "BadVrfKey";
    case ValidatorSetRefusal::kBadEndpoint: return "BadEndpoint";
    case ValidatorSetRefusal::kValidatorMismatch: return "ValidatorMismatch";
    case ValidatorSetRefusal::kUnchangedSet: return "UnchangedSet";
  }
  return "Unknown";
}

std::optional<ValidatorSetRefusal> check_schedule(const ScheduleValidatorSet& s, const Cip11Genesis& genesis,
                                                  const std::vector<ScheduleValidatorSet>& earlier,
                                                  const cip11::chain::ValidatorSnapshots& scheduled,
                                                  std::uint64_t height) {
  using R = ValidatorSetRefusal;
  const auto& last = scheduled.epochs().back();
  if (s.epoch != last.epoch.value + 1) return R::kWrongEpoch;
  // One change at a time: with the lead below, the previous change's overlap
  // window has ended before the next one activates (at most two current snapshots, §5.3).
  if (last.activation_height > cip11::Height{height}) return R::kChangePending;
  const std::uint64_t lead = genesis.overlap_blocks;
  if (height > UINT64_MAX - lead || s.activation_height < height + lead) return R::kLeadTooShort;
  if (s.validators.empty()) return R::kEmptySet;
  if (s.validators.size() > kMaxSetValidators) return R::kTooManyValidators;
  std::set<crypto::Ed25519Public> peers;
  std::set<crypto::ecvrf::PublicKey> vrfs;
  for (const auto& v : s.validators)
    if (!peers.insert(v.peer_key).second || !vrfs.insert(v.vrf_key.value_or(crypto::ecvrf::PublicKey{})).second)
      return R::kDuplicateKey;
  // Every validator any snapshot named so far, with the entry that named it
  // first: a validator keeps its keys and endpoint from one epoch to the next.
  // vrf_key_of's rule for a genesis entry, spelled here so this codec links
  // without the genesis JSON (fuzz targets).
  // A genesis entry names no chain API (its peers' --peers lists do).
  struct Known {
    crypto::ecvrf::PublicKey vrf;
    std::string endpoint, chain_api;
  };
  std::map<crypto::Ed25519Public, Known> known;
  for (const auto& g : genesis.validators) known.emplace(g.peer_key, Known{g.vrf_key.value_or(g.peer_key), g.endpoint, {}});
  for (const auto& e : earlier)
    for (const auto& v : e.validators)
      known.emplace(v.peer_key, Known{v.vrf_key.value_or(v.peer_key), v.endpoint, v.chain_api});
  const auto host_port = [](const std::string& e) { return !e.empty() && e.find(':') != std::string::npos; };
  for (const auto& v : s.validators) {
    const auto vrf = v.vrf_key.value_or(crypto::ecvrf::PublicKey{});
    if (auto k = known.find(v.peer_key); k != known.end()) {
      if (vrf != k->second.vrf || v.endpoint != k->second.endpoint || v.chain_api != k->second.chain_api)
        return R::kValidatorMismatch;
      continue;
    }
    // A validator no snapshot named before (it joins, D2): a key that proves
    // round seeds (§9.2), no known validator's, a QUIC endpoint to reach it
    // at, and, if it names one, the chain API its peers reach it at (choice 130).
    if (!crypto::ecvrf::validate_key(vrf)) return R::kBadVrfKey;
    for (const auto& [peer, entry] : known)
      if (entry.vrf == vrf || peer == vrf) return R::kDuplicateKey;
    if (!host_port(v.endpoint) || (!v.chain_api.empty() && !host_port(v.chain_api))) return R::kBadEndpoint;
  }
  auto before = last.peers;
  std::sort(before.begin(), before.end());
  if (std::vector<crypto::Ed25519Public>(peers.begin(), peers.end()) == before) return R::kUnchangedSet;
  return std::nullopt;
}

cip11::chain::ValidatorSetChange as_change(const ScheduleValidatorSet& s) {
  cip11::chain::ValidatorSetChange c{cip11::Height{s.activation_height}, {}};
  for (const auto& v : s.validators) c.peer_keys.push_back(v.peer_key);
  std::sort(c.peer_keys.begin(), c.peer_keys.end());
  return c;
}

std::vector<cip11::chain::ValidatorEntry> named_validators(const std::vector<cip11::chain::ValidatorEntry>& genesis,
                                                           const std::vector<ScheduleValidatorSet>& changes) {
  std::vector<cip11::chain::ValidatorEntry> out = genesis;
  std::set<crypto::Ed25519Public> seen;
  for (const auto& v : genesis) seen.insert(v.peer_key);
  for (const auto& c : changes)
    for (const auto& v : c.validators)
      if (seen.insert(v.peer_key).second) out.push_back(v);
  return out;
}

}  // namespace cowboy::devchain
