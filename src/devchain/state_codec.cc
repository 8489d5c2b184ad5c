#include "devchain/state_codec.h"

#include "cbqs/wire/codec.h"
#include "cip11/chain/codec.h"

namespace cowboy::devchain {

namespace {
constexpr std::size_t kMaxEntries = 100'000'000;
constexpr std::size_t kMaxRecordBytes = 4'096;

template <typename Record>
void put_records(codec::Writer& w, const auto& map) {
  w.count(map.size());
  for (const auto& [key, record] : map) w.bytes(cbqs::encode<Record>(record));
}

template <typename Record>
std::vector<Record> get_records(codec::Reader& r) {
  std::uint32_t n = r.count(kMaxEntries, 4);
  std::vector<Record> out;
  out.reserve(n);
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    Bytes b = r.bytes(kMaxRecordBytes);
    auto record = cbqs::decode<Record>(b);
    if (!record) {
      r.fail(record.error());
      break;
    }
    out.push_back(std::move(*record));
  }
  return out;
}

void put_registry(codec::Writer& w, const cbqs::RegistryState& reg) {
  w.fixed(reg.chain_instance_id);
  w.fixed(reg.governance_admin);
  auto table = cbqs::param_table();
  w.count(table.size());
  for (const auto& spec : table) {
    w.bytes(as_bytes(spec.name));
    w.u64(*reg.params.get(spec.name));
  }
  w.u64(reg.singleton.providers);
  w.u64(reg.singleton.streams);
  w.count(reg.native_balances.size());
  for (const auto& [addr, balance] : reg.native_balances) {
    w.fixed(addr);
    w.u128(balance);
  }
  put_records<cbqs::ProviderRecordV2>(w, reg.providers);
  put_records<cbqs::StreamRecordV2>(w, reg.streams);
  put_records<cbqs::CbqsAccountV2>(w, reg.accounts);
}
}  // namespace

Bytes encode_registry(const cbqs::RegistryState& registry) {
  codec::Writer w(4096);  // also keeps GCC 12 from a false -Warray-bounds on the first writes
  w.u8(kRegistryVersion);
  put_registry(w, registry);
  return std::move(w).take();
}

Result<cbqs::RegistryState, codec::DecodeError> decode_registry(ByteView bytes) {
  codec::Reader r(bytes);
  cbqs::RegistryState reg;
  r.version(kRegistryVersion);
  reg.chain_instance_id = r.fixed<32>();
  reg.governance_admin = r.fixed<20>();
  std::uint32_t n_params = r.count(cbqs::param_table().size(), 12);
  for (std::uint32_t i = 0; i < n_params && r.ok(); ++i) {
    Bytes name = r.bytes(64);
    std::uint64_t value = r.u64();
    if (r.ok() && !reg.params.set(std::string_view(reinterpret_cast<const char*>(name.data()), name.size()), value))
      r.fail(codec::DecodeError::kInvalidValue);
  }
  reg.singleton.providers = r.u64();
  reg.singleton.streams = r.u64();
  std::uint32_t n_balances = r.count(kMaxEntries, 36);
  for (std::uint32_t i = 0; i < n_balances && r.ok(); ++i) {
    Address a = r.fixed<20>();
    reg.native_balances[a] = r.u128();
  }
  for (auto& p : get_records<cbqs::ProviderRecordV2>(r)) reg.providers[p.provider] = std::move(p);
  for (auto& s : get_records<cbqs::StreamRecordV2>(r)) reg.streams[s.stream_id] = std::move(s);
  for (auto& a : get_records<cbqs::CbqsAccountV2>(r)) reg.accounts[{a.owner, a.provider}] = std::move(a);
  r.finish();
  if (!r.ok()) return Err{r.error()};
  return reg;
}

Bytes encode_state(const ChainState& state) {
  return encode_state(state.registry, state.nonces, state.cip11, state.validator_sets);
}

Bytes encode_state(const cbqs::RegistryState& registry, const std::map<Address, std::uint64_t>& nonces,
                   const cip11::chain::State& cip11, const std::vector<ScheduleValidatorSet>& validator_sets) {
  codec::Writer w(4096);
  w.u8(kRegistryVersion);
  put_registry(w, registry);
  w.count(nonces.size());
  for (const auto& [addr, nonce] : nonces) {
    w.fixed(addr);
    w.u64(nonce);
  }
  cip11::chain::put_state(w, cip11);
  if (!validator_sets.empty()) {
    w.raw(std::string_view("validator-sets/v1"));
    w.count(validator_sets.size());
    for (const auto& s : validator_sets) w.bytes(encode_schedule_validator_set(s));
  }
  return std::move(w).take();
}

}  // namespace cowboy::devchain
