// cip11_quic_bench: one validator process (ValidatorLinks, as cip11d will
// run it) against N simulated runners in this process (RunnerLinks spread
// over a few UDP sockets, each on its own loopback address, as runners on
// different hosts would be), over real QUIC on 127.0.0.1/8.
//
// Each run: connects N runners (at most --outstanding handshakes at a time)
// and reports full mutual-auth handshakes per second; holds them for
// --hold-seconds with every runner pinging once per block (1 s blocks, the
// runners' pings spread over the second) and counts drops and presence
// flaps, ping->pong latency, validator CPU per 1,000 pings/s and validator
// memory per connection; then SIGKILLs the validator, restarts it on the same
// port and measures the time until 50 / 99 / 100 % of the runners are
// admitted again.
//
//   build/bin/cip11_quic_bench --runners 5000 --hold-seconds 60 --runs 3
#include <jemalloc/jemalloc.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "bench_util.h"
#include "cip11/quic/arena.h"
#include "cip11/link/runner_link.h"
#include "cip11/link/validator_links.h"
#include "common/process_limits.h"
#include "net/dev_cert.h"

namespace cowboy::bench {
namespace {

namespace asio = boost::asio;
using namespace cowboy::cip11;
using Clock = std::chrono::steady_clock;

// The bench's fixed registry: every runner is registered and in Sub(R).
class AdmitAll final : public Admission {
 public:
  std::optional<GoodbyeReason> admit(const Hello&) override { return std::nullopt; }
};

LocalOffer bench_offer() {
  Bytes32 set_hash{};
  set_hash.fill(0x40);
  return LocalOffer{7, kProtocolVersion, set_hash, Epoch{0}, Height{0}};
}

Signer validator_key() {
  crypto::Ed25519Seed seed;
  seed.fill(0x22);
  return Signer::validator(seed);
}

Signer runner_key(std::uint32_t n) {
  crypto::Secp256k1Secret secret;
  secret.fill(0x33);
  for (int i = 0; i < 4; ++i) secret[28 + i] = static_cast<std::uint8_t>(n >> (24 - 8 * i));
  return *Signer::runner(secret);
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// ---- the validator process -------------------------------------------------

std::size_t rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmRSS:")) return std::stoul(line.substr(6));
  return 0;
}

// jemalloc's figures: "stats.allocated" (live allocations), "stats.active"
// (their pages), "stats.resident" (pages it holds, dirty ones included).
std::size_t heap_bytes(const char* what = "stats.allocated") {
  std::uint64_t epoch = 1;
  std::size_t len = sizeof epoch;
  mallctl("epoch", &epoch, &len, &epoch, len);
  std::size_t value = 0;
  len = sizeof value;
  mallctl(what, &value, &len, nullptr, 0);
  return value;
}

int run_validator(const std::filesystem::path& dir, std::uint16_t port, unsigned threads, bool arena) {
  crypto::init();
  raise_descriptor_limit();
  auto cert = net::ensure_dev_certificate(dir);
  if (!cert) return std::cerr << cert.error() << "\n", 1;
  asio::io_context io{1};
  AdmitAll admit;
  SystemEntropy entropy;
  Signer me = validator_key();
  ValidatorLinksConfig config;
  config.endpoint.certificate = cert->certificate;
  config.endpoint.private_key = cert->private_key;
  config.endpoint.port = port;
  config.endpoint.stateless_reset_secret.emplace();
  config.endpoint.stateless_reset_secret->fill(0x5e);
  if (arena) config.endpoint.connection_memory = &quic::dedicated_arena();
  config.offer = bench_offer();
  config.signature_threads = threads;
  auto links = ValidatorLinks::open(io, me, admit, entropy, config, {});
  if (!links) return std::cerr << links.error() << "\n", 1;
  std::printf("port %u\n", (*links)->port());
  std::fflush(stdout);

  Height height{0};
  asio::steady_timer blocks(io), report(io);
  std::function<void()> block = [&] {
    (*links)->on_block(++height);
    blocks.expires_after(std::chrono::seconds(1));
    blocks.async_wait([&](boost::system::error_code ec) {
      if (!ec) block();
    });
  };
  std::function<void()> print = [&] {
    const auto& s = (*links)->stats();
    std::printf("stats conns=%zu admitted=%lu lost=%lu present=%zu pings=%lu pongs=%lu exits=%lu bad=%lu rss_kib=%zu heap=%zu active=%zu resident=%zu refused=%lu in=%lu out=%lu\n",
                (*links)->connections(), s.admitted, s.lost, (*links)->presence().present_runners().size(), s.pings,
                s.pongs, s.presence_exits, s.bad_seals, rss_kib(), heap_bytes(), heap_bytes("stats.active"), heap_bytes("stats.resident"),
                (*links)->endpoint_stats().refused_initials, (*links)->endpoint_stats().datagrams_in,
                (*links)->endpoint_stats().datagrams_out);
    std::fflush(stdout);
    report.expires_after(std::chrono::milliseconds(250));
    report.async_wait([&](boost::system::error_code ec) {
      if (!ec) print();
    });
  };
  block();
  print();
  io.run();
  return 0;
}

// ---- the driver: the validator as a child, the runners here ------------------

struct ValidatorStats {
  std::map<std::string, double> v;
  double operator[](const std::string& k) const {
    auto it = v.find(k);
    return it == v.end() ? 0 : it->second;
  }
};

class ValidatorProcess {
 public:
  ValidatorProcess(const std::string& self, const std::filesystem::path& dir, std::uint16_t port, unsigned threads,
                   bool arena) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      std::string p = std::to_string(port), t = std::to_string(threads);
      std::vector<const char*> argv{self.c_str(), "--validator", "--dir", dir.c_str(), "--port", p.c_str(),
                                    "--validator-threads", t.c_str()};
      if (!arena) argv.push_back("--no-arena");
      argv.push_back(nullptr);
      ::execv(self.c_str(), const_cast<char* const*>(argv.data()));
      ::_exit(127);
    }
    ::close(fds[1]);
    out_ = ::fdopen(fds[0], "r");
    char line[512];
    while (port_ == 0) {  // after any log lines
      if (!std::fgets(line, sizeof line, out_)) throw std::runtime_error("the validator did not start");
      std::sscanf(line, "port %hu", &port_);
    }
    reader_ = std::thread([this] {
      char l[512];
      while (std::fgets(l, sizeof l, out_)) {
        ValidatorStats s;
        std::istringstream in(l);
        std::string word;
        if (!(in >> word) || word != "stats") continue;  // a log line, not the validator's figures
        while (in >> word)
          if (auto eq = word.find('='); eq != std::string::npos) s.v[word.substr(0, eq)] = std::stod(word.substr(eq + 1));
        std::lock_guard lock(m_);
        latest_ = s;
      }
    });
  }
  ~ValidatorProcess() { kill(); }

  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    if (reader_.joinable()) reader_.join();
    std::fclose(out_);
  }
  std::uint16_t port() const { return port_; }
  ValidatorStats latest() {
    std::lock_guard lock(m_);
    return latest_;
  }
  /// CPU seconds the validator has used (user + system), from /proc.
  double cpu_seconds() const { return stat_cpu_seconds("/proc/" + std::to_string(pid_) + "/stat"); }

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  FILE* out_ = nullptr;
  std::thread reader_;
  std::mutex m_;
  ValidatorStats latest_;
};

