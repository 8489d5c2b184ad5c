// Transit state: durable turns against the foundation's commands, and the
// cost of reads as one resource grows (docs/performance.md, "Transit state").
//
//   transit_state_bench --workers 1,16 --ops 20000 --runs 3 --sizes 1000,100000,1000000
//
// Turns: each run starts a fresh node (in this process, real HTTP on
// 127.0.0.1, synced RocksDB journal); each worker owns its own process and
// resource and publishes pre-signed turns of four 128-byte entries each. The
// commands run beside it is the foundation's (create_principal, as in
// transit_bench), alternated with the turns run (A B A B).
// Reads: one node; sixteen processes share one resource and fill it with
// turns to each size in turn; at each size one client measures read_entries
// of eight random present keys and list_entries pages continued from random
// keys, signed before the clock starts.
// Scale (--processes N --entries M --data DIR): a journal holding N processes
// and M entries in one resource, filled once, then opened --restarts times,
// each time measuring how long the node takes to open, its resident memory,
// process reads of random PIDs, read_entries over the M entries and turns of
// 16 workers (docs/performance.md, "Transit at 10^6 processes"). With
// --records K the fill adds K turns of process 1 that each publish four
// outputs (to processes 2-5, left pending) and an effect intent, and K
// payload declarations: the records that grow with work (decision 170).
#include <CLI/CLI.hpp>

#include <fstream>
#include <random>

#include "transit_load.h"
#include "transit/contract/signing.h"
#include "transit/node/journal.h"

using namespace cowboy;
using namespace cowboy::transit;
using namespace cowboy::transit::bench;

namespace {

// With TRANSIT_BENCH_VERBOSE set: the journal's synced writes during a run.
void report_syncs(const char* what, std::size_t workers, const node::SequencerStats& before, const node::SequencerStats& after) {
  if (!std::getenv("TRANSIT_BENCH_VERBOSE")) return;
  const auto syncs = std::max<std::uint64_t>(1, after.synced_writes - before.synced_writes);
  std::fprintf(stderr, "  %s %zu workers: %llu syncs, mean %.0f us, %llu over 5 ms\n", what, workers,
               (unsigned long long)syncs, static_cast<double>(after.sync_us_total - before.sync_us_total) / static_cast<double>(syncs),
               (unsigned long long)(after.slow_syncs - before.slow_syncs));
}

Sample run_turns(std::size_t workers, std::size_t ops, std::size_t& body_bytes) {
  const auto dir = fresh_dir("turns");
  auto node = start_node(dir);
  const auto bodies = turn_workload(*node, workers, ops);
  body_bytes = bodies[0][0].size();
  const auto before = node->sequencer().stats();
  Sample s = drive(node->port(), "/v1/command", bodies, 0);
  const auto after = node->sequencer().stats();
  report_syncs("turns", workers, before, after);
  const double accepted = static_cast<double>(after.accepted - before.accepted);
  s.fsyncs_per_op = accepted > 0 ? static_cast<double>(after.synced_writes - before.synced_writes) / accepted : 0;
  s.failed = workers * (ops / workers) - static_cast<std::size_t>(accepted);
  node.reset();
  std::filesystem::remove_all(dir);
  return s;
}

Sample run_commands(std::size_t clients, std::size_t ops) {
  const auto dir = fresh_dir("commands");
  auto node = start_node(dir);
  const auto base = root_options_of(*node);
  Client root(base);
  const auto bodies = principal_commands(create_administrators(root, base, clients), ops / clients);
  const auto before = node->sequencer().stats();
  Sample s = drive(node->port(), "/v1/command", bodies, 0);
  report_syncs("commands", clients, before, node->sequencer().stats());
  node.reset();
  std::filesystem::remove_all(dir);
  return s;
}

struct ReadSample {
  double batch_p50_us = 0, batch_p99_us = 0, page_p50_us = 0, page_p99_us = 0;
};

double time_us(net::HttpConnection& c, const std::string& body) {
  const auto start = std::chrono::steady_clock::now();
  auto r = c.post("/v1/query", body);
  need(r.ok() && r->status == 200, "query failed: " + (r.ok() ? r->body : r.error()));
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

ReadSample measure_reads(node::Node& node, ResourceId resource, std::uint64_t entries, std::size_t queries) {
  const auto base = root_options_of(node);
  Client root(base);
  auto access = root.query(ReadAccess{resource});
  need(access.ok(), "read_access");
  const Revision revision = std::get<ResourceAccess>(access->result).resource.revision;
  const Position cut = access->position;
  std::mt19937_64 random(entries);
  std::vector<std::string> batches, pages;
  for (std::size_t q = 0; q < queries; ++q) {
    ReadEntries batch{resource, revision, std::nullopt, {}};
    std::set<std::uint64_t> picked;
    while (picked.size() < kPageRecords) picked.insert(random() % entries);
    std::size_t slot = 0;
    for (auto n : picked) batch.keys.items[slot++] = entry_key(n);
    batches.push_back(to_json(sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, batch}, base.seed)));
    pages.push_back(to_json(sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1},
                                       ListEntries{CurrentBasis{resource, revision}, std::nullopt,
                                                   EntryCursor{cut, {entry_key(random() % entries).value}}}},
                                 base.seed)));
  }
  net::HttpConnection c("127.0.0.1", node.port());
  std::vector<double> batch_us, page_us;
  for (std::size_t q = 0; q < queries; ++q) {  // interleaved, so neither gets a warmer cache
    batch_us.push_back(time_us(c, batches[q]));
    page_us.push_back(time_us(c, pages[q]));
  }
  return ReadSample{cowboy::bench::percentile(batch_us, 0.5), cowboy::bench::percentile(batch_us, 0.99),
                    cowboy::bench::percentile(page_us, 0.5), cowboy::bench::percentile(page_us, 0.99)};
}

