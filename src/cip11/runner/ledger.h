// The runner's own chain transactions: nonces handed out in order, every
// signed transaction retained until a receipt for it exists, and the §10.3
// schedule of self-submissions for those the chain has not included.
//
// Retention ends at inclusion, not at the job's end: a signed transaction
// holds a nonce, and an unincluded one would block every later transaction
// of the account (docs/cip11.md, "Services").
#pragma once

#include <map>

#include "devchain/tx.h"

namespace cowboy::cip11 {

constexpr std::uint64_t kResultTxInclusionGraceBlocks = 2;       // §13 RESULT_TX_INCLUSION_GRACE_BLOCKS
constexpr std::uint64_t kResultTxRebroadcastIntervalBlocks = 2;  // §13 RESULT_TX_REBROADCAST_INTERVAL_BLOCKS

class TxLedger {
 public:
  TxLedger(const Bytes32& chain_instance_id, const crypto::Secp256k1Secret& secret, std::uint64_t next_nonce)
      : chain_(chain_instance_id), secret_(secret), next_nonce_(next_nonce) {}

  struct Signed {
    devchain::Transaction tx;
    Bytes bytes;   // encode_tx: what a JobResult frame carries as tx_bytes
    Bytes32 hash{};
  };
  /// Signs `body` with the next nonce and retains it, sent (by frame or to
  /// the chain) at `height`: self-submissions start after the grace period,
  /// and never before durable() says it is recorded (journal.h).
  Signed sign(devchain::TxBody body, std::uint64_t height);
  /// `hash` is in the journal: it may now leave this runner.
  void durable(const Bytes32& hash);
  /// A transaction signed before a restart (journal.h): retained, durable, and
  /// due for a self-submission at `height` - nobody knows whether it was sent.
  void restore(devchain::Transaction tx, std::uint64_t height);
  /// The next nonce sign() will use.
  std::uint64_t next_nonce() const { return next_nonce_; }
  /// The retained transaction `hash` if it is due for a self-submission at
  /// `height` (ask after its receipt was found missing); it is then next due
  /// RESULT_TX_REBROADCAST_INTERVAL_BLOCKS later.
  std::optional<devchain::Transaction> due(const Bytes32& hash, std::uint64_t height);
  /// A receipt exists: no longer retained.
  void included(const Bytes32& hash) { retained_.erase(hash); }
  bool retained(const Bytes32& hash) const { return retained_.contains(hash); }
  std::vector<Bytes32> retained_hashes() const;

 private:
  struct Entry {
    devchain::Transaction tx;
    std::uint64_t next_due = 0;
    bool durable = false;
  };
  Bytes32 chain_;
  crypto::Secp256k1Secret secret_;
  std::uint64_t next_nonce_;
  std::map<Bytes32, Entry> retained_;
};

/// §6.6 on-chain heartbeat staggering: a runner-specific phase inside an
/// effective cadence of HEARTBEAT_TIMEOUT_BLOCKS - safety_margin_blocks,
/// with an emergency refresh once a whole cadence has passed without one.
class HeartbeatSchedule {
 public:
  /// phase = heartbeat_phase(chain_id, runner, cadence) (selection.h, choice 28).
  HeartbeatSchedule(std::uint64_t chain_id, const Address& runner, std::uint64_t timeout_blocks,
                    std::uint64_t safety_margin_blocks);
  /// Whether a heartbeat should be sent at `height`, given the last one the chain recorded.
  bool due(std::uint64_t height, std::uint64_t last_heartbeat) const;
  std::uint64_t cadence() const { return cadence_; }
  std::uint64_t phase() const { return phase_; }

 private:
  std::uint64_t cadence_ = 1, phase_ = 0;
};

}  // namespace cowboy::cip11