struct Options {
  int runners = 1000;
  int per_address = 20;   // simulated runners behind one source address (one UDP socket)
  int hold_seconds = 30;
  int runs = 1;
  int outstanding = 128;
  unsigned validator_threads = 1, loadgen_threads = 1;
  bool storm = true;
  bool check_pongs = false;  // the simulated runners trust the validator's signatures: its cost is what is measured
  bool arena = true;         // the validator's QUIC connection state in quic::dedicated_arena()
};

struct RunResult {
  double handshakes_per_sec = 0;
  std::uint64_t drops = 0, flaps = 0;
  double p50_ms = 0, p99_ms = 0;
  double cpu_per_kpps = 0, pings_per_sec = 0;
  double rss_per_conn_kib = 0, heap_per_conn_kib = 0;
  double storm50 = 0, storm99 = 0, storm100 = 0;
  std::size_t readmitted = 0;
};

// The simulated runners: links over a few endpoints, one io thread.
struct Crowd {
  struct Runner {
    std::unique_ptr<Signer> key;
    std::unique_ptr<RunnerLink> link;
    bool admitted = false;
    Clock::time_point ping_sent{}, readmitted_at{};
  };

  Crowd(const Options& o, std::uint16_t port)
      : worker(io, o.loadgen_threads), budget(256 * 1024 * 1024), runners(static_cast<std::size_t>(o.runners)) {
    const int addresses = (o.runners + o.per_address - 1) / o.per_address;
    for (int a = 0; a < addresses; ++a) {
      quic::EndpointConfig c;
      c.host = "127.0." + std::to_string(1 + (a + 1) / 250) + "." + std::to_string(1 + (a + 1) % 250);
      endpoints.push_back(std::move(*RunnerEndpoint::open(io, worker, budget, c)));
    }
    for (std::size_t i = 0; i < runners.size(); ++i) {
      Runner& r = runners[i];
      r.key = std::make_unique<Signer>(runner_key(static_cast<std::uint32_t>(i)));
      RunnerLinkConfig config;
      config.port = port;
      config.offer = bench_offer();
      config.check_peer_seals = o.check_pongs;
      RunnerLink::Callbacks cb;
      cb.on_admitted = [this, &r] {
        r.admitted = true;
        ++admitted;
        if (storm_started && r.readmitted_at == Clock::time_point{}) r.readmitted_at = Clock::now();
      };
      cb.on_lost = [this, &r](const std::string&) {
        r.admitted = false;
        --admitted;
        ++losses;
      };
      cb.on_pong = [this, &r](const HeartbeatPong&) {
        if (measuring) latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - r.ping_sent).count());
      };
      r.link = std::make_unique<RunnerLink>(*endpoints[i % endpoints.size()], *r.key, admit, entropy, config, cb);
    }
  }

  // Runs the io loop until `done` or `limit` seconds.
  template <typename Done>
  bool run_until(Done done, double limit) {
    const auto start = Clock::now();
    while (!done() && seconds_since(start) < limit) {
      io.run_for(std::chrono::milliseconds(5));
      io.restart();
    }
    return done();
  }

  // The block clock: runner i sees block h at h seconds + its slot in 100 slots of 10 ms.
  void start_blocks() {
    blocks_start = Clock::now();
    tick();
  }
  void tick() {
    const double t = seconds_since(blocks_start);
    const Height height{static_cast<std::uint64_t>(t) + 1};
    const std::size_t slot = static_cast<std::size_t>(t * 100) % 100;
    for (std::size_t i = slot; i < runners.size(); i += 100) {
      Runner& r = runners[i];
      if (r.link->admitted() && r.link->height() < height) r.ping_sent = Clock::now();
      r.link->on_block(height);
    }
    ticker.expires_after(std::chrono::milliseconds(10));
    ticker.async_wait([this](boost::system::error_code ec) {
      if (!ec) tick();
    });
  }

  asio::io_context io{1};
  SignatureWorker worker;
  net::ReadBudget budget;
  AdmitAll admit;
  SystemEntropy entropy;
  std::vector<std::unique_ptr<RunnerEndpoint>> endpoints;
  std::vector<Runner> runners;
  asio::steady_timer ticker{io};
  Clock::time_point blocks_start;
  std::size_t admitted = 0, losses = 0;
  bool measuring = false, storm_started = false;
  std::vector<double> latencies_ms;
};

