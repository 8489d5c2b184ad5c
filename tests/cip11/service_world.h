// What the service tests stand on: a `cip11d --dev` world of real processes
// (DevWorld), a chain and validator in this process whose genesis the test
// chooses (LocalChain), and a runner in this process for tests in which the
// runner misbehaves (InProcessRunner).
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <thread>

#include "../support/cip11_processes.h"
#include "../support/poll.h"
#include "../support/ports.h"
#include "../support/temp_dir.h"
#include "cip11/chain/codec.h"
#include "cip11/link/runner_link.h"
#include "cip11/link/validator_links.h"
#include "cip11/subset.h"
#include "cip11/validator/service.h"
#include "devchain/cip11_port.h"
#include "devchain/http_server.h"
#include "devchain/node.h"
#include "net/dev_cert.h"

namespace cowboy::cip11::testing {

using cowboy::testing::eventually;
using cowboy::testing::RunnerProcess;

inline std::string hex(const JobId& id) { return devchain::json::hex0x(id.value); }

inline crypto::Ed25519Seed testing_seed() {
  crypto::Ed25519Seed seed;
  seed.fill(0x5d);
  return seed;
}

/// `cip11d --dev` (100 ms blocks) and its dev runners as processes.
struct DevWorld {
  cowboy::testing::TempDir dir;
  std::unique_ptr<cowboy::testing::Cip11dProcess> validator;
  std::vector<std::unique_ptr<RunnerProcess>> runners;

