// Transit history: disk bytes per turn with and without trimming
// (docs/performance.md, "Transit history"; docs/transit.md, decisions 64-69).
//
//   transit_history_bench --workers 4 --turns 20000 --chunks 10 --runs 3
//
// Each run starts a fresh node in this process (real HTTP on 127.0.0.1,
// synced RocksDB journal). Workers publish pre-signed turns of four 128-byte
// entries (new keys each turn, pseudo-random values) in `chunks` equal parts. "untrimmed" is the
// default realm (its whole history kept); "trimmed" opts in with
// allow_history_trim and, after each part, does what a maintenance pass does:
// a checkpoint, then trim_history (the floor onto it). Runs alternate
// (untrimmed, trimmed, untrimmed, ...). After the last part (and the last
// reclaim) the node stops; the data directory is measured as the node left it
// (table files, write-ahead log, manifest) and again once RocksDB has flushed
// and compacted everything (what the same records take settled).
#include <CLI/CLI.hpp>

#include <rocksdb/db.h>

#include "transit_load.h"
#include "transit/history.h"
#include "transit/node/catalog.h"

using namespace cowboy;
using namespace cowboy::transit;
using namespace cowboy::transit::bench;

namespace {

std::uint64_t directory_bytes(const std::filesystem::path& dir) {
  std::uint64_t bytes = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir))
    if (f.is_regular_file()) bytes += f.file_size();
  return bytes;
}

/// Flushes and compacts the stopped node's store, as the journal opens it.
void settle(const std::filesystem::path& journal) {
  rocksdb::Options options;
  node::configure_entry_filters(options);
  rocksdb::DB* raw = nullptr;
  need(rocksdb::DB::Open(options, journal.string(), &raw).ok(), "open the store");
  std::unique_ptr<rocksdb::DB> db(raw);
  need(db->Flush(rocksdb::FlushOptions()).ok(), "flush");
  rocksdb::CompactRangeOptions all;
  all.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  need(db->CompactRange(all, nullptr, nullptr).ok(), "compact");
  need(db->Close().ok(), "close");
}

struct Run {
  std::uint64_t turns = 0, left = 0, settled = 0;  // turns, then directory bytes as left and settled
  Id floor = 0;
  double seconds = 0;
};

