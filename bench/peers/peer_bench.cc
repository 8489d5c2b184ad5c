// cbqsd against Redis Streams, NATS JetStream and RabbitMQ (quorum queues) on
// this machine, in one run: the same workloads through each system's own C/C++
// client, interleaved (cbqsd, Redis, NATS, RabbitMQ, cbqsd, ...) so that drift
// hits all alike, --runs times each; medians with min-max, ratios cbqsd/peer,
// and the physical reference (fdatasync, and RocksDB's own synced-batch rate at
// cbqsd's batch size). --peers narrows the comparison (issue 46's targets are
// against Redis alone, and five runs of all four systems take long).
//
//   build/bin/cbqs_peer_bench --runs 3 --out bench/results
//   build/bin/cbqs_peer_bench --runs 5 --peers redis --out bench/results
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "../bench_util.h"
#include "peer.h"

namespace cowboy::bench::peers {

double cbqsd_records_per_batch(const Peer& p);
std::string cbqsd_append_mode(const Peer& p);

namespace {

using nlohmann::json;

// Every measured value, by figure and system, one entry per run.
struct Table {
  struct Row {
    std::string figure, system, unit, durability;
    std::vector<double> runs;
  };
  std::vector<Row> rows;
  Row& row(const std::string& figure, const std::string& system, const std::string& unit, const std::string& durability) {
    for (auto& r : rows)
      if (r.figure == figure && r.system == system) return r;
    rows.push_back({figure, system, unit, durability, {}});
    return rows.back();
  }
  double median_of(const std::string& figure, const std::string& system) const {
    for (const auto& r : rows)
      if (r.figure == figure && r.system == system) return median(r.runs);
    return 0;
  }
};

std::string fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof b, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
  return b;
}

// The physical limit of the data directory's filesystem: 4 KiB write + fdatasync.
void physical_sync(const std::filesystem::path& dir, Table& t) {
  auto file = dir / "fdatasync-probe";
  int fd = ::open(file.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  std::vector<char> block(4096, 'x');
  std::vector<double> ms;
  auto end = Clock::now() + std::chrono::seconds(2);
  for (off_t off = 0; Clock::now() < end; off += 4096) {
    std::uint64_t start = now_ns();
    if (::pwrite(fd, block.data(), block.size(), off) < 0 || ::fdatasync(fd) != 0) break;
    ms.push_back(ms_since(start));
  }
  ::close(fd);
  std::filesystem::remove(file);
  t.row("write+fdatasync latency p50", "filesystem", "ms", "fdatasync").runs.push_back(percentile(ms, 0.5));
  t.row("write+fdatasync rate", "filesystem", "syncs/s", "fdatasync").runs.push_back(static_cast<double>(ms.size()) / 2.0);
}

// RocksDB alone, synced batches of `records` records of `payload` bytes.
void physical_rocksdb(const std::filesystem::path& dir, double records, std::size_t payload, Table& t) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  if (!rocksdb::DB::Open(options, (dir / "rocksdb-probe").string(), &raw).ok()) return;
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions synced;
  synced.sync = true;
  std::string value(payload + 53, 'x');  // a stored record is 53 + n bytes (docs/protocol.md §P)
  std::uint64_t written = 0, key = 0;
  int per_batch = std::max(1, static_cast<int>(records + 0.5));
  auto start = Clock::now(), end = start + std::chrono::seconds(3);
  while (Clock::now() < end) {
    rocksdb::WriteBatch batch;
    for (int i = 0; i < per_batch; ++i) {
      char k[16];
      std::snprintf(k, sizeof k, "%015llu", static_cast<unsigned long long>(++key));
      batch.Put(k, value);
    }
    batch.Put("receipt", std::string(300, 'r'));
    if (!db->Write(synced, &batch).ok()) break;
    written += static_cast<std::uint64_t>(per_batch);
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  t.row("RocksDB synced batches, " + fmt(records) + " records/batch", "RocksDB alone", "records/s", "sync=true")
      .runs.push_back(static_cast<double>(written) / seconds);
  db.reset();
  std::filesystem::remove_all(dir / "rocksdb-probe");
}

}  // namespace
}  // namespace cowboy::bench::peers

