#include "cip11/runner/ledger.h"

namespace cowboy::cip11 {

chain::SignedTx TxLedger::sign(Bytes payload, Height height) {
  chain::SignedTx out = format_.sign(secret_, next_nonce_++, std::move(payload));  // the secret was checked at start
  retained_[out.hash] = Entry{out.bytes, out.nonce, height + kResultTxInclusionGraceBlocks, false};
  return out;
}

void TxLedger::durable(const Bytes32& hash) {
  if (auto it = retained_.find(hash); it != retained_.end()) it->second.durable = true;
}

void TxLedger::restore(const chain::SignedTx& tx, Height height) {
  next_nonce_ = std::max(next_nonce_, tx.nonce + 1);
  retained_[tx.hash] = Entry{tx.bytes, tx.nonce, height, true};
}

std::vector<Bytes32> TxLedger::superseded(std::uint64_t chain_next, const std::vector<Bytes32>& unincluded) {
  next_nonce_ = std::max(next_nonce_, chain_next);
  std::vector<Bytes32> out;
  for (const Bytes32& hash : unincluded)
    if (auto it = retained_.find(hash); it != retained_.end() && it->second.nonce < chain_next) {
      out.push_back(hash);
      retained_.erase(it);
    }
  return out;
}

std::optional<Bytes> TxLedger::due(const Bytes32& hash, Height height) {
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

}  // namespace cowboy::cip11
