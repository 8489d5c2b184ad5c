// Outputs delivered by the maintenance process (docs/performance.md,
// "Transit delivery"; docs/transit.md, decisions 50-56).
//
//   transit_delivery_bench --routes 8 --outputs 2000 --backlog 4000 --runs 3
//
// Each run starts a fresh transitd node (in this process, real HTTP on
// 127.0.0.1, synced RocksDB journal) and `transitd --maintain` as its own
// process, with `routes` pairs of processes (a source owned by its own
// sender principal, an idle destination). Two measurements, alternated
// (end to end, backlog, end to end, backlog, ...):
//   end to end  each sender publishes a turn with one output to its
//               destination and polls the destination until that input is
//               admitted (send turn -> maintenance courier -> destination
//               input available; polled every millisecond), then the
//               next: outputs/s over all routes,
//               and each output's latency (p50, p99);
//   backlog     with no maintainer running, the senders publish `backlog`
//               outputs (four per turn); then the maintainer starts and the
//               time from its ready line until every destination holds them
//               all gives its throughput (deliveries/s).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "../tests/support/process.h"
#include "bench_util.h"
#include "common/bytes.h"
#include "transit/maintain/maintainer.h"
#include "transit_load.h"

using namespace cowboy;
using namespace cowboy::transit;
using namespace cowboy::transit::bench;
namespace samples = cowboy::transit::testing;
namespace support = cowboy::testing;
using Steady = std::chrono::steady_clock;

