// Staged access to RegistryState for one instruction, with §15.1 metering.
// Reads fall through to the base state the first time a key is touched (one
// charged read each, absent keys included); writes are staged and counted
// once per key; commit() writes them back. Dropping a Txn discards everything.
#pragma once

#include <set>

#include "cbqs/chain/registry.h"

namespace cowboy::cbqs {

class Txn {
 public:
  explicit Txn(const RegistryState& base) : base_(base) {}

  std::optional<ProviderRecordV2> provider(const Address& a);
  std::optional<StreamRecordV2> stream(const Bytes32& id);
  std::optional<CbqsAccountV2> account(const Address& owner, const Address& provider);
  u128 balance(const Address& a);
  RegistrySingleton singleton();

  void put_provider(const ProviderRecordV2& p);
  void put_stream(const StreamRecordV2& s);
  void put_account(const CbqsAccountV2& a);
  void delete_account(const Address& owner, const Address& provider);
  void put_singleton(const RegistrySingleton& s);
  void put_param(std::string_view name, std::uint64_t value);

  /// Moves native balance; false (and no change) when `from` holds too little.
  bool transfer(const Address& from, const Address& to, u128 amount);

  Metering metering() const;
  void commit(RegistryState& state) &&;

 private:
  enum class Kind : std::uint8_t { kProvider, kStream, kAccount, kBalance, kSingleton, kParam };
  using Key = std::pair<Kind, Bytes>;
  void charge_read(Kind kind, ByteView key) { reads_.insert({kind, Bytes(key.begin(), key.end())}); }
  void mark_write(Kind kind, ByteView key, std::size_t encoded_bytes) {
    writes_[{kind, Bytes(key.begin(), key.end())}] = (encoded_bytes + 31) / 32;
  }

  const RegistryState& base_;
  std::set<Key> reads_;
  std::map<Key, std::uint64_t> writes_;  // key -> cells of its final value (0 = deleted)
  std::map<Address, std::optional<ProviderRecordV2>> providers_;
  std::map<Bytes32, std::optional<StreamRecordV2>> streams_;
  std::map<std::pair<Address, Address>, std::optional<CbqsAccountV2>> accounts_;
  std::map<Address, u128> balances_;
  std::optional<RegistrySingleton> singleton_;
  std::map<std::string, std::uint64_t> params_;
};

}  // namespace cowboy::cbqs
