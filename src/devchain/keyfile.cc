#include "devchain/keyfile.h"

#include <cstdlib>

namespace cowboy::devchain {

std::filesystem::path default_dev_key_path() {
  if (const char* home = std::getenv("CBQS_HOME")) return std::filesystem::path(home) / "dev-key";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : ".") / ".cbqs" / "dev-key";
}

Result<crypto::Secp256k1Secret, std::string> load_key(const std::filesystem::path& path) {
  auto key = load_secret(path);
  if (key && !crypto::secp256k1_address(*key)) return Err{"key file " + path.string() + " holds no valid secp256k1 key"};
  return key;
}

Result<crypto::Secp256k1Secret, std::string> load_or_create_key(const std::filesystem::path& path) {
  auto key = load_or_create_secret(path);
  if (key && !crypto::secp256k1_address(*key)) return Err{"key file " + path.string() + " holds no valid secp256k1 key"};
  return key;
}

}  // namespace cowboy::devchain
