// cbqsd (`cbqsd --dev`: RocksDB, group commit, a synced write per batch before
// any Appended) driven through the CBQS SDK: pipelined appends per client, a
// consumer group with competing Consumers acking each record, and a Reader as
// the live subscriber.
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "../../tests/support/process.h"
#include "../bench_util.h"
#include "cbqs/client.h"
#include "devchain/http_client.h"
#include "net/prometheus_text.h"
#include "peer.h"

namespace cowboy::bench::peers {
namespace {

using namespace cowboy::cbqs;

class CbqsdPeer final : public Peer {
 public:
  CbqsdPeer(std::filesystem::path bin, int batch) : bin_(std::move(bin)), batch_(batch) {}
  std::string name() const override { return "cbqsd"; }
  std::string durability() const override { return "RocksDB synced batch before Appended"; }
  std::string ack_durability() const override { return "Ack answered after its group journal batch is synced"; }
  /// How the unpaced append run hands payloads to the SDK, for the table.
  std::string append_mode() const {
    return batch_ > 0 ? "SDK append_batch of " + std::to_string(batch_) : "SDK append() per record";
  }

  bool start(const std::filesystem::path& dir) override {
    data_ = dir / "data";
    ::setenv("CBQS_HOME", (dir / "home").c_str(), 1);
    child_ = std::make_unique<testing::ChildProcess>(std::vector<std::string>{
        (bin_ / "cbqsd").string(), "--dev", "--data-dir", data_.string(), "--listen", "127.0.0.1:0", "--admin-listen",
        "127.0.0.1:0", "--chain-listen", "127.0.0.1:0"}, (dir / "cbqsd.log").string());
    if (!child_->wait_for_line("cbqsd listening", std::chrono::seconds(30))) return false;
    eventually([&] { return std::filesystem::exists(data_ / "dev-endpoints.json"); }, std::chrono::seconds(2));
    auto options = sdk::ClientOptions::from_dev_dir(data_);
    if (!options) return false;
    options_ = *options;
    return true;
  }
  void stop() override { child_.reset(); }

  Sample append(const AppendLoad& load) override {
    auto admin = client();
    auto lane = new_lane(admin.get(), "append");
    if (!lane) return {};
    // Where the run's CPU goes (stderr): the broker's threads by name, the
    // load's own threads, and the rest of this process (the SDK's io threads).
    auto broker_before = threads_by_name(child_->pid());
    Usage client_before = usage(RUSAGE_SELF);
    auto [batches_before, records_before] = commit_totals();
    std::mutex users_m;
    Usage users_use;
    Sample sample = on_each_connection(load, [&](Clock::time_point start, Clock::time_point end) {
      AtExit at_exit{users_m, users_use};
      std::vector<double> mine;
      auto c = client();
      if (!c) return mine;
      std::mutex pm;
      std::condition_variable cv;
      int outstanding = 0;
      Bytes payload(load.payload, 0x5a);
      double rate = load.rate / load.connections;
      if (rate == 0 && batch_ > 0) {  // as fast as the window allows: batches of batch_, the window's worth in flight
        int size = std::min(batch_, load.window);
        while (Clock::now() < end) {
          std::unique_lock lock(pm);
          cv.wait(lock, [&] { return outstanding + size <= load.window; });
          outstanding += size;
          lock.unlock();
          std::uint64_t sent = now_ns();
          c->append_batch(*lane, std::vector<Bytes>(static_cast<std::size_t>(size), payload),
                          [&, sent, size](std::vector<sdk::Outcome<Sequence>> r) {
                            std::lock_guard guard(pm);
                            outstanding -= size;
                            for (const auto& o : r)
                              if (o) mine.push_back(ms_since(sent));
                            cv.notify_all();
                          });
        }
        std::unique_lock lock(pm);
        cv.wait(lock, [&] { return outstanding == 0; });
        return mine;
      }
      for (std::uint64_t n = 0; Clock::now() < end; ++n) {
        if (rate > 0) std::this_thread::sleep_until(due(start, n, rate));
        std::unique_lock lock(pm);
        cv.wait(lock, [&] { return outstanding < load.window; });
        ++outstanding;
        lock.unlock();
        std::uint64_t sent = now_ns();
        c->append(*lane, payload, [&, sent](sdk::Outcome<Sequence> r) {
          std::lock_guard guard(pm);
          --outstanding;
          if (r) mine.push_back(ms_since(sent));
          cv.notify_all();
        });
      }
      std::unique_lock lock(pm);
      cv.wait(lock, [&] { return outstanding == 0; });
      return mine;
    });
    if (load.rate == 0 && sample.operations > 0) {
      auto [batches_after, records_after] = commit_totals();
      double batches = batches_after - batches_before;
      report_use("append (" + append_mode() + ", " + std::to_string(load.payload) + " B), " +
                     fmt2(batches > 0 ? (records_after - records_before) / batches : 0) + " records per synced batch",
                 "append", sample.operations, broker_before, client_before, users_use);
    }
    return sample;
  }

