// What `transitd --dev` leaves in its directory for the `transit` CLI and the
// tests: transitd-dev.json (endpoint, realm, root principal, key file name),
// the root key (0600) and the genesis.
#pragma once

#include <filesystem>
#include <string>

#include "common/result.h"
#include "transit/client.h"

namespace cowboy::transit {

struct DevProfile {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7550;
  std::uint16_t payload_port = 0;  // the payload listener (0: unknown)
  std::string realm = "dev";
  PrincipalId principal{1};
  std::string key_file = "root.key";  // relative to the directory

  static constexpr const char* kFileName = "transitd-dev.json";
};

Result<Unit, std::string> save_dev_profile(const std::filesystem::path& dir, const DevProfile& profile);
Result<DevProfile, std::string> load_dev_profile(const std::filesystem::path& dir);
/// Client options for the profile's principal, its key read from the directory.
Result<ClientOptions, std::string> dev_client_options(const std::filesystem::path& dir);

}  // namespace cowboy::transit
