// `cbqsd --dev`: the embedded default's chain side. In an in-process devchain
// it funds the dev owner, registers this provider with its signing key and
// endpoint, tops up the owner's account and creates one stream, then mints a
// ready-to-use grant for a holder key. Idempotent: a restart reuses all of it.
#pragma once

#include <filesystem>

#include "cbqs/broker/stream/state.h"
#include "common/data_dir.h"
#include "devchain/api.h"

namespace cowboy::cbqsd {

/// The --data-dir: what cbqsd --dev keeps there marks it as its own
/// (docs/operations.md lists each file), and so does the dev owner key when
/// CBQS_HOME is the data directory (the JS client's tests run it so): made
/// first, it may be all that a first start killed at once left.
inline const data_dir::Owner kDevDataDir{
    "cbqsd --dev data directory",
    {"chain", "store", "tls", "provider-chain-key", "provider-signing-key", "stream-admin-key", "dev-grant.hex",
     "dev-holder-key", "dev-endpoints.json", "dev-key"}};

struct DevDeployment {
  cbqs::broker::ProviderIdentity provider;
  Address owner{};
  Bytes32 stream_id{};
  std::filesystem::path grant_file;       // hex of canonical StreamGrantV2 (all verbs, 24 h)
  std::filesystem::path holder_key_file;  // the grant's holder Ed25519 seed (0600)
};

Result<DevDeployment, std::string> deploy_dev(devchain::ChainApi& chain, const std::filesystem::path& data_dir,
                                              std::uint16_t wss_port);

}  // namespace cowboy::cbqsd
