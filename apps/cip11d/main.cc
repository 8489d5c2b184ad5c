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
//   cip11d --genesis FILE --key FILE [--vrf-key FILE] --peers URL,URL,... --chain-listen HOST:PORT
//                    one of several validators of a devchain: its own chain
//                    store in <data-dir>/chain, proposing in rotation and
//                    re-executing the others' blocks (devchain/rotation.h),
//                    and telling them which runners it holds (§8.2 presence
//                    gossip, POST /v1/chain/presence on the same API).
//   cip11d --follow --genesis FILE --peers URL,URL,... --chain-listen HOST:PORT
//                    a follower of such a chain (docs/devchain.md D14): the
//                    same Node and catch-up as a validator's, with no key, no
//                    QUIC listener and no CIP-11 service: it proposes and
//                    pushes nothing, verifies every block it takes, and serves
//                    the chain API a runner's --chain-url reads.
//   cip11d --config FILE
//                    any of these from a TOML file whose keys are the long flag
//                    names (packaging/cip11d.toml); a key no flag knows refuses
//                    the start, naming it; a flag given wins.
//
// The service sees the chain through cip11::chain::ChainPort only; this file
// wires the devchain's (devchain/cip11_port.h) to it: over a Node that --dev
// embeds, or over the HTTP API of the chain it follows.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "cip11/quic/arena.h"
#include "cip11/validator/service.h"
#include "service_log.h"
#include "common/log.h"
#include "common/process_limits.h"
#include "common/signals.h"
#include "config_file.h"
#include "dev_setup.h"
#include "devchain/cip11_port.h"
#include "devchain/forwarding_api.h"
#include "devchain/http_server.h"
#include "devchain/keyfile.h"
#include "devchain/node.h"
#include "devchain/peer_apis.h"
#include "devchain/rotation.h"
#include "net/dev_cert.h"
#include "net/host_port.h"
#include "net/http_server.h"
#include "net/metrics_text.h"
#include "net/process_metrics.h"
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
  std::string vrf_key_file;  // with --genesis: the secret of the vrf_key the genesis names for this validator
  std::uint64_t block_ms = 200;
  std::string genesis_file;        // a validator of several: the chain's genesis
  std::vector<std::string> peers;  // ... and the other validators' chain APIs
  bool follow = false;             // with --genesis and no key: a follower (D14)
  std::uint64_t view_timeout_ms = 0;  // 0: five block intervals
  std::optional<std::uint64_t> test_hold_view;  // the test hook that forces a fork (RotationConfig::hold_from_view)
  std::uint64_t test_hold_ms = 0;
  unsigned signature_threads = 1;
  cip11d::DevOptions dev_options;
  service_log::Flags logs;
};

/// The chain's own series, when this process holds a chain: blocks refused by reason.
std::string chain_metrics(const devchain::Node& node) {
  net::MetricsText out;
  out.head("devchain_blocks_refused_total", "counter", "Blocks from other validators refused, by reason.");
  auto refused = node.refusals();
  for (std::size_t i = 0; i < refused.size(); ++i)
    out.sample("devchain_blocks_refused_total", refused[i],
               "{reason=\"" + std::string(devchain::block_refusal_name(static_cast<devchain::BlockRefusal>(i))) + "\"}");
  out.series("devchain_height", "gauge", "The last block this node committed.", node.head().height);
  out.series("devchain_blocks_rolled_back_total", "counter",
             "Blocks this node un-applied to follow a winning branch (docs/devchain.md D11).", node.rolled_back());
  return out.text();
}

