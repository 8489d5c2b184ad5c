// The devchain's stored CIP-39 registry (what Node::open decodes from the
// `registry` key): arbitrary bytes are refused or decode to a registry whose
// encoding is exactly those bytes.
#include <cstdlib>
#include <cstring>

#include "devchain/state_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy;
  auto registry = devchain::decode_registry(ByteView(data, size));
  if (!registry) return 0;
  Bytes again = devchain::encode_registry(*registry);
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  return 0;
}
