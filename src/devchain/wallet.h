// Sending transactions as one key: fetch the next nonce, sign, submit, and
// wait for the receipt. Shared by the CLI, `cbqsd --dev` and the tests.
#pragma once

#include <chrono>

#include "devchain/api.h"

namespace cowboy::devchain {

class Wallet {
 public:
  Wallet(ChainApi& chain, const crypto::Secp256k1Secret& secret);
  const Address& address() const { return address_; }

  /// Signs `body` with the next nonce and submits it; returns the tx hash.
  ApiResult<Bytes32> send(TxBody body);
  /// send() then wait for the receipt (polling, bounded by `timeout`).
  ApiResult<TxReceipt> send_and_wait(TxBody body, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ApiResult<TxReceipt> send_instruction(const cbqs::CbqsInstructionV2& instruction,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(30));

 private:
  ChainApi& chain_;
  crypto::Secp256k1Secret secret_;
  Address address_;
  std::optional<Bytes32> chain_id_;
  std::optional<std::uint64_t> next_nonce_;  // cached after the first send
};

/// Polls for a receipt until `timeout`; kUnavailable when it never comes.
ApiResult<TxReceipt> wait_for_receipt(ChainApi& chain, const Bytes32& tx_hash, std::chrono::milliseconds timeout);

}  // namespace cowboy::devchain
