// `cip11d --dev`: the keys, genesis and manifest of the embedded default. In
// its data directory (every key file 0600):
//
//   keys/validator-<i>.key   Ed25519 seeds of ValidatorSetSnapshot(0); this process is validator 0
//   keys/vrf-<i>.key         their ECVRF secrets, whose public keys a new genesis names
//                            (vrf_key, docs/cip11.md choice 100)
//   keys/runner-<i>.key      secp256k1 keys of the dev runners registered at genesis
//   keys/submitter.key       a funded account that submits jobs
//   genesis.json             the chain's genesis (devchain --genesis reads it too)
//   cip11-dev.json           what runners and tools need: chain URL, chain_id, the block
//                            interval, validators (key, endpoint, key files), runner and submitter key files
//   chain/                   the in-process devchain's data directory
// Each file is written whole or not at all, so a first start cut short at any
// moment leaves what the next start completes.
#pragma once

#include <filesystem>

#include "common/data_dir.h"
#include "devchain/genesis.h"

namespace cowboy::cip11d {

/// The --data-dir: what cip11d keeps there (tls/ in either mode, the rest
/// with --dev, the chain's store in chain/) marks it as its own.
inline const data_dir::Owner kDataDir{"cip11d data directory", {"tls", "keys", "genesis.json", "cip11-dev.json", "chain"}};

struct DevOptions {
  std::string listen = "127.0.0.1:7443";  // validator 0's QUIC endpoint (port 0: a free one)
  std::uint32_t validators = 1;           // more go in genesis for other cip11d processes (free ports)
  std::uint32_t runners = 4;
  std::uint32_t max_concurrent = 4;
};

struct DevKeys {
  std::vector<crypto::Ed25519Seed> validators;
  std::vector<crypto::ecvrf::Seed> vrfs;  // by validator: the secret of its genesis vrf_key
  std::vector<crypto::Secp256k1Secret> runners;
  crypto::Secp256k1Secret submitter{};
};

/// Loads the dev keys in `dir`, creating the missing ones.
Result<DevKeys, std::string> dev_keys(const std::filesystem::path& dir, const DevOptions& o);
/// The dev chain's genesis: the one in `dir`/genesis.json, or a new one
/// written there (a new chain picks its free ports once; restarts reuse them).
Result<devchain::GenesisSpec, std::string> dev_genesis(const std::filesystem::path& dir, const DevKeys& keys,
                                                       const DevOptions& o);
/// keys/vrf-<i>.key (cip11d --genesis --vrf-key).
std::filesystem::path vrf_key_path(const std::filesystem::path& dir, std::size_t validator);
/// Writes cip11-dev.json for the chain as it is (its stored genesis wins over a new one).
Result<std::filesystem::path, std::string> write_manifest(const std::filesystem::path& dir, const std::string& chain_url,
                                                          std::uint64_t block_ms, const devchain::Cip11Genesis& genesis,
                                                          const DevOptions& o);

}  // namespace cowboy::cip11d
