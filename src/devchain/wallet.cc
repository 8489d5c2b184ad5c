#include "devchain/wallet.h"

#include <thread>

#include "cbqs/wire/codec.h"

namespace cowboy::devchain {

Wallet::Wallet(ChainApi& chain, const crypto::Secp256k1Secret& secret)
    : chain_(chain), secret_(secret), address_(crypto::secp256k1_address(secret).value_or(Address{})) {}

ApiResult<Bytes32> Wallet::send(TxBody body) {
  if (!chain_id_) {
    auto id = chain_.chain_instance_id();
    if (!id) return Err{id.error()};
    chain_id_ = *id;
  }
  if (!next_nonce_) {
    auto info = chain_.account_info(address_);
    if (!info) return Err{info.error()};
    next_nonce_ = info->next_nonce;
  }
  Transaction tx{*chain_id_, *next_nonce_, std::move(body), {}};
  if (!sign_tx(tx, secret_)) return Err{ApiError{ApiErrorCode::kBadSignature, "invalid secret key"}};
  auto hash = chain_.submit(tx);
  if (!hash) {
    next_nonce_.reset();  // re-read it next time: another client may have used it
    return hash;
  }
  ++*next_nonce_;
  return hash;
}

ApiResult<TxReceipt> Wallet::send_and_wait(TxBody body, std::chrono::milliseconds timeout) {
  auto hash = send(std::move(body));
  if (!hash) return Err{hash.error()};
  return wait_for_receipt(chain_, *hash, timeout);
}

ApiResult<TxReceipt> Wallet::send_instruction(const cbqs::CbqsInstructionV2& instruction,
                                              std::chrono::milliseconds timeout) {
  return send_and_wait(CbqsCall{cbqs::encode(instruction)}, timeout);
}

ApiResult<TxReceipt> wait_for_receipt(ChainApi& chain, const Bytes32& tx_hash, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(5);
  for (;;) {
    auto r = chain.receipt(tx_hash);
    if (!r) return Err{r.error()};
    if (*r) return std::move(**r);
    if (std::chrono::steady_clock::now() >= deadline)
      return Err{ApiError{ApiErrorCode::kUnavailable, "no receipt before the deadline"}};
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

}  // namespace cowboy::devchain
