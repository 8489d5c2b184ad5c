// PresenceReceipt (cip11/receipt.h): the bytes a validator sends a runner and
// a runner puts in a SubmitPresenceCertificate for the chain to decode. An
// accepted input is at most kMaxReceiptBytes, names a validator and a runner
// key in their roles' schemes, and re-encodes to exactly itself.
#include <cstdint>
#include <cstring>

#include "cip11/receipt.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy::cip11;
  auto receipt = decode_receipt(cowboy::ByteView(data, size));
  if (!receipt.ok()) return 0;
  if (size > kMaxReceiptBytes) __builtin_trap();
  if (receipt->validator_pubkey.scheme() != Scheme::kEd25519 || receipt->runner_pubkey.scheme() != Scheme::kSecp256k1)
    __builtin_trap();
  const cowboy::Bytes again = encode_receipt(*receipt);
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) __builtin_trap();
  (void)verify_receipt(7, *receipt);  // any bytes: a refusal, never a crash
  return 0;
}
