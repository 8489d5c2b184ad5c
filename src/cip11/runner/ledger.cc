#include "cip11/runner/ledger.h"

#include "cip11/selection.h"

namespace cowboy::cip11 {

TxLedger::Signed TxLedger::sign(devchain::TxBody body, std::uint64_t height) {
  devchain::Transaction tx{chain_, next_nonce_++, std::move(body), {}};
  devchain::sign_tx(tx, secret_);  // the secret was checked when the runner started
  Signed out{tx, devchain::encode_tx(tx), devchain::tx_hash(tx)};
  retained_[out.hash] = Entry{std::move(tx), height + kResultTxInclusionGraceBlocks, false};
  return out;
}

void TxLedger::durable(const Bytes32& hash) {
  if (auto it = retained_.find(hash); it != retained_.end()) it->second.durable = true;
}

void TxLedger::restore(devchain::Transaction tx, std::uint64_t height) {
  const Bytes32 hash = devchain::tx_hash(tx);
  next_nonce_ = std::max(next_nonce_, tx.nonce + 1);
  retained_[hash] = Entry{std::move(tx), height, true};
}

std::optional<devchain::Transaction> TxLedger::due(const Bytes32& hash, std::uint64_t height) {
  auto it = retained_.find(hash);
  if (it == retained_.end() || !it->second.durable || height < it->second.next_due) return std::nullopt;
  it->second.next_due = height + kResultTxRebroadcastIntervalBlocks;
  return it->second.tx;
}

std::vector<Bytes32> TxLedger::retained_hashes() const {
  std::vector<Bytes32> out;
  for (const auto& [hash, e] : retained_) out.push_back(hash);
  return out;
}

HeartbeatSchedule::HeartbeatSchedule(std::uint64_t chain_id, const Address& runner, std::uint64_t timeout_blocks,
                                     std::uint64_t safety_margin_blocks) {
  cadence_ = timeout_blocks > safety_margin_blocks + 1 ? timeout_blocks - safety_margin_blocks : 1;
  phase_ = heartbeat_phase(chain_id, runner, cadence_);  // choice 28: the library's one formula
}

bool HeartbeatSchedule::due(std::uint64_t height, std::uint64_t last_heartbeat) const {
  if (height <= last_heartbeat) return false;
  return height % cadence_ == phase_ || height - last_heartbeat >= cadence_;
}

}  // namespace cowboy::cip11