  explicit DevWorld(std::vector<std::string> flags = {"--dev-runners", "1"}) {
    validator = std::make_unique<cowboy::testing::Cip11dProcess>(data(), flags);
    EXPECT_TRUE(validator->up());
  }
  std::filesystem::path data() const { return dir.path() / "data"; }
  RunnerProcess& runner(unsigned index, std::vector<std::string> extra = {}) {
    runners.push_back(std::make_unique<RunnerProcess>(data(), index, std::move(extra)));
    return *runners.back();
  }
  devchain::HttpClient chain() const { return validator->chain(); }
  std::optional<JobId> submit(const std::string& spec, std::uint64_t timeout_blocks = 50, std::uint32_t runners = 1) {
    auto c = chain();
    return cowboy::testing::submit_job(c, data() / "keys" / "submitter.key", spec, timeout_blocks, runners);
  }
  bool present(double n) {
    return eventually([&] { return validator->metric("cip11d_present_runners") == n; }, std::chrono::seconds(20));
  }
  std::optional<chain::JobRecord> job(const JobId& id) {
    auto c = chain();
    auto j = c.job(id);
    if (!j) return std::nullopt;
    return *j;
  }
  std::uint64_t height() {
    auto c = chain();
    auto h = c.height();
    return h ? *h : 0;
  }
  /// Dev runner `i`'s key, to play that runner in this process.
  Signer runner_signer(unsigned i) const {
    return *Signer::runner(*devchain::load_key(data() / "keys" / ("runner-" + std::to_string(i) + ".key")));
  }
  /// What a runner of this chain offers in its Hello.
  LocalOffer offer() {
    auto c = chain();
    auto g = c.cip11_genesis();
    EXPECT_TRUE(g);
    return LocalOffer{g->params.chain_id, kProtocolVersion, validator_set_hash(devchain::validator_peer_keys(*g)), Epoch{0}, Height{0}};
  }
};

/// Runs an io_context on a thread of its own; `on_io` waits for a task's answer.
struct IoThread {
  boost::asio::io_context io{1};
  std::thread thread{[this] {
    auto guard = boost::asio::make_work_guard(io);
    io.run();
  }};
  ~IoThread() {
    io.stop();
    thread.join();
  }
  template <typename F>
  auto on_io(F f) {
    std::promise<decltype(f())> p;
    boost::asio::post(io, [&] { p.set_value(f()); });
    return p.get_future().get();
  }
};

struct LocalChainOptions {
  unsigned runners = 1;                            // registered at genesis: runner-<i>.key
  std::function<void(chain::ChainParams&)> flags;  // after the defaults: transport and present-first on
  std::function<void(devchain::Cip11Genesis&)> genesis;  // last: e.g. more validators, which this node does not run
  bool service = true;                             // false: no validator here, the test plays it
  ResultSink* results = nullptr;                   // the service's checked results (default: the chain)
  bool start = true;                               // false: no blocks until the test calls node->start()
};

/// A devchain Node (100 ms blocks), its HTTP API and, unless told otherwise, a
/// ValidatorService producing its presence field - all in this process, with
/// a genesis the test chooses. Keys are files in `dir`: runner-<i>.key and a
/// funded submitter.key; the one validator's endpoint is 127.0.0.1:quic_port.
class LocalChain {
 public:
  explicit LocalChain(LocalChainOptions o = {}) {
    for (unsigned i = 0; i < o.runners; ++i) {
      auto key = devchain::load_or_create_key(dir.path() / ("runner-" + std::to_string(i) + ".key"));
      EXPECT_TRUE(key);
      runner_keys.push_back(*key);
      genesis.runners.push_back({*crypto::secp256k1_public_key(*key), 1000, 1u << 3, {}, 4, 0});
    }
    auto submitter_key = devchain::load_or_create_key(submitter_file());
    EXPECT_TRUE(submitter_key);
    genesis.params.chain_id = 5;
    genesis.params.transport_enabled = true;
    genesis.params.present_first_enabled = true;
    if (o.flags) o.flags(genesis.params);
    genesis.validators.push_back(
        {crypto::ed25519_from_seed(validator_seed).public_key, "127.0.0.1:" + std::to_string(quic_port)});
    if (o.genesis) o.genesis(genesis);
    const Address submitter = *crypto::secp256k1_address(*submitter_key);
    devchain::NodeConfig config;
    config.data_dir = dir.path() / "chain";
    config.block_interval = std::chrono::milliseconds(100);
    config.validator_key = validator_seed;  // validator 0 produces: its blocks carry their seed proofs
    auto opened = devchain::Node::open(config, devchain::GenesisSpec{"local", submitter, {{submitter, 1'000'000}}, {}, genesis});
    EXPECT_TRUE(opened) << opened.error();
    node = std::move(*opened);
    api = std::make_unique<devchain::HttpServer>(*node, node.get(), "127.0.0.1", 0);
    api->start();
    if (o.service) {
      auto cert = net::ensure_dev_certificate(dir.path() / "tls");
      EXPECT_TRUE(cert);
      ValidatorServiceConfig sc;
      sc.key = validator_seed;
      sc.endpoint.port = quic_port;
      sc.endpoint.certificate = cert->certificate;
      sc.endpoint.private_key = cert->private_key;
      port = std::make_unique<devchain::Cip11Port>(*node, *node);
      auto opened_service = ValidatorService::open(sc, *port, o.results);
      EXPECT_TRUE(opened_service) << opened_service.error();
      service = std::move(*opened_service);
      ValidatorService* s = service.get();
      node->set_presence_provider([s](std::uint64_t h, std::uint32_t n) { return s->presence_field(Height{h}, n); });
      node->set_block_observer([s](const devchain::CommittedBlock& b) { s->on_block({Height{b.height}, b.effects}); });
    }
    if (o.start) node->start();
  }
  ~LocalChain() {
    node->stop();
    service.reset();
    api->stop();
  }

