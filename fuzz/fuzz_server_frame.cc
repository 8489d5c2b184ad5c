// What the SDK decodes from every broker: CbqsServerFrameV2.
#include "roundtrip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cowboy::cbqs::fuzz::check_roundtrip<cowboy::cbqs::CbqsServerFrameV2>(data, size);
  return 0;
}
