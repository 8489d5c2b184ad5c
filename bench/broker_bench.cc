// Durable append throughput and latency of a real cbqsd (in process, RocksDB,
// wss over loopback TLS), and append->delivery latency for a cursor
// subscriber. Each producer is its own connection and session, pipelining up
// to --window appends; a run reports appends/s and the p50/p99 of
// append->Appended. The medians of --runs runs are printed last.
//
//   build/bin/cbqs_broker_bench --producers 16 --payload 256 --seconds 5 --runs 3
//   build/bin/cbqs_broker_bench --producers 16 --payload 256 --rate 75000     # paced
//   build/bin/cbqs_broker_bench --subscriber --rate 1000                      # append->delivery
//   build/bin/cbqs_broker_bench --producers 16 --rate 20000 --lanes-per-sec 50   # lanes created under load
//   build/bin/cbqs_broker_bench --producers 16 --streams 2 --io-threads 2        # owners on two stream threads
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <atomic>
#include <cstdio>
#include <thread>

#include "async_load.h"
#include "bench_util.h"
#include "support/local_deployment.h"

using namespace cowboy;
using namespace cowboy::cbqs;
using SteadyClock = std::chrono::steady_clock;
using bench::median;
using bench::percentile;
using bench::thread_cpu_seconds;

namespace {

struct RunResult {
  double appends_per_sec = 0;
  double broker_cpu_us_per_append = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  double delivery_p50_ms = 0, delivery_p99_ms = 0;
  double lane_p50_ms = 0, lane_p99_ms = 0;
};

Bytes32 rid(std::uint64_t n) { return testbed::request_id(n); }
std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch()).count());
}



struct Options {
  int producers = 1;
  std::size_t payload = 256;
  double seconds = 5;
  int window = 64;
  double rate = 0;  // total appends/s across producers; 0 = as fast as the window allows
  bool subscriber = false;
  int runs = 1;
  bool blocking = false;  // one blocking thread per producer instead of the async generator
  double lanes_per_sec = 0;  // CreateLane requests per second during the run, from one more session
  std::size_t streams = 1;   // producers spread over this many streams
  std::size_t io_threads = 1;  // BrokerConfig::io_threads
};

