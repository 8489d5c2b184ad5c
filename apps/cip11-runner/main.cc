// cip11-runner: a CIP-11 runner (include/cip11/runner.h) as a program, on
// the devchain's chain port over its HTTP API (devchain/cip11_port.h).
//
//   cip11-runner --dev cip11d-dev --runner 0     dev runner 0 of `cip11d --dev`
//                                                (state in cip11d-dev/runner-0-state)
//   cip11-runner --chain-url http://127.0.0.1:7546 --key FILE --state-dir DIR
//   cip11-runner --config FILE                   the same from a TOML file whose keys
//                                                are the long flag names
//                                                (packaging/cip11-runner.toml); a key
//                                                no flag knows refuses the start,
//                                                naming it; a flag given wins.
//   With --admin-listen HOST:PORT (off unless given): GET /healthz /readyz
//   /metrics (admin.h).
//
// The state directory keeps every transaction the runner signs until its
// receipt, and what each commitment binds it to: a restart (even after
// SIGKILL) resends them and still makes every reveal it owes (§10.3).
//
// Prints one line per job event on stdout, rendered like its log lines on
// stderr (--log-format, common/log.h):
//   ts=... level=info service=cip11-runner event=accepted job_id=0x.. via=push height=12 at_us=1764612345678901
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <vector>
#include <nlohmann/json.hpp>

#include "admin.h"
#include "cip11/runner.h"
#include "cip11/selection.h"
#include "service_log.h"
#include "common/log.h"
#include "common/signals.h"
#include "config_file.h"
#include "devchain/cip11_port.h"
#include "devchain/keyfile.h"
#include "net/host_port.h"
#include "cowboy_version.h"  // generated: COWBOY_VERSION

using namespace cowboy;

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "cip11-runner: %s\n", what.c_str());
  return 1;
}

