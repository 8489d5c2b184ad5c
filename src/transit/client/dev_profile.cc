#include "transit/client/dev_profile.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "common/keyfile.h"

namespace cowboy::transit {

Result<Unit, std::string> save_dev_profile(const std::filesystem::path& dir, const DevProfile& p) {
  const nlohmann::ordered_json j{{"endpoint", p.host + ":" + std::to_string(p.port)},
                                 {"realm", p.realm},
                                 {"principal", p.principal.value},
                                 {"key_file", p.key_file},
                                 {"payload_port", p.payload_port}};
  std::ofstream out(dir / DevProfile::kFileName);
  out << j.dump(2) << "\n";
  if (!out) return Err{"cannot write " + (dir / DevProfile::kFileName).string()};
  return Unit{};
}

Result<DevProfile, std::string> load_dev_profile(const std::filesystem::path& dir) {
  const auto path = dir / DevProfile::kFileName;
  std::ifstream in(path);
  if (!in) return Err{"no " + path.string() + " (start transitd --dev first)"};
  const auto j = nlohmann::json::parse(in, nullptr, false);
  try {
    DevProfile p;
    const std::string endpoint = j.at("endpoint").get<std::string>();
    const auto colon = endpoint.rfind(':');
    if (colon == std::string::npos) return Err{path.string() + ": endpoint is not host:port"};
    p.host = endpoint.substr(0, colon);
    p.port = static_cast<std::uint16_t>(std::stoul(endpoint.substr(colon + 1)));
    p.realm = j.at("realm").get<std::string>();
    p.principal = PrincipalId{j.at("principal").get<Id>()};
    p.key_file = j.at("key_file").get<std::string>();
    p.payload_port = j.value("payload_port", std::uint16_t{0});
    return p;
  } catch (const std::exception& e) {
    return Err{path.string() + " is not a transitd dev profile: " + e.what()};
  }
}

Result<ClientOptions, std::string> dev_client_options(const std::filesystem::path& dir) {
  auto profile = load_dev_profile(dir);
  if (!profile.ok()) return Err{profile.error()};
  auto seed = load_secret(dir / profile->key_file);
  if (!seed.ok()) return Err{seed.error()};
  ClientOptions o;
  o.host = profile->host;
  o.port = profile->port;
  o.payload_port = profile->payload_port;
  o.realm = profile->realm;
  o.principal = profile->principal;
  o.seed = *seed;
  return o;
}

}  // namespace cowboy::transit
