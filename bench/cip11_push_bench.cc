// cip11_push_bench: CIP-11 push delivery against the §14 poll fallback, in
// one process, over real QUIC on 127.0.0.1: a devchain Node (1 s blocks,
// synced RocksDB), the validator service cip11d runs (ValidatorService) and
// N runners.
//
// Each run builds three chains with the same N registered runners:
//   push   present-first on; every runner connected: per job, block commit ->
//          JobAssignment at the runner, and submission -> result included;
//          then half of the runners go silent (no Ping, no answer: a hung
//          process) and, once they have left presence, the same again:
//          first attempts wasted on a silent runner and job start latency
//   off    the same silent half with present-first off
//   poll   no validator connections: every runner polls GET /runner/{addr}/jobs
//          every --poll-ms (a phase of its own), then submits its result
//
// The bench runners ack at once and answer with a runner-signed result; they
// skip checking the validator's seals (a load generator's shortcut, as in
// cip11_quic_bench). One source address stands in for N hosts, so the
// validator's per-address connection rate limit is lifted here.
//
//   build/bin/cip11_push_bench --runners 1000 --jobs 200 --runs 3
//
// With --validators 4 the chain is four `cip11d --genesis` processes instead
// (issue 42: push after block commit, reconnection across the genesis'
// validator-set change, first attempts wasted on silent runners with
// present-first on and off, alternated; the section "several validators"):
//
//   build/bin/cip11_push_bench --validators 4 --runners 400 --jobs 100 --runs 5 --activation 50
//
// At 2,000 runners on two cores (docs/performance.md, "2,000 runners"): 3 s
// blocks (each runner Pings once a block per link), the runners started 40 a
// second, jobs 10 a block. The push phase (ramp, 3 blocks, 10 blocks of jobs,
// F = 4 blocks to finality, 2 blocks) must end before the activation block,
// or the run stops ("raise --activation"): after a 76 s ramp (25 blocks)
// that is about 45 blocks plus the blocks before the ramp, so 50 leaves
// about 5 for those (9 before F = 4 was added), 55 about 10:
//
//   build/bin/cip11_push_bench --validators 4 --runners 2000 --jobs 100 --jobs-per-block 10 --runs 3
//       --block-ms 3000 --ramp-per-s 40 --activation 55
#include <CLI/CLI.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "../tests/support/ports.h"
#include "../tests/support/process.h"
#include "../tests/support/temp_dir.h"
#include "bench_util.h"
#include "cip11/chain/codec.h"
#include "cip11/chain/snapshots.h"
#include "cip11/link/runner_link.h"
#include "cip11/quic/arena.h"
#include "cip11/runner/epoch_spread.h"
#include "cip11/subset.h"
#include "cip11/validator/service.h"
#include "common/clock.h"
#include "common/keyfile.h"
#include "common/log.h"
#include "common/process_limits.h"
#include "devchain/cip11_genesis.h"
#include "devchain/cip11_port.h"
#include "devchain/genesis.h"
#include "devchain/http_client.h"
#include "devchain/node.h"
#include "devchain/wallet.h"
#include "net/dev_cert.h"

namespace cowboy::bench {
namespace {

namespace asio = boost::asio;
using namespace cowboy::cip11;
using Clock = std::chrono::steady_clock;

struct Options {
  int runners = 1000;
  int jobs = 200;
  int jobs_per_block = 5;
  int runs = 3;
  int block_ms = 1000;  // the spec's default block time (§6.6)
  int poll_ms = 1000;
  std::uint64_t timeout_blocks = 0;  // 0: 5, and 5 + F with --validators (5 blocks after the push)
  int validators = 0;             // 4: four cip11d processes (the section "several validators" below)
  std::uint64_t activation = 70;  // --validators: the height of the scheduled set change
  double ramp_per_s = 100;        // --validators: runners started per second (25 every 250 ms at 100)
};

double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

crypto::Secp256k1Secret runner_secret(std::uint32_t n) {
  crypto::Secp256k1Secret s;
  s.fill(0x33);
  for (int i = 0; i < 4; ++i) s[28 + i] = static_cast<std::uint8_t>(n >> (24 - 8 * i));
  return s;
}

// What the runs record, keyed by job: all times on one steady clock.
struct Record {
  std::mutex mu;
  std::map<std::uint64_t, Clock::time_point> durable;          // block height -> its write returned
  std::map<JobId, Clock::time_point> submitted, received, completed;
  std::map<JobId, Address> first_runner;                     // the first committee member drawn
  void on_block(const devchain::CommittedBlock& b) {
    auto now = Clock::now();
    std::lock_guard lock(mu);
    durable[b.height] = now;
    for (const auto& a : b.effects.assigned) first_runner.try_emplace(a.job_id, a.runner);
    for (const auto& e : b.effects.ended)
      if (e.reason == chain::EndReason::kCompleted) completed.try_emplace(e.job_id, now);
  }
};

// One chain with N registered runners, and optionally its validator service.
struct World {
  cowboy::testing::TempDir dir;
  std::unique_ptr<devchain::Node> node;
  std::unique_ptr<devchain::Cip11Port> chain_port;  // the service's view of the node
  std::unique_ptr<ValidatorService> service;
  crypto::Secp256k1Secret submitter{};
  Record record;

