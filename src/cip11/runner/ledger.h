// The runner's own chain transactions: nonces handed out in order, every
// signed transaction retained until a receipt for it exists, and the §10.3
// schedule of self-submissions for those the chain has not included.
//
// Retention ends at inclusion, not at the job's end: a signed transaction
// holds a nonce, and an unincluded one would block every later transaction
// of the account (docs/cip11.md, "Services").
#pragma once

#include <map>

#include "cip11/chain/port.h"

namespace cowboy::cip11 {

constexpr std::uint64_t kResultTxInclusionGraceBlocks = 2;       // §13 RESULT_TX_INCLUSION_GRACE_BLOCKS
constexpr std::uint64_t kResultTxRebroadcastIntervalBlocks = 2;  // §13 RESULT_TX_REBROADCAST_INTERVAL_BLOCKS

class TxLedger {
 public:
  /// `format`: the chain's transaction format (it outlives the ledger).
  TxLedger(const chain::TxFormat& format, const crypto::Secp256k1Secret& secret, std::uint64_t next_nonce)
      : format_(format), secret_(secret), next_nonce_(next_nonce) {}

  /// Signs a CIP-11 call of `payload` with the next nonce and retains it, sent
  /// (by frame or to the chain) at `height`: self-submissions start after the
  /// grace period, and never before durable() says it is recorded (journal.h).
  /// Its bytes are what a JobResult frame carries as tx_bytes.
  chain::SignedTx sign(Bytes payload, Height height);
  /// `hash` is in the journal: it may now leave this runner.
  void durable(const Bytes32& hash);
  /// A transaction signed before a restart (journal.h): retained, durable, and
  /// due for a self-submission at `height` - nobody knows whether it was sent.
  void restore(const chain::SignedTx& tx, Height height);
  /// The next nonce sign() will use.
  std::uint64_t next_nonce() const { return next_nonce_; }
  /// The chain counts `chain_next` as the account's next nonce, and none of
  /// `unincluded` has a receipt (read after it): those below it can never be
  /// included - another transaction of the account took their nonce - and
  /// leave; they are returned. sign() never goes below `chain_next` again.
  std::vector<Bytes32> superseded(std::uint64_t chain_next, const std::vector<Bytes32>& unincluded);
  /// The retained transaction `hash` if it is due for a self-submission at
  /// `height` (ask after its receipt was found missing); it is then next due
  /// RESULT_TX_REBROADCAST_INTERVAL_BLOCKS later.
  std::optional<Bytes> due(const Bytes32& hash, Height height);
  /// A receipt exists: no longer retained.
  void included(const Bytes32& hash) { retained_.erase(hash); }
  bool retained(const Bytes32& hash) const { return retained_.contains(hash); }
  std::vector<Bytes32> retained_hashes() const;

 private:
  struct Entry {
    Bytes tx;
    std::uint64_t nonce = 0;
    Height next_due{};
    bool durable = false;
  };
  const chain::TxFormat& format_;
  crypto::Secp256k1Secret secret_;
  std::uint64_t next_nonce_;
  std::map<Bytes32, Entry> retained_;
};

}  // namespace cowboy::cip11
