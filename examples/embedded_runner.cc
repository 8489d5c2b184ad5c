// A program that is a CIP-11 runner (include/cip11/runner.h): it embeds the
// runner library, counts the jobs it completes, and stops after a number of
// them or on Ctrl-C. Against a running `cip11d --dev`:
//
//   build/bin/example_embedded_runner --dev cip11d-dev --runner 1 --jobs 3
//   # then submit jobs, e.g. with build/bin/devchain cip11-tx (docs/devchain.md)
#include <CLI/CLI.hpp>

#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "cip11/runner.h"
#include "devchain/cip11_port.h"
#include "devchain/keyfile.h"

using namespace cowboy;

namespace {
std::mutex mu;
std::condition_variable changed;
int completed = 0;
volatile std::sig_atomic_t interrupted = 0;
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a program that embeds a CIP-11 runner"};
  std::string dev = "cip11d-dev";
  unsigned index = 1;
  int jobs = 3;
  app.add_option("--dev", dev, "the data directory of a running cip11d --dev")->capture_default_str();
  app.add_option("--runner", index, "which dev runner key to run as")->capture_default_str();
  app.add_option("--jobs", jobs, "stop after this many completed jobs")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  crypto::init();

  std::ifstream in(std::filesystem::path(dev) / "cip11-dev.json");
  auto manifest = nlohmann::json::parse(in, nullptr, false);
  if (manifest.is_discarded() || index >= manifest.value("runners", nlohmann::json::array()).size())
    return std::fprintf(stderr, "no dev runner %u in %s/cip11-dev.json\n", index, dev.c_str()), 1;
  auto key = devchain::load_key(manifest["runners"][index]["key_file"].get<std::string>());
  if (!key) return std::fprintf(stderr, "%s\n", key.error().c_str()), 1;

  cip11::RunnerOptions options;
  options.key = *key;
  options.state_dir = std::filesystem::path(dev) / ("example-runner-" + std::to_string(index) + "-state");
  options.on_event = [](const cip11::RunnerEvent& e) {
    if (e.kind == cip11::RunnerEvent::Kind::kAccepted) std::printf("job accepted (%s)\n", e.via.c_str());
    if (e.kind != cip11::RunnerEvent::Kind::kIncluded) return;
    std::lock_guard lock(mu);
    std::printf("job done: its result is in block %llu\n", static_cast<unsigned long long>(e.height.value));
    ++completed;
    changed.notify_all();
  };
  // The runner sees the chain through a port; this one is the devchain's HTTP API.
  auto runner = cip11::Runner::start(options, devchain::Cip11Port::over_http(manifest["chain_url"].get<std::string>()));
  if (!runner) return std::fprintf(stderr, "%s\n", runner.error().c_str()), 1;
  std::printf("running; %zu validator(s) in Sub(R)\n", (*runner)->status().validators);
  std::signal(SIGINT, [](int) { interrupted = 1; });
  std::unique_lock lock(mu);
  while (completed < jobs && !interrupted) changed.wait_for(lock, std::chrono::milliseconds(200));
  std::printf("%d job(s) done\n", completed);
  return 0;
}