  World(const Options& o, bool present_first, bool with_validator) {
    submitter.fill(0x44);
    crypto::Ed25519Seed seed;
    seed.fill(0x22);
    const std::uint16_t port = cowboy::testing::free_port();
    devchain::Cip11Genesis g;
    g.params.chain_id = 31337;
    g.params.transport_enabled = true;
    g.params.present_first_enabled = present_first;
    g.params.heartbeat_timeout_blocks = 1'000'000;  // no on-chain heartbeats in the bench: the floor holds
    g.validators.push_back({crypto::ed25519_from_seed(seed).public_key, "127.0.0.1:" + std::to_string(port)});
    for (int i = 0; i < o.runners; ++i)
      g.runners.push_back({*crypto::secp256k1_public_key(runner_secret(static_cast<std::uint32_t>(i))), 1000, 1u << 3, {}, 4, 0});
    const Address funded = *crypto::secp256k1_address(submitter);
    devchain::NodeConfig config;
    config.data_dir = dir.path() / "chain";
    config.block_interval = std::chrono::milliseconds(o.block_ms);
    node = std::move(*devchain::Node::open(config, devchain::GenesisSpec{"push-bench", funded, {{funded, u128{1} << 100}}, {}, g}));
    if (with_validator) {
      auto cert = *net::ensure_dev_certificate(dir.path() / "tls");
      ValidatorServiceConfig vc;
      vc.key = seed;
      vc.endpoint.port = port;
      vc.endpoint.certificate = cert.certificate;
      vc.endpoint.private_key = cert.private_key;
      vc.endpoint.connection_memory = &quic::dedicated_arena();
      vc.endpoint.new_connections_per_address_per_sec = 1e6;
      vc.endpoint.new_connection_burst = 1e6;
      vc.endpoint.max_half_open = 4096;
      chain_port = std::make_unique<devchain::Cip11Port>(*node, *node);
      service = std::move(*ValidatorService::open(vc, *chain_port));
      ValidatorService* s = service.get();
      node->set_presence_provider([s](std::uint64_t h, std::uint32_t n) { return s->presence_field(Height{h}, n); });
    }
    node->set_block_observer([this](const devchain::CommittedBlock& b) {
      record.on_block(b);
      if (service) service->on_block({Height{b.height}, b.effects});
    });
  }
  ~World() {
    if (node) node->stop();
    service.reset();
  }
  std::uint16_t port() { return static_cast<std::uint16_t>(std::stoi(node->cip11_genesis()->validators[0].endpoint.substr(10))); }
};

// The load generator's runners admit any validator (their seals are not checked either).
class AdmitAll final : public Admission {
 public:
  std::optional<GoodbyeReason> admit(const Hello&) override { return std::nullopt; }
};

// Both crowds keep their runners on two io threads, runner i on groups[i % 2];
// silencing a group stops its thread.
template <typename Group>
void run_groups(std::array<Group, 2>& groups) {
  for (auto& g : groups)
    g.thread = std::thread([&g] {
      auto guard = asio::make_work_guard(g.io);
      g.io.run();
    });
}

// Ends each live group's runners on its own thread (`end(i)`), then stops and joins every thread.
template <typename Group>
void stop_groups(std::array<Group, 2>& groups, std::size_t runners, const std::function<void(std::size_t)>& end) {
  for (std::size_t k = 0; k < groups.size(); ++k) {
    Group& g = groups[k];
    if (!g.stopped) {
      asio::post(g.io, [&, k] {
        for (std::size_t i = k; i < runners; i += groups.size()) end(i);
        // Stopped from inside: a Ping timer already due must not run after its runner has ended
        // (it did between this handler and a stop from the main thread: SIGSEGV in on_block).
        g.io.stop();
      });
    }
    g.thread.join();
  }
}

// A Ping per block, spread over the first half of the block as runners'
// phases spread them: `ping(i)` for each runner of each live group, in 50 slices.
template <typename Group>
void ping_spread(std::array<Group, 2>& groups, std::size_t runners, std::chrono::milliseconds block,
                 std::function<void(std::size_t)> ping) {
  for (std::size_t k = 0; k < groups.size(); ++k) {
    Group& g = groups[k];
    if (g.stopped) continue;
    asio::post(g.io, [&g, k, runners, block, ping, n = groups.size()] {
      const std::size_t slices = 50;
      for (std::size_t s = 0; s < slices; ++s) {
        auto t = std::make_shared<asio::steady_timer>(g.io, block / 2 * static_cast<int>(s) / static_cast<int>(slices));
        t->async_wait([t, s, k, slices, runners, ping, n](boost::system::error_code) {
          for (std::size_t i = k + s * n; i < runners; i += slices * n) ping(i);
        });
      }
    });
  }
}

// The runners: RunnerLinks in two groups, each with its own io thread and UDP
// socket; each acks a push and answers with its result. Silencing a group
// stops its io thread: no Ping, no answer, not even a QUIC ACK, and no
// reconnect - a hung or killed process as the validator sees it.
struct Crowd {
  struct Runner {
    crypto::Secp256k1Secret secret{};
    Address address{};
    std::unique_ptr<Signer> key;
    std::unique_ptr<RunnerLink> link;
    std::uint64_t nonce = 0;
    bool silent = false;
  };
  struct Group {
    asio::io_context io{1};
    SignatureWorker worker{io, 1};
    net::ReadBudget budget{256 * 1024 * 1024};
    std::unique_ptr<RunnerEndpoint> endpoint;
    std::thread thread;
    bool stopped = false;
  };
  SystemEntropy entropy;
  AdmitAll admit_all;
  std::array<Group, 2> groups;
  std::vector<Runner> runners;
  std::atomic<int> admitted{0};
  World& world;
  Bytes32 chain_instance_id{};

  Group& group_of(std::size_t i) { return groups[i % 2]; }

  Crowd(const Options& o, World& w) : runners(static_cast<std::size_t>(o.runners)), world(w) {
    chain_instance_id = *w.node->chain_instance_id();
    for (auto& g : groups) g.endpoint = std::move(*RunnerEndpoint::open(g.io, g.worker, g.budget, {}));
    auto genesis = *w.node->cip11_genesis();
    const LocalOffer offer{genesis.params.chain_id, kProtocolVersion,
                           validator_set_hash(devchain::validator_peer_keys(genesis)), Epoch{0}, Height{0}};
    for (std::size_t i = 0; i < runners.size(); ++i) {
      Runner& r = runners[i];
      r.secret = runner_secret(static_cast<std::uint32_t>(i));
      r.address = *crypto::secp256k1_address(r.secret);
      r.key = std::make_unique<Signer>(*Signer::runner(r.secret));
      RunnerLinkConfig config;
      config.port = w.port();
      config.offer = offer;
      config.check_peer_seals = false;
      RunnerLink::Callbacks cb;
      cb.on_admitted = [this] { ++admitted; };
      cb.on_lost = [this](const std::string&) { --admitted; };
      cb.on_job_frame = [this, &r](std::int64_t stream, const Frame& f, const Res<Unit>&) { on_frame(r, stream, f); };
      r.link = std::make_unique<RunnerLink>(*group_of(i).endpoint, *r.key, admit_all, entropy, config, cb);
    }
    for (std::size_t k = 0; k < groups.size(); ++k) {
      Group& g = groups[k];
      asio::post(g.io, [this, k] {
        for (std::size_t i = k; i < runners.size(); i += groups.size()) runners[i].link->start();
      });
    }
    run_groups(groups);
  }
  ~Crowd() {
    stop_groups(groups, runners.size(), [this](std::size_t i) { runners[i].link.reset(); });
    runners.clear();  // a silenced group's links go without a word, as a dead process's would
    for (auto& g : groups) g.endpoint.reset();
  }

  // A Ping per block, spread over the first half of the block as runners' phases spread them.
  void on_block(std::uint64_t h, std::chrono::milliseconds block) {
    ping_spread(groups, runners.size(), block, [this, h](std::size_t i) { runners[i].link->on_block(Height{h}); });
  }

  void on_frame(Runner& r, std::int64_t stream, const Frame& f) {
    const auto* a = std::get_if<JobAssignment>(&f);
    if (!a) return;
    {
      std::lock_guard lock(world.record.mu);
      world.record.received.try_emplace(a->job_id, Clock::now());
    }
    r.link->send(stream, JobAck{a->job_id, a->assignment_hash, AckStatus::accepted(), std::nullopt, {}});
    r.link->send(stream, JobResult{a->job_id, result_tx(r, a->job_id)});
  }

  Bytes result_tx(Runner& r, const JobId& job_id) {
    devchain::Transaction tx{chain_instance_id, r.nonce++,
                             devchain::Cip11Call{chain::encode_instruction(chain::JobResultSubmit{job_id, {'o', 'k'}, {}})}, {}};
    devchain::sign_tx(tx, r.secret);
    return devchain::encode_tx(tx);
  }

