// transitd: the Transit v1 node (docs/transit.md).
//
//   transitd --dev    the embedded default: a realm "dev" from a generated
//                     genesis in ./transitd-dev (root principal 1, its key
//                     root.key written 0600), HTTP on 127.0.0.1:7550, ready
//                     for `transit --dev transitd-dev ...`.
//   transitd --genesis FILE --data DIR [--listen HOST:PORT]
//                     a node of the realm FILE describes (needed once, when
//                     DIR is new), its journal in DIR. `transit genesis`
//                     writes such a file.
//   transitd --config FILE
//                     the same from a TOML file whose keys are the long flag
//                     names (packaging/transitd.toml); a key no flag knows
//                     refuses the start, naming it; a flag given wins.
//   Either node serves GET /healthz /readyz /metrics on --admin-listen
//   (default 127.0.0.1:7552), apart from its POST routes.
//   transitd --maintain --endpoint HOST:PORT --realm R --principal N --key FILE
//                     [--admin-listen HOST:PORT]
//                     the maintenance process beside a node (maintain.cc):
//                     courier, recorded terminal dispositions, its /metrics.
//                     With --dev, the --dev-dir's endpoint and root key.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/clock.h"
#include "common/data_dir.h"
#include "common/keyfile.h"
#include "common/log.h"
#include "common/log_events.h"
#include "common/process_limits.h"
#include "common/signals.h"
#include "config_file.h"
#include "maintain.h"
#include "net/host_port.h"
#include "net/http_server.h"
#include "transit/client/dev_profile.h"
#include "transit/contract/codec.h"
#include "transit/node/node.h"
#include "cowboy_version.h"  // generated: COWBOY_VERSION

using namespace cowboy;

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "transitd: %s\n", what.c_str());
  return 1;
}

struct Options {
  bool dev = false;
  std::string dev_dir = "transitd-dev";
  std::string genesis_file, data_dir;
  std::string listen;  // default 127.0.0.1:7550
  int io_threads = 2;
  std::size_t max_connections = 1024;
  std::size_t max_connections_per_address = 256;
  std::size_t max_pending = 8192;
  std::uint64_t request_deadline_ms = 5000;
  std::string payload_listen;  // default: --listen's host, any free port
  std::size_t max_transfers = 4;
  std::uint64_t required_resource_budget = transit::kRequiredNames;
  std::uint64_t lifetime_owner_budget = transit::kLifetimeOwnerBudget;
  std::size_t resident_processes = transit::node::Authority::kResidentProcesses;
};

constexpr const char* kDefaultAdmin = "127.0.0.1:7552";
// Descriptors beyond the two listeners' slot tables the start asks for: the journal's files and the rest.
constexpr std::uint64_t kOtherDescriptors = 128;

Result<std::string, std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return Err{"cannot read " + path.string()};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What --dev keeps in its directory marks it as its own.
const data_dir::Owner kDevDir{"transitd --dev directory",
                              {"root.key", "genesis.json", "journal", transit::DevProfile::kFileName}};