net::HttpHandler admin_handler(cip11::ValidatorService& service, cip11::chain::ChainPort& chain,
                               const devchain::Node* node) {
  return [&service, &chain, node](const net::HttpRequest& req) -> net::HttpReply {
    if (req.method != "GET") return {405, "text/plain", "GET only\n"};
    if (req.target == "/healthz") return {200, "text/plain", "ok\n"};
    if (req.target == "/readyz") {
      auto h = chain.height();
      if (!h) return {503, "text/plain", "the chain does not answer: " + h.error().message + "\n"};
      return {200, "text/plain", "ready at height " + std::to_string(h->value) + "\n"};
    }
    if (req.target == "/metrics") {
      // What /readyz answers, for alerts: the chain this validator reads answers.
      net::MetricsText ready;
      ready.series("cip11d_ready", "gauge", "1 when /readyz answers 200 (the chain answers).", chain.height() ? 1 : 0);
      return {200, "text/plain; version=0.0.4",
              ready.text() + service.metrics() + (node ? chain_metrics(*node) : std::string()) + net::process_metrics_text()};
    }
    constexpr std::string_view kProgress = "/v1/progress/";  // §10.4, for RPC clients
    if (req.target.starts_with(kProgress)) {
      auto id = fixed_from_hex<32>(req.target.substr(kProgress.size()));
      if (!id) return {400, "text/plain", "job_id must be 32 bytes of hex\n"};
      auto p = service.progress(cip11::JobId{*id});
      if (!p) return {404, "application/json", R"({"error":"no progress for that job here"})" "\n"};
      nlohmann::json j{{"job_id", to_hex0x(*id)}, {"fraction", p->fraction},
                       {"detail", p->detail ? nlohmann::json(*p->detail) : nlohmann::json(nullptr)}};
      return {200, "application/json", j.dump() + "\n"};
    }
    return {404, "text/plain", "no such route: /healthz, /readyz, /metrics, /v1/progress/<job_id>\n"};
  };
}

// §8.2 presence gossip in a validator of several: the chain API's route for
// the peers' views hands them to the service once it runs.
class ViewInbox final : public devchain::PresenceViewsApi {
 public:
  void attach(cip11::ValidatorService* service) {
    std::lock_guard lock(mu_);  // waits out a view in hand: detached, nothing uses the service
    service_ = service;
  }
  devchain::ApiResult<bool> post_presence_view(const Bytes& view) override {
    std::lock_guard lock(mu_);
    if (!service_) return Err{devchain::ApiError{devchain::ApiErrorCode::kUnavailable, "the validator service is not running"}};
    auto kept = service_->receive_view(view);
    if (!kept) return Err{devchain::ApiError{devchain::ApiErrorCode::kViewRefused, std::string(cip11::to_string(kept.error()))}};
    return *kept;
  }

 private:
  std::mutex mu_;
  cip11::ValidatorService* service_ = nullptr;
};

struct Gossip {
  ViewInbox* inbox;
  std::shared_ptr<devchain::PeerApis> peers;  // the other validators' chain APIs, learning those that join
  devchain::Node* node;                       // what they are learned from
};

// The endpoint `key` has in the chain's ValidatorSetSnapshot(0).
std::optional<std::string> endpoint_of(const cip11::chain::ChainSetup& setup, const crypto::Ed25519Seed& key) {
  const auto me = crypto::ed25519_from_seed(key).public_key;
  for (const auto& v : setup.validators)
    if (v.peer_key == me) return v.endpoint;
  return std::nullopt;
}