RunResult run_once(const Options& o, const std::string& self, const std::filesystem::path& dir) {
  RunResult r;
  auto validator = std::make_unique<ValidatorProcess>(self, dir, 0, o.validator_threads, o.arena);
  const std::uint16_t port = validator->port();
  Crowd crowd(o, port);
  crowd.run_until([] { return false; }, 0.5);  // the validator's first stats line
  const auto before = validator->latest();

  // Ramp: at most `outstanding` handshakes in flight.
  const auto ramp = Clock::now();
  std::size_t next = 0;
  const auto n = crowd.runners.size();
  crowd.run_until(
      [&] {
        std::size_t started_not_admitted = next - crowd.admitted;
        while (next < n && started_not_admitted < static_cast<std::size_t>(o.outstanding)) {
          crowd.runners[next++].link->start();
          ++started_not_admitted;
        }
        return crowd.admitted == n;
      },
      300);
  const double ramp_s = seconds_since(ramp);
  r.handshakes_per_sec = static_cast<double>(crowd.admitted) / ramp_s;
  std::fprintf(stderr, "ramp: %zu of %zu admitted in %.1f s\n", crowd.admitted, n, ramp_s);

  // Hold, with every runner pinging once a block.
  crowd.start_blocks();
  crowd.run_until([] { return false; }, 3);  // let presence settle
  const auto held = validator->latest();
  const double cpu0 = validator->cpu_seconds();
  const std::size_t losses0 = crowd.losses;
  crowd.measuring = true;
  const auto hold = Clock::now();
  crowd.run_until([] { return false; }, o.hold_seconds);
  crowd.measuring = false;
  const double hold_s = seconds_since(hold);
  const double cpu = validator->cpu_seconds() - cpu0;
  const auto after = validator->latest();
  r.drops = (crowd.losses - losses0) + static_cast<std::uint64_t>(after["lost"] - held["lost"]);
  r.flaps = static_cast<std::uint64_t>(after["exits"] - held["exits"]);
  r.pings_per_sec = (after["pings"] - held["pings"]) / hold_s;
  const double pings = after["pings"] - held["pings"];
  const double in_per_ping = (after["in"] - held["in"]) / pings, out_per_ping = (after["out"] - held["out"]) / pings;
  r.cpu_per_kpps = r.pings_per_sec > 0 ? (cpu / hold_s) / (r.pings_per_sec / 1000) : 0;
  r.p50_ms = percentile(crowd.latencies_ms, 0.5);
  r.p99_ms = percentile(crowd.latencies_ms, 0.99);
  r.rss_per_conn_kib = (after["rss_kib"] - before["rss_kib"]) / static_cast<double>(n);
  r.heap_per_conn_kib = (after["heap"] - before["heap"]) / 1024.0 / static_cast<double>(n);
  std::fprintf(stderr, "hold: %.0f s, present %.0f of %zu, %lu drops, %lu flaps; validator datagrams per ping: %.2f in, %.2f out\n",
               hold_s, after["present"], n, r.drops, r.flaps, in_per_ping, out_per_ping);
  const auto per_conn = [&](const char* key) { return (after[key] - before[key]) / 1024.0 / static_cast<double>(n); };
  std::fprintf(stderr, "validator KiB per connection: RSS %.1f, jemalloc allocated %.1f, active %.1f, resident %.1f\n",
               r.rss_per_conn_kib, per_conn("heap"), per_conn("active"), per_conn("resident"));

  if (o.storm) {
    validator->kill();
    crowd.storm_started = true;
    const auto restart = Clock::now();
    validator = std::make_unique<ValidatorProcess>(self, dir, port, o.validator_threads, o.arena);
    crowd.run_until(
        [&] {
          std::size_t done = 0;
          for (const auto& x : crowd.runners) done += x.readmitted_at != Clock::time_point{};
          r.readmitted = done;
          return done == n;
        },
        90);
    std::vector<double> times;
    for (const auto& x : crowd.runners)
      times.push_back(x.readmitted_at == Clock::time_point{} ? 1e9 : std::chrono::duration<double>(x.readmitted_at - restart).count());
    std::sort(times.begin(), times.end());
    auto at = [&](double q) { return times[std::min(times.size() - 1, static_cast<std::size_t>(q * static_cast<double>(times.size() - 1)))]; };
    r.storm50 = at(0.5);
    r.storm99 = at(0.99);
    r.storm100 = times.back();
    std::fprintf(stderr, "storm: %zu of %zu readmitted\n", r.readmitted, n);
  }
  return r;
}

}  // namespace
}  // namespace cowboy::bench

