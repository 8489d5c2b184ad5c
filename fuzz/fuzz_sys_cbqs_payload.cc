// What the chain decodes from every transaction: the SYS_CBQS payload, then
// applied to a small funded state (a decoded payload must never crash a handler).
#include "cbqs/chain/registry.h"
#include "roundtrip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy;
  using namespace cowboy::cbqs;
  fuzz::check_roundtrip<CbqsInstructionV2>(data, size);
  static const RegistryState genesis = [] {
    Genesis g;
    Address a{};
    a[0] = 1;
    g.balances = {{a, u128{1} << 100}};
    return *make_genesis(g);
  }();
  RegistryState state = genesis;
  Address sender{};
  sender[0] = 1;
  (void)apply_payload(state, {sender, size}, ByteView(data, size));
  return 0;
}