  void silence_half() {
    Group& g = groups[0];
    g.io.stop();
    g.stopped = true;
    for (std::size_t i = 0; i < runners.size(); i += groups.size()) runners[i].silent = true;
  }
  bool silent(const Address& a) const {
    for (const auto& r : runners)
      if (r.address == a) return r.silent;
    return false;
  }
};

// Submits `jobs` echo jobs, `per_block` at a time, each batch right after a block.
std::vector<JobId> submit_jobs(World& w, const Options& o, int jobs) {
  devchain::Wallet wallet(*w.node, w.submitter);
  std::vector<JobId> ids;
  std::uint64_t h = *w.node->height();
  for (int sent = 0; sent < jobs;) {
    while (*w.node->height() == h) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    h = *w.node->height();
    for (int k = 0; k < o.jobs_per_block && sent < jobs; ++k, ++sent) {
      const std::string spec = R"({"echo":"bench"})";
      chain::SubmitJob job{JobKind::kCustom, Bytes(spec.begin(), spec.end()), o.timeout_blocks, 1, 0};
      auto hash = wallet.send(devchain::Cip11Call{chain::encode_instruction(job)});
      if (!hash) continue;
      cip11::JobId id = chain::job_id_of(*hash);
      ids.push_back(id);
      std::lock_guard lock(w.record.mu);
      w.record.submitted[id] = Clock::now();
    }
  }
  return ids;
}

// Says on stderr when a wait gave up (`what` names it): the figures after it cover only what arrived.
bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit, const char* what) {
  auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) {
      std::fprintf(stderr, "cip11_push_bench: gave up after %lld s waiting for %s\n", static_cast<long long>(limit.count()), what);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

struct PathFigures {
  std::vector<double> commit_to_assignment, submit_to_included, submit_to_start;
  double wasted = 0;  // fraction of jobs whose first committee member was silent
  std::size_t never_started = 0;  // timed out on silent committees without reaching a live runner
};

PathFigures figures(World& w, const std::vector<JobId>& ids, const Crowd* crowd) {
  PathFigures f;
  std::lock_guard lock(w.record.mu);
  int wasted = 0;
  for (const auto& id : ids) {
    auto r = w.record.received.find(id);
    auto s = w.record.submitted.find(id);
    auto job = w.node->job(id);
    if (r != w.record.received.end() && job) {
      if (auto d = w.record.durable.find(job->assignment_height.value); d != w.record.durable.end())
        f.commit_to_assignment.push_back(ms_between(d->second, r->second));
      if (s != w.record.submitted.end()) f.submit_to_start.push_back(ms_between(s->second, r->second));
    }
    if (auto c = w.record.completed.find(id); c != w.record.completed.end() && s != w.record.submitted.end())
      f.submit_to_included.push_back(ms_between(s->second, c->second));
    if (crowd)
      if (auto first = w.record.first_runner.find(id); first != w.record.first_runner.end() && crowd->silent(first->second))
        ++wasted;
    if (r == w.record.received.end() && job && chain::terminal(job->state)) ++f.never_started;
  }
  f.wasted = ids.empty() ? 0 : static_cast<double>(wasted) / static_cast<double>(ids.size());
  return f;
}

// Every job reached a runner or ended (a job whose committees were all silent times out unpushed).
bool settled(World& w, const std::vector<JobId>& ids) {
  std::lock_guard l(w.record.mu);
  return std::all_of(ids.begin(), ids.end(), [&](const JobId& id) {
    if (w.record.received.count(id)) return true;
    auto job = w.node->job(id);
    return job && chain::terminal(job->state);
  });
}

void start_blocks(World& w, Crowd* crowd, const Options& o) {
  w.node->set_block_observer([&w, crowd, o](const devchain::CommittedBlock& b) {
    w.record.on_block(b);
    if (w.service) w.service->on_block({Height{b.height}, b.effects});
    if (crowd) crowd->on_block(b.height, std::chrono::milliseconds(o.block_ms));
  });
  w.node->start();
}

struct RunResult {
  PathFigures push, silent_on, silent_off, poll;
};

RunResult run_once(const Options& o) {
  RunResult out;
  {  // push, then half silent with present-first on
    World w(o, true, true);
    Crowd crowd(o, w);
    start_blocks(w, &crowd, o);
    wait_until([&] { return crowd.admitted == o.runners && w.service->metrics().find("cip11d_present_runners " + std::to_string(o.runners)) != std::string::npos; },
               std::chrono::seconds(120), "every runner admitted and present");
    auto ids = submit_jobs(w, o, o.jobs);
    wait_until([&] { std::lock_guard l(w.record.mu); return w.record.completed.size() >= ids.size(); }, std::chrono::seconds(60), "every push-phase job completed");
    out.push = figures(w, ids, nullptr);
    crowd.silence_half();
    std::this_thread::sleep_for(std::chrono::milliseconds(o.block_ms) * (kPresenceTimeoutBlocks + 2));
    auto later = submit_jobs(w, o, o.jobs);
    wait_until([&] { return settled(w, later); }, std::chrono::seconds(120), "every silent-phase job pushed or ended (present-first on)");
    out.silent_on = figures(w, later, &crowd);
  }
  {  // half silent with present-first off
    World w(o, false, true);
    Crowd crowd(o, w);
    start_blocks(w, &crowd, o);
    wait_until([&] { return crowd.admitted == o.runners; }, std::chrono::seconds(120), "every runner admitted");
    crowd.silence_half();
    std::this_thread::sleep_for(std::chrono::milliseconds(o.block_ms) * (kPresenceTimeoutBlocks + 2));
    auto ids = submit_jobs(w, o, o.jobs);
    wait_until([&] { return settled(w, ids); }, std::chrono::seconds(120), "every silent-phase job pushed or ended (present-first off)");
    out.silent_off = figures(w, ids, &crowd);
  }
  {  // the poll fallback: every runner polls at its own phase
    World w(o, true, false);
    start_blocks(w, nullptr, o);
    std::vector<Address> addresses;
    std::vector<crypto::Secp256k1Secret> secrets;
    for (int i = 0; i < o.runners; ++i) {
      secrets.push_back(runner_secret(static_cast<std::uint32_t>(i)));
      addresses.push_back(*crypto::secp256k1_address(secrets.back()));
    }
    std::atomic<bool> stop{false};
    std::thread pollers([&] {
      const Bytes32 chain = *w.node->chain_instance_id();
      std::vector<std::uint64_t> nonces(addresses.size(), 0);
      std::set<JobId> seen;
      const auto start = Clock::now();
      std::vector<Clock::time_point> next(addresses.size());
      for (std::size_t i = 0; i < next.size(); ++i)
        next[i] = start + std::chrono::milliseconds(o.poll_ms) * static_cast<int>(i) / static_cast<int>(next.size());
      while (!stop) {
        for (std::size_t i = 0; i < addresses.size(); ++i) {
          if (Clock::now() < next[i]) continue;
          next[i] += std::chrono::milliseconds(o.poll_ms);
          auto jobs = w.node->runner_jobs(addresses[i]);
          if (!jobs) continue;
          for (const auto& job : *jobs) {
            if (!seen.insert(job.job_id).second) continue;
            {
              std::lock_guard lock(w.record.mu);
              w.record.received.try_emplace(job.job_id, Clock::now());
            }
            devchain::Transaction tx{chain, nonces[i]++,
                                     devchain::Cip11Call{chain::encode_instruction(chain::JobResultSubmit{job.job_id, {'o', 'k'}, {}})}, {}};
            devchain::sign_tx(tx, secrets[i]);
            (void)w.node->submit(tx);
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    auto ids = submit_jobs(w, o, o.jobs);
    wait_until([&] { std::lock_guard l(w.record.mu); return w.record.completed.size() >= ids.size(); }, std::chrono::seconds(120), "every polled job completed");
    out.poll = figures(w, ids, nullptr);
    stop = true;
    pollers.join();
  }
  return out;
}

// ---- several validators (--validators 4) -----------------------------------
//
// Four `cip11d --genesis` processes (docs/devchain.md "Several validators",
// each its own chain store, QUIC listener and key, proposing in rotation and
// gossiping presence) and N runners in this process, each holding one
// RunnerLink per validator of its Sub(R) (k = 3 of 4: 3N connections), spread
// 20 runners to a loopback source address (127.0.x.y) as in cip11_quic_bench,
// so the validators' per-address connection limits stay on. The genesis
// schedules ValidatorSetSnapshot(1) at --activation without validator 3
// (docs/devchain.md D9), with an overlap longer than the run.
//
// One run, on one chain: ramp (runners started --ramp-per-s a second, in
// slices of a quarter second); push phase
// (jobs while every runner is live: final -> JobAssignment, where "final" is
// the earliest `final_at_us` any validator logged for the assignment, the
// durable time of the block S + F that made its block S final, the push
// path alone; and commit -> JobAssignment, from the earliest `durable_at_us`
// of S, which includes the F blocks of the finality rule; the arrival is the
// first push at the runner, all on the host's clock); the
// reconfiguration (from the crowd reading the activation block, as a runner
// does, to each runner's last epoch-1 admission; each runner takes up its
// epoch-1 links at its own phase within the first 16 blocks, the runner
// library's link_height, docs/cip11.md choice 163, so this includes that
// wait; and from the runner's own switch to its last epoch-1 admission,
// the handshakes alone); then half of the runners
// silent and, after PRESENCE_TIMEOUT_BLOCKS, the wasted-first-attempt phase.

struct Fleet;

struct ValidatorsRun {
  double ramp_s = 0;
  std::vector<double> final_to_assignment;   // ms: from the block that made the assignment final (S + F)
  std::vector<double> commit_to_assignment;  // ms: from the assignment block S (F blocks of finality included)
  std::vector<double> reconnect;             // ms, one per live runner: activation read -> its last epoch-1 admission
  std::vector<double> handshake;             // ms, one per live runner: its own switch -> its last epoch-1 admission
  std::map<std::string, double> cpu_push;    // CPU-seconds a second over the push phase, by process
  std::map<std::string, double> cpu_reconnect;  // the same from the activation read to the last runner readmitted
  std::size_t reconnect_missing = 0;         // live runners not readmitted under epoch 1 within the wait
  std::map<std::string, std::size_t> epoch1_losses;  // why epoch-1 links were lost or refused, by reason
  double wasted = 0;
  std::size_t wasted_jobs = 0;
  std::string failure;  // empty when the run completed
};

struct ValidatorChain {
  static constexpr std::size_t kValidators = 4, kLeaving = 3;
  static constexpr std::uint64_t kFinalityDepth = 4;  // K = F + 1 (docs/cip11.md choices 156, 157): a push waits F blocks
  cowboy::testing::TempDir dir;
  crypto::Secp256k1Secret submitter{};
  devchain::Cip11Genesis cip11;
  std::vector<std::uint16_t> chain_ports, quic_ports;
  std::vector<std::unique_ptr<cowboy::testing::ChildProcess>> processes;
  std::optional<chain::ValidatorSnapshots> snapshots;
  Bytes32 instance{};

  ValidatorChain(const Options& o, bool present_first) {
    submitter.fill(0x44);
    devchain::GenesisSpec g;
    g.chain_name = "push-bench-validators";
    g.governance_admin = *crypto::secp256k1_address(submitter);
    g.balances.emplace_back(g.governance_admin, u128{1} << 100);
    std::filesystem::create_directories(dir.path() / "keys");
    cip11.params.chain_id = 31337;
    cip11.params.transport_enabled = true;
    cip11.params.present_first_enabled = present_first;
    cip11.params.multi_validator = true;
    cip11.finality_depth = kFinalityDepth;
    cip11.params.selection_seed_delay_views = kFinalityDepth + 1;
    cip11.params.heartbeat_timeout_blocks = 1'000'000;  // no on-chain heartbeats in the bench: the floor holds
    chain_ports = cowboy::testing::free_ports(SOCK_STREAM, kValidators);
    quic_ports = cowboy::testing::free_ports(SOCK_DGRAM, kValidators);
    for (std::size_t i = 0; i < kValidators; ++i) {
      auto seed = load_or_create_secret(key_path(i));
      cip11.validators.push_back({crypto::ed25519_from_seed(*seed).public_key, "127.0.0.1:" + std::to_string(quic_ports[i])});
    }
    for (int i = 0; i < o.runners; ++i)
      cip11.runners.push_back({*crypto::secp256k1_public_key(runner_secret(static_cast<std::uint32_t>(i))), 1000, 1u << 3, {}, 4, 0});
    chain::ValidatorSetChange change{Height{o.activation}, {}};
    for (std::size_t i = 0; i < kValidators; ++i)
      if (i != kLeaving) change.peer_keys.push_back(cip11.validators[i].peer_key);
    std::sort(change.peer_keys.begin(), change.peer_keys.end());
    cip11.validator_set_changes.push_back(change);
    cip11.overlap_blocks = 100'000;  // no cutoff within a run
    g.cip11 = cip11;
    snapshots = devchain::validator_snapshots(cip11);
    std::ofstream(dir.path() / "genesis.json") << devchain::genesis_to_json(g).dump();
    for (std::size_t i = 0; i < kValidators; ++i) {
      std::string peers;
      for (std::size_t j = 0; j < kValidators; ++j)
        if (j != i) peers += (peers.empty() ? "" : ",") + url(j);
      processes.push_back(std::make_unique<cowboy::testing::ChildProcess>(
          std::vector<std::string>{std::string(COWBOY_BIN_DIR) + "/cip11d", "--data-dir", (dir.path() / std::to_string(i)).string(),
                                   "--genesis", (dir.path() / "genesis.json").string(), "--key", key_path(i).string(),
                                   "--peers", peers, "--chain-listen", "127.0.0.1:" + std::to_string(chain_ports[i]),
                                   "--admin-listen", "127.0.0.1:0", "--block-ms", std::to_string(o.block_ms)},
          log_path(i).string()));
    }
    for (auto& p : processes)
      if (!p->wait_for_line("cip11d listening on quic://", std::chrono::seconds(60))) throw std::runtime_error("a cip11d did not start");
    for (int i = 0; i < 100 && instance == Bytes32{}; ++i) {
      if (auto id = api(0).chain_instance_id()) instance = *id;
      else std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  std::filesystem::path key_path(std::size_t i) const { return dir.path() / "keys" / std::to_string(i); }
  std::filesystem::path log_path(std::size_t i) const { return dir.path() / ("cip11d-" + std::to_string(i) + ".log"); }
  // utime + stime of each cip11d and of this process (the runners), from /proc.
  std::map<std::string, double> cpu_seconds() const {
    auto of = [](const std::string& stat_path) {
      std::ifstream in(stat_path);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const auto close = text.rfind(')');
      if (close == std::string::npos) return 0.0;
      std::istringstream rest(text.substr(close + 2));
      std::string field;
      double ticks = 0;
      for (int f = 3; f <= 15 && rest >> field; ++f)
        if (f == 14 || f == 15) ticks += std::stod(field);  // utime, stime
      return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
    };
    std::map<std::string, double> out;
    for (std::size_t i = 0; i < processes.size(); ++i) out["cip11d-" + std::to_string(i)] = of("/proc/" + std::to_string(processes[i]->pid()) + "/stat");
    out["runners"] = of("/proc/self/stat");
    return out;
  }
  std::string url(std::size_t i) const { return "http://127.0.0.1:" + std::to_string(chain_ports[i]); }
  devchain::HttpClient api(std::size_t i) const { return devchain::HttpClient("127.0.0.1", chain_ports[i], std::chrono::seconds(2)); }
  std::uint64_t height() const {
    auto h = api(0).chain_head();
    return h ? h->height : 0;
  }

  // Every validator's `event=assignment` lines: per job, its first attempt
  // (lowest height) and that block's earliest durable time at any validator.
  struct FirstAttempt {
    std::uint64_t height = 0, durable_us = 0;
    std::string runner;
    std::uint64_t final_us = 0;  // the earliest validator's block making `height` final (0: none logged)
  };
  std::map<std::string, FirstAttempt> first_attempts() const {
    std::map<std::string, FirstAttempt> out;
    auto field = [](const std::string& line, const std::string& name) -> std::string {
      auto at = line.find(" " + name + "=");
      if (at == std::string::npos) return {};
      at += name.size() + 2;
      return line.substr(at, line.find(' ', at) - at);
    };
    std::map<std::pair<std::string, std::uint64_t>, std::uint64_t> finals;  // (job, height) -> earliest final_at_us
    for (std::size_t i = 0; i < kValidators; ++i) {
      std::ifstream in(log_path(i));
      for (std::string line; std::getline(in, line);) {
        if (line.find("event=assignment_final ") != std::string::npos) {
          const std::string job = field(line, "job_id"), h = field(line, "height"), t = field(line, "final_at_us");
          if (h.empty() || t.empty()) continue;
          const std::uint64_t at = std::stoull(t);
          auto [it, fresh] = finals.try_emplace({job, std::stoull(h)}, at);
          if (!fresh) it->second = std::min(it->second, at);
          continue;
        }
        if (line.find("event=assignment ") == std::string::npos) continue;
        const std::string job = field(line, "job_id"), runner = field(line, "runner");
        if (field(line, "height").empty() || field(line, "durable_at_us").empty()) continue;
        const std::uint64_t h = std::stoull(field(line, "height")), t = std::stoull(field(line, "durable_at_us"));
        auto [it, fresh] = out.try_emplace(job, FirstAttempt{h, t, runner});
        if (fresh) continue;
        if (h < it->second.height) it->second = FirstAttempt{h, t, runner};
        else if (h == it->second.height) it->second.durable_us = std::min(it->second.durable_us, t);
      }
    }
    for (auto& [job, f] : out)
      if (auto it = finals.find({job, f.height}); it != finals.end()) f.final_us = it->second;
    return out;
  }
};

struct Fleet {
  struct Link {
    std::size_t validator = 0;
    std::uint64_t epoch = 0;
    std::unique_ptr<RunnerLink> link;
  };
  struct Runner {
    crypto::Secp256k1Secret secret{};
    crypto::Secp256k1Compressed pub{};
    std::string address;  // 0x…, as cip11d logs it
    Address raw_address{};
    std::unique_ptr<Signer> key;
    std::vector<Link> links;
    std::uint64_t nonce = 0;
    std::set<JobId> answered;
    std::size_t epoch1_admitted = 0, epoch1_wanted = 0;
    std::atomic<std::uint64_t> epoch1_done_us{0};
    std::uint64_t switch_us = 0;  // when it took up its epoch-1 links (its io thread; read after epoch1_done_us)
    bool switched = false;
    bool silent = false;
  };
  struct Group {
    asio::io_context io{1};
    SignatureWorker worker{io, 1};
    net::ReadBudget budget{512 * 1024 * 1024};
    std::vector<std::unique_ptr<RunnerEndpoint>> endpoints;
    std::thread thread;
    bool stopped = false;
  };
  static constexpr int kPerAddress = 20;
  SystemEntropy entropy;
  AdmitAll admit_all;
  std::array<Group, 2> groups;
  std::vector<Runner> runners;
  std::atomic<std::size_t> admitted{0};  // epoch-0 links admitted (no losses counted: the ramp's figure)
  ValidatorChain& vc;
  const Options& o;
  std::mutex mu;
  std::map<JobId, std::uint64_t> received_us;  // job -> first push at any runner
  std::map<std::string, std::size_t> epoch1_losses;
  std::atomic<std::uint64_t> activation_seen_us{0};

  Group& group_of(std::size_t i) { return groups[i % 2]; }

  Fleet(const Options& opts, ValidatorChain& c) : runners(static_cast<std::size_t>(opts.runners)), vc(c), o(opts) {
    for (std::size_t k = 0; k < groups.size(); ++k) {
      const int addresses = (o.runners / 2 + kPerAddress) / kPerAddress;
      for (int a = 0; a < addresses; ++a) {
        const int n = 2 * a + static_cast<int>(k) + 1;
        quic::EndpointConfig ec;
        ec.host = "127.0." + std::to_string(1 + n / 250) + "." + std::to_string(1 + n % 250);
        auto e = RunnerEndpoint::open(groups[k].io, groups[k].worker, groups[k].budget, ec);
        if (!e) throw std::runtime_error("runner endpoint: " + e.error());
        groups[k].endpoints.push_back(std::move(*e));
      }
    }
    const auto& snap = *vc.snapshots;
    for (std::size_t i = 0; i < runners.size(); ++i) {
      Runner& r = runners[i];
      r.secret = runner_secret(static_cast<std::uint32_t>(i));
      r.pub = *crypto::secp256k1_public_key(r.secret);
      r.raw_address = *crypto::secp256k1_address(r.secret);
      r.address = to_hex0x(r.raw_address);
      r.key = std::make_unique<Signer>(*Signer::runner(r.secret));
      for (const auto& t : chain::runner_links(snap, r.pub, Height{0}, vc.cip11.params.subset)) add_link(i, t, 0);
    }
    run_groups(groups);
  }
  ~Fleet() {
    stop_groups(groups, runners.size(), [this](std::size_t i) { runners[i].links.clear(); });
    runners.clear();
    for (auto& g : groups) g.endpoints.clear();
  }

  std::size_t validator_of(const crypto::Ed25519Public& key) const {
    for (std::size_t v = 0; v < vc.cip11.validators.size(); ++v)
      if (vc.cip11.validators[v].peer_key == key) return v;
    throw std::logic_error("no such validator");
  }

  // A link of runner i to `t`, not started (as the runner's own offer_for: its pair, the active one as the other).
  void add_link(std::size_t i, const chain::EpochLink& t, std::uint64_t height) {
    Runner& r = runners[i];
    const std::size_t v = validator_of(t.validator);
    RunnerLinkConfig config;
    config.port = vc.quic_ports[v];
    LocalOffer now = chain::offer_at(*vc.snapshots, vc.cip11.params.chain_id, Height{height});
    config.offer = now;
    config.offer.subset_epoch = t.pair.subset_epoch;
    config.offer.validator_set_hash = t.pair.validator_set_hash;
    const EpochPair active{now.subset_epoch, now.validator_set_hash};
    config.offer.overlap = t.pair == active ? now.overlap : std::optional<EpochPair>(active);
    config.block_time = std::chrono::milliseconds(o.block_ms);
    config.check_peer_seals = false;
    const std::uint64_t epoch = t.pair.subset_epoch.value;
    RunnerLink::Callbacks cb;
    cb.on_admitted = [this, &r, epoch] {
      if (epoch == 0) {
        ++admitted;
      } else if (++r.epoch1_admitted == r.epoch1_wanted) {
        r.epoch1_done_us = unix_micros();
      }
    };
    auto self = std::make_shared<RunnerLink*>(nullptr);  // the callback needs its link, made after it
    if (epoch == 1)
      cb.on_lost = [this](const std::string& why) {
        std::lock_guard lock(mu);
        ++epoch1_losses[why.substr(0, why.find(':'))];
      };
    cb.on_job_frame = [this, &r, self](std::int64_t stream, const Frame& f, const Res<Unit>&) { on_frame(r, **self, stream, f); };
    Group& g = group_of(i);
    r.links.push_back({v, epoch, std::make_unique<RunnerLink>(*g.endpoints[i / 2 / kPerAddress], *r.key, admit_all, entropy, config, cb)});
    *self = r.links.back().link.get();
  }

  // Starts the epoch-0 links, --ramp-per-s runners a second in quarter-second slices.
  void ramp() {
    const auto slice = std::max<std::size_t>(1, static_cast<std::size_t>(o.ramp_per_s / 4));
    for (std::size_t from = 0; from < runners.size(); from += slice) {
      for (std::size_t k = 0; k < groups.size(); ++k)
        asio::post(groups[k].io, [this, from, k, slice] {
          for (std::size_t i = from; i < std::min(from + slice, runners.size()); ++i)
            if (i % groups.size() == k)
              for (auto& l : runners[i].links) l.link->start();
        });
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }

  // A Ping per link per block, spread over the first half of the block.
  void on_block(std::uint64_t h) {
    ping_spread(groups, runners.size(), std::chrono::milliseconds(o.block_ms), [this, h](std::size_t i) {
      for (auto& l : runners[i].links) l.link->on_block(Height{h});
    });
  }

  // Each block read from the activation on: a runner whose phase has come
  // (link_height, as the runner library: choice 163) opens its epoch-1 links
  // and retires its epoch-0 link to each validator of both subsets (choice
  // 81), on the runners' threads.
  void reconfigure(std::uint64_t height) {
    if (activation_seen_us == 0) activation_seen_us = unix_micros();
    for (std::size_t k = 0; k < groups.size(); ++k) {
      if (groups[k].stopped) continue;
      asio::post(groups[k].io, [this, k, height] {
        for (std::size_t i = k; i < runners.size(); i += groups.size()) {
          Runner& r = runners[i];
          if (r.switched) continue;
          const Height at = link_height(*vc.snapshots, vc.cip11.params.chain_id, r.raw_address, Height{height});
          if (at.value < o.activation) continue;
          r.switched = true;
          r.switch_us = unix_micros();
          std::vector<chain::EpochLink> wanted;
          for (const auto& t : chain::runner_links(*vc.snapshots, r.pub, Height{height}, vc.cip11.params.subset))
            if (t.pair.subset_epoch == Epoch{1}) wanted.push_back(t);
          r.epoch1_wanted = wanted.size();
          std::erase_if(r.links, [&](const Link& l) {
            return l.epoch == 0 && std::any_of(wanted.begin(), wanted.end(), [&](const chain::EpochLink& t) {
                     return validator_of(t.validator) == l.validator;
                   });
          });
          const std::size_t before = r.links.size();
          for (const auto& t : wanted) add_link(i, t, height);
          for (std::size_t n = before; n < r.links.size(); ++n) r.links[n].link->start();
        }
      });
    }
  }

  void on_frame(Runner& r, RunnerLink& link, std::int64_t stream, const Frame& f) {
    const auto* a = std::get_if<JobAssignment>(&f);
    if (!a) return;
    {
      std::lock_guard lock(mu);
      received_us.try_emplace(a->job_id, unix_micros());
    }
    // Each validator holding the runner pushes the same assignment: the first
    // accepted and answered with its result, the others Duplicate.
    if (!r.answered.insert(a->job_id).second) {
      link.send(stream, JobAck{a->job_id, a->assignment_hash, AckStatus::duplicate(), std::nullopt, {}});
      return;
    }
    link.send(stream, JobAck{a->job_id, a->assignment_hash, AckStatus::accepted(), std::nullopt, {}});
    devchain::Transaction tx{vc.instance, r.nonce++,
                             devchain::Cip11Call{chain::encode_instruction(chain::JobResultSubmit{a->job_id, {'o', 'k'}, {}})}, {}};
    devchain::sign_tx(tx, r.secret);
    link.send(stream, JobResult{a->job_id, devchain::encode_tx(tx)});
  }

  void silence_half() {
    Group& g = groups[0];
    g.io.stop();
    g.stopped = true;
    for (std::size_t i = 0; i < runners.size(); i += groups.size()) runners[i].silent = true;
  }
  bool silent(const std::string& address) const {
    for (const auto& r : runners)
      if (r.address == address) return r.silent;
    return false;
  }
};

ValidatorsRun run_validators_once(const Options& o, bool present_first) {
  ValidatorsRun out;
  ValidatorChain vc(o, present_first);
  if (vc.instance == Bytes32{}) {
    out.failure = "the chain API did not answer";
    return out;
  }
  Fleet fleet(o, vc);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> head{0};
  // The runners' block clock: validator 0's head read every 20 ms (a runner's --height-poll-ms).
  std::thread clock([&] {
    auto api = vc.api(0);
    std::uint64_t seen = 0;
    while (!stop) {
      auto h = api.chain_head();
      if (h && h->height > seen) {
        seen = h->height;
        head = seen;
        if (seen >= o.activation) fleet.reconfigure(seen);
        fleet.on_block(seen);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  auto finish = [&](std::string failure) {
    out.failure = std::move(failure);
    stop = true;
    clock.join();
    return out;
  };
  auto wait_blocks = [&](std::uint64_t n) {
    const std::uint64_t to = head + n;
    return wait_until([&] { return head >= to; }, std::chrono::seconds(static_cast<long>(10 + n * static_cast<std::uint64_t>(o.block_ms) / 250)), "the chain to reach the height");
  };
  auto api = vc.api(0);
  devchain::Wallet wallet(api, vc.submitter);
  auto submit = [&](int jobs) {
    std::vector<JobId> ids;
    std::uint64_t h = head;
    for (int sent = 0; sent < jobs;) {
      if (!wait_until([&] { return head > h; }, std::chrono::seconds(30), "the next block")) break;
      h = head;
      for (int k = 0; k < o.jobs_per_block && sent < jobs; ++k, ++sent) {
        const std::string spec = R"({"echo":"bench"})";
        chain::SubmitJob job{JobKind::kCustom, Bytes(spec.begin(), spec.end()), o.timeout_blocks, 1, 0};
        if (auto hash = wallet.send(devchain::Cip11Call{chain::encode_instruction(job)})) ids.push_back(chain::job_id_of(*hash));
      }
    }
    return ids;
  };

  const auto ramp_start = Clock::now();
  fleet.ramp();
  const std::size_t links = 3 * fleet.runners.size();
  if (!wait_until([&] { return fleet.admitted >= links; }, std::chrono::seconds(180), "every link admitted"))
    return finish("ramp: " + std::to_string(fleet.admitted) + " of " + std::to_string(links) + " link admissions in 180 s");
  out.ramp_s = std::chrono::duration<double>(Clock::now() - ramp_start).count();
  wait_blocks(3);

  // Push: every runner live.
  auto cpu_before = vc.cpu_seconds();
  const auto push_start = Clock::now();
  auto ids = submit(o.jobs);
  wait_until([&] { std::lock_guard l(fleet.mu); return std::all_of(ids.begin(), ids.end(), [&](const JobId& id) { return fleet.received_us.count(id) > 0; }); },
             std::chrono::seconds(120), "every push-phase job pushed");
  {
    const auto cpu_after = vc.cpu_seconds();
    const double wall = std::chrono::duration<double>(Clock::now() - push_start).count();
    for (const auto& [who, s] : cpu_after) out.cpu_push[who] = (s - cpu_before[who]) / wall;
  }
  wait_blocks(2);  // every validator's log line written
  if (fleet.activation_seen_us != 0) return finish("the activation came during the push phase: raise --activation");
  {
    auto firsts = vc.first_attempts();
    std::lock_guard l(fleet.mu);
    for (const auto& id : ids) {
      auto r = fleet.received_us.find(id);
      auto f = firsts.find(to_hex0x(id.value));
      if (r == fleet.received_us.end() || f == firsts.end()) continue;
      out.commit_to_assignment.push_back((static_cast<double>(r->second) - static_cast<double>(f->second.durable_us)) / 1000.0);
      if (f->second.final_us != 0)
        out.final_to_assignment.push_back((static_cast<double>(r->second) - static_cast<double>(f->second.final_us)) / 1000.0);
    }
  }

  // The reconfiguration at the genesis' activation height.
  if (!wait_until([&] { return fleet.activation_seen_us != 0; }, std::chrono::seconds(static_cast<long>(30 + 2 * o.activation * static_cast<std::uint64_t>(o.block_ms) / 1000)), "the activation block"))
    return finish("the activation block never came");
  auto cpu_at_activation = vc.cpu_seconds();
  const auto activation_read = Clock::now();
  auto readmitted = [&] {
    return static_cast<std::size_t>(std::count_if(fleet.runners.begin(), fleet.runners.end(), [](const Fleet::Runner& r) { return r.epoch1_done_us != 0; }));
  };
  wait_until([&] { return readmitted() == fleet.runners.size(); },
             std::chrono::seconds(120 + static_cast<long>(o.block_ms) * static_cast<long>(kEpochSpreadBlocks) / 1000), "every runner readmitted in epoch 1");
  {
    const auto cpu_after = vc.cpu_seconds();
    const double wall = std::chrono::duration<double>(Clock::now() - activation_read).count();
    for (const auto& [who, s] : cpu_after) out.cpu_reconnect[who] = (s - cpu_at_activation[who]) / wall;
  }
  for (const auto& r : fleet.runners) {
    const std::uint64_t done = r.epoch1_done_us;
    if (done == 0) {
      ++out.reconnect_missing;
      continue;
    }
    out.reconnect.push_back((static_cast<double>(done) - static_cast<double>(fleet.activation_seen_us.load())) / 1000.0);
    out.handshake.push_back((static_cast<double>(done) - static_cast<double>(r.switch_us)) / 1000.0);
  }

  {
    std::lock_guard l(fleet.mu);
    out.epoch1_losses = fleet.epoch1_losses;
  }

  // Half silent, then first attempts.
  fleet.silence_half();
  wait_blocks(kPresenceTimeoutBlocks + 2);
  auto later = submit(o.jobs);
  wait_blocks(3);
  std::map<std::string, ValidatorChain::FirstAttempt> firsts;
  wait_until([&] {
    firsts = vc.first_attempts();
    return std::all_of(later.begin(), later.end(), [&](const JobId& id) { return firsts.count(to_hex0x(id.value)) > 0; });
  }, std::chrono::seconds(60), "every silent-phase job's first attempt");
  std::size_t wasted = 0;
  for (const auto& id : later)
    if (auto f = firsts.find(to_hex0x(id.value)); f != firsts.end() && fleet.silent(f->second.runner)) ++wasted;
  out.wasted_jobs = later.size();
  out.wasted = later.empty() ? 0 : static_cast<double>(wasted) / static_cast<double>(later.size());
  return finish({});
}

int validators_main(const Options& o) {
  struct Row {
    bool present_first;
    ValidatorsRun r;
  };
  std::vector<Row> rows;
  std::printf("%d runners, %d ms blocks, ramp %.0f runners/s, %d jobs (%d a block), activation at %llu\n", o.runners, o.block_ms,
              o.ramp_per_s, o.jobs, o.jobs_per_block, static_cast<unsigned long long>(o.activation));
  std::fflush(stdout);
  for (int run = 0; run < 2 * o.runs; ++run) {
    const bool pf = run % 2 == 0;  // alternated: on, off, on, off, ...
    const auto started = std::time(nullptr);
    char when[16];
    std::strftime(when, sizeof when, "%H:%M:%S", std::gmtime(&started));
    auto r = run_validators_once(o, pf);
    std::printf("run %d (%s UTC) present-first %s: ", run + 1, when, pf ? "on " : "off");
    if (!r.failure.empty()) std::printf("FAILED: %s; ", r.failure.c_str());
    std::printf("ramp %.1f s; push final->assignment p50 %.2f p99 %.2f ms (n=%zu), commit->assignment p50 %.2f p99 %.2f ms; reconnect p50 %.0f p99 %.0f max %.0f ms (n=%zu, %zu missing); "
                "handshakes from the runner's switch p50 %.0f p99 %.0f max %.0f ms; wasted %.1f %% of %zu\n",
                r.ramp_s, percentile(r.final_to_assignment, 0.5), percentile(r.final_to_assignment, 0.99), r.final_to_assignment.size(),
                percentile(r.commit_to_assignment, 0.5), percentile(r.commit_to_assignment, 0.99),
                percentile(r.reconnect, 0.5), percentile(r.reconnect, 0.99), percentile(r.reconnect, 1.0), r.reconnect.size(),
                r.reconnect_missing, percentile(r.handshake, 0.5), percentile(r.handshake, 0.99), percentile(r.handshake, 1.0),
                100 * r.wasted, r.wasted_jobs);
    std::printf("    push-phase CPU-s/s:");
    for (const auto& [who, c] : r.cpu_push) std::printf(" %s %.2f", who.c_str(), c);
    std::printf("; reconfiguration CPU-s/s:");
    for (const auto& [who, c] : r.cpu_reconnect) std::printf(" %s %.2f", who.c_str(), c);
    std::printf("\n");
    for (const auto& [why, n] : r.epoch1_losses) std::printf("    epoch-1 link lost or refused: %zu x %s\n", n, why.c_str());
    std::fflush(stdout);
    rows.push_back({pf, std::move(r)});
  }
  for (bool pf : {true, false}) {
    std::vector<double> p99, commit99, rec99, recmax, wasted, hs99;
    for (const auto& row : rows)
      if (row.present_first == pf && row.r.failure.empty()) {
        hs99.push_back(percentile(row.r.handshake, 0.99));
        p99.push_back(percentile(row.r.final_to_assignment, 0.99));
        commit99.push_back(percentile(row.r.commit_to_assignment, 0.99));
        rec99.push_back(percentile(row.r.reconnect, 0.99));
        recmax.push_back(percentile(row.r.reconnect, 1.0));
        wasted.push_back(row.r.wasted);
      }
    std::printf("present-first %s, medians of %zu runs: push p99 %.2f ms from final (%.2f ms from commit); reconnect p99 %.0f ms, all %.0f ms; "
                "handshakes p99 %.0f ms; wasted %.1f %%\n",
                pf ? "on " : "off", p99.size(), median(p99), median(commit99), median(rec99), median(recmax), median(hs99), 100 * median(wasted));
  }
  return 0;
}

}  // namespace
}  // namespace cowboy::bench

int main(int argc, char** argv) {
  using namespace cowboy::bench;
  Options o;
  CLI::App app{"cip11_push_bench: CIP-11 push delivery against the 1 s poll fallback"};
  app.add_option("--runners", o.runners, "registered and connected runners")->capture_default_str();
  app.add_option("--jobs", o.jobs, "jobs per path")->capture_default_str();
  app.add_option("--jobs-per-block", o.jobs_per_block, "submissions per block")->capture_default_str();
  app.add_option("--runs", o.runs, "repetitions; the table gives medians over them")->capture_default_str();
  app.add_option("--block-ms", o.block_ms, "block interval")->capture_default_str();
  app.add_option("--poll-ms", o.poll_ms, "the poll fallback's interval")->capture_default_str();
  app.add_option("--timeout-blocks", o.timeout_blocks,
                 "each job's timeout_blocks (a silent runner's cost); default 5, with --validators 5 + F = 9 "
                 "(pushed at S + F, docs/cip11.md choice 165: at or below F the chain refuses it)");
  app.add_option("--validators", o.validators, "0: one validator in process; 4: four cip11d --genesis processes")
      ->check(CLI::IsMember({0, 4}))->capture_default_str();
  app.add_option("--activation", o.activation, "--validators 4: the height at which validator 3 leaves the set")
      ->capture_default_str();
  app.add_option("--ramp-per-s", o.ramp_per_s, "--validators 4: runners started per second")->check(CLI::PositiveNumber)->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (o.timeout_blocks == 0) o.timeout_blocks = 5 + (o.validators > 0 ? ValidatorChain::kFinalityDepth : 0);
  cowboy::crypto::init();
  cowboy::raise_descriptor_limit();
  cowboy::log::set_level("warn");
  if (o.validators > 0) return validators_main(o);

  std::vector<double> push50, push99, inc_push, poll50, poll99, inc_poll, start_poll, start_push;
  std::vector<double> on_wasted, on_start50, on_start99, off_wasted, off_start50, off_start99, on_never, off_never;
  for (int run = 0; run < o.runs; ++run) {
    auto r = run_once(o);
    push50.push_back(percentile(r.push.commit_to_assignment, 0.5));
    push99.push_back(percentile(r.push.commit_to_assignment, 0.99));
    inc_push.push_back(percentile(r.push.submit_to_included, 0.5));
    start_push.push_back(percentile(r.push.submit_to_start, 0.5));
    poll50.push_back(percentile(r.poll.commit_to_assignment, 0.5));
    poll99.push_back(percentile(r.poll.commit_to_assignment, 0.99));
    inc_poll.push_back(percentile(r.poll.submit_to_included, 0.5));
    start_poll.push_back(percentile(r.poll.submit_to_start, 0.5));
    on_wasted.push_back(r.silent_on.wasted);
    on_start50.push_back(percentile(r.silent_on.submit_to_start, 0.5));
    on_start99.push_back(percentile(r.silent_on.submit_to_start, 0.99));
    off_wasted.push_back(r.silent_off.wasted);
    off_start50.push_back(percentile(r.silent_off.submit_to_start, 0.5));
    off_start99.push_back(percentile(r.silent_off.submit_to_start, 0.99));
    on_never.push_back(static_cast<double>(r.silent_on.never_started));
    off_never.push_back(static_cast<double>(r.silent_off.never_started));
    std::printf("run %d: push commit->assignment p50 %.2f p99 %.2f ms (n=%zu); poll p50 %.1f ms; submit->included push %.1f poll %.1f ms\n",
                run + 1, push50.back(), push99.back(), r.push.commit_to_assignment.size(), poll50.back(), inc_push.back(),
                inc_poll.back());
    std::fflush(stdout);
  }
  std::printf("\nmedians of %d runs, %d runners, %d jobs per path, %d ms blocks, poll every %d ms\n", o.runs, o.runners, o.jobs,
              o.block_ms, o.poll_ms);
  std::printf("%-34s %12s %12s\n", "", "push", "poll");
  std::printf("%-34s %9.2f ms %9.1f ms\n", "block commit -> assignment, p50", median(push50), median(poll50));
  std::printf("%-34s %9.2f ms %9.1f ms\n", "block commit -> assignment, p99", median(push99), median(poll99));
  std::printf("%-34s %9.1f ms %9.1f ms\n", "submission -> job start, p50", median(start_push), median(start_poll));
  std::printf("%-34s %9.1f ms %9.1f ms\n", "submission -> result included, p50", median(inc_push), median(inc_poll));
  std::printf("\nhalf of the runners silent        present-first on   present-first off\n");
  std::printf("%-34s %14.1f %% %16.1f %%\n", "first attempts wasted", 100 * median(on_wasted), 100 * median(off_wasted));
  std::printf("%-34s %13.1f ms %15.1f ms\n", "submission -> job start, p50", median(on_start50), median(off_start50));
  std::printf("%-34s %13.1f ms %15.1f ms\n", "submission -> job start, p99", median(on_start99), median(off_start99));
  std::printf("%-34s %16.0f %18.0f\n", "jobs timed out, never started", median(on_never), median(off_never));
  std::printf("(job start percentiles cover the jobs that started)\n");
  return 0;
}
