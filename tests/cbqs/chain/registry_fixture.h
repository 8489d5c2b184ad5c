// A small chain for registry tests: one provider, two owners, all funded.
#pragma once

#include <gtest/gtest.h>

#include "cbqs/chain/registry.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"

namespace cowboy::cbqs::testing {

inline Address addr(std::uint8_t b) {
  Address a{};
  a[0] = b;
  return a;
}

inline constexpr u128 kFunds = 1'000'000'000'000;  // 1,000 CBY each

class RegistryFixture : public ::testing::Test {
 protected:
  const Address provider = addr(0xb0);
  const Address owner = addr(0x0a);
  const Address other_owner = addr(0x0c);
  const Address admin = addr(0xad);
  RegistryState state;
  std::uint64_t height = 100;

  void SetUp() override {
    Genesis g;
    g.chain_instance_id = crypto::keccak256(as_bytes("registry-test"));
    g.governance_admin = admin;
    g.balances = {{provider, kFunds}, {owner, kFunds}, {other_owner, kFunds}};
    state = *make_genesis(g);
  }

  Receipt apply(const Address& sender, const CbqsInstructionV2& ins) {
    return apply_instruction(state, {sender, height}, ins);
  }

  static SigningPublicKey key(std::uint8_t seed) {
    crypto::Ed25519Seed s{};
    s[0] = seed;
    return ed25519_public_key(s);
  }

  RegisterProviderV2 registration() {
    return RegisterProviderV2{key(1), {Bytes{'w', 's', 's', ':', '/', '/', 'p'}}, 10, true, Bytes32{}};
  }

  /// Provider registered, owner's account topped up, one stream created.
  Bytes32 stream_ready(u128 top_up = 10'000'000'000) {
    EXPECT_TRUE(apply(provider, registration()).ok());
    EXPECT_TRUE(apply(owner, TopUpAccountV2{owner, provider, top_up}).ok());
    EXPECT_TRUE(apply(owner, CreateStreamV2{0, provider, key(2)}).ok());
    return stream_id(state.chain_instance_id, owner, 0);
  }

  /// Sum of all account balances equals the registry's custody balance.
  bool custody_balanced() const {
    u128 sum = 0;
    for (const auto& [k, a] : state.accounts) sum += a.balance;
    return sum == state.native_balance(registry_address());
  }
};

}  // namespace cowboy::cbqs::testing
