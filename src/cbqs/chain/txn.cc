#include "cbqs/chain/txn.h"

#include <functional>

#include "cbqs/wire/codec.h"

namespace cowboy::cbqs {

namespace {
Bytes account_key(const Address& owner, const Address& provider) { return concat({owner, provider}); }
constexpr std::size_t kBalanceBytes = 16;    // u128
constexpr std::size_t kSingletonBytes = 16;  // two u64 counters
constexpr std::size_t kParamBytes = 8;       // u64
}  // namespace

namespace {
// First access to `key`: one charged read of the base state, then served from `staged`.
template <typename Map, typename Staged, typename Key>
auto staged_lookup(Staged& staged, const Map& base, const Key& key, const std::function<void()>& charge)
    -> typename Staged::mapped_type {
  if (auto it = staged.find(key); it != staged.end()) return it->second;
  charge();
  typename Staged::mapped_type value;
  if (auto it = base.find(key); it != base.end()) value = it->second;
  staged[key] = value;
  return value;
}
}  // namespace

std::optional<ProviderRecordV2> Txn::provider(const Address& a) {
  return staged_lookup(providers_, base_.providers, a, [&] { charge_read(Kind::kProvider, a); });
}

std::optional<StreamRecordV2> Txn::stream(const Bytes32& id) {
  return staged_lookup(streams_, base_.streams, id, [&] { charge_read(Kind::kStream, id); });
}

std::optional<CbqsAccountV2> Txn::account(const Address& owner, const Address& provider) {
  return staged_lookup(accounts_, base_.accounts, std::pair(owner, provider),
                       [&] { charge_read(Kind::kAccount, account_key(owner, provider)); });
}

u128 Txn::balance(const Address& a) {
  if (auto it = balances_.find(a); it != balances_.end()) return it->second;
  charge_read(Kind::kBalance, a);
  u128 value = base_.native_balance(a);
  balances_[a] = value;
  return value;
}

RegistrySingleton Txn::singleton() {
  if (!singleton_) {
    charge_read(Kind::kSingleton, {});
    singleton_ = base_.singleton;
  }
  return *singleton_;
}

void Txn::put_provider(const ProviderRecordV2& p) {
  providers_[p.provider] = p;
  mark_write(Kind::kProvider, p.provider, encode(p).size());
}

void Txn::put_stream(const StreamRecordV2& s) {
  streams_[s.stream_id] = s;
  mark_write(Kind::kStream, s.stream_id, encode(s).size());
}

void Txn::put_account(const CbqsAccountV2& a) {
  accounts_[{a.owner, a.provider}] = a;
  mark_write(Kind::kAccount, account_key(a.owner, a.provider), encode(a).size());
}

void Txn::delete_account(const Address& owner, const Address& provider) {
  accounts_[{owner, provider}] = std::nullopt;
  mark_write(Kind::kAccount, account_key(owner, provider), 0);
}

void Txn::put_singleton(const RegistrySingleton& s) {
  singleton_ = s;
  mark_write(Kind::kSingleton, {}, kSingletonBytes);
}

void Txn::put_param(std::string_view name, std::uint64_t value) {
  params_[std::string(name)] = value;
  mark_write(Kind::kParam, as_bytes(name), kParamBytes);
}

bool Txn::transfer(const Address& from, const Address& to, u128 amount) {
  if (amount == 0) return true;
  u128 from_balance = balance(from);
  if (from_balance < amount) return false;
  u128 to_balance = balance(to);
  if (from == to) return true;
  auto credited = checked_add(to_balance, amount);
  if (!credited) return false;  // cannot happen while supply fits in u128
  balances_[from] = from_balance - amount;
  balances_[to] = *credited;
  mark_write(Kind::kBalance, from, kBalanceBytes);
  mark_write(Kind::kBalance, to, kBalanceBytes);
  return true;
}

Metering Txn::metering() const {
  Metering m;
  m.charged_reads = static_cast<std::uint32_t>(reads_.size());
  m.charged_writes = static_cast<std::uint32_t>(writes_.size());
  for (const auto& [key, cells] : writes_) m.cells += cells;
  return m;
}

void Txn::commit(RegistryState& state) && {
  for (auto& [key, value] : providers_)
    if (value) state.providers[key] = std::move(*value);
  for (auto& [key, value] : streams_)
    if (value) state.streams[key] = std::move(*value);
  for (auto& [key, value] : accounts_) {
    if (value)
      state.accounts[key] = std::move(*value);
    else
      state.accounts.erase(key);
  }
  for (auto& [addr, value] : balances_) {
    if (value == 0)
      state.native_balances.erase(addr);
    else
      state.native_balances[addr] = value;
  }
  if (singleton_) state.singleton = *singleton_;
  for (auto& [name, value] : params_) state.params.set(name, value);
}

}  // namespace cowboy::cbqs
