// A whole CBQS deployment in one process, for tests, benchmarks and demos: an
// in-process devchain node (behind a switchable outage), a funded and
// registered provider, an owner with a topped-up account and one stream, a
// dev certificate, a store, and a Broker serving wss:// on a free loopback port.
#pragma once

#include <filesystem>

#include "cbqs/broker/broker.h"
#include "net/dev_cert.h"
#include "cbqs/client/request_ids.h"
#include "cbqs/client/wss_connection.h"
#include "cbqs/store/memory_store.h"
#include "devchain/node.h"
#include "devchain/wallet.h"

namespace cowboy::cbqs::testbed {

/// A ChainApi that forwards to another, except the provider snapshot, which
/// fails while `outage` is set (a chain the broker cannot reach).
class SwitchableChain final : public devchain::ChainApi {
 public:
  explicit SwitchableChain(devchain::ChainApi& inner) : inner_(inner) {}
  std::atomic<bool> outage{false};

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
  devchain::ApiResult<devchain::ProviderSnapshot> provider_snapshot(const Address& p) override;

 private:
  devchain::ChainApi& inner_;
};

using client::request_id;
using client::request_number;

struct DeploymentOptions {
  std::uint64_t block_ms = 10;
  bool memory_store = false;             // the fault-injecting store instead of RocksDB
  std::uint64_t snapshot_refresh_ms = 20;  // set by governance before the broker starts
  std::vector<std::pair<std::string, std::uint64_t>> parameters;  // more governance writes
  bool wrong_provider_key = false;       // the broker signs with a key the chain does not know
  std::size_t write_high_water = 0;      // 0: the broker's default
  std::size_t io_threads = 1;            // BrokerConfig::io_threads
  std::size_t streams = 1;               // the owner's streams 0..streams-1, all on the provider
};

class LocalDeployment {
 public:
  static Result<std::unique_ptr<LocalDeployment>, std::string> start(const std::filesystem::path& dir,
                                                                     const DeploymentOptions& options = {});
  ~LocalDeployment();

  devchain::Node& node() { return *node_; }
  SwitchableChain& chain() { return *chain_; }
  broker::Broker& broker() { return *broker_; }
  store::MemoryStore& memory_store() { return memory_; }
  devchain::Wallet& admin() { return *admin_; }   // genesis funds and governance
  devchain::Wallet& owner() { return *owner_; }   // the stream's owner
  const broker::ProviderIdentity& provider() const { return provider_; }
  const Bytes32& stream_id() const { return stream_ids_.front(); }
  const std::vector<Bytes32>& stream_ids() const { return stream_ids_; }
  const Bytes32& chain_id() const { return chain_id_; }
  const crypto::Ed25519Seed& holder() const { return holder_; }
  /// The stream's admin key, for tests that sign grants of their own shape.
  const crypto::Ed25519Seed& stream_admin() const { return stream_admin_; }
  const std::filesystem::path& certificate() const { return cert_.certificate; }

  /// A governance parameter write; true when applied.
  bool set_param(const std::string& name, std::uint64_t value);
  /// A grant for the holder key, signed by the stream's admin key.
  StreamGrantV2 grant(std::uint16_t verbs, LaneScope lanes = LaneScopeAny{}, std::uint64_t ttl_ms = 600'000,
                      GroupScope groups = GroupScopeAny{}) const;
  /// The same on another of the owner's streams (stream_ids()), any lane or group, 10 minutes.
  StreamGrantV2 grant_on(const Bytes32& stream_id, std::uint16_t verbs) const;
  Result<std::unique_ptr<client::WssConnection>, std::string> connect(std::string path = "/") const;
  /// OpenSession + CompleteSession on `c`; the session id, or the failure.
  Result<Bytes32, std::string> open_session(client::WssConnection& c, const StreamGrantV2& g) const;
  void stop();

 private:
  LocalDeployment() = default;
  std::unique_ptr<devchain::Node> node_;
  std::unique_ptr<SwitchableChain> chain_;
  std::unique_ptr<devchain::Wallet> admin_, owner_, provider_wallet_;
  broker::ProviderIdentity provider_;
  crypto::Ed25519Seed stream_admin_{}, holder_{};
  std::vector<Bytes32> stream_ids_;
  Bytes32 chain_id_{};
  net::CertFiles cert_;
  std::unique_ptr<store::Store> rocks_;
  store::MemoryStore memory_;
  SystemClock clock_;
  SystemEntropy entropy_;
  std::unique_ptr<broker::Broker> broker_;
};

}  // namespace cowboy::cbqs::testbed