// ---- Scale: many processes and entries in one journal ----

constexpr Id kFillFirstPid = 1'000'000;  // the filler processes' PIDs; workers are 1..16
constexpr std::size_t kScaleWorkers = 16;

struct NoPayloads final : node::PayloadFacts {
  bool holds(Id, Id, const Digest&) const override { return false; }
  bool absent(Id, const Digest&) const override { return true; }
};

TrustedMs wall_ms() {
  return TrustedMs{static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count())};
}

double rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmRSS:")) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

/// Workers 100.. (seeds 1..) own processes 1..16 on resources 1..16, set up over HTTP.
std::vector<ClientOptions> scale_workers(const ClientOptions& base) {
  std::vector<ClientOptions> out;
  for (std::size_t w = 0; w < kScaleWorkers; ++w) {
    ClientOptions o = base;
    o.principal = PrincipalId{100 + w};
    o.seed = testing::seed_of(static_cast<std::uint8_t>(w + 1));
    out.push_back(o);
  }
  return out;
}

// The fill goes through Authority::decide and Journal::stage/commit directly:
// the same signed requests, decisions and records as over HTTP, in groups of
// 4096 per synced write, without the HTTP hop (10^6 commands in minutes).
void fill_scale(const std::filesystem::path& dir, std::size_t processes, std::size_t entries, std::size_t records) {
  {
    auto node = start_node(dir);
    const auto base = root_options_of(*node);
    Client root(base);
    for (std::size_t w = 0; w < kScaleWorkers; ++w) {
      auto r = root.submit(CreateResource{{"doc" + std::to_string(w)}, std::nullopt});
      need(r.ok() && std::get<ResourceCreated>(r->outcome).resource == ResourceId{1 + w}, "create resource");
    }
    setup_workers(root, base, kScaleWorkers, [](std::size_t w) { return ResourceId{1 + w}; });
  }
  auto journal = node::Journal::open(dir / "journal", testing::sample_genesis());
  need(journal.ok(), "open journal");
  auto loaded = (*journal)->load();
  need(loaded.ok(), "load journal");
  node::Authority& authority = *loaded;  // reads its processes from the journal it was loaded from
  NoPayloads payloads;
  std::size_t staged = 0;
  const auto decide = [&](auto principal_of, std::uint8_t seed, Command op) {
    const PrincipalId principal = testing::id<PrincipalId>(principal_of);
    const Request r{Version{}, Definition{definition()}, {"dev"}, principal,
                    authority.principal(principal)->sequence + 1, std::move(op)};
    const SignedRequest signed_request = sign(r, testing::seed_of(seed));
    node::Touched touched;
    auto receipt = authority.decide(r, request_digest(r), wall_ms(), {}, (*journal)->catalog(), payloads, touched);
    need(receipt.ok(), "fill decision refused: " + (receipt.ok() ? std::string() : receipt.error().message));
    (*journal)->stage(authority, touched, to_json(signed_request), *receipt);
    if (++staged % 4096 == 0) need((*journal)->commit(*(*journal)->take_staged(authority.head())), "fill write");
  };
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < processes; ++i) decide(PrincipalId{1}, 0, CreateProcess{Pid{kFillFirstPid + i}, {}});
  for (std::uint64_t n = 0; n < entries; n += 4) {  // worker 0's turns on resource 1, four entries each
    Turn t{Pid{1}, 2, std::nullopt, ResourceId{1}, std::nullopt, {}, {}, {}, {}, std::nullopt};
    for (std::uint64_t k = n; k < std::min<std::uint64_t>(entries, n + 4); ++k)
      t.mutations.items.push_back({entry_key(k), entry_value(k)});
    decide(PrincipalId{100}, 1, t);
  }
  for (std::size_t n = 0; n < records; ++n) {  // outputs, effects and payloads of process 1
    Turn t{Pid{1}, 2, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
    for (Id d = 2; d <= 5; ++d) t.outputs.items.push_back(OutputProposal{Pid{d}, InputValue{{1, 2, 3}}});
    t.effect = EffectIntent{PrincipalId{1}, wall_ms() + Millis{86'400'000}, {}, 1};
    decide(PrincipalId{100}, 1, t);
    decide(PrincipalId{100}, 1, DeclarePayload{Pid{1}, 1024, Digest{}, false});
  }
  if (auto last = (*journal)->take_staged(authority.head())) need((*journal)->commit(*last), "fill write");
  std::printf("filled %zu processes, %zu entries and %zu turns of outputs, effects and payloads in %.1f s (journal direct, "
              "4096 decisions per synced write)\n",
              processes, entries, records, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

struct ScaleSample {
  double open_ms = 0, rss_mib = 0, process_p50_us = 0, process_p99_us = 0, turns_per_s = 0, turn_p50_ms = 0;
  ReadSample entries;
};

ScaleSample measure_scale(const std::filesystem::path& dir, std::size_t processes, std::size_t entries,
                          std::size_t queries, std::size_t turns) {
  ScaleSample s;
  const auto start = std::chrono::steady_clock::now();
  auto node = start_node(dir);
  s.open_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  s.rss_mib = rss_mib();
  const auto base = root_options_of(*node);
  std::mt19937_64 random(wall_ms().value);
  std::vector<std::string> reads;
  for (std::size_t q = 0; q < queries; ++q)
    reads.push_back(to_json(sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, ProcessRead{Pid{kFillFirstPid + random() % processes}}},
                                 base.seed)));
  net::HttpConnection c("127.0.0.1", node->port());
  std::vector<double> us;
  for (const auto& body : reads) us.push_back(time_us(c, body));
  s.process_p50_us = cowboy::bench::percentile(us, 0.5);
  s.process_p99_us = cowboy::bench::percentile(us, 0.99);
  if (entries >= kPageRecords) s.entries = measure_reads(*node, ResourceId{1}, entries, queries);
  // Turns: each worker from its last sequence on, new keys each run.
  auto workers = scale_workers(base);
  std::vector<std::vector<std::string>> bodies(kScaleWorkers);
  for (std::size_t w = 0; w < kScaleWorkers; ++w) {
    workers[w].port = node->port();
    Client signer(workers[w]);
    auto identity = signer.identity();
    need(identity.ok(), "worker identity");
    for (std::size_t i = 0; i < turns / kScaleWorkers; ++i) {
      const Id sequence = identity->sequence + 1 + i;
      Turn t{Pid{1 + w}, 2, std::nullopt, ResourceId{1 + w}, std::nullopt, {}, {}, {}, {}, std::nullopt};
      for (std::uint64_t k = 0; k < 4; ++k) {
        const std::uint64_t n = (std::uint64_t{1} << 40) + sequence * 4 + k;  // past the filled keys
        t.mutations.items.push_back({entry_key(n), entry_value(n)});
      }
      bodies[w].push_back(to_json(sign(signer.build(t, sequence), workers[w].seed)));
    }
  }
  const auto driven = drive(node->port(), "/v1/command", bodies, 0);
  need(driven.failed == 0, "turns failed");
  s.turns_per_s = driven.rate;
  s.turn_p50_ms = driven.p50_ms;
  return s;
}

