// Signed, durable Transit commands against etcd puts of the same size
// (docs/performance.md, "Transit commands").
//
//   transit_bench --clients 1,16,64 --ops 20000 --runs 3
//
// Each run starts a fresh transitd node (in this process, real HTTP on
// 127.0.0.1, synced RocksDB journal) and a fresh single-node etcd (Debian's
// etcd-server, default fsync, its own process), and drives both with the same
// harness: one keep-alive HTTP/1.1 connection per client, each sending its next
// request when the last is answered. Transit requests are create_principal
// commands from one administrator principal per client, signed before the
// clock starts (signing is the client's work); every one is verified by the
// node. etcd gets PUTs through its v3 JSON gateway (POST /v3/kv/put) with a
// value sized so the request body matches the Transit body. The two are
// alternated (transit, etcd, transit, etcd, ...). Then paced runs at fractions
// of the best Transit rate (or at fixed rates, --paced-rate) measure latency
// below saturation (from each request's scheduled send time), Transit and etcd
// alternated at the same offered rate.
#include <CLI/CLI.hpp>

#include <atomic>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <thread>

#include <unistd.h>

#include "../tests/support/ports.h"
#include "../tests/support/process.h"
#include "../tests/transit/samples.h"
#include "bench_util.h"
#include "transit_load.h"
#include "net/http_connection.h"
#include "transit/client.h"
#include "transit/contract/envelope.h"
#include "transit/contract/signing.h"
#include "transit/node/node.h"

using namespace cowboy;
using namespace cowboy::transit;
using namespace cowboy::transit::bench;
namespace samples = cowboy::transit::testing;
namespace support = cowboy::testing;

namespace {

// CPU seconds of this process's threads, by thread name (/proc/self/task/*/stat).
std::map<std::string, double> thread_cpu() {
  std::map<std::string, double> out;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {  // fields 14 and 15: utime, stime
      if (i == 14) utime = std::stod(field);
      if (i == 15) stime = std::stod(field);
    }
    std::string name = line.substr(open + 1, close - open - 1);
    if (name.rfind("rocksdb", 0) == 0) name = "rocksdb";
    out[name] += (utime + stime) / tick;
  }
  return out;
}

// With TRANSIT_BENCH_VERBOSE: CPU microseconds per request of each of the
// node's thread groups during a run, and of the load generator's clients.
void report_cpu(const std::map<std::string, double>& before, const std::map<std::string, double>& after,
                double client_cpu_s, std::size_t requests) {
  if (!std::getenv("TRANSIT_BENCH_VERBOSE") || requests == 0) return;
  std::string line = "  cpu us/request: clients " + std::to_string(std::lround(1e6 * client_cpu_s / static_cast<double>(requests)));
  double total = client_cpu_s;
  for (const auto& [name, seconds] : after) {
    const auto was = before.find(name);
    const double used = seconds - (was == before.end() ? 0 : was->second);
    total += used;
    if (used > 0) line += " " + name + " " + std::to_string(std::lround(1e6 * used / static_cast<double>(requests)));
  }
  std::fprintf(stderr, "%s; total %ld\n", line.c_str(), std::lround(1e6 * total / static_cast<double>(requests)));
}

