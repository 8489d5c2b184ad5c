// cip11d: the CIP-11 validator service (docs/cip11.md, "Services").
//
//   cip11d --dev     the embedded default: an in-process devchain (HTTP on
//                    127.0.0.1:7546, a block every 200 ms) whose genesis holds
//                    this validator and four registered dev runners, their keys
//                    and a funded submitter in the data directory; QUIC on
//                    127.0.0.1:7443. Its local presence is each block's
//                    PresenceInput (§8.1).
//   cip11d --chain-url http://127.0.0.1:7546 --key FILE
//                    a validator of a chain another process produces: it
//                    follows the blocks and pushes what they assign.
//
// The service sees the chain through cip11::chain::ChainPort only; this file
// wires the devchain's (devchain/cip11_port.h) to it: over a Node that --dev
// embeds, or over the HTTP API of the chain it follows.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cip11/quic/arena.h"
#include "cip11/validator/service.h"
#include "common/log.h"
#include "common/process_limits.h"
#include "common/signals.h"
#include "dev_setup.h"
#include "devchain/cip11_port.h"
#include "devchain/http_server.h"
#include "devchain/keyfile.h"
#include "devchain/node.h"
#include "net/dev_cert.h"
#include "net/host_port.h"
#include "net/http_server.h"
#include "cowboy_version.h"  // generated: COWBOY_VERSION

using namespace cowboy;

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "cip11d: %s\n", what.c_str());
  return 1;
}

struct Options {
  bool dev = false;
  std::string data_dir = "cip11d-dev";
  std::string listen;  // default: this validator's endpoint in the chain's genesis
  std::string admin_listen = "127.0.0.1:7444";
  std::string chain_listen = "127.0.0.1:7546";
  std::string chain_url, key_file;
  std::uint64_t block_ms = 200;
  cip11d::DevOptions dev_options;
};

net::HttpHandler admin_handler(cip11::ValidatorService& service, cip11::chain::ChainPort& chain) {
  return [&service, &chain](const net::HttpRequest& req) -> net::HttpReply {
    if (req.method != "GET") return {405, "text/plain", "GET only\n"};
    if (req.target == "/healthz") return {200, "text/plain", "ok\n"};
    if (req.target == "/readyz") {
      auto h = chain.height();
      if (!h) return {503, "text/plain", "the chain does not answer: " + h.error().message + "\n"};
      return {200, "text/plain", "ready at height " + std::to_string(*h) + "\n"};
    }
    if (req.target == "/metrics") return {200, "text/plain; version=0.0.4", service.metrics()};
    constexpr std::string_view kProgress = "/v1/progress/";  // §10.4, for RPC clients
    if (req.target.starts_with(kProgress)) {
      auto id = fixed_from_hex<32>(req.target.substr(kProgress.size()));
      if (!id) return {400, "text/plain", "job_id must be 32 bytes of hex\n"};
      auto p = service.progress(*id);
      if (!p) return {404, "application/json", R"({"error":"no progress for that job here"})" "\n"};
      nlohmann::json j{{"job_id", to_hex0x(*id)}, {"fraction", p->fraction},
                       {"detail", p->detail ? nlohmann::json(*p->detail) : nlohmann::json(nullptr)}};
      return {200, "application/json", j.dump() + "\n"};
    }
    return {404, "text/plain", "no such route: /healthz, /readyz, /metrics, /v1/progress/<job_id>\n"};
  };
}

// The endpoint `key` has in the chain's ValidatorSetSnapshot(0).
std::optional<std::string> endpoint_of(const cip11::chain::ChainSetup& setup, const crypto::Ed25519Seed& key) {
  const auto me = crypto::ed25519_from_seed(key).public_key;
  for (const auto& v : setup.validators)
    if (v.peer_key == me) return v.endpoint;
  return std::nullopt;
}

