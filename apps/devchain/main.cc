// devchain: a single-validator local Cowboy chain serving the CIP-39 registry
// plane and the CIP-11 chain plane over HTTP (docs/devchain.md).
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cip11_tx.h"
#include "common/log.h"
#include "common/process_limits.h"
#include "common/signals.h"
#include "devchain/http_server.h"
#include "devchain/json.h"
#include "devchain/keyfile.h"
#include "devchain/node.h"
#include "net/host_port.h"
#include "cowboy_version.h"  // generated: COWBOY_VERSION

using namespace cowboy;
using namespace cowboy::devchain;

namespace {

constexpr u128 kDevFunds = u128{1'000'000'000} * 1'000'000;  // 1,000,000 CBY

// The CIP-11 plane of a --dev chain: present-first on (§14 phase 2), the poll
// endpoint kept, no validator and no runner until someone registers one.
Cip11Genesis dev_cip11() {
  Cip11Genesis g;
  g.params.chain_id = 31337;
  g.params.present_first_enabled = true;
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"devchain: a local single-validator Cowboy chain with the CIP-39 registry plane"};
  app.set_version_flag("--version", COWBOY_VERSION);
  std::string data_dir = "devchain-data";
  std::string listen = "127.0.0.1:7545";
  std::uint64_t block_ms = 1000;
  std::string genesis_file;
  bool dev = false;
  std::string dev_key_file = default_dev_key_path().string();
  app.add_option("--data-dir", data_dir, "directory of the chain's store (created if missing)")->capture_default_str();
  app.add_option("--listen", listen, "HTTP API address host:port (port 0 picks a free port)")->capture_default_str();
  app.add_option("--block-ms", block_ms, "block interval in milliseconds")->capture_default_str()->check(CLI::Range(1, 600'000));
  app.add_option("--genesis", genesis_file, "genesis JSON file for a new chain (ignored when the store exists)");
  app.add_flag("--dev", dev, "new chain without --genesis: generate (or reuse) a dev key, fund it and make it governance admin");
  app.add_option("--dev-key-file", dev_key_file, "where --dev keeps its secp256k1 key (hex, mode 0600)")->capture_default_str();
  Cip11TxCommand cip11_tx(app);
  CLI11_PARSE(app, argc, argv);
  if (cip11_tx.chosen()) {
    crypto::init();
    return cip11_tx.run();
  }

  crypto::init();
  log::init("devchain");
  raise_descriptor_limit();
  auto host_port = net::parse_host_port(listen);
  if (!host_port) {
    std::fprintf(stderr, "devchain: --listen must be host:port, got %s\n", listen.c_str());
    return 2;
  }
  auto [host, port] = *host_port;

  std::optional<GenesisSpec> genesis;
  if (!genesis_file.empty()) {
    std::ifstream in(genesis_file);
    if (!in) {
      std::fprintf(stderr, "devchain: cannot read %s\n", genesis_file.c_str());
      return 2;
    }
    auto spec = genesis_from_json(nlohmann::json::parse(in, nullptr, false));
    if (!spec) {
      std::fprintf(stderr, "devchain: bad genesis: %s\n", spec.error().c_str());
      return 2;
    }
    genesis = *spec;
  } else if (dev) {
    auto key = load_or_create_key(dev_key_file);
    if (!key) {
      std::fprintf(stderr, "devchain: %s\n", key.error().c_str());
      return 2;
    }
    Address admin = *crypto::secp256k1_address(*key);
    genesis = GenesisSpec{"devchain-dev", admin, {{admin, kDevFunds}}, {}, dev_cip11()};
    std::printf("dev key: %s (address %s)\n", dev_key_file.c_str(), json::hex0x(admin).c_str());
  }

  sigset_t signals = block_stop_signals();  // before any thread starts

  NodeConfig config;
  config.data_dir = data_dir;
  config.block_interval = std::chrono::milliseconds(block_ms);
  auto node = Node::open(config, genesis);
  if (!node) {
    std::fprintf(stderr, "devchain: %s\n", node.error().c_str());
    return 1;
  }
  std::unique_ptr<HttpServer> server;
  try {
    server = std::make_unique<HttpServer>(**node, node->get(), host, port);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "devchain: %s\n", e.what());
    return 1;
  }
  (*node)->start();
  server->start();
  std::printf("devchain listening on http://%s:%u chain_instance_id=%s height=%llu\n", host.c_str(), server->port(),
              json::hex0x(*(*node)->chain_instance_id()).c_str(),
              static_cast<unsigned long long>(*(*node)->height()));
  std::fflush(stdout);

  wait_for_stop_signal(signals);
  server->stop();
  (*node)->stop();
  std::printf("devchain stopped at height %llu\n", static_cast<unsigned long long>(*(*node)->height()));
  return 0;
}
