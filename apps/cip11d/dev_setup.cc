#include "dev_setup.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "devchain/json.h"
#include "devchain/keyfile.h"
#include "net/host_port.h"

namespace cowboy::cip11d {
namespace {

constexpr u128 kDevFunds = u128{1'000'000'000} * 1'000'000;  // 1,000,000 CBY

std::filesystem::path key_path(const std::filesystem::path& dir, const std::string& name) {
  return dir / "keys" / (name + ".key");
}

// A UDP port on 127.0.0.1 the kernel hands out now, for an endpoint genesis must name in advance.
std::uint16_t free_udp_port() {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

std::string with_port(const std::string& listen) {
  auto hp = net::parse_host_port(listen);
  if (!hp || hp->second != 0) return listen;
  return hp->first + ":" + std::to_string(free_udp_port());
}

devchain::GenesisSpec new_genesis(const DevKeys& keys, const DevOptions& o) {
  devchain::Cip11Genesis g;
  g.params.chain_id = 31337;
  g.params.transport_enabled = true;  // Phases 1 and 2 (§14): push, and CIP-11 selection
  g.params.present_first_enabled = true;
  g.params.multi_validator = keys.validators.size() > 1;
  if (g.params.multi_validator) {  // final 4 blocks deep, K = F + 1 (docs/cip11.md choices 156, 157)
    g.finality_depth = 4;
    g.params.selection_seed_delay_views = 5;
  }
  for (std::size_t i = 0; i < keys.validators.size(); ++i)
    g.validators.push_back({crypto::ed25519_from_seed(keys.validators[i]).public_key,
                            i == 0 ? with_port(o.listen) : "127.0.0.1:" + std::to_string(free_udp_port()),
                            crypto::ecvrf::keypair_from_seed(keys.vrfs[i]).public_key});
  std::uint32_t every_kind = 0;
  for (std::uint8_t k = 0; k <= static_cast<std::uint8_t>(cip11::JobKind::kAgent); ++k) every_kind |= 1u << k;
  for (const auto& key : keys.runners)
    g.runners.push_back(
        cip11::chain::RegisterRunner{*crypto::secp256k1_public_key(key), 1000, every_kind, {}, o.max_concurrent, 0});
  const Address submitter = *crypto::secp256k1_address(keys.submitter);
  return devchain::GenesisSpec{"cip11d-dev", submitter, {{submitter, kDevFunds}}, {}, std::move(g)};
}

}  // namespace

std::filesystem::path vrf_key_path(const std::filesystem::path& dir, std::size_t validator) {
  return key_path(dir, "vrf-" + std::to_string(validator));
}

Result<DevKeys, std::string> dev_keys(const std::filesystem::path& dir, const DevOptions& o) {
  DevKeys keys;
  for (std::uint32_t i = 0; i < o.validators; ++i) {
    auto seed = devchain::load_or_create_secret(key_path(dir, "validator-" + std::to_string(i)));
    if (!seed) return Err{seed.error()};
    keys.validators.push_back(*seed);
    auto vrf = devchain::load_or_create_secret(vrf_key_path(dir, i));
    if (!vrf) return Err{vrf.error()};
    keys.vrfs.push_back(*vrf);
  }
  for (std::uint32_t i = 0; i < o.runners; ++i) {
    auto key = devchain::load_or_create_key(key_path(dir, "runner-" + std::to_string(i)));
    if (!key) return Err{key.error()};
    keys.runners.push_back(*key);
  }
  auto submitter = devchain::load_or_create_key(key_path(dir, "submitter"));
  if (!submitter) return Err{submitter.error()};
  keys.submitter = *submitter;
  return keys;
}

Result<devchain::GenesisSpec, std::string> dev_genesis(const std::filesystem::path& dir, const DevKeys& keys,
                                                       const DevOptions& o) {
  const auto path = dir / "genesis.json";
  if (std::ifstream in(path); in) {
    auto spec = devchain::genesis_from_json(nlohmann::json::parse(in, nullptr, false));
    if (!spec) return Err{path.string() + ": " + spec.error()};
    return std::move(*spec);
  }
  auto spec = new_genesis(keys, o);
  auto written = data_dir::write_file(path, devchain::genesis_to_json(spec).dump(2) + "\n", 0644, data_dir::IfExists::kReplace);
  if (!written) return Err{written.error()};
  return spec;
}

Result<std::filesystem::path, std::string> write_manifest(const std::filesystem::path& dir, const std::string& chain_url,
                                                          std::uint64_t block_ms, const devchain::Cip11Genesis& genesis,
                                                          const DevOptions& o) {
  using Json = nlohmann::json;
  Json validators = Json::array(), runners = Json::array();
  for (std::size_t i = 0; i < genesis.validators.size(); ++i)
    validators.push_back({{"peer_key", devchain::json::hex0x(genesis.validators[i].peer_key)},
                          {"endpoint", genesis.validators[i].endpoint},
                          {"key_file", key_path(dir, "validator-" + std::to_string(i)).string()}});
  for (std::size_t i = 0; i < genesis.validators.size(); ++i)
    if (genesis.validators[i].vrf_key) validators[i]["vrf_key_file"] = vrf_key_path(dir, i).string();
  for (std::size_t i = 0; i < genesis.runners.size() && i < o.runners; ++i)
    runners.push_back({{"address", devchain::json::hex0x(*crypto::secp256k1_key_address(genesis.runners[i].key))},
                       {"key_file", key_path(dir, "runner-" + std::to_string(i)).string()}});
  Json manifest{{"chain_url", chain_url},
                {"chain_id", genesis.params.chain_id},
                {"block_ms", block_ms},
                {"validators", validators},
                {"runners", runners},
                {"submitter_key_file", key_path(dir, "submitter").string()}};
  auto path = dir / "cip11-dev.json";
  auto written = data_dir::write_file(path, manifest.dump(2) + "\n", 0644, data_dir::IfExists::kReplace);
  if (!written) return Err{written.error()};
  return path;
}

}  // namespace cowboy::cip11d