void print(const cip11::RunnerEvent& e) {
  static std::mutex mu;
  std::vector<log::Field> fields;
  if (e.job_id != cip11::JobId{}) fields.push_back(log::field("job_id", to_hex0x(e.job_id.value)));
  if (!e.via.empty()) fields.push_back(log::field("via", e.via));
  fields.push_back(log::field("height", e.height.value));
  fields.push_back(log::field("at_us", e.at_unix_us));
  if (!e.detail.empty()) fields.push_back(log::field("detail", e.detail));
  const std::string line = log::line(log::Level::kInfo, cip11::runner_event_name(e.kind), fields);
  std::lock_guard lock(mu);
  std::fprintf(stdout, "%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cip11-runner: a CIP-11 runner - push job delivery from its validators, the poll fallback"};
  app.set_version_flag("--version", COWBOY_VERSION);
  std::string dev_dir, key_file, state_dir, chain_url = "http://127.0.0.1:7545", admin_listen = "off";
  std::uint32_t index = 0;
  std::uint64_t poll_ms = 1000, block_ms = 200, height_ms = 50;
  bool poll_only = false;
  cip11::RunnerOptions o;
  service_log::Flags logs;
  app.add_option("--dev", dev_dir, "a `cip11d --dev` data directory: chain URL and dev runner keys from its manifest");
  app.add_option("--runner", index, "--dev: which dev runner (its key file keys/runner-N.key)")->capture_default_str();
  app.add_option("--chain-url", chain_url, "without --dev: the devchain HTTP API")->capture_default_str();
  app.add_option("--key", key_file, "without --dev: this runner's secp256k1 key (hex, 0600)");
  app.add_option("--state-dir", state_dir,
                 "where signed transactions and owed reveals are kept across restarts "
                 "(default with --dev: DIR/runner-N-state; else cip11-runner-state)");
  app.add_option("--max-concurrent", o.max_concurrent, "jobs at once; at this many it signals backpressure")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000));
  app.add_option("--allow-url", o.allowed_url_prefixes, "a URL prefix {\"get\": url} jobs may fetch (repeatable)");
  std::vector<std::string> paused_kinds;
  app.add_option("--pause-kind", paused_kinds,
                 "a job kind of the registration not served now (Llm, Http, Mcp, Custom, PublishChainRoot, Agent; "
                 "repeatable): validators are told not to push it (section 6.5, advisory)");
  app.add_flag("--poll-only", poll_only, "never connect to a validator: poll the chain for jobs (a comparison)");
  app.add_option("--poll-ms", poll_ms, "poll interval while no validator is reachable (section 14)")
      ->capture_default_str()
      ->check(CLI::Range(10, 600'000));
  app.add_option("--height-poll-ms", height_ms, "how often the chain's height is read")
      ->capture_default_str()
      ->check(CLI::Range(5, 10'000));
  auto* block_ms_option =
      app.add_option("--block-ms", block_ms,
                     "the chain's block interval (turns a Goodbye's retry_after_blocks into a wait); "
                     "with --dev, the manifest's")
          ->capture_default_str();
  app.add_option("--admin-listen", admin_listen,
                 "HTTP /healthz /readyz /metrics host:port, no authentication: keep it on loopback; off: none")
      ->capture_default_str();
  service_log::add_flags(app, logs);
  apps::add_config_file(app, "packaging/cip11-runner.toml");
  if (auto status = apps::parse_command_line(app, argc, argv, "cip11-runner", "packaging/cip11-runner.toml"))
    return *status;

  crypto::init();
  service_log::start("cip11-runner", logs, COWBOY_VERSION);
  service_log::config_loaded(app);
  if (!dev_dir.empty()) {
    std::ifstream in(std::filesystem::path(dev_dir) / "cip11-dev.json");
    auto manifest = nlohmann::json::parse(in, nullptr, false);
    if (manifest.is_discarded() || !manifest.contains("runners") || !manifest["runners"].is_array())
      return fail("no cip11-dev.json in " + dev_dir + " (start cip11d --dev first)");
    if (index >= manifest["runners"].size())
      return fail("the dev chain has " + std::to_string(manifest["runners"].size()) + " runners");
    chain_url = manifest["chain_url"].get<std::string>();
    key_file = manifest["runners"][index]["key_file"].get<std::string>();
    if (block_ms_option->count() == 0 && manifest.contains("block_ms") && manifest["block_ms"].is_number_unsigned())
      block_ms = manifest["block_ms"].get<std::uint64_t>();
  }
  if (key_file.empty()) return fail("give --dev DIR, or --key FILE");
  if (state_dir.empty())
    state_dir = dev_dir.empty() ? "cip11-runner-state"
                                : (std::filesystem::path(dev_dir) / ("runner-" + std::to_string(index) + "-state")).string();
  o.state_dir = state_dir;
  auto key = devchain::load_key(key_file);
  if (!key) return fail(key.error());
  o.key = *key;
  o.push = !poll_only;
  for (const auto& name : paused_kinds) {
    auto kind = cip11::job_kind_named(name);
    if (!kind) return fail("--pause-kind: no job kind " + name);
    o.paused_job_kinds |= 1u << static_cast<unsigned>(*kind);
  }
  o.poll_interval = std::chrono::milliseconds(poll_ms);
  o.block_time = std::chrono::milliseconds(block_ms);
  o.height_poll = std::chrono::milliseconds(height_ms);
  o.on_event = print;

  auto chain = devchain::Cip11Port::over_http(chain_url);
  if (!chain) return fail("--chain-url must be http://host:port, not " + chain_url);

  sigset_t signals = block_stop_signals();  // before any thread starts
  // Up before the runner starts (which may wait for its heartbeat's block): /healthz answers, /readyz says starting.
  cip11_runner::AdminState admin_state;
  admin_state.max_concurrent = o.max_concurrent;
  admin_state.poll_only = poll_only;
  std::unique_ptr<net::HttpServer> admin;
  std::string admin_note;  // for the started line
  if (admin_listen != "off") {
    auto hp = net::parse_host_port(admin_listen);
    if (!hp) return fail("--admin-listen must be host:port or off");
    try {
      admin = std::make_unique<net::HttpServer>(cip11_runner::admin_handler(admin_state), hp->first, hp->second);
    } catch (const std::exception& e) {
      return fail(std::string("--admin-listen: ") + e.what());
    }
    admin->start();
    admin_note = ", admin http://" + hp->first + ":" + std::to_string(admin->port());
  }
  auto runner = cip11::Runner::start(o, std::move(chain));
  if (!runner) return fail(runner.error());
  admin_state.runner = runner->get();
  auto status = (*runner)->status();
  std::printf("cip11-runner %s started at height %llu, %zu validator(s) in Sub(R)%s, on-chain heartbeat phase %llu of %llu"
              " (last at height %llu)%s\n",
              to_hex0x((*runner)->address()).c_str(), static_cast<unsigned long long>(status.height.value),
              status.validators, status.validators == 0 ? ", polling only" : "",
              static_cast<unsigned long long>(status.heartbeat_phase),
              static_cast<unsigned long long>(status.heartbeat_cadence),
              static_cast<unsigned long long>(status.last_heartbeat.value),
              admin_note.c_str());
  std::fflush(stdout);
  log::info(log::event::kStoreOpened, log::field("store", "runner_state"), log::field("path", state_dir));
  log::info(log::event::kReady, log::field("runner", to_hex0x((*runner)->address())), log::field("height", status.height.value),
            log::field("validators", status.validators), log::field("push", o.push));
  service_log::shutdown(wait_for_stop_signal(signals));
  if (admin) admin->stop();
  admin_state.runner = nullptr;
  runner->reset();
  log::info(log::event::kStopped);
  return 0;
}