// Serves until SIGINT/SIGTERM: with `producer`, the Node this process embeds
// (its blocks come to the service from its observer), producing alone or, with
// `rotation`, in turn with the other validators; else a BlockFollower.
int serve(const Options& o, const crypto::Ed25519Seed& key, cip11::chain::ChainPort& chain, devchain::Node* producer,
          const sigset_t& signals, devchain::Rotation* rotation = nullptr, const Gossip* gossip = nullptr) {
  auto setup = chain.setup();
  if (!setup) return fail("the chain has no CIP-11 genesis: " + setup.error().message);
  auto endpoint = endpoint_of(*setup, key);
  // A validator of several that the genesis does not name joins when a
  // governance change names it (docs/devchain.md D2, D10): it listens where
  // that change says, given here.
  const bool joining = !endpoint && rotation && !o.listen.empty();
  if (!endpoint && !joining) return fail("this validator key is not in the chain's ValidatorSetSnapshot(0)");
  auto listen = net::parse_host_port(o.listen.empty() ? *endpoint : o.listen);
  if (!listen) return fail("the listen address must be host:port");
  auto cert = net::ensure_dev_certificate(std::filesystem::path(o.data_dir) / "tls");
  if (!cert) return fail(cert.error());

  cip11::ValidatorServiceConfig config;
  config.key = key;
  config.joining = joining;
  config.endpoint.host = listen->first;
  config.endpoint.port = listen->second;
  config.endpoint.certificate = cert->certificate;
  config.endpoint.private_key = cert->private_key;
  config.endpoint.connection_memory = &cip11::quic::dedicated_arena();
  config.signature_threads = o.signature_threads;
  auto service = cip11::ValidatorService::open(config, chain);
  if (!service) return fail(service.error());
  std::unique_ptr<cip11::BlockFollower> follower;
  if (gossip) {
    // One sink for every peer: --peers', and each validator a change named
    // with its chain API, learned before each view (docs/cip11.md choice 130).
    std::vector<cip11::ValidatorService::ViewSink> sinks;
    sinks.push_back([peers = gossip->peers, node = gossip->node](const Bytes& view) {
      if (auto named = node->validators()) peers->learn(*named);
      for (const auto& peer : peers->clients()) (void)peer->post_presence_view(view);
    });
    (*service)->set_view_peers(std::move(sinks));
    gossip->inbox->attach(service->get());
  }
  if (producer) {
    cip11::ValidatorService* s = service->get();
    producer->set_presence_provider(
        [s](std::uint64_t h, std::uint32_t n) { return s->presence_field(cip11::Height{h}, n); });
    producer->set_block_observer(
        [s](const devchain::CommittedBlock& b) { s->on_block({cip11::Height{b.height}, b.effects}); });
    producer->set_rollback_observer(
        [s](const devchain::RolledBack& r) { s->on_rollback(cip11::Height{r.height}); });
    if (rotation)
      rotation->start();
    else
      producer->start();
  } else {
    follower = std::make_unique<cip11::BlockFollower>(chain, **service);
  }

  auto admin_hp = net::parse_host_port(o.admin_listen);
  if (!admin_hp) return fail("--admin-listen must be host:port");
  std::unique_ptr<net::HttpServer> admin;
  try {
    admin = std::make_unique<net::HttpServer>(admin_handler(**service, chain, producer), admin_hp->first, admin_hp->second);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  admin->start();
  std::printf("cip11d listening on quic://%s:%u admin http://%s:%u validator %s\n", listen->first.c_str(),
              (*service)->port(), admin_hp->first.c_str(), admin->port(),
              to_hex0x(crypto::ed25519_from_seed(key).public_key).c_str());
  std::fflush(stdout);
  service_log::listening("quic", listen->first, (*service)->port());
  service_log::listening("admin", admin_hp->first, admin->port());
  log::info(log::event::kReady, log::field("validator", to_hex0x(crypto::ed25519_from_seed(key).public_key)),
            log::field("chain", producer ? "embedded" : "followed"));

  service_log::shutdown(wait_for_stop_signal(signals));
  admin->stop();
  follower.reset();
  if (rotation) rotation->stop();
  if (producer) producer->stop();
  if (gossip) gossip->inbox->attach(nullptr);
  service->reset();  // Goodbye{Shutdown} to every runner
  std::printf("cip11d stopped\n");
  log::info(log::event::kStopped);
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
  // Its ECVRF key, apart from the peer key, when the chain's genesis names one
  // (a dev chain made before docs/cip11.md choice 100 names none).
  if (genesis_spec->cip11 && !genesis_spec->cip11->validators.empty() && genesis_spec->cip11->validators.front().vrf_key)
    config.vrf_key = keys->vrfs.front();
  auto node = devchain::Node::open(config, *genesis_spec);
  if (!node) return fail(node.error());
  log::info(log::event::kStoreOpened, log::field("store", "chain"), log::field("path", config.data_dir.string()),
            log::field("height", (*node)->head().height));
  auto chain_hp = net::parse_host_port(o.chain_listen);
  if (!chain_hp) return fail("--chain-listen must be host:port");
  std::unique_ptr<devchain::HttpServer> api;
  try {
    api = std::make_unique<devchain::HttpServer>(**node, node->get(), chain_hp->first, chain_hp->second);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  api->start();
  service_log::listening("chain", chain_hp->first, api->port());
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

// The chain store (<data-dir>/chain) of a chain of several validators, on
// its genesis: a validator's, with its key, or a follower's, with none (D14).
// One Node for both: the follower verifies and stores blocks as validators do.
Result<std::unique_ptr<devchain::Node>, std::string> open_chain_of_several(
    const Options& o, const std::optional<crypto::Ed25519Seed>& key) {
  std::ifstream in(o.genesis_file);
  if (!in) return Err{"cannot read " + o.genesis_file};
  auto genesis = devchain::genesis_from_json(nlohmann::json::parse(in, nullptr, false));
  if (!genesis) return Err{"bad genesis: " + genesis.error()};
  devchain::NodeConfig config;
  config.data_dir = std::filesystem::path(o.data_dir) / "chain";
  config.block_interval = std::chrono::milliseconds(o.block_ms);
  config.validator_key = key;
  if (!o.vrf_key_file.empty()) {
    auto vrf = devchain::load_secret(o.vrf_key_file);
    if (!vrf) return Err{vrf.error()};
    config.vrf_key = *vrf;
  }
  config.rotating = true;  // the proposer of view v of epoch E leads Round(E, v) and proves its seed
  auto node = devchain::Node::open(config, *genesis);
  if (!node) return Err{node.error()};
  log::info(log::event::kStoreOpened, log::field("store", "chain"), log::field("path", config.data_dir.string()),
            log::field("height", (*node)->head().height));
  if ((*node)->validator_count() < 2)
    return Err{std::string(key ? "the genesis names fewer than two validators: run cip11d --dev"
                               : "the genesis names fewer than two validators: a lone producer's chain is read "
                                 "from its producer")};
  return std::move(*node);
}

// One of several validators: its own Node on the shared genesis, its chain API
// (with the routes validators use between them) and the rotation.
int run_chain_validator(const Options& o, const sigset_t& signals) {
  auto key = devchain::load_secret(o.key_file);
  if (!key) return fail(key.error());
  auto node = open_chain_of_several(o, *key);
  if (!node) return fail(node.error());
  const auto me = crypto::ed25519_from_seed(*key).public_key;
  auto peers = devchain::PeerApis::open(o.peers, me, std::chrono::seconds(5));
  if (!peers) return fail("--peers: " + peers.error());
  // A short timeout: a peer that hangs delays the next view to the others by this much at most.
  auto view_peers = devchain::PeerApis::open(o.peers, me, std::chrono::milliseconds(500));
  if (!view_peers) return fail("--peers: " + view_peers.error());
  auto chain_hp = net::parse_host_port(o.chain_listen);
  if (!chain_hp) return fail("--chain-listen must be host:port");
  ViewInbox inbox;
  std::unique_ptr<devchain::HttpServer> api;
  try {
    api = std::make_unique<devchain::HttpServer>(**node, node->get(), chain_hp->first, chain_hp->second, node->get(),
                                                 &inbox);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  devchain::RotationConfig timing;
  timing.block_interval = std::chrono::milliseconds(o.block_ms);
  timing.view_timeout = std::chrono::milliseconds(o.view_timeout_ms ? o.view_timeout_ms : 5 * o.block_ms);
  if (o.test_hold_view) timing.hold_from_view = cip11::View{*o.test_hold_view};
  timing.hold_for = std::chrono::milliseconds(o.test_hold_ms);
  devchain::Rotation rotation(**node, std::move(*peers), timing);  // forwards what the API accepts from its start
  api->start();
  service_log::listening("chain", chain_hp->first, api->port());
  const auto index = (*node)->validator_index();
  std::printf("devchain API http://%s:%u validator %s of %zu at height %llu\n", chain_hp->first.c_str(), api->port(),
              index ? std::to_string(*index).c_str() : "(none yet)", (*node)->validator_count(),
              static_cast<unsigned long long>((*node)->head().height));
  std::fflush(stdout);
  devchain::Cip11Port port(**node, **node);
  const Gossip gossip{&inbox, std::move(*view_peers), node->get()};
  int rc = serve(o, *key, port, node->get(), signals, &rotation, &gossip);
  api->stop();
  return rc;
}

// /healthz, /readyz and /metrics of a follower: its chain's series and how far
// behind its peers it is. Ready once a peer answered within the last five
// block intervals (at least a peer request's timeout and an interval) and its head is within the finality
// depth F of the highest head a peer answered with: a runner reading a follower
// that lags or reaches nobody reads a stale view (D14).
net::HttpHandler follower_admin_handler(devchain::Node& node, const devchain::Rotation& rotation,
                                        std::chrono::milliseconds block_interval) {
  return [&node, &rotation, block_interval](const net::HttpRequest& req) -> net::HttpReply {
    if (req.method != "GET") return {405, "text/plain", "GET only\n"};
    if (req.target == "/healthz") return {200, "text/plain", "ok\n"};
    const auto heads = rotation.peer_heads();
    const std::uint64_t mine = node.head().height;
    const std::uint64_t lag = heads.highest > mine ? heads.highest - mine : 0;
    const auto now = std::chrono::steady_clock::now();
    if (req.target == "/readyz") {
      // At least a peer request's timeout (5 s) and an interval: one peer that does not answer delays every head read that long.
      const auto fresh = std::max(5 * block_interval, std::chrono::milliseconds(5'000) + block_interval);
      if (!heads.read_at || now - *heads.read_at > fresh)
        return {503, "text/plain", "no peer answered lately: at height " + std::to_string(mine) + "\n"};
      if (lag > node.finality_depth())
        return {503, "text/plain", "catching up: at height " + std::to_string(mine) + ", a peer at " +
                                       std::to_string(heads.highest) + "\n"};
      return {200, "text/plain", "ready at height " + std::to_string(mine) + "\n"};
    }
    if (req.target == "/metrics") {
      net::MetricsText out;
      out.series("devchain_follow_lag_blocks", "gauge",
                 "The highest head a peer last answered with, less this follower's (0 when not behind).", lag);
      if (heads.read_at)
        out.series("devchain_follow_peer_head_age_seconds", "gauge", "Seconds since a peer last answered its head.",
                   std::chrono::duration<double>(now - *heads.read_at).count());
      return {200, "text/plain; version=0.0.4", chain_metrics(node) + out.text() + net::process_metrics_text()};
    }
    return {404, "text/plain", "no such route: /healthz, /readyz, /metrics\n"};
  };
}

// A follower of a chain of several validators (docs/devchain.md D14): the
// validators' own Node and Rotation with no key - it proposes nothing (no
// snapshot names it) and verifies every block it takes as a validator does -
// asking its peers for their heads every block, and serving the chain API
// (POST /v1/chain/blocks included: a block posted to it is verified and
// refused or applied like any). No QUIC listener, no CIP-11 service: nothing
// is pushed from here. A transaction it is sent is not admitted here but sent
// at once to a peer, whose answer is the client's (devchain::ForwardingApi).
int run_chain_follower(const Options& o, const sigset_t& signals) {
  auto node = open_chain_of_several(o, std::nullopt);
  if (!node) return fail(node.error());
  // No key: every validator's chain API a change names is a peer to learn.
  auto peers = devchain::PeerApis::open(o.peers, crypto::Ed25519Public{}, std::chrono::seconds(5));
  if (!peers) return fail("--peers: " + peers.error());
  auto chain_hp = net::parse_host_port(o.chain_listen);
  if (!chain_hp) return fail("--chain-listen must be host:port");
  auto admin_hp = net::parse_host_port(o.admin_listen);
  if (!admin_hp) return fail("--admin-listen must be host:port");
  devchain::RotationConfig timing;
  timing.block_interval = std::chrono::milliseconds(o.block_ms);
  timing.view_timeout = 5 * timing.block_interval;
  timing.follow_only = true;
  devchain::Rotation rotation(**node, *peers, timing);
  devchain::ForwardingApi forwarding(**node, *peers);
  std::unique_ptr<devchain::HttpServer> api;
  std::unique_ptr<net::HttpServer> admin;
  try {
    api = std::make_unique<devchain::HttpServer>(forwarding, node->get(), chain_hp->first, chain_hp->second, node->get());
    admin = std::make_unique<net::HttpServer>(follower_admin_handler(**node, rotation, timing.block_interval),
                                              admin_hp->first, admin_hp->second);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  api->start();
  admin->start();
  rotation.start();
  service_log::listening("chain", chain_hp->first, api->port());
  service_log::listening("admin", admin_hp->first, admin->port());
  std::printf("cip11d following with no key: devchain API http://%s:%u admin http://%s:%u at height %llu\n",
              chain_hp->first.c_str(), api->port(), admin_hp->first.c_str(), admin->port(),
              static_cast<unsigned long long>((*node)->head().height));
  std::fflush(stdout);
  log::info(log::event::kReady, log::field("chain", "followed"), log::field("key", "none"));
  service_log::shutdown(wait_for_stop_signal(signals));
  admin->stop();
  rotation.stop();
  api->stop();
  std::printf("cip11d stopped\n");
  log::info(log::event::kStopped);
  return 0;
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
  app.add_option("--vrf-key", o.vrf_key_file,
                 "with --genesis: this validator's ECVRF secret (hex, 0600) when the genesis names its vrf_key");
  app.add_option("--genesis", o.genesis_file,
                 "one of several validators: the chain's genesis JSON (its own chain lives in <data-dir>/chain)");
  app.add_option("--peers", o.peers, "with --genesis: the other validators' chain APIs, http://host:port each")
      ->delimiter(',');
  app.add_flag("--follow", o.follow,
               "with --genesis and --peers, no --key: follow the validators' chain, verifying every block, and serve "
               "its API at --chain-listen for runners (no QUIC, proposes and pushes nothing)");
  app.add_option("--view-timeout-ms", o.view_timeout_ms,
                 "with --genesis: a view with no block after this long passes to the next leader (default 5 blocks)")
      ->check(CLI::Range(10, 600'000));
  // Test hooks (tests/cip11/chain_validators_test.cc), not for operators: hidden from --help.
  app.add_option("--test-hold-view", o.test_hold_view,
                 "test hook: the first block proposed from this view on is held until a peer has a block at its "
                 "height (--test-hold-ms at most)")
      ->group("");
  app.add_option("--test-hold-ms", o.test_hold_ms, "test hook: how long --test-hold-view holds the block")
      ->group("")
      ->check(CLI::Range(0, 600'000));
  app.add_option("--signature-threads", o.signature_threads,
                 "threads checking and making signatures (Hellos, Pings, pushes) off the QUIC thread")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  service_log::add_flags(app, o.logs);
  apps::add_config_file(app, "packaging/cip11d.toml");
  if (auto status = apps::parse_command_line(app, argc, argv, "cip11d", "packaging/cip11d.toml")) return *status;
  const bool several = !o.genesis_file.empty();
  // A follower has no key, no QUIC listener and no view of its own: a flag it would ignore is refused.
  const bool follower_flag = [&] {
    for (const char* flag : {"--dev-validators", "--dev-runners", "--dev-listen", "--dev-max-concurrent",
                             "--signature-threads", "--test-hold-ms", "--view-timeout-ms"})
      if (app.count(flag) > 0) return true;
    return false;
  }();
  if (o.follow && (o.dev || !several || o.peers.empty() || !o.key_file.empty() || !o.vrf_key_file.empty() ||
                   !o.chain_url.empty() || !o.listen.empty() || o.test_hold_view || follower_flag)) {
    std::fprintf(stderr, "cip11d: --follow goes with --genesis and --peers, and with no --key, --vrf-key, --listen, "
                         "--chain-url, --dev, --dev-*, --signature-threads, --view-timeout-ms or --test-hold-*: a "
                         "follower has no key, no QUIC listener and no view of its own\n");
    return 2;
  }
  if (!o.dev && !o.follow && (o.key_file.empty() || (o.chain_url.empty() && !several))) {
    std::fprintf(stderr, "cip11d: give --dev, or --chain-url and --key, or --genesis, --key and --peers\n");
    return 2;
  }

  if (!o.vrf_key_file.empty() && !several) {
    std::fprintf(stderr, "cip11d: --vrf-key goes with --genesis\n");
    return 2;
  }

  crypto::init();
  service_log::start("cip11d", o.logs, COWBOY_VERSION);
  service_log::config_loaded(app);
  raise_descriptor_limit();
  if (auto taken = data_dir::take(o.data_dir, cip11d::kDataDir); !taken) return fail(taken.error());
  sigset_t signals = block_stop_signals();  // before any thread starts
  if (o.dev) return run_dev(o, signals);
  if (o.follow) return run_chain_follower(o, signals);
  return several ? run_chain_validator(o, signals) : run_validator(o, signals);
}