// The dev realm: a root key and a genesis, created once and reused.
Result<transit::Genesis, std::string> dev_genesis(const std::filesystem::path& dir) {
  if (auto taken = data_dir::take(dir, kDevDir); !taken) return Err{taken.error()};
  auto seed = load_or_create_secret(dir / "root.key");
  if (!seed.ok()) return Err{seed.error()};
  transit::Genesis g;
  g.realm.value = "dev";
  g.root_principal = transit::PrincipalId{1};
  g.root_public_key = crypto::ed25519_from_seed(*seed).public_key;
  g.admission_ceiling = 10'000'000;
  g.control_reserve = 1'000;
  g.allow_history_trim = false;
  auto written = data_dir::write_file(dir / "genesis.json", transit::to_json(g) + "\n", 0644, data_dir::IfExists::kReplace);
  if (!written) return Err{written.error()};
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"transitd: the Transit v1 node - signed commands and queries over HTTP, a synced journal"};
  app.set_version_flag("--version", COWBOY_VERSION);
  app.add_flag("--dev", o.dev, "the embedded default: realm \"dev\" in ./transitd-dev, HTTP on 127.0.0.1:7550");
  app.add_option("--dev-dir", o.dev_dir, "--dev: the directory for the key, genesis, profile and journal")
      ->capture_default_str();
  app.add_option("--genesis", o.genesis_file, "the realm's genesis (JSON); needed when --data is new");
  app.add_option("--data", o.data_dir, "the journal directory");
  app.add_option("--listen", o.listen, "HTTP host:port (default 127.0.0.1:7550)");
  app.add_option("--payload-listen", o.payload_listen,
                 "the payload listener, host:port (default: --listen's host, any free port; printed as payloads=)");
  app.add_option("--max-transfers", o.max_transfers, "payload bodies moving at once; beyond: transfers_full")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--io-threads", o.io_threads, "HTTP io threads")->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--max-connections", o.max_connections, "HTTP connections held at once")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-connections-per-address", o.max_connections_per_address,
                 "HTTP connections one peer address may hold")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-pending", o.max_pending,
                 "requests in the node at once (queued, deciding, awaiting their write); beyond: overloaded")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  app.add_option("--request-deadline-ms", o.request_deadline_ms,
                 "a request unanswered this long after submission gets ServiceUncertain (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{3'600'000}));
  // The dependency budgets (docs/transit.md, decision 156), reported in capabilities.
  app.add_option("--required-resource-budget", o.required_resource_budget,
                 "required resources one process may declare at create or spawn; beyond: dependency_budget")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{transit::kRequiredNames}));
  app.add_option("--lifetime-owner-budget", o.lifetime_owner_budget,
                 "resources one process may own the lifetime of; beyond: dependency_budget")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 16));
  app.add_option("--resident-processes", o.resident_processes,
                 "process records kept in memory, and as many outputs, effects and payloads each; least recently used "
                 "evicted first (decisions 130, 158, 170)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24));
  transitd::MaintainFlags maintain;
  maintain.add_to(app);
  apps::add_config_file(app, "packaging/transitd.toml");
  if (auto status = apps::parse_command_line(app, argc, argv, "transitd", "packaging/transitd.toml")) return *status;
  service_log::start("transitd", maintain.logs, COWBOY_VERSION);
  service_log::config_loaded(app);
  if (maintain.enabled) {
    if (!o.genesis_file.empty() || !o.data_dir.empty() || !o.listen.empty())
      return fail("--maintain runs beside a node: no --genesis, --data or --listen");
    return transitd::run_maintain(maintain, o.dev ? &o.dev_dir : nullptr);
  }

  const auto listen = net::parse_host_port(o.listen.empty() ? "127.0.0.1:7550" : o.listen);
  if (!listen) return fail("--listen wants host:port");

  transit::node::NodeConfig config;
  config.listen_address = listen->first;
  config.port = listen->second;
  config.io_threads = o.io_threads;
  config.max_connections = o.max_connections;
  config.max_connections_per_address = o.max_connections_per_address;
  config.max_pending = o.max_pending;
  config.request_deadline = std::chrono::milliseconds(o.request_deadline_ms);
  if (o.payload_listen.empty()) {
    config.payload_listen = {listen->first, 0};
  } else {
    const auto payloads = net::parse_host_port(o.payload_listen);
    if (!payloads) return fail("--payload-listen wants host:port");
    config.payload_listen = *payloads;
  }
  config.payload_transfers.max_transfers = o.max_transfers;
  config.budgets = {o.required_resource_budget, o.lifetime_owner_budget};
  config.resident_processes = o.resident_processes;
  if (maintain.admin_listen != "off") {
    const auto admin = net::parse_host_port(maintain.admin_listen.empty() ? kDefaultAdmin : maintain.admin_listen);
    if (!admin) return fail("--admin-listen wants host:port (or off)");
    config.admin = *admin;
  }
  if (o.dev) {
    auto g = dev_genesis(o.dev_dir);
    if (!g.ok()) return fail(g.error());
    config.genesis = *g;
    config.data_dir = std::filesystem::path(o.dev_dir) / "journal";
  } else {
    if (o.data_dir.empty()) return fail("--data DIR is required (or --dev)");
    config.data_dir = o.data_dir;
    if (!o.genesis_file.empty()) {
      auto text = read_file(o.genesis_file);
      if (!text.ok()) return fail(text.error());
      // A hand-edited file may be laid out freely; keys, order and values are still checked strictly.
      auto parsed = transit::json::parse_strict(*text);
      if (!parsed.ok()) return fail(o.genesis_file + ": " + parsed.error().message());
      auto g = transit::from_json<transit::Genesis>(parsed->dump(), 64 * 1024);
      if (!g.ok()) return fail(o.genesis_file + ": " + g.error().message());
      config.genesis = *g;
    }
  }

  const sigset_t signals = block_stop_signals();
  // Every connection is a descriptor: below this the listeners (and the journal) run out
  // before the slot tables fill, and accept backs off instead (docs/operations.md).
  const std::uint64_t descriptors = raise_descriptor_limit();
  const std::uint64_t wanted = o.max_connections + net::HttpServerOptions{}.max_connections + kOtherDescriptors;
  if (descriptors < wanted)
    log::warn("descriptor_limit_low", log::field("soft", descriptors), log::field("wanted", wanted),
              log::field("max_connections", static_cast<std::uint64_t>(o.max_connections)));
  SystemClock clock;
  auto node = transit::node::Node::open(config, clock);
  if (!node.ok()) return fail(node.error());
  const auto& genesis = (*node)->sequencer().genesis();
  if (o.dev) {  // the profile names the port actually bound
    transit::DevProfile profile;
    profile.host = config.listen_address;
    profile.port = (*node)->port();
    profile.payload_port = (*node)->payload_port();
    if (auto saved = transit::save_dev_profile(o.dev_dir, profile); !saved.ok()) return fail(saved.error());
  }
  const auto position = (*node)->sequencer().stats().position;
  log::info(log::event::kStoreOpened, log::field("store", "journal"), log::field("path", config.data_dir.string()),
            log::field("position", position));
  service_log::listening("http", config.listen_address, (*node)->port());
  if (config.admin) service_log::listening("admin", config.admin->first, (*node)->admin_port());
  service_log::listening("payloads", config.payload_listen.first, (*node)->payload_port());
  log::info(log::event::kReady, log::field("realm", genesis.realm.value), log::field("position", position),
            log::field("definition", transit::definition()));
  // The line scripts and tests wait for on stdout: the ports actually bound.
  const std::string admin_at = config.admin ? config.admin->first + ":" + std::to_string((*node)->admin_port()) : "off";
  std::printf("transitd_ready listen=%s:%u admin=%s payloads=%s:%u realm=%s position=%llu\n",
              config.listen_address.c_str(), (*node)->port(), admin_at.c_str(), config.payload_listen.first.c_str(),
              (*node)->payload_port(), genesis.realm.value.c_str(), static_cast<unsigned long long>(position));
  if (o.dev)
    std::printf("transitd --dev: realm dev on http://%s:%u, root principal 1 (key %s/root.key)\n"
                "try: build/bin/transit --dev %s identity\n",
                config.listen_address.c_str(), (*node)->port(), o.dev_dir.c_str(), o.dev_dir.c_str());
  std::fflush(stdout);
  service_log::shutdown(wait_for_stop_signal(signals));
  node->reset();
  log::info(log::event::kStopped);
  return 0;
}
