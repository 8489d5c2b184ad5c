// The payload route's path (docs/transit.md, decision 88): any request target
// either names exactly one payload id, spelled one way - so writing the id
// back gives the input byte for byte, and the id is a valid one - or nothing.
// (The route's X-Transit-Query header is a SignedQuery: fuzz_transit_envelope's.)
#include <cstdlib>

#include "transit/contract/payloads.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy::transit;
  const std::string_view target(reinterpret_cast<const char*>(data), size);
  const auto id = payload_of_target(target);
  if (!id) return 0;
  if (*id == 0 || *id > kMaxSafeInteger) std::abort();
  if (payload_target(*id) != target) std::abort();
  return 0;
}