// Serves until SIGINT/SIGTERM: with `producer`, the Node this process embeds
// (its blocks come to the service from its observer); else a BlockFollower.
int serve(const Options& o, const crypto::Ed25519Seed& key, cip11::chain::ChainPort& chain, devchain::Node* producer,
          const sigset_t& signals) {
  auto setup = chain.setup();
  if (!setup) return fail("the chain has no CIP-11 genesis: " + setup.error().message);
  auto endpoint = endpoint_of(*setup, key);
  if (!endpoint) return fail("this validator key is not in the chain's ValidatorSetSnapshot(0)");
  auto listen = net::parse_host_port(o.listen.empty() ? *endpoint : o.listen);
  if (!listen) return fail("the listen address must be host:port");
  auto cert = net::ensure_dev_certificate(std::filesystem::path(o.data_dir) / "tls");
  if (!cert) return fail(cert.error());

  cip11::ValidatorServiceConfig config;
  config.key = key;
  config.endpoint.host = listen->first;
  config.endpoint.port = listen->second;
  config.endpoint.certificate = cert->certificate;
  config.endpoint.private_key = cert->private_key;
  config.endpoint.connection_memory = &cip11::quic::dedicated_arena();
  auto service = cip11::ValidatorService::open(config, chain);
  if (!service) return fail(service.error());
  std::unique_ptr<cip11::BlockFollower> follower;
  if (producer) {
    cip11::ValidatorService* s = service->get();
    producer->set_presence_provider([s](std::uint64_t h, std::uint32_t n) { return s->presence_field(h, n); });
    producer->set_block_observer([s](const devchain::CommittedBlock& b) { s->on_block({b.height, b.effects}); });
    producer->start();
  } else {
    follower = std::make_unique<cip11::BlockFollower>(chain, **service);
  }

  auto admin_hp = net::parse_host_port(o.admin_listen);
  if (!admin_hp) return fail("--admin-listen must be host:port");
  std::unique_ptr<net::HttpServer> admin;
  try {
    admin = std::make_unique<net::HttpServer>(admin_handler(**service, chain), admin_hp->first, admin_hp->second);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  admin->start();
  std::printf("cip11d listening on quic://%s:%u admin http://%s:%u validator %s\n", listen->first.c_str(),
              (*service)->port(), admin_hp->first.c_str(), admin->port(),
              to_hex0x(crypto::ed25519_from_seed(key).public_key).c_str());
  std::fflush(stdout);
  log::info("cip11d_started", log::field("quic_port", (*service)->port()), log::field("admin_port", admin->port()));

  wait_for_stop_signal(signals);
  admin->stop();
  follower.reset();
  if (producer) producer->stop();
  service->reset();  // Goodbye{Shutdown} to every runner
  std::printf("cip11d stopped\n");
  return 0;
}

int run_dev(Options o, const sigset_t& signals) {
  const std::filesystem::path dir = o.data_dir;
  auto keys = cip11d::dev_keys(dir, o.dev_options);
  if (!keys) return fail(keys.error());
  auto genesis_spec = cip11d::dev_genesis(dir, *keys, o.dev_options);
  if (!genesis_spec) return fail(genesis_spec.error());
  devchain::NodeConfig config;
  config.data_dir = dir / "chain";
  config.block_interval = std::chrono::milliseconds(o.block_ms);
  config.validator_key = keys->validators.front();  // the producer: each block carries its round's seed proof
  auto node = devchain::Node::open(config, *genesis_spec);
  if (!node) return fail(node.error());
  auto chain_hp = net::parse_host_port(o.chain_listen);
  if (!chain_hp) return fail("--chain-listen must be host:port");
  std::unique_ptr<devchain::HttpServer> api;
  try {
    api = std::make_unique<devchain::HttpServer>(**node, node->get(), chain_hp->first, chain_hp->second);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  api->start();
  const std::string chain_url = "http://" + chain_hp->first + ":" + std::to_string(api->port());
  auto genesis = (*node)->cip11_genesis();
  if (!genesis) return fail(genesis.error().message);
  auto manifest = cip11d::write_manifest(dir, chain_url, o.block_ms, *genesis, o.dev_options);
  if (!manifest) return fail(manifest.error());
  std::printf("devchain API %s (cip11 chain_id %llu, a block every %llu ms), dev manifest %s\n", chain_url.c_str(),
              static_cast<unsigned long long>(genesis->params.chain_id), static_cast<unsigned long long>(o.block_ms),
              manifest->c_str());
  std::fflush(stdout);
  devchain::Cip11Port port(**node, **node);
  int rc = serve(o, keys->validators.front(), port, node->get(), signals);
  api->stop();
  return rc;
}

int run_validator(const Options& o, const sigset_t& signals) {
  auto chain = devchain::Cip11Port::over_http(o.chain_url);
  if (!chain) return fail("--chain-url must be http://host:port");
  auto key = devchain::load_secret(o.key_file);
  if (!key) return fail(key.error());
  return serve(o, *key, *chain, nullptr, signals);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cip11d: the CIP-11 validator service - runner connections, presence and push job delivery"};
  app.set_version_flag("--version", COWBOY_VERSION);
  Options o;
  app.add_flag("--dev", o.dev, "the embedded default: an in-process devchain, dev keys and dev runners");
  app.add_option("--data-dir", o.data_dir, "where keys, the TLS certificate and (with --dev) the chain live")
      ->capture_default_str();
  app.add_option("--listen", o.listen, "QUIC host:port (default: this validator's endpoint in genesis)");
  app.add_option("--admin-listen", o.admin_listen, "HTTP /healthz /readyz /metrics host:port")->capture_default_str();
  app.add_option("--chain-listen", o.chain_listen, "--dev: the devchain HTTP API host:port")->capture_default_str();
  app.add_option("--block-ms", o.block_ms, "--dev: block interval in milliseconds")
      ->capture_default_str()
      ->check(CLI::Range(10, 60'000));
  app.add_option("--dev-listen", o.dev_options.listen, "--dev, new chain: validator 0's endpoint in genesis")
      ->capture_default_str();
  app.add_option("--dev-runners", o.dev_options.runners, "--dev, new chain: dev runners registered at genesis")
      ->capture_default_str()
      ->check(CLI::Range(0, 10'000));
  app.add_option("--dev-validators", o.dev_options.validators,
                 "--dev, new chain: validators in genesis (the others run as cip11d --chain-url --key)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--dev-max-concurrent", o.dev_options.max_concurrent, "--dev, new chain: each dev runner's max_concurrent")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000));
  app.add_option("--chain-url", o.chain_url, "without --dev: the devchain HTTP API this validator follows");
  app.add_option("--key", o.key_file, "without --dev: this validator's Ed25519 seed (hex, 0600)");
  CLI11_PARSE(app, argc, argv);
  if (!o.dev && (o.chain_url.empty() || o.key_file.empty())) {
    std::fprintf(stderr, "cip11d: give --dev, or --chain-url and --key\n");
    return 2;
  }

  crypto::init();
  log::init("cip11d");
  raise_descriptor_limit();
  if (auto taken = data_dir::take(o.data_dir, cip11d::kDataDir); !taken) return fail(taken.error());
  sigset_t signals = block_stop_signals();  // before any thread starts
  return o.dev ? run_dev(o, signals) : run_validator(o, signals);
}
