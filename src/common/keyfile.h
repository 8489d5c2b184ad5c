// 32-byte secret files (Ed25519 seeds, secp256k1 keys): one line of hex,
// created with mode 0600 (parent directories 0700) and never logged.
#pragma once

#include <filesystem>
#include <string>

#include "common/bytes.h"
#include "common/result.h"

namespace cowboy {

using Secret32 = std::array<std::uint8_t, 32>;

Result<Secret32, std::string> load_secret(const std::filesystem::path& path);
/// Loads the one at `path`, or creates a random one there (valid as either kind of key).
Result<Secret32, std::string> load_or_create_secret(const std::filesystem::path& path);

}  // namespace cowboy