// One transit run on a fresh node: `workload` builds each client's signed bodies.
using Workload = std::function<std::vector<std::vector<std::string>>(node::Node&)>;
Sample run_transit(std::size_t clients, std::size_t ops, double rate, std::size_t& body_bytes, const Workload& workload) {
  const auto dir = fresh_dir("transit");
  auto node = start_node(dir);
  const auto bodies = workload(*node);
  body_bytes = bodies[0][0].size();
  const auto before = node->sequencer().stats();
  const auto cpu_before = thread_cpu();
  Sample s = drive(node->port(), "/v1/command", bodies, rate);
  report_cpu(cpu_before, thread_cpu(), s.client_cpu_s, clients * (ops / clients));
  const auto after = node->sequencer().stats();
  const double accepted = static_cast<double>(after.accepted - before.accepted);
  s.fsyncs_per_op = accepted > 0 ? static_cast<double>(after.synced_writes - before.synced_writes) / accepted : 0;
  s.failed = static_cast<std::size_t>(static_cast<double>(clients * (ops / clients)) - accepted);
  if (std::getenv("TRANSIT_BENCH_VERBOSE"))
    std::fprintf(stderr, "  transit %zu clients: %.0f/s p50 %.2f p99 %.2f ms; %llu syncs (%llu over 5 ms), mean %.0f us, max %llu us\n",
                 clients, s.rate, s.p50_ms, s.p99_ms,
                 (unsigned long long)(after.synced_writes - before.synced_writes),
                 (unsigned long long)(after.slow_syncs - before.slow_syncs),
                 static_cast<double>(after.sync_us_total - before.sync_us_total) /
                     static_cast<double>(std::max<std::uint64_t>(1, after.synced_writes - before.synced_writes)),
                 (unsigned long long)after.sync_us_max);
  node.reset();
  std::filesystem::remove_all(dir);
  return s;
}

std::string base64(const std::string& in) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out.push_back(kAlphabet[(v >> k) & 63]);
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

double etcd_fsyncs(std::uint16_t port) {
  net::HttpConnection c("127.0.0.1", port);
  auto m = c.get("/metrics");
  if (!m.ok()) return 0;
  std::smatch match;
  if (std::regex_search(m->body, match, std::regex(R"(etcd_disk_wal_fsync_duration_seconds_count (\d+))")))
    return std::stod(match[1]);
  return 0;
}

// The io thread's fixed work per command, measured alone on this thread:
// decoding the body (JSON, canonical envelope, digest) and verifying the
// Ed25519 signature. Medians of 5 passes over 2,000 signed commands.
void report_io_cost() {
  std::vector<ClientOptions> admins(1);
  admins[0].realm = "dev";
  admins[0].principal = PrincipalId{100};
  admins[0].seed = samples::seed_of(1);
  const auto bodies = principal_commands(admins, 2000)[0];
  const PublicKey key = samples::key_of(admins[0].seed);
  std::vector<double> decode_us, verify_us;
  for (int pass = 0; pass < 5; ++pass) {
    std::vector<Digest> digests(bodies.size());
    std::vector<Signature> signatures;
    auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      auto decoded = decode_command_body(bodies[i], &digests[i]);
      need(decoded.ok(), "decode");
      signatures.push_back(decoded->request.signature);
    }
    auto t1 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < bodies.size(); ++i) need(verify_digest(digests[i], signatures[i], key), "verify");
    auto t2 = std::chrono::steady_clock::now();
    decode_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / static_cast<double>(bodies.size()));
    verify_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count() / static_cast<double>(bodies.size()));
  }
  std::printf("io work per command, one thread: decode %.1f us, Ed25519 verify %.1f us (medians of 5 passes of 2,000)\n\n",
              cowboy::bench::median(decode_us), cowboy::bench::median(verify_us));
}

Workload commands(std::size_t clients, std::size_t ops) {
  return [=](node::Node& node) {
    const ClientOptions root_options = root_options_of(node);
    Client root(root_options);
    return principal_commands(create_administrators(root, root_options, clients), ops / clients);
  };
}

Workload turns(std::size_t workers, std::size_t ops) {
  return [=](node::Node& node) { return turn_workload(node, workers, ops); };
}

