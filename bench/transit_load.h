// What the Transit benchmarks share: a node in this process with a fresh
// journal, the root's client options, and the load harness (one keep-alive
// HTTP/1.1 connection per client, the next request sent when the last is
// answered, or paced at a fixed total rate).
#pragma once

#include <atomic>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <thread>

#include "../tests/transit/samples.h"
#include "bench_util.h"
#include "net/http_connection.h"
#include "transit/client.h"
#include "transit/contract/signing.h"
#include "transit/node/node.h"

namespace cowboy::transit::bench {

struct Sample {
  double rate = 0;     // answered requests per second
  double p50_ms = 0, p99_ms = 0;
  double fsyncs_per_op = 0;
  std::size_t failed = 0;
  double client_cpu_s = 0;  // CPU time of the load generator's client threads
};

inline double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// `bodies[c]` are client c's requests in order; `rate` > 0 paces them (total per second).
inline Sample drive(std::uint16_t port, const std::string& target, const std::vector<std::vector<std::string>>& bodies,
             double rate) {
  const std::size_t clients = bodies.size();
  std::vector<std::vector<double>> latencies(clients);
  std::atomic<std::size_t> failed{0};
  std::vector<double> client_cpu(clients);
  const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      net::HttpConnection connection("127.0.0.1", port);
      std::this_thread::sleep_until(start);
      const double cpu_start = thread_cpu_seconds();
      for (std::size_t i = 0; i < bodies[c].size(); ++i) {
        auto sent = std::chrono::steady_clock::now();
        if (rate > 0) {  // open loop: request k of all is due at k / rate
          const auto due = start + std::chrono::nanoseconds(static_cast<std::int64_t>(
                                       1e9 * static_cast<double>(i * clients + c) / rate));
          std::this_thread::sleep_until(due);
          sent = due;
        }
        auto answer = connection.post(target, bodies[c][i]);
        if (!answer.ok() || answer->status != 200) ++failed;
        latencies[c].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent).count());
      }
      client_cpu[c] = thread_cpu_seconds() - cpu_start;
    });
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  Sample s;
  s.rate = static_cast<double>(all.size()) / seconds;
  s.p50_ms = cowboy::bench::percentile(all, 0.5);
  s.p99_ms = cowboy::bench::percentile(all, 0.99);
  s.failed = failed;
  for (double cpu : client_cpu) s.client_cpu_s += cpu;
  return s;
}

inline std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("transit-bench-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::unique_ptr<node::Node> start_node(const std::filesystem::path& dir) {
  static const SystemClock clock{};
  node::NodeConfig config;
  config.data_dir = dir / "journal";
  config.genesis = testing::sample_genesis();
  auto node = node::Node::open(config, clock);
  if (!node.ok()) {
    std::fprintf(stderr, "transit bench: %s\n", node.error().c_str());
    std::exit(1);
  }
  return std::move(*node);
}

inline ClientOptions root_options_of(const node::Node& node) {
  ClientOptions o;
  o.port = node.port();
  o.realm = "dev";
  o.principal = PrincipalId{1};
  o.seed = testing::seed_of(0);
  return o;
}

/// `n` administrators, principals 100.. with every permission (seeds 1..): their client options.
inline std::vector<ClientOptions> create_administrators(Client& root, const ClientOptions& base, std::size_t n) {
  std::vector<ClientOptions> out;
  for (std::size_t c = 0; c < n; ++c) {
    ClientOptions o = base;
    o.principal = PrincipalId{100 + c};
    o.seed = testing::seed_of(static_cast<std::uint8_t>(c + 1));
    auto r = root.submit(CreatePrincipal{o.principal, testing::key_of(o.seed), RealmScope{}, Permissions{kAllPermissions},
                                         std::nullopt, std::nullopt});
    if (!r.ok()) std::exit((std::fprintf(stderr, "transit bench: setup: %s\n", r.error().message.c_str()), 1));
    out.push_back(o);
  }
  return out;
}

