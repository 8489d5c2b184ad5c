// The CIP-11 frame decoder (cip11/frames.h): what a runner or validator parses
// from its peer. A decoded frame re-encodes to exactly the bytes it took, and
// no frame takes more than MAX_FRAME_BYTES + 4.
#include <cstdint>

#include "cip11/frames.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cowboy::ByteView input(data, size);
  while (!input.empty()) {
    auto decoded = cowboy::cip11::decode_frame(input);
    if (!decoded.ok()) break;
    if (decoded->consumed > cowboy::cip11::kMaxFrameBytes + 4) __builtin_trap();
    const cowboy::Bytes again = cowboy::cip11::encode_frame(decoded->frame);
    if (again.size() != decoded->consumed || !std::equal(again.begin(), again.end(), input.begin()))
      __builtin_trap();
    input = input.subspan(decoded->consumed);
  }
  return 0;
}