  std::filesystem::path submitter_file() const { return dir.path() / "submitter.key"; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(api->port()); }
  /// `cip11-runner` as runner `i` of this chain, its state in dir/runner-<i>-state.
  std::unique_ptr<RunnerProcess> runner(unsigned i, std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"--chain-url", url(), "--key", (dir.path() / ("runner-" + std::to_string(i) + ".key")).string(),
                                  "--state-dir", (dir.path() / ("runner-" + std::to_string(i) + "-state")).string(),
                                  "--block-ms", "100"};
    for (auto& a : extra) args.push_back(std::move(a));
    return std::make_unique<RunnerProcess>(std::move(args));
  }
  std::optional<JobId> submit(const std::string& spec, std::uint64_t timeout_blocks = 50) {
    return cowboy::testing::submit_job(*node, submitter_file(), spec, timeout_blocks);
  }
  bool metric_is(const std::string& line) const {
    return eventually([&] { return service->metrics().find(line) != std::string::npos; }, std::chrono::seconds(20));
  }

  cowboy::testing::TempDir dir;
  const crypto::Ed25519Seed validator_seed = testing_seed();
  const std::uint16_t quic_port = cowboy::testing::free_port();
  devchain::Cip11Genesis genesis;
  std::vector<crypto::Secp256k1Secret> runner_keys;
  std::unique_ptr<devchain::Node> node;
  std::unique_ptr<devchain::HttpServer> api;
  std::unique_ptr<devchain::Cip11Port> port;  // the service's view of `node`
  std::unique_ptr<ValidatorService> service;
};

