// secp256k1 key files: one line of hex, created with mode 0600 and never logged.
#pragma once

#include <filesystem>
#include <string>

#include "common/crypto.h"
#include "common/result.h"

namespace cowboy::devchain {

/// ${CBQS_HOME}/dev-key, or ~/.cbqs/dev-key: where `devchain --dev` writes its
/// key and where the `cbqs` CLI looks for it.
std::filesystem::path default_dev_key_path();

using Secret32 = std::array<std::uint8_t, 32>;

/// Any 32-byte secret (an Ed25519 seed, a secp256k1 key): loads the one at
/// `path`, or creates a random one there (0600, parent directories 0700).
Result<Secret32, std::string> load_or_create_secret(const std::filesystem::path& path);
Result<Secret32, std::string> load_secret(const std::filesystem::path& path);

/// The same for secp256k1 keys, which must also be valid scalars.
Result<crypto::Secp256k1Secret, std::string> load_key(const std::filesystem::path& path);
Result<crypto::Secp256k1Secret, std::string> load_or_create_key(const std::filesystem::path& path);

}  // namespace cowboy::devchain
