// A small CBQS deployment on any ChainApi: a funded provider and owner, the
// provider registered, the owner's account topped up and one stream created.
#pragma once

#include <gtest/gtest.h>

#include "cbqs/wire/ids.h"
#include "devchain/genesis.h"
#include "devchain/wallet.h"

namespace cowboy::devchain::testing {

inline crypto::Secp256k1Secret secret(std::uint8_t b) {
  crypto::Secp256k1Secret s{};
  s[31] = b;
  return s;
}

inline constexpr u128 kGenesisFunds = u128{1'000'000'000'000'000};

inline GenesisSpec genesis_for(const crypto::Secp256k1Secret& admin) {
  Address a = *crypto::secp256k1_address(admin);
  return GenesisSpec{"test-chain", a, {{a, kGenesisFunds}}, {}, std::nullopt};
}

inline Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }

struct Deployment {
  Address provider;
  Address owner;
  Bytes32 stream_id;
};

inline cbqs::RegisterProviderV2 registration(std::string_view endpoint = "wss://127.0.0.1:7447/") {
  crypto::Ed25519Seed seed{};
  seed[0] = 0x51;
  return cbqs::RegisterProviderV2{cbqs::ed25519_public_key(seed), {text(endpoint)}, 100'000, true, Bytes32{}};
}

/// Funds keys 0x0b (provider) and 0x0a (owner) from `admin`, then deploys.
inline Deployment deploy(ChainApi& chain, Wallet& admin) {
  Wallet provider(chain, secret(0x0b)), owner(chain, secret(0x0a));
  EXPECT_TRUE(admin.send_and_wait(Transfer{provider.address(), 100'000'000'000})->ok());
  EXPECT_TRUE(admin.send_and_wait(Transfer{owner.address(), 100'000'000'000})->ok());
  EXPECT_TRUE(provider.send_instruction(registration())->ok());
  EXPECT_TRUE(owner.send_instruction(cbqs::TopUpAccountV2{owner.address(), provider.address(), 10'000'000'000})->ok());
  crypto::Ed25519Seed admin_seed{};
  admin_seed[0] = 0x52;
  EXPECT_TRUE(owner.send_instruction(cbqs::CreateStreamV2{0, provider.address(), cbqs::ed25519_public_key(admin_seed)})->ok());
  auto chain_id = *chain.chain_instance_id();
  return Deployment{provider.address(), owner.address(), cbqs::stream_id(chain_id, owner.address(), 0)};
}

}  // namespace cowboy::devchain::testing
