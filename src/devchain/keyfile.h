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

Result<crypto::Secp256k1Secret, std::string> load_key(const std::filesystem::path& path);
/// Loads the key at `path`, or creates a random one there (0600, parent dirs 0700).
Result<crypto::Secp256k1Secret, std::string> load_or_create_key(const std::filesystem::path& path);

}  // namespace cowboy::devchain
