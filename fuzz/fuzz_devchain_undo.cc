// The devchain's stored undo records (what Node::rollback_to decodes from
// undo/<height>, fork.h): arbitrary bytes are refused or decode to a record
// whose encoding is exactly those bytes.
#include <cstdlib>
#include <cstring>

#include "devchain/fork.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy;
  auto record = devchain::decode_undo(ByteView(data, size));
  if (!record) return 0;
  Bytes again = devchain::encode_undo(*record);
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  return 0;
}
