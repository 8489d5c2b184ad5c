// Transit blocks (docs/transit.md, decisions 100-109): a block's record as
// the node reads it back from its own store (node::decode_block_record).
// Whatever decodes is canonical: its spelling is the input, byte for byte.
#include <cstdlib>

#include "transit/contract/codec.h"
#include "transit/node/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy::transit;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto record = node::decode_block_record(text);
  if (record && to_json(*record) != text) std::abort();
  return 0;
}