/// The job-stream frames one end received, for a test to wait on.
class FrameLog {
 public:
  void add(std::int64_t stream, const Frame& f) {
    std::lock_guard lock(mu_);
    frames_.emplace_back(stream, f);
  }
  /// The n-th frame of type F, with its stream (waits for it).
  template <typename F>
  std::optional<std::pair<std::int64_t, F>> received(std::size_t n = 0) {
    std::optional<std::pair<std::int64_t, F>> out;
    eventually([&] {
      std::lock_guard lock(mu_);
      std::size_t seen = 0;
      for (const auto& [stream, f] : frames_)
        if (const auto* x = std::get_if<F>(&f); x && seen++ == n) out.emplace(stream, *x);
      return out.has_value();
    }, std::chrono::seconds(20));
    return out;
  }
  /// How many frames of type F came so far (no wait).
  template <typename F>
  std::size_t count() {
    std::lock_guard lock(mu_);
    std::size_t n = 0;
    for (const auto& entry : frames_) n += std::holds_alternative<F>(entry.second) ? 1 : 0;
    return n;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<std::int64_t, Frame>> frames_;
};

/// A runner in this process on the runner libraries, for tests in which the
/// runner misbehaves: it admits any validator, pings at every block the chain
/// reports, keeps every job-stream frame it is sent and answers nothing itself.
class InProcessRunner {
 public:
  InProcessRunner(const Signer& me, const devchain::Cip11Genesis& genesis, std::uint16_t port,
                  std::function<std::uint64_t()> height)
      : me_(me), height_(std::move(height)) {
    auto endpoint = io_.on_io([&] { return RunnerEndpoint::open(io_.io, worker_, budget_, {}); });
    EXPECT_TRUE(endpoint);
    endpoint_ = std::move(*endpoint);
    RunnerLinkConfig config;
    config.port = port;
    config.offer = LocalOffer{genesis.params.chain_id, kProtocolVersion,
                              validator_set_hash(devchain::validator_peer_keys(genesis)), Epoch{0}, Height{0}};
    RunnerLink::Callbacks cb;
    cb.on_job_frame = [this](std::int64_t stream, const Frame& f, const Res<Unit>&) { frames.add(stream, f); };
    cb.on_lost = [this](const std::string& why) {
      std::lock_guard lock(mu_);
      losses_.push_back(why);
    };
    link_ = io_.on_io([&] {
      auto l = std::make_unique<RunnerLink>(*endpoint_, me_, admit_, entropy_, config, cb);
      l->start();
      return l;
    });
    clock_ = std::thread([this] {  // a Ping at each block, as a live runner sends
      while (!stop_) {
        const std::uint64_t h = height_();
        boost::asio::post(io_.io, [this, h] { link_->on_block(Height{h}); });
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }
  ~InProcessRunner() {
    stop_ = true;
    clock_.join();
    io_.on_io([&] {
      link_.reset();
      endpoint_.reset();
      return 0;
    });
  }

  FrameLog frames;  // what the validator sent on job streams
  bool send(std::int64_t stream, Frame f) {
    return io_.on_io([&] { return link_->send(stream, std::move(f)); });
  }
  bool admitted() {
    return io_.on_io([&] { return link_->admitted(); });
  }
  std::vector<std::string> losses() {
    std::lock_guard lock(mu_);
    return losses_;
  }

 private:
  class AnyValidator final : public Admission {
   public:
    std::optional<GoodbyeReason> admit(const Hello&) override { return std::nullopt; }
  };
  const Signer me_;
  std::function<std::uint64_t()> height_;
  IoThread io_;
  SignatureWorker worker_{io_.io, 1};
  net::ReadBudget budget_{1 << 20};
  SystemEntropy entropy_;
  AnyValidator admit_;
  std::unique_ptr<RunnerEndpoint> endpoint_;
  std::unique_ptr<RunnerLink> link_;
  std::atomic<bool> stop_{false};
  std::thread clock_;
  std::mutex mu_;
  std::vector<std::string> losses_;
};

/// A validator in this process on the link library, for tests in which the
/// validator misbehaves or is not who it says: it admits what `admission`
/// admits (any runner by default), pushes and sends what the test says, and
/// keeps the runners' job-stream frames.
class InProcessValidator {
 public:
  InProcessValidator(const crypto::Ed25519Seed& seed, const devchain::Cip11Genesis& genesis, std::uint16_t port,
                     const std::filesystem::path& tls_dir, Admission* admission = nullptr)
      : me_(Signer::validator(seed)), admission_(admission ? admission : &any_) {
    auto cert = net::ensure_dev_certificate(tls_dir);
    EXPECT_TRUE(cert);
    ValidatorLinksConfig config;
    config.endpoint.port = port;
    config.endpoint.certificate = cert->certificate;
    config.endpoint.private_key = cert->private_key;
    config.offer = LocalOffer{genesis.params.chain_id, kProtocolVersion,
                              validator_set_hash(devchain::validator_peer_keys(genesis)), Epoch{0}, Height{0}};
    ValidatorLinks::Callbacks cb;
    cb.on_admitted = [this](const Address&) { ++admitted; };
    cb.on_job_frame = [this](const Address&, ValidatorLinks::LinkId, std::int64_t stream, const Frame& f) { frames.add(stream, f); };
    auto links = io_.on_io([&] { return ValidatorLinks::open(io_.io, me_, *admission_, entropy_, config, cb); });
    EXPECT_TRUE(links) << links.error();
    links_ = std::move(*links);
  }
  ~InProcessValidator() {
    io_.on_io([&] { return (links_.reset(), 0); });
  }
  std::optional<ValidatorLinks::Pushed> push(const Address& runner, JobAssignment a) {
    return io_.on_io([&] { return links_->push(runner, std::move(a)); });
  }
  bool send(const Address& runner, std::int64_t stream, Frame f) {
    return io_.on_io([&] { return links_->send(runner, stream, std::move(f)); });
  }

  FrameLog frames;  // what runners sent on job streams
  std::atomic<int> admitted{0};

 private:
  class AnyRunner final : public Admission {
   public:
    std::optional<GoodbyeReason> admit(const Hello&) override { return std::nullopt; }
  };
  const Signer me_;
  AnyRunner any_;
  Admission* admission_;
  SystemEntropy entropy_;
  IoThread io_;
  std::unique_ptr<ValidatorLinks> links_;
};

/// The assignment the chain's record of `job` stands for, as a validator pushes it (§10.1).
inline JobAssignment assignment_of(const chain::JobRecord& job) {
  JobAssignment a;
  a.job_id = job.job_id;
  a.job_spec = chain::job_spec_bytes(job);
  a.assignment_height = job.assignment_height;
  a.deadline_block = job.deadline_block;
  return a;
}

}  // namespace cowboy::cip11::testing
