// gtest glue over testbed::LocalDeployment: a running deployment per test,
// plus helpers to send requests and read answers.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

#include "../../support/poll.h"
#include "../../support/temp_dir.h"
#include "support/local_deployment.h"

namespace cowboy::cbqs::broker::testing {

inline std::uint16_t code(ErrorCode e) { return static_cast<std::uint16_t>(e); }

class BrokerFixture : public ::testing::Test {
 protected:
  cowboy::testing::TempDir dir;
  std::unique_ptr<testbed::LocalDeployment> d;
  // Short names for what the tests touch most.
  devchain::Node* node = nullptr;
  testbed::SwitchableChain* chain = nullptr;
  devchain::Wallet* admin = nullptr;
  devchain::Wallet* owner = nullptr;
  Broker* broker = nullptr;
  store::MemoryStore* memory = nullptr;
  ProviderIdentity provider;
  Bytes32 stream_id{};
  crypto::Ed25519Seed holder{};
  SystemClock clock;

  /// Subclasses adjust the deployment (the memory store, parameters).
  virtual testbed::DeploymentOptions options() { return {}; }

  void SetUp() override {
    testbed::DeploymentOptions o = options();
    // ctest runs the suites again with the owners on two stream threads (tests/CMakeLists.txt).
    if (const char* threads = std::getenv("CBQS_TEST_IO_THREADS")) o.io_threads = std::strtoul(threads, nullptr, 10);
    auto started = testbed::LocalDeployment::start(dir.path(), o);
    ASSERT_TRUE(started.ok()) << (started.ok() ? "" : started.error());
    d = std::move(*started);
    node = &d->node();
    chain = &d->chain();
    admin = &d->admin();
    owner = &d->owner();
    broker = &d->broker();
    memory = &d->memory_store();
    provider = d->provider();
    stream_id = d->stream_id();
    holder = d->holder();
  }
  void TearDown() override {
    if (d) d->stop();
  }

  bool set_param(const std::string& name, std::uint64_t value) { return d->set_param(name, value); }
  StreamGrantV2 grant(std::uint16_t verbs, LaneScope lanes = LaneScopeAny{}, std::uint64_t ttl_ms = 600'000) {
    return d->grant(verbs, std::move(lanes), ttl_ms);
  }

  /// Waits until the broker's snapshot has caught up with the chain's height now.
  void await_refresh() {
    std::uint64_t target = *node->height();
    ASSERT_TRUE(cowboy::testing::eventually([&] { return broker->snapshot_height() >= target; }));
  }

  std::unique_ptr<client::WssConnection> connect(std::string path = "/") {
    auto c = d->connect(std::move(path));
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error());
    return c.ok() ? std::move(*c) : nullptr;
  }

  Bytes32 open_session(client::WssConnection& c, const StreamGrantV2& g) {
    auto s = d->open_session(c, g);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error());
    return s.ok() ? *s : Bytes32{};
  }

  static Bytes32 rid(std::uint64_t n) { return testbed::request_id(n); }

  CbqsServerFrameV2 next(client::WssConnection& c, std::chrono::milliseconds t = std::chrono::seconds(5)) {
    auto f = c.receive(t);
    EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error());
    return f.ok() ? std::move(*f) : CbqsServerFrameV2{ErrorFrame{}};
  }

  /// Sends a request and returns the next frame.
  CbqsServerFrameV2 request(client::WssConnection& c, const Bytes32& session, std::uint64_t id, CbqsRequestBodyV2 body) {
    EXPECT_TRUE(c.send(Request{rid(id), session, std::move(body)}).ok());
    return next(c);
  }

  static std::string error_text(const CbqsServerFrameV2& f) {
    if (const auto* e = std::get_if<ErrorFrame>(&f)) return std::string(e->message.begin(), e->message.end());
    return "frame variant " + std::to_string(f.index());
  }
  static std::optional<std::uint16_t> error_code(const CbqsServerFrameV2& f) {
    if (const auto* e = std::get_if<ErrorFrame>(&f)) return e->code;
    return std::nullopt;
  }
  template <typename Body>
  static const Body* body(const CbqsServerFrameV2& f) {
    if (const auto* r = std::get_if<Response>(&f)) return std::get_if<Body>(&r->body);
    return nullptr;
  }
};

}  // namespace cowboy::cbqs::broker::testing
