// PresenceInputV1 (cip11/presence.h): the committed block bytes every node
// decodes. The first two input bytes choose |registry(H-1)|; a decoded set
// re-encodes in the same kind to exactly the input, and holds only indices
// below the registry size.
#include <cstdint>

#include "cip11/presence.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint32_t registry = (std::uint32_t{data[0]} << 8) | data[1];
  cowboy::ByteView input(data + 2, size - 2);
  auto set = cowboy::cip11::decode_presence(input, registry);
  if (!set.ok()) return 0;
  for (std::uint32_t i : set->indices())
    if (i >= registry) __builtin_trap();
  const auto kind = static_cast<cowboy::cip11::PresenceKind>(input[1]);
  const cowboy::Bytes again = cowboy::cip11::encode_presence(*set, kind);
  if (again.size() != input.size() || !std::equal(again.begin(), again.end(), input.begin())) __builtin_trap();
  return 0;
}
