#include "common/keyfile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/crypto.h"

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
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return Err{"cannot create key file " + path.string()};
  std::string line = to_hex(key) + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return Err{"cannot write key file " + path.string()};
  return key;
}

}  // namespace cowboy