int main(int argc, char** argv) {
  using namespace cowboy::bench;
  using namespace cowboy::bench::peers;
  CLI::App app{"cbqsd against Redis Streams, NATS JetStream and RabbitMQ, interleaved, in one run"};
  int runs = 3;
  double seconds = 5;
  std::uint64_t records = 200'000;
  std::string out_dir = "bench/results", work_dir;
  app.add_option("--runs", runs, "runs of each workload on each system")->capture_default_str();
  app.add_option("--seconds", seconds, "length of each timed append run")->capture_default_str();
  app.add_option("--records", records, "records each drain run fills and drains")->capture_default_str();
  app.add_option("--out", out_dir, "where peers.md and peers.json go")->capture_default_str();
  app.add_option("--work-dir", work_dir, "data directories (default: a fresh one under /tmp)");
  int cbqsd_batch = 16;
  app.add_option("--cbqsd-batch", cbqsd_batch,
                 "cbqsd's unpaced append runs: payloads per SDK append_batch, the window's worth in flight (0: append() each)")
      ->capture_default_str();
  std::vector<std::string> only;
  app.add_option("--only", only, "workloads to run (append, latency, drain, delivery; default all)");
  std::vector<int> drain_workers{2, 8};
  app.add_option("--drain-workers", drain_workers, "worker counts of the group drain runs")->capture_default_str();
  std::vector<std::string> systems;
  app.add_option("--peers", systems, "peers to run beside cbqsd (redis, nats, rabbitmq; default all)")
      ->check(CLI::IsMember({"redis", "nats", "rabbitmq"}));
  std::uint16_t rabbit_port = 0;
  app.add_option("--rabbitmq-port", rabbit_port,
                 "RabbitMQ's AMQP port; distribution and epmd take the next two (default: free ports)");
  CLI11_PARSE(app, argc, argv);

  std::filesystem::path work = work_dir.empty() ? std::filesystem::temp_directory_path() /
                                                      ("cbqs-peers-" + std::to_string(::getpid()))
                                                : std::filesystem::path(work_dir);
  std::filesystem::create_directories(work);
  auto bin = std::filesystem::canonical("/proc/self/exe").parent_path();
  auto peer_wanted = [&](const char* p) {
    return systems.empty() || std::find(systems.begin(), systems.end(), p) != systems.end();
  };
  std::vector<std::unique_ptr<Peer>> peers;
  peers.push_back(make_cbqsd(bin, cbqsd_batch));
  if (peer_wanted("redis")) peers.push_back(make_redis());
  if (peer_wanted("nats")) peers.push_back(make_nats());
#ifdef COWBOY_HAVE_RABBITMQ
  if (peer_wanted("rabbitmq") && rabbitmq_installed())
    peers.push_back(make_rabbitmq(rabbit_port == 0 ? RabbitPorts{}
                                                   : RabbitPorts{rabbit_port, static_cast<std::uint16_t>(rabbit_port + 1),
                                                                 static_cast<std::uint16_t>(rabbit_port + 2)}));
  else if (peer_wanted("rabbitmq"))
    std::fprintf(stderr, "RabbitMQ skipped: rabbitmq-server is not installed "
                         "(scripts/install-deps.sh rabbitmq-server, or make bench)\n");
#else
  (void)rabbit_port;
  if (peer_wanted("rabbitmq"))
    std::fprintf(stderr, "RabbitMQ skipped: cbqs_peer_bench was built without librabbitmq-dev "
                         "(scripts/install-deps.sh librabbitmq-dev, then rebuild)\n");
#endif
  for (auto& p : peers) {
    auto dir = work / p->name();
    std::filesystem::create_directories(dir);
    if (!p->start(dir)) {
      std::fprintf(stderr, "%s did not start (data in %s)\n", p->name().c_str(), dir.c_str());
      return 1;
    }
  }

  Table t;
  auto progress = [](const std::string& what) { std::fprintf(stderr, "  %s\n", what.c_str()); };
  auto wanted = [&](const char* w) { return only.empty() || std::find(only.begin(), only.end(), w) != only.end(); };
  // Each workload: every run visits every system in turn (A B C A B C ...).
  auto each = [&](const std::string& what, const std::function<void(Peer&, int)>& f) {
    progress(what);
    for (int r = 0; r < runs; ++r)
      for (auto& p : peers) f(*p, r);
  };

  physical_sync(work, t);
  for (std::size_t payload : {256, 1024}) {
    if (!wanted("append")) break;
    std::string figure = "durable appends/s, " + std::to_string(payload) + " B, 4 conns x 64 outstanding";
    each(figure, [&](Peer& p, int) {
      auto s = p.append({4, 64, payload, seconds, 0});
      t.row(figure, p.name(), "appends/s", p.durability()).runs.push_back(s.per_second());
    });
  }
  double batch = cbqsd_records_per_batch(*peers[0]);
  for (int r = 0; r < runs && batch > 0; ++r) physical_rocksdb(work, batch, 256, t);

  auto latency_rows = [&](const std::string& figure, Peer& p, const Sample& s) {
    t.row(figure + " p50", p.name(), "ms", p.durability()).runs.push_back(percentile(s.latencies_ms, 0.50));
    t.row(figure + " p99", p.name(), "ms", p.durability()).runs.push_back(percentile(s.latencies_ms, 0.99));
    t.row(figure + " max", p.name(), "ms", p.durability()).runs.push_back(percentile(s.latencies_ms, 1.0));
  };
  // Before each latency run, the page cache's dirty pages (every earlier run's
  // files, of every system) go to the disk, so no system's fsync waits behind
  // another's leftover writeback.
  if (wanted("latency")) each("append latency at 500/s", [&](Peer& p, int) {
    ::sync();
    latency_rows("append->ack latency at 500/s, 256 B", p, p.append({1, 64, 256, seconds, 500}));
  });
  if (wanted("latency") && wanted("append")) each("append latency at half of each system's maximum", [&](Peer& p, int) {
    double half = t.median_of("durable appends/s, 256 B, 4 conns x 64 outstanding", p.name()) / 2;
    ::sync();
    latency_rows("append->ack latency at 50% of own max, 256 B", p, p.append({4, 64, 256, seconds, half}));
  });
  for (int workers : drain_workers) {
    if (!wanted("drain")) break;
    std::string figure = "group drain, " + std::to_string(workers) + " workers, " + std::to_string(records) + " x 256 B";
    each(figure, [&](Peer& p, int) {
      auto s = p.drain(workers, records, 256);
      t.row(figure, p.name(), "acked/s", p.ack_durability()).runs.push_back(s.per_second());
    });
  }
  if (wanted("delivery")) each("append->delivery latency", [&](Peer& p, int) {
    ::sync();
    Sample s = p.delivery(500, seconds, 256);
    latency_rows("append->delivery latency at 500/s, live subscriber", p, s);
    if (!s.ack_latencies_ms.empty()) {  // the same appends' acks: a stall they share is the commit's, not delivery's
      // A p50 below the ack's says the subscriber got records before they were acknowledged as durable.
      t.row("append->delivery run: its appends' ack p50", p.name(), "ms", p.durability())
          .runs.push_back(percentile(s.ack_latencies_ms, 0.5));
      t.row("append->delivery run: its appends' ack max", p.name(), "ms", p.durability())
          .runs.push_back(percentile(s.ack_latencies_ms, 1.0));
    }
  });
  for (auto& p : peers) p->stop();
  std::filesystem::remove_all(work);

  // The table, the ratios, and the raw numbers.
  std::string md = "| figure | system | median | min-max | unit | durability |\n|---|---|---|---|---|---|\n";
  json raw = json::array();
  for (const auto& r : t.rows) {
    if (r.runs.empty()) continue;
    auto [lo, hi] = std::minmax_element(r.runs.begin(), r.runs.end());
    md += "| " + r.figure + " | " + r.system + " | " + fmt(median(r.runs)) + " | " + fmt(*lo) + "-" + fmt(*hi) + " | " +
          r.unit + " | " + r.durability + " |\n";
    raw.push_back({{"figure", r.figure}, {"system", r.system}, {"unit", r.unit}, {"durability", r.durability}, {"runs", r.runs}});
  }
  md += "\n| figure | cbqsd / Redis | cbqsd / NATS | cbqsd / RabbitMQ |\n|---|---|---|---|\n";
  std::vector<std::string> figures;
  for (const auto& r : t.rows)
    if (r.system == "cbqsd") figures.push_back(r.figure);
  for (const auto& f : figures) {
    double c = t.median_of(f, "cbqsd"), redis = t.median_of(f, "Redis Streams"), nats = t.median_of(f, "NATS JetStream"),
           rabbit = t.median_of(f, "RabbitMQ");
    md += "| " + f + " | " + (redis > 0 ? fmt(c / redis) : "-") + " | " + (nats > 0 ? fmt(c / nats) : "-") + " | " +
          (rabbit > 0 ? fmt(c / rabbit) : "-") + " |\n";
  }
  md += "\nNATS JetStream 2.9 does not fsync each message by default (its file store syncs every two minutes): its\n"
        "acknowledged appends survive a process crash but not a power loss, unlike cbqsd's and Redis's\n"
        "`appendfsync always`. Its acks (natsMsg_Ack) are not confirmed by the server; cbqsd's Ack answers after\n"
        "the group journal is synced, and Redis answers XACK once its AOF write is fsynced.\n"
        "RabbitMQ 3.10 quorum queues (one node) send a publisher confirm once the message's Raft entry is in the\n"
        "write-ahead log and the WAL is fdatasync'ed; consumers take deliveries with manual acks (prefetch 100),\n"
        "and a consumer's basic.ack is not confirmed by the server.\n";
  md += "\nThe unpaced append rows keep at most 64 appends outstanding per connection on every system: cbqsd through\n"
        "the " + cbqsd_append_mode(*peers[0]) + ", Redis as pipelined XADDs (hiredis writes what is queued in one\n"
        "go), NATS as async publishes, RabbitMQ as publishes awaiting confirms. The paced rows (latency) hand over\n"
        "one append at a time everywhere.\n";
  char when[32];
  std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", std::gmtime(&now));
  md = "Measured " + std::string(when) + " UTC, " + std::to_string(runs) + " runs each, interleaved; `" +
       std::string(argv[0]) + " --runs " + std::to_string(runs) + " --seconds " + fmt(seconds) + " --records " +
       std::to_string(records) + " --cbqsd-batch " + std::to_string(cbqsd_batch) + "`\n\n" + md;
  std::filesystem::create_directories(out_dir);
  std::ofstream(std::filesystem::path(out_dir) / "peers.md") << md;
  std::ofstream(std::filesystem::path(out_dir) / "peers.json") << raw.dump(2) << "\n";
  std::printf("%s", md.c_str());
  return 0;
}
