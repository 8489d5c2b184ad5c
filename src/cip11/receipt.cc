#include "cip11/receipt.h"

#include "cip11/preimages.h"

namespace cowboy::cip11 {

// The receipt's one field list is the frame body's (frames.cc).
Bytes encode_receipt(const PresenceReceipt& receipt) { return encode_body(receipt); }

Res<PresenceReceipt> decode_receipt(ByteView bytes) {
  if (bytes.size() > kMaxReceiptBytes) return Err{Errc::kReceiptTooLarge};
  auto frame = decode_body(FrameType::kPresenceReceipt, bytes);  // strict, and the keys' roles checked
  if (!frame) return Err{frame.error()};
  return std::get<PresenceReceipt>(std::move(*frame));
}

PresenceReceipt sign_receipt(const Signer& validator, std::uint64_t chain_id, PresenceReceipt receipt) {
  const Bytes sig = validator.sign(presence_receipt_preimage(chain_id, receipt));
  std::copy(sig.begin(), sig.end(), receipt.validator_signed.begin());
  return receipt;
}

Res<Unit> verify_receipt(std::uint64_t chain_id, const PresenceReceipt& receipt) {
  return verify(presence_receipt_preimage(chain_id, receipt), receipt.validator_pubkey, receipt.validator_signed);
}

}  // namespace cowboy::cip11
