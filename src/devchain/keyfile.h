// secp256k1 key files: one line of hex, created with mode 0600 and never logged.
#pragma once

#include <filesystem>
#include <string>

#include "common/crypto.h"
#include "common/keyfile.h"
#include "common/result.h"

namespace cowboy::devchain {

/// ${CBQS_HOME}/dev-key, or ~/.cbqs/dev-key: where `devchain --dev` writes its
/// key and where the `cbqs` CLI looks for it.
std::filesystem::path default_dev_key_path();

// Any 32-byte secret (an Ed25519 seed, a secp256k1 key): common/keyfile.h.
using cowboy::load_or_create_secret;
using cowboy::load_secret;
using cowboy::Secret32;

/// The same for secp256k1 keys, which must also be valid scalars.
Result<crypto::Secp256k1Secret, std::string> load_key(const std::filesystem::path& path);
Result<crypto::Secp256k1Secret, std::string> load_or_create_key(const std::filesystem::path& path);

}  // namespace cowboy::devchain
