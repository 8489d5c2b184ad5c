#include "maintain.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <limits>
#include <thread>

#include "common/keyfile.h"
#include "common/log.h"
#include "common/log_events.h"
#include "common/signals.h"
#include "net/host_port.h"
#include "net/http_server.h"
#include "transit/client/dev_profile.h"
#include "transit/maintain/maintainer.h"

namespace cowboy::transitd {
namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "transitd --maintain: %s\n", what.c_str());
  return 1;
}

net::HttpHandler admin_handler(const transit::maintain::Metrics& metrics, const std::atomic<bool>& authenticated) {
  return [&metrics, &authenticated](const net::HttpRequest& req) -> net::HttpReply {
    if (req.method != "GET") return {405, "text/plain", "GET only\n"};
    if (req.target == "/healthz") return {200, "text/plain", "ok\n"};
    if (req.target == "/readyz") {
      if (!authenticated) return {503, "text/plain", "not authenticated with the node yet\n"};
      if (!metrics.up) return {503, "text/plain", "the node does not answer\n"};
      return {200, "text/plain", "ready at position " + std::to_string(metrics.node_position.load()) + "\n"};
    }
    if (req.target == "/metrics") return {200, "text/plain; version=0.0.4", metrics.text()};
    return {404, "text/plain", "no such route: /healthz, /readyz, /metrics\n"};
  };
}

}  // namespace

void MaintainFlags::add_to(CLI::App& app) {
  app.add_flag("--maintain", enabled,
               "run the maintenance process instead of a node: a trusted client of the transitd at --endpoint");
  app.add_option("--endpoint", endpoint, "--maintain: the transitd's HTTP host:port")->capture_default_str();
  app.add_option("--realm", realm, "--maintain: the realm");
  app.add_option("--principal", principal, "--maintain: its principal (realm-wide inspect, effect, courier, pid_admin, realm_control)");
  app.add_option("--key", key_file, "--maintain: that principal's Ed25519 seed file (hex, 0600)");
  app.add_option("--admin-listen", admin_listen,
                 "GET /healthz /readyz /metrics on their own listener, host:port (default 127.0.0.1:7552 for a node, "
                 "127.0.0.1:7551 with --maintain; \"off\": none, a node only)");
  app.add_option("--idle-ms", idle_ms, "--maintain: the pause after a round that found nothing to do")
      ->capture_default_str()
      ->check(CLI::Range(1, 60'000));
  app.add_option("--collects-per-pass", collects_per_pass,
                 "--maintain: collect commands sent per collection pass, at most (docs/transit.md, decision 155)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  app.add_option("--checkpoint-every", checkpoint_every,
                 "--maintain: publish a checkpoint once this many positions follow the latest, when the realm's genesis "
                 "allows history trimming (omitted: never; the floor still follows others' checkpoints)")
      ->check(CLI::Range(transit::maintain::kMinCheckpointEvery, std::numeric_limits<std::uint64_t>::max()));
  app.add_option("--storage-every-ms", storage_every_ms,
                 "--maintain: trusted time between storage runs - a storage_fence recording the read-lease grace once "
                 "it has passed, then storage_compacts (docs/transit.md, decision 181); 0: none")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{86'400'000}));
  app.add_option("--compacts-per-run", compacts_per_run,
                 "--maintain: storage_compact commands per storage run, at most (the node's most needy leaves first)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{4096}));
  service_log::add_flags(app, logs);
}

int run_maintain(const MaintainFlags& flags, const std::string* dev_dir) {
  transit::maintain::Options options;
  if (dev_dir) {
    auto o = transit::dev_client_options(*dev_dir);
    if (!o.ok()) return fail(o.error());
    options.client = *o;
  } else {
    const auto endpoint = net::parse_host_port(flags.endpoint);
    if (!endpoint) return fail("--endpoint wants host:port");
    if (flags.realm.empty() || flags.principal == 0 || flags.key_file.empty())
      return fail("--realm, --principal and --key are required (or --dev)");
    auto seed = load_secret(flags.key_file);
    if (!seed.ok()) return fail(seed.error());
    options.client.host = endpoint->first;
    options.client.port = endpoint->second;
    options.client.realm = flags.realm;
    options.client.principal = transit::PrincipalId{flags.principal};
    options.client.seed = *seed;
  }
  options.idle = std::chrono::milliseconds(flags.idle_ms);
  options.checkpoint_every = flags.checkpoint_every;
  options.collects_per_pass = flags.collects_per_pass;
  options.storage_every = std::chrono::milliseconds(flags.storage_every_ms);
  options.compacts_per_run = flags.compacts_per_run;
  const auto admin_at = net::parse_host_port(flags.admin_listen.empty() ? std::string(MaintainFlags::kDefaultAdmin) : flags.admin_listen);
  if (!admin_at) return fail("--admin-listen wants host:port");

  const sigset_t signals = block_stop_signals();
  SystemClock clock;
  transit::maintain::Maintainer maintainer(options, clock);
  std::atomic<bool> authenticated{false};
  std::unique_ptr<net::HttpServer> admin;
  try {
    admin = std::make_unique<net::HttpServer>(admin_handler(maintainer.metrics(), authenticated), admin_at->first,
                                              admin_at->second);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  admin->start();
  service_log::listening("admin", admin_at->first, admin->port());
  std::printf("transitd --maintain: principal %llu of realm %s against http://%s:%u; metrics on http://%s:%u/metrics\n",
              static_cast<unsigned long long>(options.client.principal.value), options.client.realm.c_str(),
              options.client.host.c_str(), options.client.port, admin_at->first.c_str(), admin->port());
  std::printf("transit_maintain_listening admin=%s:%u\n", admin_at->first.c_str(), admin->port());
  std::fflush(stdout);

  // The loop's thread; a failed authentication stops the process (exit 1).
  std::string refused;
  std::thread loop([&] {
    if (auto ok = maintainer.authenticate(); !ok.ok()) {
      refused = ok.error();
      ::kill(::getpid(), SIGTERM);
      return;
    }
    authenticated = true;
    log::info(log::event::kReady, log::field("mode", "maintain"), log::field("principal", options.client.principal.value),
              log::field("node", options.client.host + ":" + std::to_string(options.client.port)));
    std::printf("transit_maintain_ready admin=%s:%u\n", admin_at->first.c_str(), admin->port());
    std::fflush(stdout);
    maintainer.run();
  });
  service_log::shutdown(wait_for_stop_signal(signals));
  maintainer.stop();
  loop.join();
  admin->stop();
  if (!refused.empty()) return fail(refused);
  log::info(log::event::kStopped, log::field("mode", "maintain"));
  return 0;
}

}  // namespace cowboy::transitd