Sample run_etcd(const std::string& etcd, std::size_t clients, std::size_t ops, double rate, std::size_t body_bytes) {
  const auto dir = fresh_dir("etcd");
  const auto client_port = support::free_port();
  const auto peer_port = support::free_port();
  const std::string client_url = "http://127.0.0.1:" + std::to_string(client_port);
  const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer_port);
  support::ChildProcess child({etcd, "--name", "bench", "--data-dir", (dir / "data").string(), "--listen-client-urls",
                               client_url, "--advertise-client-urls", client_url, "--listen-peer-urls", peer_url,
                               "--initial-advertise-peer-urls", peer_url, "--initial-cluster", "bench=" + peer_url,
                               "--logger", "zap", "--log-level", "error"},
                              (dir / "etcd.log").string());
  net::HttpConnection probe("127.0.0.1", client_port);
  for (int i = 0; i < 200; ++i) {
    auto r = probe.post("/v3/kv/put", R"({"key":"cHJvYmU=","value":"MQ=="})");
    if (r.ok() && r->status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // A value sized so that the PUT body is as long as the Transit request body.
  const std::size_t overhead = std::string(R"({"key":"","value":""})").size() + 16;
  const std::size_t value_b64 = body_bytes > overhead ? body_bytes - overhead : 4;
  const std::string value = base64(std::string(value_b64 * 3 / 4, 'v'));
  std::vector<std::vector<std::string>> bodies(clients);
  for (std::size_t c = 0; c < clients; ++c)
    for (std::size_t i = 0; i < ops / clients; ++i) {
      const std::string key = "k/" + std::to_string(c) + "/" + std::to_string(i);
      bodies[c].push_back("{\"key\":\"" + base64(key) + "\",\"value\":\"" + value + "\"}");
    }
  const double before = etcd_fsyncs(client_port);
  Sample s = drive(client_port, "/v3/kv/put", bodies, rate);
  const double after = etcd_fsyncs(client_port);
  s.fsyncs_per_op = (after - before) / static_cast<double>(clients * (ops / clients));
  if (std::getenv("TRANSIT_BENCH_VERBOSE"))
    std::fprintf(stderr, "  etcd %zu clients: %.0f/s p50 %.2f p99 %.2f ms\n", clients, s.rate, s.p50_ms, s.p99_ms);
  child.kill(SIGTERM);
  std::filesystem::remove_all(dir);
  return s;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

std::vector<std::size_t> parse_list(const std::string& text) {
  std::vector<std::size_t> out;
  for (const auto& item : split(text)) out.push_back(std::stoul(item));
  return out;
}

void print_row(const char* system, std::size_t clients, const std::vector<Sample>& runs) {
  auto med = [&](auto field) {
    std::vector<double> v;
    for (const auto& s : runs) v.push_back(field(s));
    return cowboy::bench::median(v);
  };
  std::size_t failed = 0;
  for (const auto& s : runs) failed += s.failed;
  std::printf("| %-7s | %3zu | %9.0f | %7.2f | %7.2f | %6.3f | %zu |\n", system, clients,
              med([](const Sample& s) { return s.rate; }), med([](const Sample& s) { return s.p50_ms; }),
              med([](const Sample& s) { return s.p99_ms; }), med([](const Sample& s) { return s.fsyncs_per_op; }),
              failed);
}

}  // namespace

int main(int argc, char** argv) {
  std::string clients_list = "1,16,64", etcd = "/usr/bin/etcd";
  std::size_t ops = 20000, runs = 3;
  bool no_etcd = false;
  std::string fractions = "0.5", paced_rates, turns_list;
  std::size_t paced_clients = 16;
  CLI::App app{"transit_bench: signed durable Transit commands against etcd puts"};
  app.add_option("--clients", clients_list, "concurrent clients, comma-separated")->capture_default_str();
  app.add_option("--ops", ops, "requests per run (split across clients)")->capture_default_str();
  app.add_option("--runs", runs, "runs of each; medians are printed")->capture_default_str();
  app.add_option("--etcd", etcd, "the etcd binary")->capture_default_str();
  app.add_flag("--no-etcd", no_etcd, "Transit only");
  app.add_option("--turns", turns_list, "also turns at these worker counts against etcd, comma-separated");
  app.add_option("--paced", fractions, "paced runs at these fractions of the best rate")->capture_default_str();
  app.add_option("--paced-rate", paced_rates, "paced runs at these total rates (requests/s), comma-separated");
  app.add_option("--paced-clients", paced_clients, "clients of the paced runs")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  crypto::init();
  const bool with_etcd = !no_etcd && std::filesystem::exists(etcd);
  if (!no_etcd && !with_etcd) std::fprintf(stderr, "transit_bench: %s not found; Transit only\n", etcd.c_str());

  report_io_cost();
  std::size_t body_bytes = 0;
  std::printf("| system | clients | requests/s | p50 ms | p99 ms | fsyncs/request | failed |\n|---|---|---|---|---|---|---|\n");
  double best_transit = 0;
  for (const std::size_t clients : parse_list(clients_list)) {
    std::vector<Sample> transit_runs, etcd_runs;
    const std::size_t n = std::max(ops, clients) / clients * clients;
    for (std::size_t r = 0; r < runs; ++r) {  // A B A B
      const std::size_t m = clients == 1 ? std::min<std::size_t>(n, 3000) : n;
      transit_runs.push_back(run_transit(clients, m, 0, body_bytes, commands(clients, m)));
      if (with_etcd) etcd_runs.push_back(run_etcd(etcd, clients, m, 0, body_bytes));
    }
    print_row("transit", clients, transit_runs);
    if (with_etcd) print_row("etcd", clients, etcd_runs);
    std::vector<double> rates;
    for (const auto& s : transit_runs) rates.push_back(s.rate);
    best_transit = std::max(best_transit, cowboy::bench::median(rates));
    std::fflush(stdout);
  }
  // Turns (four 128-byte entries each) against etcd PUTs of the turn body's length, alternated.
  std::size_t turn_bytes = 0;
  for (const std::size_t workers : parse_list(turns_list)) {
    std::vector<Sample> turn_runs, etcd_runs;
    const std::size_t n = std::max(ops, workers) / workers * workers;
    for (std::size_t r = 0; r < runs; ++r) {  // A B A B
      turn_runs.push_back(run_transit(workers, n, 0, turn_bytes, turns(workers, n)));
      if (with_etcd) etcd_runs.push_back(run_etcd(etcd, workers, n, 0, turn_bytes));
    }
    print_row("turns", workers, turn_runs);
    if (with_etcd) print_row("etcd", workers, etcd_runs);
    std::printf("(turn body: %zu bytes; etcd PUT bodies of the same length)\n", turn_bytes);
    std::fflush(stdout);
  }
  // Below saturation: fractions of the best median rate and fixed rates, 16 clients, paced, 5 s each.
  std::vector<std::pair<double, std::string>> paced_at;
  for (const std::string& f : split(fractions))
    if (std::stod(f) > 0) paced_at.emplace_back(best_transit * std::stod(f), f + " of " + std::to_string(std::lround(best_transit)));
  for (const std::string& r : split(paced_rates)) paced_at.emplace_back(std::stod(r), "fixed");
  for (const auto& [rate, label] : paced_at) {
    const std::size_t n = static_cast<std::size_t>(rate * 5) / paced_clients * paced_clients;
    std::vector<Sample> paced, etcd_paced;
    for (std::size_t r = 0; r < runs; ++r) {  // A B A B at the same offered rate
      paced.push_back(run_transit(paced_clients, n, rate, body_bytes, commands(paced_clients, n)));
      if (with_etcd) etcd_paced.push_back(run_etcd(etcd, paced_clients, n, rate, body_bytes));
    }
    std::printf("\npaced at %.0f requests/s (%s), %zu clients, 5 s:\n", rate, label.c_str(), paced_clients);
    print_row("transit", paced_clients, paced);
    if (with_etcd) print_row("etcd", paced_clients, etcd_paced);
  }
  std::printf("\nrequest body: %zu bytes (Transit SignedRequest; etcd PUT bodies of the same length)\n", body_bytes);
  return 0;
}
