#include "common/keyfile.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/crypto.h"
#include "common/data_dir.h"

namespace cowboy {

Result<Secret32, std::string> load_secret(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return Err{"cannot read key file " + path.string() + ": " + std::strerror(errno)};
  std::string line;
  std::getline(in, line);
  auto key = fixed_from_hex<32>(line);
  if (!key) return Err{"key file " + path.string() + " does not hold 32 bytes of hex"};
  return *key;
}

Result<Secret32, std::string> load_or_create_secret(const std::filesystem::path& path) {
  if (std::filesystem::exists(path)) return load_secret(path);
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) return Err{"cannot create " + path.parent_path().string() + ": " + ec.message()};
    ::chmod(path.parent_path().c_str(), 0700);
  }
  Secret32 key;
  do crypto::random_bytes(key);
  while (!crypto::secp256k1_address(key));  // valid as either kind of key
  // Whole or absent after a crash; another process that made it first wins.
  auto written = data_dir::write_file(path, to_hex(key) + "\n", 0600, data_dir::IfExists::kKeep);
  if (!written) return Err{written.error()};
  if (!*written) return load_secret(path);
  return key;
}

}  // namespace cowboy
