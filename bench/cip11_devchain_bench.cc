// Block production on the devchain's CIP-11 plane (issue 20's target: under
// 50 ms a block): 5,000 registered runners, 1,000 open jobs, a full
// PresenceInputV1 every block (every runner present: a 625-byte bitmap), and
// per block the steady traffic of such a chain: 50 on-chain heartbeats (5,000
// runners staggered over 100 blocks), 5 new jobs and 5 results (--churn).
// Besides the time of a block it counts the bytes the process writes per block
// (/proc/self/io wchar: the synced block write, and RocksDB's flushes and
// compactions, which run on its own threads), in total over the measured blocks
// and per block's produce_block() call.
//   build/bin/cip11_devchain_bench --blocks 60 --runs 3
//   build/bin/cip11_devchain_bench --runners 1000 --jobs 1000 --blocks 100 --runs 5  (docs/performance.md)
//   ... --validators 4: blocks of a chain with several validators, which commit a state_root
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "bench_util.h"
#include "cip11/chain/instructions.h"
#include "devchain/node.h"

using namespace cowboy;
using namespace cowboy::devchain;
namespace chain = cowboy::cip11::chain;

namespace {

crypto::Secp256k1Secret secret(std::uint32_t n) {
  crypto::Secp256k1Secret s{};
  s[0] = 0x42;
  for (int i = 0; i < 4; ++i) s[28 + i] = static_cast<std::uint8_t>(n >> (24 - 8 * i));
  return s;
}

struct Key {
  crypto::Secp256k1Secret secret;
  Address address;
};

struct Run {
  double median_ms = 0, p99_ms = 0, max_ms = 0;
  double written_kib_per_block = 0;   // everything written during the measured blocks, divided by them
  double block_write_kib_median = 0;  // written during one produce_block() call, median
  std::size_t open_jobs = 0, state_kib = 0;
};

Run run_once(int runners, int open_jobs, int blocks, int churn, int validators) {
  const auto dir = std::filesystem::temp_directory_path() / ("cip11-devchain-bench-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::vector<Key> keys;
  GenesisSpec genesis{"bench", Address{}, {}, {}, Cip11Genesis{}};
  genesis.cip11->params.chain_id = 1;
  genesis.cip11->params.present_first_enabled = true;
  // More than one validator: every block also commits its state_root (the whole state hashed).
  for (int i = 0; i < validators; ++i) {
    crypto::Ed25519Seed seed{};
    seed[0] = static_cast<std::uint8_t>(i + 1);
    genesis.cip11->validators.push_back({crypto::ed25519_from_seed(seed).public_key, "127.0.0.1:1"});
  }
  genesis.cip11->params.multi_validator = validators > 1;
  if (validators > 1) {  // final 4 blocks deep, K = F + 1 (docs/cip11.md choices 156, 157)
    genesis.cip11->finality_depth = 4;
    genesis.cip11->params.selection_seed_delay_views = 5;
  }
  for (int i = 0; i < runners; ++i) {
    Key k{secret(static_cast<std::uint32_t>(i)), {}};
    auto pub = *crypto::secp256k1_public_key(k.secret);
    k.address = *crypto::secp256k1_key_address(pub);
    keys.push_back(k);
    genesis.cip11->runners.push_back(chain::RegisterRunner{pub, 1'000'000, 0x3f, {}, 1'000, 0});
  }
  const Key submitter{secret(1'000'000), *crypto::secp256k1_address(secret(1'000'000))};
  genesis.governance_admin = submitter.address;
  genesis.balances.emplace_back(submitter.address, u128{1} << 100);
  auto node = std::move(*Node::open(NodeConfig{dir, std::chrono::milliseconds(1000), 100'000, 100'000}, genesis));
  node->set_presence_provider([](std::uint64_t, std::uint32_t n) {
    cip11::PresentSet all(n);
    for (std::uint32_t i = 0; i < n; ++i) all.add(i);
    return cip11::encode_presence(all);
  });
  // Who holds which job, from the observer, so that results come from the assigned runner.
  std::map<cip11::JobId, Address> assigned;
  node->set_block_observer([&](const CommittedBlock& b) {
    for (const auto& a : b.effects.assigned) assigned[a.job_id] = a.runner;
  });

  const Bytes32 chain_id = *node->chain_instance_id();
  std::map<Address, std::uint64_t> nonces;
  std::map<Address, std::uint32_t> key_of;
  for (std::uint32_t i = 0; i < keys.size(); ++i) key_of[keys[i].address] = i;
  auto submit = [&](const Key& k, const chain::Instruction& instruction) {
    Transaction tx{chain_id, nonces[k.address]++, Cip11Call{chain::encode_instruction(instruction)}, {}};
    sign_tx(tx, k.secret);
    if (!node->submit(tx)) std::abort();
  };
  chain::SubmitJob job{cip11::JobKind::kLlm, Bytes(64, 0x6a), 100'000, 1, 0};
  for (int i = 0; i < open_jobs; ++i) submit(submitter, job);
  (void)node->produce_block();

  std::vector<double> ms, block_kib;
  std::uint32_t next_heartbeat = 0;
  const std::uint64_t written_before = bench::process_write_bytes();
  for (int b = 0; b < blocks; ++b) {
    for (int i = 0; i < runners / 100; ++i) submit(keys[next_heartbeat++ % keys.size()], chain::RunnerHeartbeat{});
    for (int i = 0; i < churn; ++i) submit(submitter, job);
    for (int i = 0; i < churn && !assigned.empty(); ++i) {
      auto it = assigned.begin();
      submit(keys[key_of.at(it->second)], chain::JobResultSubmit{it->first, Bytes{'o', 'k'}, Bytes32{}});
      assigned.erase(it);
    }
    const auto t = std::chrono::steady_clock::now();
    const std::uint64_t w = bench::process_write_bytes();
    if (!node->produce_block()) std::abort();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
    block_kib.push_back(static_cast<double>(bench::process_write_bytes() - w) / 1024);
  }
  const double written = static_cast<double>(bench::process_write_bytes() - written_before);
  Run r;
  r.written_kib_per_block = written / 1024 / blocks;
  r.block_write_kib_median = bench::median(block_kib);
  r.median_ms = bench::median(ms);
  r.p99_ms = bench::percentile(ms, 0.99);
  r.max_ms = *std::max_element(ms.begin(), ms.end());
  r.open_jobs = assigned.size();
  std::error_code ec;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir, ec)) r.state_kib += f.is_regular_file() ? f.file_size() / 1024 : 0;
  node.reset();
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"CIP-11 devchain block production"};
  int runners = 5'000, jobs = 1'000, blocks = 60, runs = 3, churn = 5, validators = 0;
  app.add_option("--runners", runners, "registered runners")->capture_default_str();
  app.add_option("--jobs", jobs, "open jobs")->capture_default_str();
  app.add_option("--blocks", blocks, "blocks measured per run")->capture_default_str();
  app.add_option("--churn", churn, "new jobs and results per block")->capture_default_str();
  app.add_option("--runs", runs, "runs; the last line is their median")->capture_default_str();
  app.add_option("--validators", validators, "validators in genesis; above 1 blocks commit a state_root")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  crypto::init();
  std::printf("| runners | open jobs | block ms median | p99 | max | store KiB | KiB written per block | per block write, median KiB |\n"
              "|---|---|---|---|---|---|---|---|\n");
  std::vector<Run> all;
  for (int i = 0; i < runs; ++i) {
    all.push_back(run_once(runners, jobs, blocks, churn, validators));
    const auto& r = all.back();
    std::printf("| %d | %zu | %.1f | %.1f | %.1f | %zu | %.1f | %.1f |\n", runners, r.open_jobs, r.median_ms, r.p99_ms,
                r.max_ms, r.state_kib, r.written_kib_per_block, r.block_write_kib_median);
    std::fflush(stdout);
  }
  auto med = [&](auto field) {
    std::vector<double> v;
    for (const auto& r : all) v.push_back(field(r));
    return bench::median(v);
  };
  std::printf("| median of %d, %d | %d | %.1f | %.1f | %.1f | | %.1f | %.1f |\n", runs, runners, jobs,
              med([](const Run& r) { return r.median_ms; }), med([](const Run& r) { return r.p99_ms; }),
              med([](const Run& r) { return r.max_ms; }), med([](const Run& r) { return r.written_kib_per_block; }),
              med([](const Run& r) { return r.block_write_kib_median; }));
  return 0;
}
