// The CIP-11 services' chain port (cip11/chain/port.h) on a devchain, over
// its ChainApi and Cip11Api: the same adapter serves a Node in process
// (`cip11d --dev`) and a devchain over its HTTP API (cip11d following a
// chain, cip11-runner). Transactions are DevchainTxV1 (tx.h) carrying a
// Cip11Call.
#pragma once

#include <memory>

#include "cip11/chain/port.h"
#include "devchain/api.h"
#include "devchain/cip11_api.h"

namespace cowboy::devchain {

/// DevchainTxV1 as the services' transaction format, for the chain it names.
class Cip11TxFormat final : public cip11::chain::TxFormat {
 public:
  explicit Cip11TxFormat(const Bytes32& chain_instance_id) : chain_(chain_instance_id) {}
  cip11::chain::SignedTx sign(const crypto::Secp256k1Secret& secret, std::uint64_t nonce, Bytes payload) const override;
  std::optional<cip11::chain::OpenedTx> open(ByteView tx) const override;

 private:
  Bytes32 chain_;
};

class Cip11Port final : public cip11::chain::ChainPort {
 public:
  Cip11Port(ChainApi& chain, Cip11Api& cip11) : chain_(chain), cip11_(cip11) {}
  /// Over the devchain HTTP API at `url` (http://host:port); nullptr for another form.
  static std::unique_ptr<Cip11Port> over_http(const std::string& url);

  cip11::chain::PortResult<cip11::chain::ChainSetup> setup() override;
  cip11::chain::PortResult<cip11::Height> height() override;
  cip11::chain::PortResult<cip11::chain::RunnerRecord> runner(const Address& runner) override;
  cip11::chain::PortResult<std::vector<cip11::chain::RunnerRecord>> runners() override;
  cip11::chain::PortResult<cip11::chain::JobRecord> job(const cip11::JobId& job_id) override;
  cip11::chain::PortResult<std::vector<cip11::chain::JobRecord>> runner_jobs(const Address& runner) override;
  cip11::chain::PortResult<cip11::chain::Effects> block_effects(cip11::Height height) override;
  cip11::chain::PortResult<std::vector<cip11::chain::ValidatorSetChange>> validator_set_changes() override;
  cip11::chain::PortResult<std::vector<cip11::chain::ValidatorEntry>> validators() override;
  cip11::chain::PortResult<std::uint64_t> next_nonce(const Address& account) override;
  cip11::chain::PortResult<std::optional<cip11::chain::Inclusion>> inclusion(const Bytes32& tx_hash) override;
  cip11::chain::PortResult<Bytes32> submit(ByteView signed_tx) override;

 private:
  struct Owned;  // the HTTP client of over_http()
  Cip11Port(std::shared_ptr<Owned> owned, ChainApi& chain, Cip11Api& cip11)
      : owned_(std::move(owned)), chain_(chain), cip11_(cip11) {}
  std::shared_ptr<Owned> owned_;
  ChainApi& chain_;
  Cip11Api& cip11_;
};

}  // namespace cowboy::devchain
