// Consumer-group throughput and redelivery timing of a real cbqsd (in
// process, RocksDB, wss over loopback TLS).
//
// Drain (default): --records records of --payload bytes are appended first;
// then --consumers consumers (each an SDK Client with its own connection,
// session and Consumer, on its own thread) take leases and Ack them
// (pipelined, callback form) until every record is acked. Reports acked records/s (first Subscribe to last Ok) and the broker's
// CPU per acked record. The medians of --runs runs are printed last.
//
//   build/bin/cbqs_group_bench --consumers 2 --records 200000 --runs 3
//
// Redelivery (--redelivery): one consumer never acks a first delivery; for every record the
// lateness of its second delivery behind first delivery + visibility_timeout_ms
// is measured (p50/p99).
//
//   build/bin/cbqs_group_bench --redelivery --records 2000 --visibility-ms 500 --runs 3
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench_util.h"
#include "cbqs/client.h"
#include "support/local_deployment.h"

using namespace cowboy;
using namespace cowboy::cbqs;
using SteadyClock = std::chrono::steady_clock;
using bench::median;
using bench::percentile;
using bench::thread_cpu_seconds;

namespace {

struct Options {
  int consumers = 2;
  int records = 200'000;
  std::size_t payload = 256;
  int runs = 1;
  bool redelivery = false;
  std::uint64_t visibility_ms = 500;
  bool details = false;
};

struct RunResult {
  double acked_per_sec = 0;
  double broker_cpu_us_per_record = 0;
  double lateness_p50_ms = 0, lateness_p99_ms = 0;
};

Bytes32 rid(std::uint64_t n) { return testbed::request_id(n); }



[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "group_bench: %s\n", why.c_str());
  std::exit(1);
}

template <typename Body>
const Body& expect(const Result<CbqsServerFrameV2, std::string>& f, const char* what) {
  if (!f) die(std::string(what) + ": " + f.error());
  const auto* r = std::get_if<Response>(&*f);
  if (!r || !std::holds_alternative<Body>(r->body)) die(std::string(what) + ": unexpected answer");
  return std::get<Body>(r->body);
}

