// What the devchain decodes from every POST /v1/tx: a DevchainTxV1. Any accepted
// input must be canonical, and sender recovery must never crash.
#include <cstdlib>
#include <cstring>

#include "devchain/tx.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy;
  auto tx = devchain::decode_tx(ByteView(data, size));
  if (!tx) return 0;
  Bytes again = devchain::encode_tx(*tx);
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  (void)devchain::recover_sender(*tx);
  return 0;
}