Run run(bool trim, std::size_t workers, std::size_t turns, std::size_t chunks) {
  const auto dir = fresh_dir(trim ? "trimmed" : "untrimmed");
  static const SystemClock clock{};
  node::NodeConfig config;
  config.data_dir = dir / "journal";
  config.genesis = testing::sample_genesis();
  config.genesis->allow_history_trim = trim;
  auto opened = node::Node::open(config, clock);
  need(opened.ok(), opened.ok() ? "" : opened.error());
  auto node = std::move(*opened);
  const auto base = root_options_of(*node);
  Client root(base);
  auto admins = create_administrators(root, base, workers);
  std::vector<std::vector<std::string>> bodies(workers);
  const std::size_t per_worker = turns / workers;
  for (std::size_t w = 0; w < workers; ++w) {
    const Pid pid{1 + w};
    auto created = root.submit(CreateResource{{"doc" + std::to_string(w)}, std::nullopt});
    need(created.ok(), "create resource");
    const ResourceId resource = std::get<ResourceCreated>(created->outcome).resource;
    need(root.submit(CreateProcess{pid, {}}).ok(), "create process");
    need(root.submit(Associate{pid, {"doc"}, resource}).ok(), "associate");
    need(root.submit(Initialize{pid, 0}).ok(), "initialize");
    Client signer(admins[w]);
    std::uint64_t random = w;  // values as an application's would be: incompressible
    need(signer.submit(Own{pid, 1}).ok(), "own");  // generation 2, sequence 1
    for (std::size_t i = 0; i < per_worker; ++i) {
      Turn t{pid, 2, std::nullopt, resource, std::nullopt, {}, {}, {}, {}, std::nullopt};
      for (std::uint64_t k = 0; k < 4; ++k) {
        const std::uint64_t n = (4 * i + k) * 0x9e3779b97f4a7c15ull;
        EntryKey key;
        for (int b = 7; b >= 0; --b) key.value.push_back(static_cast<std::uint8_t>(n >> (8 * b)));
        std::vector<std::uint8_t> value(128);
        for (auto& byte : value) byte = static_cast<std::uint8_t>((random = random * 6364136223846793005ull + 1) >> 56);
        t.mutations.items.push_back({key, EntryValue{std::move(value)}});
      }
      bodies[w].push_back(to_json(sign(signer.build(t, 2 + i), admins[w].seed)));
    }
  }
  Run out;
  const auto start = std::chrono::steady_clock::now();
  const std::size_t per_chunk = per_worker / chunks;
  for (std::size_t c = 0; c < chunks; ++c) {
    std::vector<std::vector<std::string>> part(workers);
    for (std::size_t w = 0; w < workers; ++w)
      part[w].assign(bodies[w].begin() + static_cast<std::ptrdiff_t>(c * per_chunk),
                     bodies[w].begin() + static_cast<std::ptrdiff_t>((c + 1) * per_chunk));
    const auto s = drive(node->port(), "/v1/command", part, 0);
    need(s.failed == 0, "turns failed");
    out.turns += workers * per_chunk;
    if (!trim) continue;
    need(root.submit(Checkpoint{}).ok(), "checkpoint");
    auto step = trim_history(root);
    need(step.ok() && step->receipt.has_value(), "trim");
    out.floor = step->floor.value;
  }
  while (node->sequencer().stats().reclaimed_below < out.floor)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  node.reset();
  out.left = directory_bytes(dir / "journal");
  settle(dir / "journal");
  out.settled = directory_bytes(dir / "journal");
  std::filesystem::remove_all(dir);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t workers = 4, turns = 20000, chunks = 10, runs = 3;
  CLI::App app{"transit_history_bench: disk bytes per turn with and without history trimming"};
  app.add_option("--workers", workers, "concurrent workers")->capture_default_str();
  app.add_option("--turns", turns, "turns per run")->capture_default_str();
  app.add_option("--chunks", chunks, "parts per run; a trimmed run checkpoints and trims after each")->capture_default_str();
  app.add_option("--runs", runs, "runs of each, alternated; medians are printed")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  need(workers > 0 && chunks > 0 && turns >= workers * chunks, "--turns must be at least --workers x --chunks");
  crypto::init();

  std::vector<double> per_turn[2][2];  // [trim][left, settled]
  std::printf("| run | history | turns | floor | seconds | bytes/turn as left | bytes/turn settled |\n|---|---|---|---|---|---|---|\n");
  for (std::size_t r = 0; r < runs; ++r)
    for (const bool trim : {false, true}) {  // A B A B
      const Run x = run(trim, workers, turns, chunks);
      const double left = static_cast<double>(x.left) / static_cast<double>(x.turns);
      const double settled = static_cast<double>(x.settled) / static_cast<double>(x.turns);
      per_turn[trim][0].push_back(left), per_turn[trim][1].push_back(settled);
      std::printf("| %zu | %s | %llu | %llu | %.1f | %.0f | %.0f |\n", r + 1, trim ? "trimmed" : "untrimmed",
                  (unsigned long long)x.turns, (unsigned long long)x.floor, x.seconds, left, settled);
      std::fflush(stdout);
    }
  using cowboy::bench::median;
  std::printf("\n| history | bytes/turn as left (median) | settled (median) |\n|---|---|---|\n");
  for (const bool trim : {false, true})
    std::printf("| %s | %.0f | %.0f |\n", trim ? "trimmed" : "untrimmed", median(per_turn[trim][0]),
                median(per_turn[trim][1]));
  std::printf("trimmed / untrimmed settled: %.2f\n", median(per_turn[1][1]) / median(per_turn[0][1]));
  return 0;
}
