// A transitd in this process on 127.0.0.1 (an ephemeral port), a manual
// clock, and clients for its principals: the fixture of the HTTP tests.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <stdexcept>

#include "net/http_connection.h"
#include "samples.h"
#include "transit/client.h"
#include "transit/contract/envelope.h"
#include "transit/node/node.h"

namespace cowboy::transit {


class AtomicClock final : public Clock {
 public:
  std::uint64_t now_ms() const override { return now_.load(); }
  void set(std::uint64_t ms) { now_ = ms; }
  // The same clock as the node reads it: trusted time (decision 178).
  TrustedMs trusted() const { return TrustedMs{now_.load()}; }
  void set(TrustedMs t) { now_ = t.value; }

 private:
  std::atomic<std::uint64_t> now_{1'800'000'000'000};
};

class NodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    crypto::init();
    dir_ = std::filesystem::temp_directory_path() /
           ("transit-node-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    node_.reset();
    std::filesystem::remove_all(dir_);
  }

  void start(Genesis genesis = testing::sample_genesis()) {
    genesis_ = genesis;
    node::NodeConfig config;
    config.data_dir = dir_;
    config.genesis = genesis;
    config.storage_env = storage_env_;
    config.snapshots = snapshot_limits_;
    config.max_pending = max_pending_;
    config.request_deadline = request_deadline_;
    config.admin = admin_;
    config.payload_transfers = payload_transfers_;
    config.resident_processes = resident_processes_;
    config.budgets = budgets_;
    auto n = node::Node::open(config, clock_);
    // Thrown, not ASSERTed: an ASSERT returns only from start(), and the test
    // then went on with no node (a null dereference, exit 139, instead of this message).
    if (!n.ok()) throw std::runtime_error("Node::open failed: " + n.error());
    node_ = std::move(*n);
  }
  void restart() {
    node_.reset();
    start(genesis_);
  }

  ClientOptions options(auto principal, std::uint8_t seed) {
    ClientOptions o;
    o.port = node_->port();
    o.payload_port = node_->payload_port();
    o.realm = "dev";
    o.principal = testing::id<PrincipalId>(principal);
    o.seed = testing::seed_of(seed);
    o.max_attempts = 2;
    o.retry_backoff = std::chrono::milliseconds(1);
    return o;
  }
  Client root() { return Client(options(1, 0)); }

  net::HttpAnswer post(const std::string& target, const std::string& body,
                       std::vector<std::pair<std::string, std::string>> headers = {}) {
    net::HttpConnection c("127.0.0.1", node_->port());
    auto r = c.post(target, body, headers);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
    return r.ok() ? *r : net::HttpAnswer{};
  }
  static Rejection rejection_of(const net::HttpAnswer& a) {
    auto r = from_json<Rejection>(a.body, kMaxAnswerBytes);
    EXPECT_TRUE(r.ok()) << a.body;
    return r.ok() ? *r : Rejection{};
  }
  Position position() { return Position{root().identity().ok() ? node_->sequencer().stats().position : 0}; }

  static Command create(auto id, std::uint8_t seed, std::uint64_t bits = kReadOnly) {
    return CreatePrincipal{testing::id<PrincipalId>(id), testing::key_of(testing::seed_of(seed)), RealmScope{}, Permissions{bits}, std::nullopt, std::nullopt};
  }

  std::filesystem::path dir_;
  Genesis genesis_;
  AtomicClock clock_;
  std::unique_ptr<node::Node> node_;
  rocksdb::Env* storage_env_ = nullptr;  // the journal's file system; null: the default
  node::SnapshotLimits snapshot_limits_;  // open snapshots per principal and per node
  std::size_t max_pending_ = 8192;
  std::chrono::milliseconds request_deadline_{5000};
  std::optional<std::pair<std::string, std::uint16_t>> admin_;  // the admin listener; none by default
  node::PayloadListenerOptions payload_transfers_;
  std::size_t resident_processes_ = node::Authority::kResidentProcesses;
  node::Authority::DependencyBudgets budgets_;  // the node's dependency budgets (decision 156)
};

}  // namespace cowboy::transit