int main(int argc, char** argv) {
  using namespace cowboy::bench;
  CLI::App app{"CIP-11 transport at scale: one validator process against simulated runners"};
  Options o;
  bool validator = false;
  std::string dir;
  std::uint16_t port = 0;
  app.add_flag("--validator", validator, "run as the validator process (the driver starts it)");
  app.add_option("--dir", dir, "validator: where its dev certificate lives");
  app.add_option("--port", port, "validator: UDP port (0: a free one)");
  app.add_option("--runners", o.runners, "simulated runners");
  app.add_option("--per-address", o.per_address, "runners behind one source address and UDP socket");
  app.add_option("--hold-seconds", o.hold_seconds, "how long the connections are held and pinging");
  app.add_option("--runs", o.runs, "runs; the last line is their median");
  app.add_option("--outstanding", o.outstanding, "handshakes in flight during the ramp");
  app.add_option("--validator-threads", o.validator_threads, "the validator's signature threads");
  app.add_option("--loadgen-threads", o.loadgen_threads, "the load generator's signature threads");
  app.add_flag("--check-pongs", o.check_pongs, "the simulated runners verify the validator's signatures too");
  bool no_storm = false, no_arena = false;
  app.add_flag("--no-storm", no_storm, "skip the SIGKILL-and-restart reconnect storm");
  app.add_flag("--no-arena", no_arena, "the validator keeps QUIC connection state in plain malloc (for A/B)");
  CLI11_PARSE(app, argc, argv);
  o.storm = !no_storm;
  o.arena = !no_arena;
  if (validator) return run_validator(dir, port, o.validator_threads, o.arena);

  cowboy::crypto::init();
  cowboy::raise_descriptor_limit();
  const std::string self = std::filesystem::canonical("/proc/self/exe");
  const auto work = std::filesystem::temp_directory_path() / ("cip11_quic_bench." + std::to_string(::getpid()));
  std::filesystem::create_directories(work);
  std::vector<RunResult> results;
  std::printf("| runners | handshakes/s | drops | flaps | ping->pong p50 ms | p99 ms | pings/s | validator CPU s per 1k pings/s | RSS KiB/conn | heap KiB/conn | re-admitted 50%% s | 99%% s | 100%% s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  auto row = [&](const char* label, const RunResult& r) {
    std::printf("| %s | %.0f | %lu | %lu | %.2f | %.2f | %.0f | %.3f | %.1f | %.1f | %.2f | %.2f | %.2f |\n", label,
                r.handshakes_per_sec, r.drops, r.flaps, r.p50_ms, r.p99_ms, r.pings_per_sec, r.cpu_per_kpps,
                r.rss_per_conn_kib, r.heap_per_conn_kib, r.storm50, r.storm99, r.storm100);
    std::fflush(stdout);
  };
  const std::string n = std::to_string(o.runners);
  for (int i = 0; i < o.runs; ++i) {
    results.push_back(run_once(o, self, work));
    row(n.c_str(), results.back());
  }
  auto med = [&](auto field) {
    std::vector<double> v;
    for (const auto& r : results) v.push_back(static_cast<double>(field(r)));
    return median(v);
  };
  RunResult m;
  m.handshakes_per_sec = med([](const RunResult& r) { return r.handshakes_per_sec; });
  m.drops = static_cast<std::uint64_t>(med([](const RunResult& r) { return r.drops; }));
  m.flaps = static_cast<std::uint64_t>(med([](const RunResult& r) { return r.flaps; }));
  m.p50_ms = med([](const RunResult& r) { return r.p50_ms; });
  m.p99_ms = med([](const RunResult& r) { return r.p99_ms; });
  m.pings_per_sec = med([](const RunResult& r) { return r.pings_per_sec; });
  m.cpu_per_kpps = med([](const RunResult& r) { return r.cpu_per_kpps; });
  m.rss_per_conn_kib = med([](const RunResult& r) { return r.rss_per_conn_kib; });
  m.heap_per_conn_kib = med([](const RunResult& r) { return r.heap_per_conn_kib; });
  m.storm50 = med([](const RunResult& r) { return r.storm50; });
  m.storm99 = med([](const RunResult& r) { return r.storm99; });
  m.storm100 = med([](const RunResult& r) { return r.storm100; });
  row(("median of " + std::to_string(o.runs) + ", " + n).c_str(), m);
  std::filesystem::remove_all(work);
  return 0;
}