RunResult run_once(const Options& o, int index) {
  auto dir = std::filesystem::temp_directory_path() / ("cbqs-group-bench-" + std::to_string(::getpid()) + "-" +
                                                       std::to_string(index));
  std::filesystem::remove_all(dir);
  testbed::DeploymentOptions options;
  options.snapshot_refresh_ms = 1'000;
  options.parameters = {{"cbqs.max_append_bytes_per_sec", 268'435'456},
                        {"cbqs.max_delivered_bytes_per_sec", 1'073'741'824}};
  auto started = testbed::LocalDeployment::start(dir, options);
  if (!started) die("cannot start: " + started.error());
  auto& d = **started;
  auto c = *d.connect();
  Bytes32 session = *d.open_session(*c, d.grant(0x003f));
  (void)c->send(Request{rid(1), session, req::UpdateSettings{StreamSettingsV2{604'800'000, 1'073'741'824, 1'048'576,
                                                                              268'435'456, 1'073'741'824}}});
  expect<resp::Settings>(c->receive(std::chrono::seconds(5)), "UpdateSettings");
  (void)c->send(Request{rid(2), session, req::CreateLane{}});
  LaneId lane = expect<resp::LaneCreated>(c->receive(std::chrono::seconds(5)), "CreateLane").lane_id;
  GroupConfigV2 config;
  config.lane_id = lane;
  config.start = StartAt{Sequence{1}};
  config.visibility_timeout_ms = o.redelivery ? o.visibility_ms : 30'000;
  config.max_visibility_ms = 30'000;
  config.max_in_flight = 262'144;
  config.max_in_flight_per_holder = o.redelivery ? 262'144 : 4'096;
  config.max_attempts = 16;
  config.record_deadline_ms = 3'600'000;
  (void)c->send(Request{rid(3), session, req::CreateGroup{config}});
  GroupId group = expect<resp::GroupCreated>(c->receive(std::chrono::seconds(5)), "CreateGroup").group_id;

  // Fill the lane, 256 appends in flight.
  Bytes payload(o.payload, 0x5a);
  int sent = 0, acked = 0;
  while (acked < o.records) {
    while (sent < o.records && sent - acked < 256)
      if (!c->send(Request{rid(100 + sent++), session, req::Append{{lane, payload}}})) die("append send");
    expect<resp::Appended>(c->receive(std::chrono::seconds(10)), "Append");
    ++acked;
  }

  RunResult result;
  std::atomic<int> total{0};
  std::atomic<bool> failed{false};
  std::vector<std::vector<double>> lateness(static_cast<std::size_t>(o.consumers));
  // A redelivery consumer (--redelivery): the blocking test client, so that
  // it can leave a first delivery unanswered and time the second.
  auto watch_redeliveries = [&](int k) {
    auto conn = d.connect();
    if (!conn) return void(failed = true);
    auto s = d.open_session(**conn, d.grant(0x003f));
    if (!s) return void(failed = true);
    Bytes32 sub = rid(10'000'000 + static_cast<std::uint64_t>(k));
    (void)(*conn)->send(Request{sub, *s, req::Subscribe{SourceGroup{lane, group}, 1ULL << 30}});
    std::uint64_t acks = 0, oks = 0;
    std::unordered_map<std::uint64_t, SteadyClock::time_point> first_seen;
    auto ack = [&](const Delivery& del) {
      if (!(*conn)->send(Request{rid(20'000'000 + acks++), *s, req::Ack{sub, *del.lease}})) failed = true;
      total.fetch_add(1);
    };
    // Until every record is taken, and then until this consumer's Acks are all answered
    // (closing earlier could lose Acks still unread by the broker).
    while ((total.load() < o.records || oks < acks) && !failed) {
      auto f = (*conn)->receive(std::chrono::milliseconds(200));
      if (!f) continue;
      if (const auto* r = std::get_if<Response>(&*f)) {
        oks += r->request_id != sub;  // the Subscribe's Ok is not an Ack's
        continue;
      }
      const auto* del = std::get_if<Delivery>(&*f);
      if (!del) {
        if (const auto* e = std::get_if<ErrorFrame>(&*f); e && o.details)
          std::fprintf(stderr, "error frame %u: %.*s\n", e->code, (int)e->message.size(), (const char*)e->message.data());
        continue;
      }
      auto [it, first] = first_seen.emplace(del->sequence.value, SteadyClock::now());
      if (!first) {  // the redelivery: how late behind first delivery + visibility
        double ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - it->second).count();
        lateness[static_cast<std::size_t>(k)].push_back(ms - static_cast<double>(o.visibility_ms));
        ack(*del);
      }
    }
  };
  // A drain consumer is what an application would write: the SDK's Consumer.
  auto consume_with_sdk = [&](int) {
    sdk::ClientOptions co;
    co.endpoint = "wss://127.0.0.1:" + std::to_string(d.broker().port()) + "/";
    co.pinned_certificate = d.certificate();
    co.grant = d.grant(0x003f);
    co.holder = d.holder();
    co.allow_private_destinations = true;
    auto client = sdk::Client::connect(co);
    if (!client) return void(failed = true);
    auto consumer = (*client)->consume({.lane = lane, .group = group, .window_bytes = 4 << 20});
    if (!consumer) return void(failed = true);
    std::uint64_t taken = 0;
    std::atomic<std::uint64_t> answered{0};
    while (total.load() < o.records && !failed) {
      auto lease = (*consumer)->next(std::chrono::milliseconds(100));
      if (!lease) return void(failed = true);
      if (!*lease) continue;
      ++taken;
      total.fetch_add(1);
      (*consumer)->ack(**lease, [&](sdk::Outcome<Unit> r) {
        if (!r) failed = true;
        answered.fetch_add(1);
      });
    }
    // Every Ack answered before the client goes (closing earlier could lose some).
    auto deadline = SteadyClock::now() + std::chrono::seconds(30);
    while (answered.load() < taken && SteadyClock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  double cpu_before = thread_cpu_seconds("cbqs-");
  double io_before = thread_cpu_seconds("cbqs-io"), commit_before = thread_cpu_seconds("cbqs-commit");
  auto begin = SteadyClock::now();
  std::vector<std::thread> threads;
  for (int k = 0; k < o.consumers; ++k) {
    if (o.redelivery)
      threads.emplace_back(watch_redeliveries, k);
    else
      threads.emplace_back(consume_with_sdk, k);
  }
  for (auto& t : threads) t.join();
  if (failed) die("a consumer failed");
  double received = std::chrono::duration<double>(SteadyClock::now() - begin).count();
  // Every Ack is durable once the group reports them all acked.
  for (;;) {
    std::uint64_t done = 0;
    for (const auto& st : d.broker().metrics().streams)
      for (const auto& g : st.groups) done = g.counters.acked;
    if (done >= static_cast<std::uint64_t>(o.records)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  double elapsed = std::chrono::duration<double>(SteadyClock::now() - begin).count();
  result.acked_per_sec = o.records / elapsed;
  if (o.details) {
    auto m = d.broker().metrics();
    std::fprintf(stderr, "  received all in %.3f s, all acks durable at %.3f s; %llu journal writes, %llu ops; io %.2f s, commit %.2f s\n",
                 received, elapsed, static_cast<unsigned long long>(m.journal_writes),
                 static_cast<unsigned long long>(m.journal_ops), thread_cpu_seconds("cbqs-io") - io_before,
                 thread_cpu_seconds("cbqs-commit") - commit_before);
    for (const auto& st : m.streams)
      for (const auto& g : st.groups)
        std::fprintf(stderr, "  group: delivered %llu redelivered %llu acked %llu expired %llu\n",
                     (unsigned long long)g.counters.delivered, (unsigned long long)g.counters.redelivered,
                     (unsigned long long)g.counters.acked, (unsigned long long)g.counters.expired);
  }
  result.broker_cpu_us_per_record = (thread_cpu_seconds("cbqs-") - cpu_before) * 1e6 / o.records;
  std::vector<double> all;
  for (auto& v : lateness) all.insert(all.end(), v.begin(), v.end());
  result.lateness_p50_ms = percentile(all, 0.5);
  result.lateness_p99_ms = percentile(all, 0.99);
  started->reset();  // closes the store, whose file-deletion thread must not race remove_all
  std::filesystem::remove_all(dir);
  return result;
}


}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"cbqsd consumer-group benchmark"};
  app.add_option("--consumers", o.consumers, "competing consumers")->check(CLI::Range(1, 64));
  app.add_option("--records", o.records, "records to drain")->check(CLI::Range(1, 10'000'000));
  app.add_option("--payload", o.payload, "payload bytes")->check(CLI::Range(0, 65'536));
  app.add_option("--runs", o.runs, "runs; medians are printed last")->check(CLI::Range(1, 20));
  app.add_flag("--redelivery", o.redelivery, "measure redelivery lateness instead (never ack the first delivery)");
  app.add_flag("--details", o.details, "also print journal writes, io/commit CPU and group counters per run");
  app.add_option("--visibility-ms", o.visibility_ms, "visibility_timeout_ms for --redelivery")->check(CLI::Range(1, 30'000));
  CLI11_PARSE(app, argc, argv);
  if (o.redelivery) o.consumers = 1;  // one holder sees both deliveries of a record

  std::vector<double> rate, cpu, p50, p99;
  for (int r = 0; r < o.runs; ++r) {
    RunResult x = run_once(o, r);
    if (o.redelivery)
      std::printf("run %d: redelivery lateness p50 %.2f ms p99 %.2f ms (visibility %llu ms, %d records)\n", r + 1,
                  x.lateness_p50_ms, x.lateness_p99_ms, static_cast<unsigned long long>(o.visibility_ms), o.records);
    else
      std::printf("run %d: %.0f acked records/s, broker CPU %.1f us/record\n", r + 1, x.acked_per_sec,
                  x.broker_cpu_us_per_record);
    rate.push_back(x.acked_per_sec);
    cpu.push_back(x.broker_cpu_us_per_record);
    p50.push_back(x.lateness_p50_ms);
    p99.push_back(x.lateness_p99_ms);
  }
  if (o.redelivery)
    std::printf("median of %d: redelivery lateness p50 %.2f ms p99 %.2f ms (visibility %llu ms)\n", o.runs,
                median(p50), median(p99), static_cast<unsigned long long>(o.visibility_ms));
  else
    std::printf("median of %d: consumers %d payload %zu: %.0f acked records/s, broker CPU %.1f us/record\n", o.runs,
                o.consumers, o.payload, median(rate), median(cpu));
  return 0;
}