/// The foundation's workload: each administrator's `per_client` create_principal
/// commands from sequence 1, signed before the clock starts (signing is the
/// client's work); distinct new principals, so every one is a fresh decision.
inline std::vector<std::vector<std::string>> principal_commands(const std::vector<ClientOptions>& admins,
                                                                std::size_t per_client) {
  std::vector<std::vector<std::string>> bodies(admins.size());
  const PublicKey key = testing::key_of(testing::seed_of(200));
  for (std::size_t c = 0; c < admins.size(); ++c) {
    Client signer(admins[c]);
    for (std::size_t i = 0; i < per_client; ++i)
      bodies[c].push_back(to_json(sign(signer.build(CreatePrincipal{PrincipalId{1'000'000 * (c + 1) + i}, key, RealmScope{},
                                                                    Permissions{kReadOnly}, std::nullopt, std::nullopt},
                                                    i + 1),
                                       admins[c].seed)));
  }
  return bodies;
}

/// Exits the benchmark with `what` unless `ok` (setup steps that must not fail).
inline void need(bool ok, const std::string& what) {
  if (!ok) std::exit((std::fprintf(stderr, "transit bench: %s\n", what.c_str()), 1));
}

inline EntryKey entry_key(std::uint64_t i) {
  // Spread over the key space, as hashed application keys would be.
  const std::uint64_t h = i * 0x9e3779b97f4a7c15ull;
  EntryKey k;
  for (int b = 7; b >= 0; --b) k.value.push_back(static_cast<std::uint8_t>(h >> (8 * b)));
  return k;
}
inline EntryValue entry_value(std::uint64_t i) {
  return EntryValue{std::vector<std::uint8_t>(128, static_cast<std::uint8_t>(i))};
}

/// Administrators 100.., of which worker w owns process 1 + w, associated with `resource_of(w)`.
inline std::vector<ClientOptions> setup_workers(Client& root, const ClientOptions& base, std::size_t workers,
                                                const std::function<ResourceId(std::size_t)>& resource_of) {
  auto out = create_administrators(root, base, workers);
  for (std::size_t w = 0; w < workers; ++w) {
    const Pid pid{1 + w};
    need(root.submit(CreateProcess{pid, {}}).ok(), "create process");
    need(root.submit(Associate{pid, {"doc"}, resource_of(w)}).ok(), "associate");
    need(root.submit(Initialize{pid, 0}).ok(), "initialize");
    Client worker(out[w]);
    need(worker.submit(Own{pid, 1}).ok(), "own");  // generation 2, sequence 1
  }
  return out;
}

/// Turns of worker w from sequence 2 on, each writing four entries numbered from `first`.
inline std::vector<std::string> turn_bodies(const ClientOptions& o, Pid pid, ResourceId resource, std::size_t count,
                                            std::uint64_t first) {
  Client signer(o);
  std::vector<std::string> bodies;
  for (std::size_t i = 0; i < count; ++i) {
    Turn t{pid, 2, std::nullopt, resource, std::nullopt, {}, {}, {}, {}, std::nullopt};
    for (std::uint64_t k = 0; k < 4; ++k) {
      const std::uint64_t n = first + 4 * i + k;
      t.mutations.items.push_back({entry_key(n), entry_value(n)});
    }
    bodies.push_back(to_json(sign(signer.build(t, 2 + i), o.seed)));
  }
  return bodies;
}

/// The turn workload on a fresh node: `workers` workers, each owning a process
/// on its own resource, `ops / workers` turns each (four 128-byte entries per
/// turn), signed before the clock starts.
inline std::vector<std::vector<std::string>> turn_workload(node::Node& node, std::size_t workers, std::size_t ops) {
  const auto base = root_options_of(node);
  Client root(base);
  std::vector<ResourceId> resources;
  for (std::size_t w = 0; w < workers; ++w) {
    auto r = root.submit(CreateResource{{"doc" + std::to_string(w)}, std::nullopt});
    need(r.ok(), "create resource");
    resources.push_back(std::get<ResourceCreated>(r->outcome).resource);
  }
  auto options = setup_workers(root, base, workers, [&](std::size_t w) { return resources[w]; });
  std::vector<std::vector<std::string>> bodies;
  for (std::size_t w = 0; w < workers; ++w) bodies.push_back(turn_bodies(options[w], Pid{1 + w}, resources[w], ops / workers, 0));
  return bodies;
}

}  // namespace cowboy::transit::bench