namespace {

constexpr PrincipalId kMaintainer{3};

struct Route {
  ClientOptions sender;
  Pid source{}, destination{};
  Id generation = 0;
};

struct Setup {
  std::filesystem::path dir;
  std::unique_ptr<node::Node> node;
  std::vector<Route> routes;
  std::string key_file;
};

void die(const std::string& what) {
  std::fprintf(stderr, "transit_delivery_bench: %s\n", what.c_str());
  std::exit(1);
}

Receipt must(Client& c, Command op) {
  auto r = c.submit(std::move(op));
  if (!r.ok()) die("setup: " + r.error().message);
  return *r;
}

Setup set_up(std::size_t routes) {
  Setup s;
  s.dir = fresh_dir("delivery");
  s.node = start_node(s.dir);
  const ClientOptions root_options = root_options_of(*s.node);
  Client root(root_options);
  const auto maintainer_seed = samples::seed_of(3);
  must(root, CreatePrincipal{kMaintainer, samples::key_of(maintainer_seed), RealmScope{},
                             Permissions{maintain::kRequiredPermissions}, std::nullopt, std::nullopt});
  s.key_file = (s.dir / "maintainer.key").string();
  {
    std::ofstream out(s.key_file);
    out << to_hex(ByteView(maintainer_seed.data(), maintainer_seed.size())) << "\n";
  }
  std::filesystem::permissions(s.key_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const auto senders = create_administrators(root, root_options, routes);
  for (std::size_t r = 0; r < routes; ++r) {
    Route route{senders[r], Pid{1000 + r}, Pid{2000 + r}, 0};
    for (Pid pid : {route.source, route.destination}) {
      must(root, CreateProcess{pid, {}});
      must(root, Initialize{pid, 0});
    }
    Client sender(route.sender);
    route.generation = std::get<ProcessChanged>(must(sender, Own{route.source, 1}).outcome).generation;
    s.routes.push_back(route);
  }
  return s;
}

std::unique_ptr<support::ChildProcess> start_maintainer(const Setup& s, const std::string& bin, int idle_ms) {
  auto m = std::make_unique<support::ChildProcess>(
      std::vector<std::string>{bin, "--maintain", "--endpoint", "127.0.0.1:" + std::to_string(s.node->port()), "--realm",
                               "dev", "--principal", std::to_string(kMaintainer.value), "--key", s.key_file, "--admin-listen",
                               "127.0.0.1:0", "--idle-ms", std::to_string(idle_ms), "--log-level", "warn"});
  if (!m->wait_for_line("transit_maintain_ready", std::chrono::seconds(30))) die("the maintainer did not start");
  return m;
}

Turn turn_with(const Route& route, std::size_t outputs, std::size_t first) {
  Turn t{route.source, route.generation, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  for (std::size_t k = 0; k < outputs; ++k) {
    const std::string v = std::to_string(first + k);
    t.outputs.items.push_back({route.destination, InputValue{{v.begin(), v.end()}}});
  }
  return t;
}

Id tail_of(Client& c, Pid pid) {
  auto r = c.query(ProcessRead{pid});
  return r.ok() ? std::get<ProcessInfo>(r->result).tail : 0;
}

void tear_down(Setup& s) {
  s.node.reset();
  std::filesystem::remove_all(s.dir);
}

struct EndToEnd {
  double rate = 0, p50_ms = 0, p99_ms = 0;
};

EndToEnd run_end_to_end(std::size_t routes, std::size_t outputs, const std::string& bin, int idle_ms) {
  Setup s = set_up(routes);
  auto maintainer = start_maintainer(s, bin, idle_ms);
  const std::size_t per_route = outputs / routes;
  std::vector<std::vector<double>> latencies(routes);
  const auto start = Steady::now();
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < routes; ++r)
    threads.emplace_back([&, r] {
      const Route& route = s.routes[r];
      Client sender(route.sender);
      for (std::size_t i = 0; i < per_route; ++i) {
        const auto sent = Steady::now();
        if (!sender.submit(turn_with(route, 1, i)).ok()) die("a turn was refused");
        while (tail_of(sender, route.destination) < i + 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        latencies[r].push_back(std::chrono::duration<double, std::milli>(Steady::now() - sent).count());
      }
    });
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Steady::now() - start).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  maintainer->kill(SIGTERM);
  tear_down(s);
  return {static_cast<double>(all.size()) / seconds, cowboy::bench::percentile(all, 0.5),
          cowboy::bench::percentile(all, 0.99)};
}

struct Backlog {
  double rate = 0;
  double syncs_per_delivery = 0, mean_sync_us = 0;  // the node's synced writes while it drained
};

Backlog run_backlog(std::size_t routes, std::size_t backlog, const std::string& bin, int idle_ms) {
  Setup s = set_up(routes);
  constexpr std::size_t kPerTurn = 4;
  const std::size_t per_route = backlog / routes / kPerTurn * kPerTurn;
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < routes; ++r)
    threads.emplace_back([&, r] {
      Client sender(s.routes[r].sender);
      for (std::size_t i = 0; i < per_route; i += kPerTurn)
        if (!sender.submit(turn_with(s.routes[r], kPerTurn, i)).ok()) die("a turn was refused");
    });
  for (auto& t : threads) t.join();
  auto maintainer = start_maintainer(s, bin, idle_ms);
  const auto start = Steady::now();
  const auto before = s.node->sequencer().stats();
  Client root(root_options_of(*s.node));
  for (std::size_t r = 0; r < routes; ++r)
    while (tail_of(root, s.routes[r].destination) < per_route) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const double seconds = std::chrono::duration<double>(Steady::now() - start).count();
  const auto after = s.node->sequencer().stats();
  maintainer->kill(SIGTERM);
  tear_down(s);
  const double delivered = static_cast<double>(per_route * routes);
  const double syncs = static_cast<double>(after.synced_writes - before.synced_writes);
  return {delivered / seconds, syncs / delivered,
          static_cast<double>(after.sync_us_total - before.sync_us_total) / std::max(1.0, syncs)};
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t routes = 8, outputs = 2000, backlog = 4000, runs = 3;
  int idle_ms = 20;
  std::string bin = std::filesystem::path(argv[0]).parent_path() / "transitd";
  CLI::App app{"transit_delivery_bench: outputs delivered by transitd --maintain"};
  app.add_option("--routes", routes, "routes (source -> destination pairs), one sender each")->capture_default_str();
  app.add_option("--outputs", outputs, "end to end: outputs per run, split across routes")->capture_default_str();
  app.add_option("--backlog", backlog, "backlog: outputs waiting when the maintainer starts")->capture_default_str();
  app.add_option("--runs", runs, "runs of each, alternated; medians are printed")->capture_default_str();
  app.add_option("--idle-ms", idle_ms, "the maintainer's --idle-ms")->capture_default_str();
  app.add_option("--transitd", bin, "the transitd binary")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  crypto::init();
  std::vector<double> rates, p50s, p99s, drains;
  for (std::size_t r = 0; r < runs; ++r) {  // A B A B
    const auto e = run_end_to_end(routes, outputs, bin, idle_ms);
    std::printf("run %zu: end to end %.0f outputs/s, p50 %.2f ms, p99 %.2f ms\n", r + 1, e.rate, e.p50_ms, e.p99_ms);
    std::fflush(stdout);
    rates.push_back(e.rate), p50s.push_back(e.p50_ms), p99s.push_back(e.p99_ms);
    const auto b = run_backlog(routes, backlog, bin, idle_ms);
    drains.push_back(b.rate);
    std::printf("run %zu: backlog of %zu drained at %.0f deliveries/s (%.2f synced writes per delivery, mean %.0f us)\n",
                r + 1, backlog / routes / 4 * 4 * routes, b.rate, b.syncs_per_delivery, b.mean_sync_us);
    std::fflush(stdout);
  }
  using cowboy::bench::median;
  std::printf("\n| routes | end to end outputs/s | p50 ms | p99 ms | backlog deliveries/s |\n|---|---|---|---|---|\n");
  std::printf("| %zu | %.0f | %.2f | %.2f | %.0f |\n", routes, median(rates), median(p50s), median(p99s), median(drains));
  return 0;
}
