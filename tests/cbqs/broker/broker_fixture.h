// A running CBQS deployment for integration tests: an in-process devchain node
// (behind a switchable outage), a provider registered on it, a stream, and a
// real Broker serving wss:// on a free loopback port with a dev certificate.
#pragma once

#include <gtest/gtest.h>

#include "../../devchain/scenario.h"
#include "../../support/poll.h"
#include "../../support/temp_dir.h"
#include "cbqs/broker/broker.h"
#include "cbqs/broker/dev_cert.h"
#include "cbqs/client/wss_connection.h"
#include "cbqs/store/memory_store.h"
#include "cbqs/wire/ids.h"
#include "devchain/node.h"

namespace cowboy::cbqs::broker::testing {

using devchain::testing::secret;

/// A ChainApi that forwards to a node, or fails every call during an outage.
class SwitchableChain final : public devchain::ChainApi {
 public:
  explicit SwitchableChain(devchain::ChainApi& inner) : inner_(inner) {}
  std::atomic<bool> outage{false};
  template <typename T>
  devchain::ApiResult<T> down() {
    return Err{devchain::ApiError{devchain::ApiErrorCode::kUnavailable, "simulated outage"}};
  }
  devchain::ApiResult<Bytes32> submit(const devchain::Transaction& tx) override { return inner_.submit(tx); }
  devchain::ApiResult<std::optional<devchain::TxReceipt>> receipt(const Bytes32& h) override { return inner_.receipt(h); }
  devchain::ApiResult<std::uint64_t> height() override { return inner_.height(); }
  devchain::ApiResult<Bytes32> chain_instance_id() override { return inner_.chain_instance_id(); }
  devchain::ApiResult<devchain::AccountInfo> account_info(const Address& a) override { return inner_.account_info(a); }
  devchain::ApiResult<ProviderRecordV2> provider(const Address& a) override { return inner_.provider(a); }
  devchain::ApiResult<StreamRecordV2> stream(const Bytes32& id) override { return inner_.stream(id); }
  devchain::ApiResult<CbqsAccountV2> account(const Address& o, const Address& p) override { return inner_.account(o, p); }
  devchain::ApiResult<Params> params() override { return inner_.params(); }
  devchain::ApiResult<std::vector<devchain::BlockEvents>> events(std::uint64_t f, std::uint64_t t) override {
    return inner_.events(f, t);
  }
  devchain::ApiResult<devchain::ProviderSnapshot> provider_snapshot(const Address& p) override {
    if (outage) return down<devchain::ProviderSnapshot>();
    return inner_.provider_snapshot(p);
  }

 private:
  devchain::ChainApi& inner_;
};

inline crypto::Ed25519Seed seed(std::uint8_t b) {
  crypto::Ed25519Seed s{};
  s[0] = b;
  return s;
}

class BrokerFixture : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kBlockMs = 10;
  cowboy::testing::TempDir dir;
  std::unique_ptr<devchain::Node> node;
  std::unique_ptr<SwitchableChain> chain;
  std::unique_ptr<devchain::Wallet> admin, owner, provider_wallet;
  ProviderIdentity provider;
  crypto::Ed25519Seed stream_admin = seed(0xad);
  crypto::Ed25519Seed holder = seed(0x40);
  Bytes32 stream_id{};
  Bytes32 chain_id{};
  CertFiles cert;
  std::unique_ptr<store::Store> rocks;
  store::MemoryStore memory;
  SystemClock clock;
  SystemEntropy entropy;
  std::unique_ptr<Broker> broker;

  /// Subclasses choose the store; RocksDB by default.
  virtual store::Store& store() { return *rocks; }