std::vector<std::size_t> parse_list(const std::string& text) {
  std::vector<std::size_t> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(std::stoul(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string workers_list = "1,16", sizes_list = "1000,100000,1000000";
  std::size_t ops = 20000, runs = 3, queries = 2000, settle_seconds = 0;
  CLI::App app{"transit_state_bench: durable turns against commands, and read cost as a resource grows"};
  app.add_option("--workers", workers_list, "concurrent workers, comma-separated")->capture_default_str();
  app.add_option("--ops", ops, "turns (and commands) per run")->capture_default_str();
  app.add_option("--runs", runs, "runs of each; medians are printed")->capture_default_str();
  app.add_option("--sizes", sizes_list, "entries in the read resource, ascending (empty: skip reads)")->capture_default_str();
  app.add_option("--queries", queries, "read_entries and pages per size and run")->capture_default_str();
  app.add_option("--settle", settle_seconds, "seconds to wait after each fill before reading")->capture_default_str();
  std::size_t processes = 0, scale_entries = 0, restarts = 5, scale_turns = 4000, scale_records = 0;
  std::string data;
  app.add_option("--processes", processes, "scale: processes in the journal (0: no scale section)");
  app.add_option("--entries", scale_entries, "scale: entries in resource 1")->capture_default_str();
  app.add_option("--data", data, "scale: the journal's directory, filled when empty and kept");
  app.add_option("--records", scale_records, "scale: turns of four outputs and an effect, and payloads, in the fill")
      ->capture_default_str();
  app.add_option("--restarts", restarts, "scale: openings measured")->capture_default_str();
  app.add_option("--turns", scale_turns, "scale: turns per opening (16 workers)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  crypto::init();
  if (processes > 0) {
    need(!data.empty(), "--processes needs --data");
    const std::filesystem::path dir = data;
    if (!std::filesystem::exists(dir / "journal" / "CURRENT")) fill_scale(dir, processes, scale_entries, scale_records);
    std::printf("| open ms | RSS MiB | process read p50 us | p99 us | read_entries p50 us | p99 us | turns/s | turn p50 ms |\n"
                "|---|---|---|---|---|---|---|---|\n");
    for (std::size_t r = 0; r < restarts; ++r) {
      const auto s = measure_scale(dir, processes, scale_entries, queries, scale_turns);
      std::printf("| %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f |\n", s.open_ms, s.rss_mib, s.process_p50_us,
                  s.process_p99_us, s.entries.batch_p50_us, s.entries.batch_p99_us, s.turns_per_s, s.turn_p50_ms);
      std::fflush(stdout);
    }
    return 0;
  }

  std::size_t body_bytes = 0;
  std::printf("| workload | workers | per second | p50 ms | p99 ms | fsyncs/op | failed |\n|---|---|---|---|---|---|---|\n");
  for (const std::size_t workers : parse_list(workers_list)) {
    const std::size_t n = workers == 1 ? std::min<std::size_t>(ops, 3000) : ops;
    std::vector<double> commands, turns, turn_p50, turn_p99, cmd_p50, cmd_p99, turn_fsyncs;
    std::size_t failed = 0;
    for (std::size_t r = 0; r < runs; ++r) {  // A B A B
      auto c = run_commands(workers, n);
      auto t = run_turns(workers, n, body_bytes);
      commands.push_back(c.rate), cmd_p50.push_back(c.p50_ms), cmd_p99.push_back(c.p99_ms);
      turns.push_back(t.rate), turn_p50.push_back(t.p50_ms), turn_p99.push_back(t.p99_ms);
      turn_fsyncs.push_back(t.fsyncs_per_op);
      failed += c.failed + t.failed;
    }
    using cowboy::bench::median;
    std::printf("| commands | %2zu | %8.0f | %6.2f | %6.2f | - | %zu |\n", workers, median(commands), median(cmd_p50),
                median(cmd_p99), failed);
    std::printf("| turns    | %2zu | %8.0f | %6.2f | %6.2f | %5.3f | %zu |\n", workers, median(turns), median(turn_p50),
                median(turn_p99), median(turn_fsyncs), failed);
    std::printf("| turns / commands | %2zu | %.2f | | | | |\n", workers, median(turns) / median(commands));
    std::fflush(stdout);
  }
  std::printf("\nturn body: %zu bytes (4 entries of 128 bytes, 8-byte keys)\n", body_bytes);

  const auto sizes = parse_list(sizes_list.empty() ? "0" : sizes_list);
  if (sizes_list.empty()) return 0;
  std::printf("\n| entries | read_entries p50 us | p99 us | page p50 us | p99 us |\n|---|---|---|---|---|\n");
  std::vector<std::vector<ReadSample>> samples(sizes.size());
  for (std::size_t r = 0; r < runs; ++r) {
    const auto dir = fresh_dir("reads");
    auto node = start_node(dir);
    const auto base = root_options_of(*node);
    Client root(base);
    auto created = root.submit(CreateResource{{"big"}, std::nullopt});
    need(created.ok(), "create resource");
    const auto big = std::get<ResourceCreated>(created->outcome).resource;
    constexpr std::size_t kFillers = 16;
    auto options = setup_workers(root, base, kFillers, [&](std::size_t) { return big; });
    std::vector<std::size_t> next_sequence(kFillers, 2);
    std::uint64_t filled = 0;
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      const std::uint64_t target = sizes[s];
      std::vector<std::vector<std::string>> bodies(kFillers);
      const std::uint64_t turns = (target - filled + 3) / 4;
      for (std::size_t w = 0; w < kFillers; ++w) {
        const std::size_t count = turns / kFillers + (w < turns % kFillers ? 1 : 0);
        Client signer(options[w]);
        for (std::size_t i = 0; i < count; ++i) {
          Turn t{Pid{1 + w}, 2, std::nullopt, big, std::nullopt, {}, {}, {}, {}, std::nullopt};
          for (int k = 0; k < 4 && filled < target; ++k, ++filled) t.mutations.items.push_back({entry_key(filled), entry_value(filled)});
          bodies[w].push_back(to_json(sign(signer.build(t, next_sequence[w]++), options[w].seed)));
        }
      }
      const auto fill = drive(node->port(), "/v1/command", bodies, 0);
      need(fill.failed == 0, "fill failed");
      std::this_thread::sleep_for(std::chrono::seconds(settle_seconds));  // let flushes and compactions finish
      samples[s].push_back(measure_reads(*node, big, target, queries));
    }
    node.reset();
    std::filesystem::remove_all(dir);
  }
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    auto med = [&](auto field) {
      std::vector<double> v;
      for (const auto& x : samples[s]) v.push_back(field(x));
      return cowboy::bench::median(v);
    };
    std::printf("| %zu | %.0f | %.0f | %.0f | %.0f |\n", sizes[s], med([](const ReadSample& x) { return x.batch_p50_us; }),
                med([](const ReadSample& x) { return x.batch_p99_us; }), med([](const ReadSample& x) { return x.page_p50_us; }),
                med([](const ReadSample& x) { return x.page_p99_us; }));
  }
  return 0;
}
