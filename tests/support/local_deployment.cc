#include "support/local_deployment.h"

#include "cbqs/wire/ids.h"

namespace cowboy::cbqs::testbed {

namespace {
crypto::Secp256k1Secret secp(std::uint8_t b) {
  crypto::Secp256k1Secret s{};
  s[31] = b;
  return s;
}
crypto::Ed25519Seed ed(std::uint8_t b) {
  crypto::Ed25519Seed s{};
  s[0] = b;
  return s;
}
bool applied(const devchain::ApiResult<devchain::TxReceipt>& r) { return r.ok() && r->ok(); }
}  // namespace

devchain::ApiResult<devchain::ProviderSnapshot> SwitchableChain::provider_snapshot(const Address& p) {
  if (outage) return Err{devchain::ApiError{devchain::ApiErrorCode::kUnavailable, "simulated outage"}};
  return inner_.provider_snapshot(p);
}

Result<std::unique_ptr<LocalDeployment>, std::string> LocalDeployment::start(const std::filesystem::path& dir,
                                                                             const DeploymentOptions& o) {
  std::unique_ptr<LocalDeployment> d(new LocalDeployment());
  Address admin = *crypto::secp256k1_address(secp(1));
  devchain::GenesisSpec genesis{"local", admin, {{admin, u128{1'000'000'000'000'000}}}, {}, std::nullopt};
  auto node = devchain::Node::open({dir / "chain", std::chrono::milliseconds(o.block_ms)}, genesis);
  if (!node) return Err{node.error()};
  d->node_ = std::move(*node);
  d->node_->start();
  d->chain_ = std::make_unique<SwitchableChain>(*d->node_);
  d->admin_ = std::make_unique<devchain::Wallet>(*d->node_, secp(1));
  d->owner_ = std::make_unique<devchain::Wallet>(*d->node_, secp(0x0a));
  d->provider_wallet_ = std::make_unique<devchain::Wallet>(*d->node_, secp(0x0b));
  d->chain_id_ = *d->node_->chain_instance_id();
  d->provider_ = {d->provider_wallet_->address(), ed(0x99)};
  d->stream_admin_ = ed(0xad);
  d->holder_ = ed(0x40);

  std::string endpoint = "wss://127.0.0.1:7447/";
  if (!applied(d->admin_->send_and_wait(devchain::Transfer{d->owner_->address(), 100'000'000'000})) ||
      !applied(d->admin_->send_and_wait(devchain::Transfer{d->provider_.address, 100'000'000'000})) ||
      !applied(d->provider_wallet_->send_instruction(RegisterProviderV2{
          ed25519_public_key(d->provider_.signing_seed), {Bytes(endpoint.begin(), endpoint.end())}, 100, true, {}})) ||
      !applied(d->owner_->send_instruction(TopUpAccountV2{d->owner_->address(), d->provider_.address, 10'000'000'000})))
    return Err{std::string("deploying the provider failed")};
  for (std::uint64_t index = 0; index < std::max<std::size_t>(o.streams, 1); ++index) {
    if (!applied(d->owner_->send_instruction(
            CreateStreamV2{index, d->provider_.address, ed25519_public_key(d->stream_admin_)})))
      return Err{std::string("creating the stream failed")};
    d->stream_ids_.push_back(cbqs::stream_id(d->chain_id_, d->owner_->address(), index));
  }
  if (!d->set_param("cbqs.snapshot_refresh_ms", o.snapshot_refresh_ms)) return Err{std::string("governance write failed")};
  for (const auto& [name, value] : o.parameters)
    if (!d->set_param(name, value)) return Err{"governance write of " + name + " failed"};

  auto cert = net::ensure_dev_certificate(dir / "tls");
  if (!cert) return Err{cert.error()};
  d->cert_ = *cert;
  store::Store* store = &d->memory_;
  if (!o.memory_store) {
    auto rocks = store::open_rocksdb_store((dir / "store").string());
    if (!rocks) return Err{rocks.error()};
    d->rocks_ = std::move(*rocks);
    store = d->rocks_.get();
  }
  broker::BrokerConfig config;
  config.port = 0;
  config.tls_certificate = d->cert_.certificate;
  config.tls_private_key = d->cert_.private_key;
  config.provider = d->provider_;
  if (o.wrong_provider_key) config.provider.signing_seed = ed(0x98);
  if (o.write_high_water != 0) {
    config.write_high_water = o.write_high_water;
    config.write_low_water = o.write_high_water / 4;
  }
  config.chain_block_ms = o.block_ms;
  config.io_threads = o.io_threads;
  d->broker_ = std::make_unique<broker::Broker>(config, *store, *d->chain_, d->clock_, d->entropy_);
  if (auto started = d->broker_->start(); !started) return Err{started.error()};
  return d;
}

LocalDeployment::~LocalDeployment() { stop(); }

void LocalDeployment::stop() {
  if (broker_) broker_->stop();
  if (node_) node_->stop();
}

bool LocalDeployment::set_param(const std::string& name, std::uint64_t value) {
  return applied(admin_->send_and_wait(devchain::ParameterWrite{name, value}));
}

StreamGrantV2 LocalDeployment::grant_on(const Bytes32& stream_id, std::uint16_t verbs) const {
  StreamRecordV2 stream = *node_->stream(stream_id);
  GrantTerms terms{verbs, LaneScopeAny{}, GroupScopeAny{}, clock_.now_ms() - 1'000, clock_.now_ms() + 600'000};
  return mint_grant(stream, ed25519_public_key(holder_), std::move(terms), stream_admin_);
}

StreamGrantV2 LocalDeployment::grant(std::uint16_t verbs, LaneScope lanes, std::uint64_t ttl_ms,
                                     GroupScope groups) const {
  StreamRecordV2 stream = *node_->stream(stream_id());
  GrantTerms terms{verbs, std::move(lanes), std::move(groups), clock_.now_ms() - 1'000, clock_.now_ms() + ttl_ms};
  return mint_grant(stream, ed25519_public_key(holder_), std::move(terms), stream_admin_);
}

Result<std::unique_ptr<client::WssConnection>, std::string> LocalDeployment::connect(std::string path) const {
  client::ConnectOptions o;
  o.path = std::move(path);
  o.port = broker_->port();
  o.ca_file = cert_.certificate;
  o.allow_private_destinations = true;  // everything here is on loopback
  return client::WssConnection::connect(o);
}

Result<Bytes32, std::string> LocalDeployment::open_session(client::WssConnection& c, const StreamGrantV2& g) const {
  auto describe = [](const CbqsServerFrameV2& f) {
    if (const auto* e = std::get_if<ErrorFrame>(&f)) return std::string(e->message.begin(), e->message.end());
    return "unexpected frame variant " + std::to_string(f.index());
  };
  if (auto sent = c.send(OpenSession{request_id(1), g}); !sent) return Err{sent.error()};
  auto challenge = c.receive(std::chrono::seconds(5));
  if (!challenge) return Err{challenge.error()};
  const auto* ch = std::get_if<SessionChallenge>(&*challenge);
  if (!ch) return Err{describe(*challenge)};
  SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), ch->session_id, ch->challenge, {}};
  sign_proof(proof, holder_);
  if (auto sent = c.send(CompleteSession{request_id(2), proof}); !sent) return Err{sent.error()};
  auto opened = c.receive(std::chrono::seconds(5));
  if (!opened) return Err{opened.error()};
  if (!std::holds_alternative<SessionOpened>(*opened)) return Err{describe(*opened)};
  return ch->session_id;
}

}  // namespace cowboy::cbqs::testbed