  void SetUp() override {
    node = std::move(*devchain::Node::open({dir.path() / "chain", std::chrono::milliseconds(kBlockMs)},
                                           devchain::testing::genesis_for(secret(1))));
    node->start();
    chain = std::make_unique<SwitchableChain>(*node);
    admin = std::make_unique<devchain::Wallet>(*node, secret(1));
    owner = std::make_unique<devchain::Wallet>(*node, secret(0x0a));
    provider_wallet = std::make_unique<devchain::Wallet>(*node, secret(0x0b));
    chain_id = *node->chain_instance_id();
    provider.address = provider_wallet->address();
    provider.signing_seed = seed(0x99);
    ASSERT_TRUE(admin->send_and_wait(devchain::Transfer{owner->address(), 100'000'000'000})->ok());
    ASSERT_TRUE(admin->send_and_wait(devchain::Transfer{provider.address, 100'000'000'000})->ok());
    std::string endpoint = "wss://127.0.0.1:7447/";
    ASSERT_TRUE(provider_wallet
                    ->send_instruction(RegisterProviderV2{ed25519_public_key(provider.signing_seed),
                                                          {Bytes(endpoint.begin(), endpoint.end())}, 100, true, {}})
                    ->ok());
    ASSERT_TRUE(owner->send_instruction(TopUpAccountV2{owner->address(), provider.address, 10'000'000'000})->ok());
    ASSERT_TRUE(owner->send_instruction(CreateStreamV2{0, provider.address, ed25519_public_key(stream_admin)})->ok());
    stream_id = cbqs::stream_id(chain_id, owner->address(), 0);
    // Faster refreshes for the tests (a Runtime parameter, set by governance).
    ASSERT_TRUE(set_param("cbqs.snapshot_refresh_ms", 20));

    cert = *ensure_dev_certificate(dir.path() / "tls");
    rocks = std::move(*store::open_rocksdb_store((dir.path() / "store").string()));
    start_broker();
  }

  void TearDown() override {
    if (broker) broker->stop();
    node->stop();
  }

  void start_broker() {
    BrokerConfig config;
    config.port = 0;
    config.tls_certificate = cert.certificate;
    config.tls_private_key = cert.private_key;
    config.provider = provider;
    config.chain_block_ms = kBlockMs;
    broker = std::make_unique<Broker>(config, store(), *chain, clock, entropy);
    ASSERT_TRUE(broker->start().ok());
  }

  bool set_param(const std::string& name, std::uint64_t value) {
    auto r = admin->send_and_wait(devchain::ParameterWrite{name, value});
    return r.ok() && r->ok();
  }

  /// Waits until the broker's snapshot has caught up with the chain's height now.
  void await_refresh() {
    std::uint64_t target = *node->height();
    ASSERT_TRUE(cowboy::testing::eventually([&] { return broker->snapshot_height() >= target; }));
  }

  StreamGrantV2 grant(std::uint16_t verbs, LaneScope lanes = LaneScopeAny{}, std::uint64_t ttl_ms = 600'000) {
    StreamGrantV2 g;
    g.chain_instance_id = chain_id;
    g.stream_id = stream_id;
    g.authorization_generation = node->stream(stream_id)->authorization_generation;
    g.grant_nonce = Bytes32{};
    g.holder_signing_key = ed25519_public_key(holder);
    g.verbs = verbs;
    g.lane_scope = std::move(lanes);
    g.group_scope = GroupScopeAny{};
    g.not_before_ms = clock.now_ms() - 1'000;
    g.expires_at_ms = clock.now_ms() + ttl_ms;
    g.max_message_bytes = 1'048'576;
    g.max_append_bytes_per_sec = 268'435'456;
    sign_grant(g, stream_admin);
    return g;
  }

  std::unique_ptr<client::WssConnection> connect() {
    client::ConnectOptions o;
    o.port = broker->port();
    o.ca_file = cert.certificate;
    auto c = client::WssConnection::connect(o);
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error());
    return c.ok() ? std::move(*c) : nullptr;
  }

  static Bytes32 rid(std::uint64_t n) {
    Bytes32 b{};
    for (int i = 0; i < 8; ++i) b[24 + i] = static_cast<std::uint8_t>(n >> (56 - 8 * i));
    return b;
  }

  CbqsServerFrameV2 next(client::WssConnection& c, std::chrono::milliseconds t = std::chrono::seconds(5)) {
    auto f = c.receive(t);
    EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error());
    return f.ok() ? std::move(*f) : CbqsServerFrameV2{ErrorFrame{}};
  }

  /// OpenSession + CompleteSession; returns the session id (or zeros on failure).
  Bytes32 open_session(client::WssConnection& c, const StreamGrantV2& g) {
    EXPECT_TRUE(c.send(OpenSession{rid(1), g}).ok());
    auto f = next(c);
    const auto* ch = std::get_if<SessionChallenge>(&f);
    if (!ch) {
      ADD_FAILURE() << "no SessionChallenge: " << error_text(f);
      return {};
    }
    SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), ch->session_id, ch->challenge, {}};
    sign_proof(proof, holder);
    EXPECT_TRUE(c.send(CompleteSession{rid(2), proof}).ok());
    auto opened = next(c);
    EXPECT_TRUE(std::holds_alternative<SessionOpened>(opened)) << error_text(opened);
    return ch->session_id;
  }

  static std::string error_text(const CbqsServerFrameV2& f) {
    if (const auto* e = std::get_if<ErrorFrame>(&f)) return std::string(e->message.begin(), e->message.end());
    return "frame variant " + std::to_string(f.index());
  }

  /// Sends a request and returns the next frame.
  CbqsServerFrameV2 request(client::WssConnection& c, const Bytes32& session, std::uint64_t id, CbqsRequestBodyV2 body) {
    EXPECT_TRUE(c.send(Request{rid(id), session, std::move(body)}).ok());
    return next(c);
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

inline std::uint16_t code(ErrorCode e) { return static_cast<std::uint16_t>(e); }

}  // namespace cowboy::cbqs::broker::testing