  Sample drain(int workers, std::uint64_t records, std::size_t payload) override {
    // Declared before the client: closing it fails appends still pending
    // (a flush that timed out) through their callbacks, which write these.
    Sequence first;
    std::atomic<std::uint64_t> refused{0};
    auto admin = client();
    auto lane = new_lane(admin.get(), "drain");
    if (!lane) return {};
    Bytes body(payload, 0x5a);
    for (std::uint64_t i = 0; i < records; ++i) {
      admin->append(*lane, body, [&first, &refused, i](sdk::Outcome<Sequence> r) {
        if (!r) ++refused;
        if (i == 0 && r) first = *r;
      });
    }
    (void)admin->flush(std::chrono::minutes(2));
    if (refused.load() > 0) std::fprintf(stderr, "cbqsd: %llu fill appends refused\n", static_cast<unsigned long long>(refused.load()));
    GroupConfigV2 g;
    g.lane_id = *lane;
    g.start = StartAt{first};
    g.visibility_timeout_ms = g.max_visibility_ms = 30'000;
    g.max_in_flight = 262'144;  // as cbqs_group_bench: the holders' credit windows are the limit
    g.max_in_flight_per_holder = 4'096;
    g.max_attempts = 5;
    g.record_deadline_ms = 3'600'000;
    auto group = admin->create_group(g);
    if (!group) {
      std::fprintf(stderr, "cbqsd: CreateGroup: %s\n", group.error().describe().c_str());
      return {};
    }
    std::atomic<std::uint64_t> acked{0};
    // Where the drain's CPU goes (stderr): the broker's threads by name, the
    // workers' own threads, and the rest of this process (the SDK's io threads).
    auto broker_before = threads_by_name(child_->pid());
    Usage client_before = usage(RUSAGE_SELF);
    std::mutex workers_m;
    Usage workers_use;
    std::fprintf(stderr, "cbqsd drain: the %d workers start (pid %d)\n", workers, static_cast<int>(child_->pid()));
    auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&] {
        AtExit at_exit{workers_m, workers_use};
        auto c = client();
        if (!c) return void(std::fprintf(stderr, "cbqsd: a drain worker could not connect\n"));
        auto consumer = c->consume({.lane = *lane, .group = *group, .window_bytes = 4 << 20});
        if (!consumer) return void(std::fprintf(stderr, "cbqsd: Subscribe: %s\n", consumer.error().describe().c_str()));
        while (acked.load() < records) {
          auto lease = (*consumer)->next(std::chrono::milliseconds(100));
          if (!lease) return void(std::fprintf(stderr, "cbqsd: %s\n", lease.error().describe().c_str()));
          if (!*lease) continue;
          (*consumer)->ack(**lease, [&acked](sdk::Outcome<Unit> r) {  // pipelined: the answer comes back on its own
            if (r) ++acked;
          });
        }
      });
    }
    for (auto& t : threads) t.join();
    std::fprintf(stderr, "cbqsd drain: the %d workers are done\n", workers);
    Sample sample = Sample::since(start, acked.load());
    report_use("drain, " + std::to_string(workers) + " workers", "acked record", acked.load(), broker_before,
               client_before, workers_use);
    return sample;
  }

  Sample delivery(double rate, double secs, std::size_t payload) override {
    auto c = client();
    auto lane = new_lane(c.get(), "delivery");
    if (!lane) return {};
    auto reader = c->read({LaneScopeExact{*lane}, StartHead{}});
    if (!reader) {
      std::fprintf(stderr, "cbqsd: the delivery reader was refused: %s\n", reader.error().describe().c_str());
      return {};
    }
    std::atomic<bool> done{false};
    Sample s;
    std::thread subscriber([&] {
      while (!done) {
        auto r = (*reader)->next(std::chrono::milliseconds(100));
        if (!r || !*r || (*r)->payload.size() < 8) continue;
        std::uint64_t sent = 0;
        std::memcpy(&sent, (*r)->payload.data(), sizeof sent);
        s.latencies_ms.push_back(ms_since(sent));
      }
    });
    Bytes body(std::max<std::size_t>(payload, 8), 0x5a);
    std::mutex acks_m;
    auto start = Clock::now();
    for (std::uint64_t n = 0; Clock::now() < start + seconds(secs); ++n) {
      std::this_thread::sleep_until(due(start, n, rate));
      std::uint64_t t = now_ns();
      std::memcpy(body.data(), &t, sizeof t);
      c->append(*lane, body, [&s, &acks_m, t](sdk::Outcome<Sequence> r) {
        if (!r) return;
        std::lock_guard lock(acks_m);
        s.ack_latencies_ms.push_back(ms_since(t));
      });
      ++s.operations;
    }
    (void)c->flush(std::chrono::seconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    done = true;
    subscriber.join();
    s.seconds = secs;
    return s;
  }

  /// Records per synced batch so far, from the broker's own metrics.
  double records_per_batch() const {
    auto [batches, records] = commit_totals();
    return batches > 0 ? records / batches : 0;
  }
  /// Synced commit batches and the records in them so far (0, 0 if unknown).
  std::pair<double, double> commit_totals() const {
    std::ifstream in(data_ / "dev-endpoints.json");
    auto where = nlohmann::json::parse(in, nullptr, false);
    if (!where.is_object() || !where.contains("admin")) return {0, 0};
    auto http = devchain::HttpClient::from_url(where["admin"].get<std::string>());
    if (!http) return {0, 0};
    auto metrics = http->get_text("/metrics");
    if (!metrics) return {0, 0};
    auto sums = net::sum_series(metrics->body);
    return {sums["cbqs_commit_batches_total"], sums["cbqs_commit_batch_records_total"]};
  }

 private:
  struct Usage {
    double cpu_seconds = 0;
    std::uint64_t wakeups = 0;  // voluntary context switches
  };
  static Usage usage(int who) {
    rusage u{};
    ::getrusage(who, &u);
    auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return {secs(u.ru_utime) + secs(u.ru_stime), static_cast<std::uint64_t>(u.ru_nvcsw)};
  }
  // Adds a thread's own use to `sum` when the thread's work is done.
  struct AtExit {
    std::mutex& m;
    Usage& sum;
    ~AtExit() {
      Usage mine = usage(RUSAGE_THREAD);
      std::lock_guard lock(m);
      sum.cpu_seconds += mine.cpu_seconds;
      sum.wakeups += mine.wakeups;
    }
  };
  // CPU microseconds and wake-ups per operation (an append, an acked record)
  // of one run, on stderr: the broker's threads, the load's threads (`workers`)
  // and the rest of this process (the SDK's io threads).
  void report_use(const std::string& run, const char* per, std::uint64_t operations,
                  const std::map<std::string, ThreadUse>& broker_before, Usage client_before, Usage workers_use) const {
    if (operations == 0) return;
    double n = static_cast<double>(operations);
    std::string broker_threads;
    double broker_cpu = 0, broker_wakeups = 0;
    for (const auto& [name, after] : threads_by_name(child_->pid())) {
      ThreadUse before;
      if (auto it = broker_before.find(name); it != broker_before.end()) before = it->second;
      double cpu = after.cpu_seconds - before.cpu_seconds;
      double wakeups = static_cast<double>(after.wakeups - before.wakeups);
      broker_cpu += cpu;
      broker_wakeups += wakeups;
      if (cpu * 1e6 / n >= 0.05)
        broker_threads += " " + name + " " + fmt2(cpu * 1e6 / n) + " us/" + fmt2(wakeups / n) + " wk";
    }
    Usage client_after = usage(RUSAGE_SELF);
    double client_cpu = client_after.cpu_seconds - client_before.cpu_seconds;
    double client_wakeups = static_cast<double>(client_after.wakeups - client_before.wakeups);
    std::fprintf(stderr,
                 "cbqsd %s: per %s: CPU %s us (broker %s + client %s); wake-ups %s (broker %s + "
                 "client %s); broker threads:%s; client workers %s us/%s wk, SDK io threads and the rest %s us/%s wk\n",
                 run.c_str(), per, fmt2((broker_cpu + client_cpu) * 1e6 / n).c_str(), fmt2(broker_cpu * 1e6 / n).c_str(),
                 fmt2(client_cpu * 1e6 / n).c_str(), fmt2((broker_wakeups + client_wakeups) / n).c_str(),
                 fmt2(broker_wakeups / n).c_str(), fmt2(client_wakeups / n).c_str(), broker_threads.c_str(),
                 fmt2(workers_use.cpu_seconds * 1e6 / n).c_str(), fmt2(static_cast<double>(workers_use.wakeups) / n).c_str(),
                 fmt2((client_cpu - workers_use.cpu_seconds) * 1e6 / n).c_str(),
                 fmt2((client_wakeups - static_cast<double>(workers_use.wakeups)) / n).c_str());
  }
  static std::string fmt2(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
  }
  // A fresh lane for one run, or none with the reason on stderr (the row is
  // then left out rather than the bench ending).
  std::optional<LaneId> new_lane(sdk::Client* c, const char* run) {
    if (!c) {
      std::fprintf(stderr, "cbqsd: the %s run could not connect\n", run);
      return std::nullopt;
    }
    auto lane = c->create_lane();
    if (!lane) {
      std::fprintf(stderr, "cbqsd: the %s run's lane was refused: %s\n", run, lane.error().describe().c_str());
      return std::nullopt;
    }
    return *lane;
  }
  std::unique_ptr<sdk::Client> client() {
    auto c = sdk::Client::connect(options_);
    return c ? std::move(*c) : nullptr;
  }

  std::filesystem::path bin_, data_;
  int batch_ = 0;  // appends per Client::append_batch in the unpaced append run; 0: one append() each
  sdk::ClientOptions options_;
  std::unique_ptr<testing::ChildProcess> child_;
};

}  // namespace

std::unique_ptr<Peer> make_cbqsd(const std::filesystem::path& bin_dir, int batch) {
  return std::make_unique<CbqsdPeer>(bin_dir, batch);
}
double cbqsd_records_per_batch(const Peer& p) { return static_cast<const CbqsdPeer&>(p).records_per_batch(); }
std::string cbqsd_append_mode(const Peer& p) { return static_cast<const CbqsdPeer&>(p).append_mode(); }

}  // namespace cowboy::bench::peers
