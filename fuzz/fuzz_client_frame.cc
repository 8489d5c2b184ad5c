// What cbqsd decodes from every client: CbqsClientFrameV2.
#include "roundtrip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cowboy::cbqs::fuzz::check_roundtrip<cowboy::cbqs::CbqsClientFrameV2>(data, size);
  return 0;
}
