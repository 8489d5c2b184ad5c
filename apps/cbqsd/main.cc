// cbqsd: the CBQS (CIP-39) broker.
//
//   cbqsd --dev        the embedded default: an in-process devchain (HTTP on
//                      127.0.0.1:7545), a dev TLS certificate, this provider
//                      registered, one stream and a ready grant; wss on 7447.
//   cbqsd --store DIR --tls-cert F --tls-key F --provider-key F
//         --provider-address 0x.. --chain-url http://127.0.0.1:7545
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>

#include "admin.h"
#include "cbqs/broker/broker.h"
#include "net/dev_cert.h"
#include "cbqs/store/store.h"
#include "service_log.h"
#include "common/log.h"
#include "common/process_limits.h"
#include "common/signals.h"
#include "dev_setup.h"
#include "net/host_port.h"
#include "devchain/http_client.h"
#include "devchain/http_server.h"
#include "devchain/json.h"
#include "devchain/keyfile.h"
#include "devchain/node.h"
#include "cowboy_version.h"  // generated: COWBOY_VERSION

using namespace cowboy;

namespace {

constexpr u128 kDevFunds = u128{1'000'000'000} * 1'000'000;  // 1,000,000 CBY
constexpr std::uint64_t kDevBlockMs = 200;

int fail(const std::string& what) {
  std::fprintf(stderr, "cbqsd: %s\n", what.c_str());
  return 1;
}

bool split_host_port(const std::string& text, std::string& host, std::uint16_t& port) {
  auto parsed = net::parse_host_port(text);
  if (!parsed) return false;
  std::tie(host, port) = *parsed;
  return true;
}

struct Options {
  bool dev = false;
  std::string data_dir = "cbqsd-dev";
  std::string listen = "127.0.0.1:7447";
  std::string admin_listen = "127.0.0.1:7448";
  std::string chain_listen = "127.0.0.1:7545";
  std::string store_path, tls_cert, tls_key, provider_key, provider_address, chain_url;
  std::uint64_t chain_block_ms = 1000;
  std::size_t max_connections = 1'024, max_connections_per_address = 128, read_budget_mib = 256;
  std::size_t io_threads = 1;
};

// Runs the broker until SIGINT/SIGTERM, then stops it cleanly. `listening`
// hears the wss and admin ports once both listen, before the "listening" line.
int serve(const Options& o, cbqs::broker::BrokerConfig config, cbqs::store::Store& store, devchain::ChainApi& chain,
          const sigset_t& signals, const std::function<void(std::uint16_t, std::uint16_t)>& listening = {}) {
  SystemClock clock;
  SystemEntropy entropy;
  config.max_connections = o.max_connections;
  config.max_connections_per_address = o.max_connections_per_address;
  config.read_budget_bytes = o.read_budget_mib << 20;
  config.io_threads = o.io_threads;
  cbqs::broker::Broker broker(std::move(config), store, chain, clock, entropy);
  if (auto started = broker.start(); !started) return fail(started.error());
  std::string admin_host;
  std::uint16_t admin_port = 0;
  if (!split_host_port(o.admin_listen, admin_host, admin_port)) return fail("--admin-listen must be host:port");
  std::unique_ptr<net::HttpServer> admin;
  try {
    admin = std::make_unique<net::HttpServer>(cbqsd::admin_handler(broker), admin_host, admin_port);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  admin->start();
  service_log::listening("admin", admin_host, admin->port());
  log::info(log::event::kReady, log::field("snapshot_height", broker.snapshot_height()));
  // Before the line: whoever waits for it may read what `listening` writes (--dev's endpoints file).
  if (listening) listening(broker.port(), admin->port());
  std::printf("cbqsd listening on wss://%s:%u admin http://%s:%u\n", o.listen.substr(0, o.listen.rfind(':')).c_str(),
              broker.port(), admin_host.c_str(), admin->port());
  std::fflush(stdout);
  service_log::shutdown(wait_for_stop_signal(signals));
  std::printf("cbqsd: stopping (finishing open batches)\n");
  admin->stop();
  broker.stop();
  log::info(log::event::kStopped);
  return 0;
}

int run_dev(Options o, const sigset_t& signals) {
  std::filesystem::path dir = o.data_dir;
  if (auto taken = data_dir::take(dir, cbqsd::kDevDataDir); !taken) return fail(taken.error());
  auto dev_key = devchain::load_or_create_key(devchain::default_dev_key_path());
  if (!dev_key) return fail(dev_key.error());
  Address dev = *crypto::secp256k1_address(*dev_key);
  devchain::GenesisSpec genesis{"cbqsd-dev", dev, {{dev, kDevFunds}}, {}, std::nullopt};
  auto node = devchain::Node::open({dir / "chain", std::chrono::milliseconds(kDevBlockMs)}, genesis);
  if (!node) return fail(node.error());
  log::info(log::event::kStoreOpened, log::field("store", "chain"), log::field("path", (dir / "chain").string()),
            log::field("height", (*node)->head().height));
  (*node)->start();
  std::string chain_host;
  std::uint16_t chain_port = 0;
  if (!split_host_port(o.chain_listen, chain_host, chain_port)) return fail("--chain-listen must be host:port");
  std::unique_ptr<devchain::HttpServer> chain_api;
  try {
    chain_api = std::make_unique<devchain::HttpServer>(**node, chain_host, chain_port);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  chain_api->start();
  service_log::listening("chain", chain_host, chain_api->port());

  std::string host;
  std::uint16_t port = 0;
  if (!split_host_port(o.listen, host, port)) return fail("--listen must be host:port");
  auto deployment = cbqsd::deploy_dev(**node, dir, port);
  if (!deployment) return fail(deployment.error());
  auto cert = net::ensure_dev_certificate(dir / "tls");
  if (!cert) return fail(cert.error());
  auto store = cbqs::store::open_rocksdb_store((dir / "store").string());
  if (!store) return fail(store.error());
  log::info(log::event::kStoreOpened, log::field("store", "broker"), log::field("path", (dir / "store").string()));

  std::printf("cbqsd --dev (data in %s)\n", dir.c_str());
  std::printf("  devchain API       http://%s:%u  chain_instance_id %s\n", chain_host.c_str(), chain_api->port(),
              devchain::json::hex0x(*(*node)->chain_instance_id()).c_str());
  std::printf("  dev owner          %s (key %s)\n", devchain::json::hex0x(deployment->owner).c_str(),
              devchain::default_dev_key_path().c_str());
  std::printf("  provider           %s\n", devchain::json::hex0x(deployment->provider.address).c_str());
  std::printf("  stream_id          %s\n", devchain::json::hex0x(deployment->stream_id).c_str());
  std::printf("  TLS certificate    %s (clients pin it)\n", cert->certificate.c_str());
  std::printf("  grant (all verbs)  %s, holder key %s\n", deployment->grant_file.c_str(),
              deployment->holder_key_file.c_str());

  cbqs::broker::BrokerConfig config;
  config.host = host;
  config.port = port;
  config.tls_certificate = cert->certificate;
  config.tls_private_key = cert->private_key;
  config.provider = deployment->provider;
  config.chain_block_ms = kDevBlockMs;
  // Where this instance listens, for `cbqs --dev DIR` and the SDK's from_dev_dir.
  auto endpoints = dir / "dev-endpoints.json";
  std::filesystem::remove(endpoints);
  int rc = serve(o, config, **store, **node, signals, [&](std::uint16_t wss, std::uint16_t admin_port) {
    std::string admin_host = o.admin_listen.substr(0, o.admin_listen.rfind(':'));
    nlohmann::json j{{"endpoint", "wss://" + host + ":" + std::to_string(wss) + "/"},
                     {"admin", "http://" + admin_host + ":" + std::to_string(admin_port)},
                     {"chain", "http://" + chain_host + ":" + std::to_string(chain_api->port())}};
    // Whole or absent: a reader polling for the file sees all of it or none.
    (void)data_dir::write_file(endpoints, j.dump(2) + "\n", 0644, data_dir::IfExists::kReplace);
  });
  chain_api->stop();
  (*node)->stop();
  return rc;
}

int run_provider(const Options& o, const sigset_t& signals) {
  for (const auto& [flag, value] : {std::pair{"--store", o.store_path}, {"--tls-cert", o.tls_cert},
                                    {"--tls-key", o.tls_key}, {"--provider-key", o.provider_key},
                                    {"--provider-address", o.provider_address}, {"--chain-url", o.chain_url}})
    if (value.empty()) return fail(std::string(flag) + " is required without --dev");
  auto chain = devchain::HttpClient::from_url(o.chain_url);
  if (!chain) return fail("--chain-url must be http://host:port");
  auto address = fixed_from_hex<20>(o.provider_address);
  if (!address) return fail("--provider-address must be a 20-byte hex address");
  auto seed = devchain::load_secret(o.provider_key);
  if (!seed) return fail(seed.error());
  auto store = cbqs::store::open_rocksdb_store(o.store_path);
  if (!store) return fail(store.error());
  log::info(log::event::kStoreOpened, log::field("store", "broker"), log::field("path", o.store_path));
  cbqs::broker::BrokerConfig config;
  if (!split_host_port(o.listen, config.host, config.port)) return fail("--listen must be host:port");
  config.tls_certificate = o.tls_cert;
  config.tls_private_key = o.tls_key;
  config.provider = {*address, *seed};
  config.chain_block_ms = o.chain_block_ms;
  return serve(o, config, **store, *chain, signals);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cbqsd: the CBQS (CIP-39) broker"};
  app.set_version_flag("--version", COWBOY_VERSION);
  Options o;
  app.add_flag("--dev", o.dev, "embedded default: in-process devchain, dev certificate, a registered provider and a stream");
  app.add_option("--data-dir", o.data_dir, "where --dev keeps its chain, store, keys and certificate")->capture_default_str();
  app.add_option("--listen", o.listen, "wss listener host:port (port 0 picks a free port)")->capture_default_str();
  app.add_option("--admin-listen", o.admin_listen, "HTTP /healthz /readyz /metrics host:port")->capture_default_str();
  app.add_option("--chain-listen", o.chain_listen, "--dev: the embedded devchain's HTTP API host:port")->capture_default_str();
  app.add_option("--store", o.store_path, "RocksDB store directory (created with the cbqs/store-format marker)");
  app.add_option("--tls-cert", o.tls_cert, "TLS certificate chain (PEM)");
  app.add_option("--tls-key", o.tls_key, "TLS private key (PEM)");
  app.add_option("--provider-key", o.provider_key, "file holding the provider's Ed25519 signing seed (hex, 0600)");
  app.add_option("--provider-address", o.provider_address, "the provider's chain address (0x...)");
  app.add_option("--chain-url", o.chain_url, "devchain API URL, http://host:port");
  app.add_option("--chain-block-ms", o.chain_block_ms, "the chain's block interval, to age snapshots")->capture_default_str();
  app.add_option("--max-connections", o.max_connections, "wss connections held at once (docs/operations.md: size RLIMIT_NOFILE for them)")
      ->capture_default_str();
  app.add_option("--max-connections-per-address", o.max_connections_per_address, "wss connections one peer address may hold")
      ->capture_default_str();
  app.add_option("--read-budget-mib", o.read_budget_mib, "read memory for large frames, beyond 64 KiB per connection")
      ->capture_default_str();
  app.add_option("--io-threads", o.io_threads,
                 "threads for the streams' work (1: with the connections on one thread; N: streams spread over N)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  service_log::Flags logs;
  app.add_option("--log-level", logs.level, "debug: also each connection opened; warn: only problems")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  service_log::add_flags(app, logs, /*level=*/false);
  // A key the file has and no flag knows is refused: a typo must not be ignored.
  app.set_config("--config", "", "read options from a TOML file (keys are the long flag names; packaging/cbqsd.toml)");
  app.allow_config_extras(CLI::config_extras_mode::error);
  CLI11_PARSE(app, argc, argv);
  crypto::init();
  service_log::start("cbqsd", logs, COWBOY_VERSION);
  if (const auto* config = app.get_config_ptr(); config && config->count() > 0)
    log::info(log::event::kConfigLoaded, log::field("path", config->as<std::string>()));
  raise_descriptor_limit();
  sigset_t signals = block_stop_signals();  // before any thread starts
  return o.dev ? run_dev(o, signals) : run_provider(o, signals);
}
