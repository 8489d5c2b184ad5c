// The CIP-11 deterministic CBOR decoder (cip11/cbor.h) on arbitrary bytes.
// The profile admits one encoding per value, so whatever decodes must
// re-encode to exactly the input.
#include <cstdint>

#include "cip11/cbor.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cowboy::ByteView input(data, size);
  auto value = cowboy::cip11::cbor::decode(input);
  if (!value.ok()) return 0;
  const cowboy::Bytes again = cowboy::cip11::cbor::encode(*value);
  if (again.size() != size || !std::equal(again.begin(), again.end(), data)) __builtin_trap();
  return 0;
}