// Raises a stream's settings to the ceilings and makes a lane on it.
LaneId prepare_stream(client::WssConnection& c, const Bytes32& session) {
  (void)c.send(Request{rid(1), session, req::UpdateSettings{StreamSettingsV2{604'800'000, 1'073'741'824, 1'048'576,
                                                                             268'435'456, 1'073'741'824}}});
  (void)c.receive(std::chrono::seconds(5));
  (void)c.send(Request{rid(2), session, req::CreateLane{}});
  auto lane_frame = c.receive(std::chrono::seconds(5));
  return std::get<resp::LaneCreated>(std::get<Response>(*lane_frame).body).lane_id;
}

// One producer: its own connection and session, up to `window` appends in flight.
void produce(testbed::LocalDeployment& d, const Options& o, LaneId lane, SteadyClock::time_point end,
             std::vector<double>& latencies_ms, std::uint64_t& done, std::atomic<bool>& failed) {
  auto c = d.connect();
  if (!c) return void(failed = true);
  auto session = d.open_session(**c, d.grant(0x003f));
  if (!session) return void(failed = true);
  std::vector<std::uint64_t> sent_at;
  sent_at.reserve(1 << 20);
  std::uint64_t in_flight = 0, next = 0;
  double per_producer = o.rate > 0 ? o.rate / o.producers : 0;
  auto start = SteadyClock::now();
  Bytes payload(o.payload, 0x5a);
  while (true) {
    auto now = SteadyClock::now();
    bool sending = now < end;
    while (sending && in_flight < static_cast<std::uint64_t>(o.window)) {
      if (per_producer > 0) {
        auto due = start + std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(next / per_producer));
        if (SteadyClock::now() < due) break;
      }
      std::uint64_t t = now_ns();
      std::memcpy(payload.data(), &t, std::min<std::size_t>(8, payload.size()));
      if (!(*c)->send(Request{rid(next), *session, req::Append{{lane, payload}}})) return void(failed = true);
      sent_at.push_back(t);
      ++next;
      ++in_flight;
    }
    if (!sending && in_flight == 0) break;
    auto f = (*c)->receive(std::chrono::milliseconds(per_producer > 0 ? 1 : 1'000));
    if (!f) {
      if (f.error() == "timeout" && (sending || in_flight > 0)) continue;
      return void(failed = true);
    }
    const auto* r = std::get_if<Response>(&*f);
    if (!r || !std::holds_alternative<resp::Appended>(r->body)) return void(failed = true);
    latencies_ms.push_back(static_cast<double>(now_ns() - sent_at[testbed::request_number(r->request_id)]) / 1e6);
    --in_flight;
    ++done;
  }
}

RunResult run_once(const Options& o, int index) {
  auto dir = std::filesystem::temp_directory_path() / ("cbqs-bench-" + std::to_string(::getpid()) + "-" + std::to_string(index));
  std::filesystem::remove_all(dir);
  testbed::DeploymentOptions options;
  options.snapshot_refresh_ms = 1'000;
  options.parameters = {{"cbqs.max_append_bytes_per_sec", 268'435'456}, {"cbqs.max_delivered_bytes_per_sec", 1'073'741'824}};
  options.streams = o.streams;
  options.io_threads = o.io_threads;
  auto started = testbed::LocalDeployment::start(dir, options);
  if (!started) {
    std::fprintf(stderr, "cannot start: %s\n", started.error().c_str());
    std::exit(1);
  }
  auto& d = **started;
  auto c = *d.connect();
  Bytes32 session = *d.open_session(*c, d.grant(0x003f));
  LaneId lane = prepare_stream(*c, session);
  std::vector<bench::LoadTarget> targets{{d.grant(0x003f), lane}};
  for (std::size_t i = 1; i < d.stream_ids().size(); ++i) {
    auto grant = d.grant_on(d.stream_ids()[i], 0x003f);
    auto other = *d.connect();
    targets.push_back({grant, prepare_stream(*other, *d.open_session(*other, grant))});
  }

  std::vector<double> delivery_ms;
  std::atomic<bool> stop_subscriber{false};
  std::thread subscriber;
  if (o.subscriber) {
    (void)c->send(Request{rid(3), session, req::Subscribe{SourceCursor{LaneScopeAny{}, StartHead{}}, 1ULL << 30}});
    (void)c->receive(std::chrono::seconds(5));
    subscriber = std::thread([&] {
      while (!stop_subscriber) {
        auto f = c->receive(std::chrono::milliseconds(100));
        if (!f) continue;
        if (const auto* del = std::get_if<Delivery>(&*f); del && del->payload.size() >= 8) {
          std::uint64_t t;
          std::memcpy(&t, del->payload.data(), 8);
          delivery_ms.push_back(static_cast<double>(now_ns() - t) / 1e6);
        }
      }
    });
  }

  // Lanes created while the producers append: each one is a durable change of the stream.
  std::vector<double> lane_ms;
  std::atomic<bool> stop_lanes{false};
  std::thread lane_creator;
  if (o.lanes_per_sec > 0) {
    lane_creator = std::thread([&] {
      auto lc = *d.connect();
      Bytes32 ls = *d.open_session(*lc, d.grant(0x003f));
      auto begin = SteadyClock::now();
      for (std::uint64_t n = 0; !stop_lanes; ++n) {
        std::this_thread::sleep_until(begin + std::chrono::duration_cast<SteadyClock::duration>(
                                                  std::chrono::duration<double>(n / o.lanes_per_sec)));
        std::uint64_t t = now_ns();
        if (!lc->send(Request{rid(10 + n), ls, req::CreateLane{}})) return;
        auto f = lc->receive(std::chrono::seconds(5));
        if (!f) return;
        lane_ms.push_back(static_cast<double>(now_ns() - t) / 1e6);
      }
    });
  }

  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(o.producers));
  std::vector<std::uint64_t> done(static_cast<std::size_t>(o.producers), 0);
  std::atomic<bool> failed{false};
  double elapsed = 0;
  double generator_cpu = -1;  // the async load generator's own thread (this one)
  double cpu_before = thread_cpu_seconds("cbqs-");
  const auto m_before = d.broker().metrics();  // the commit cycle's figures are over the run alone
  const char* kinds[] = {"cbqs-io", "cbqs-stream", "cbqs-commit"};  // where the broker's CPU goes
  std::vector<double> kind_before;
  for (const char* k : kinds) kind_before.push_back(thread_cpu_seconds(k));
  if (o.blocking) {
    auto begin = SteadyClock::now();
    auto end = begin + std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(o.seconds));
    std::vector<std::thread> threads;
    for (int p = 0; p < o.producers; ++p)
      threads.emplace_back(produce, std::ref(d), std::cref(o), lane, end, std::ref(latencies[p]), std::ref(done[p]),
                           std::ref(failed));
    for (auto& t : threads) t.join();
    elapsed = std::chrono::duration<double>(SteadyClock::now() - begin).count();
  } else {
    bench::AsyncLoadOptions a;
    a.port = d.broker().port();
    a.ca_file = d.certificate();
    a.targets = targets;
    a.holder = d.holder();
    a.producers = o.producers;
    a.payload = o.payload;
    a.window = o.window;
    a.seconds = o.seconds;
    a.rate = o.rate;
    double generator_before = bench::stat_cpu_seconds("/proc/thread-self/stat");
    auto r = bench::run_async_load(a);
    generator_cpu = bench::stat_cpu_seconds("/proc/thread-self/stat") - generator_before;
    latencies[0] = std::move(r.latencies_ms);
    done[0] = r.acknowledged;
    failed = r.failed;
    elapsed = r.elapsed_seconds;
  }
  stop_subscriber = true;
  if (subscriber.joinable()) subscriber.join();
  stop_lanes = true;
  if (lane_creator.joinable()) lane_creator.join();
  if (failed) std::fprintf(stderr, "warning: a producer failed during the run\n");

  double broker_cpu = thread_cpu_seconds("cbqs-") - cpu_before;
  RunResult r;
  std::vector<double> all;
  std::uint64_t total = 0;
  for (std::size_t p = 0; p < latencies.size(); ++p) {
    all.insert(all.end(), latencies[p].begin(), latencies[p].end());
    total += done[p];
  }
  auto m = d.broker().metrics();
  r.appends_per_sec = static_cast<double>(total) / elapsed;
  r.broker_cpu_us_per_append = total ? broker_cpu * 1e6 / static_cast<double>(total) : 0;
  r.p50_ms = percentile(all, 0.50);
  r.p99_ms = percentile(all, 0.99);
  r.max_ms = all.empty() ? 0 : *std::max_element(all.begin(), all.end());
  r.delivery_p50_ms = percentile(delivery_ms, 0.50);
  r.delivery_p99_ms = percentile(delivery_ms, 0.99);
  r.lane_p50_ms = percentile(lane_ms, 0.50);
  r.lane_p99_ms = percentile(lane_ms, 0.99);
  std::printf("run %d: %.0f appends/s, broker CPU %.1f us/append, append->Appended p50 %.3f ms p99 %.3f ms max %.3f ms, "
              "%llu batches (%.1f records/batch)",
              index, r.appends_per_sec, r.broker_cpu_us_per_append, r.p50_ms, r.p99_ms, r.max_ms,
              static_cast<unsigned long long>(m.batches),
              m.batches ? static_cast<double>(m.batch_records) / static_cast<double>(m.batches) : 0.0);
  std::vector<double> sync_ms;  // the store's synced writes (recent ones), to read the tail against
  for (auto us : m.sync_latency_us) sync_ms.push_back(static_cast<double>(us) / 1000.0);
  std::printf(", sync p50 %.3f ms p99 %.3f ms max %.3f", percentile(sync_ms, 0.50), percentile(sync_ms, 0.99), percentile(sync_ms, 1.0));
  // The commit cycle: synced writes per second, and per write the time from
  // one to the next against the time its thread was busy with it (sealing and
  // the synced write): the rest is the committer waiting for the owner's next
  // write (one stream, one committer: --io-threads 1).
  if (const std::uint64_t writes = m.writes - m_before.writes; writes > 0) {
    const double cycle_ms = elapsed * 1e3 / static_cast<double>(writes);
    const double busy_ms = static_cast<double>(m.write_busy_us - m_before.write_busy_us) / 1e3 / static_cast<double>(writes);
    const double records = static_cast<double>(m.batch_records - m_before.batch_records);
    std::printf(", cycle: %.0f writes/s, %.1f records/write, %.3f ms per write, busy %.3f ms, idle %.3f ms",
                static_cast<double>(writes) / elapsed, records / static_cast<double>(writes), cycle_ms, busy_ms,
                cycle_ms - busy_ms);
  }
  if (o.subscriber) std::printf(", append->delivery p50 %.3f ms p99 %.3f ms", r.delivery_p50_ms, r.delivery_p99_ms);
  std::printf(", CPU us/append");
  for (std::size_t k = 0; k < std::size(kinds); ++k)
    std::printf(" %s %.2f", kinds[k] + 5,
                total ? (thread_cpu_seconds(kinds[k]) - kind_before[k]) * 1e6 / static_cast<double>(total) : 0.0);
  if (generator_cpu >= 0 && total > 0)
    std::printf(", load generator %.2f us/append", generator_cpu * 1e6 / static_cast<double>(total));
  if (o.lanes_per_sec > 0)
    std::printf(", %zu lanes created, CreateLane p50 %.3f ms p99 %.3f ms", lane_ms.size(), r.lane_p50_ms, r.lane_p99_ms);
  std::printf("\n");
  std::fflush(stdout);
  started->reset();  // closes the store, whose file-deletion thread must not race remove_all
  std::filesystem::remove_all(dir);
  return r;
}


}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cbqs_broker_bench: durable append throughput and latency of cbqsd"};
  Options o;
  app.add_option("--producers", o.producers, "producer sessions, one connection each")->capture_default_str();
  app.add_option("--payload", o.payload, "payload bytes per append")->capture_default_str();
  app.add_option("--seconds", o.seconds, "length of each run")->capture_default_str();
  app.add_option("--window", o.window, "appends in flight per producer")->capture_default_str();
  app.add_option("--rate", o.rate, "total appends/s (0: as fast as possible)")->capture_default_str();
  app.add_flag("--subscriber", o.subscriber, "also measure append->delivery for a Head cursor subscriber");
  app.add_option("--runs", o.runs, "runs; the medians are printed last")->capture_default_str();
  app.add_option("--lanes-per-sec", o.lanes_per_sec, "lanes created per second during the run, from one more session")
      ->capture_default_str();
  app.add_option("--streams", o.streams, "streams the producers spread over (async generator only)")->capture_default_str();
  app.add_option("--io-threads", o.io_threads, "the broker's --io-threads")->capture_default_str();
  app.add_flag("--blocking", o.blocking, "one blocking client thread per producer (the default is one async thread for all)");
  CLI11_PARSE(app, argc, argv);
  crypto::init();
  std::vector<double> rate, p50, p99, dp50, dp99, cpu, lp50, lp99;
  for (int i = 1; i <= o.runs; ++i) {
    auto r = run_once(o, i);
    rate.push_back(r.appends_per_sec);
    cpu.push_back(r.broker_cpu_us_per_append);
    p50.push_back(r.p50_ms);
    p99.push_back(r.p99_ms);
    dp50.push_back(r.delivery_p50_ms);
    dp99.push_back(r.delivery_p99_ms);
    lp50.push_back(r.lane_p50_ms);
    lp99.push_back(r.lane_p99_ms);
  }
  std::printf("median of %d: producers=%d payload=%zu window=%d rate=%s: %.0f appends/s, broker CPU %.1f us/append, "
              "p50 %.3f ms, p99 %.3f ms",
              o.runs, o.producers, o.payload, o.window, o.rate > 0 ? std::to_string(static_cast<long>(o.rate)).c_str() : "max",
              median(rate), median(cpu), median(p50), median(p99));
  if (o.subscriber) std::printf(", append->delivery p50 %.3f ms p99 %.3f ms", median(dp50), median(dp99));
  if (o.lanes_per_sec > 0)
    std::printf(", lanes=%.0f/s: CreateLane p50 %.3f ms p99 %.3f ms", o.lanes_per_sec, median(lp50), median(lp99));
  std::printf("\n");
  return 0;
}
