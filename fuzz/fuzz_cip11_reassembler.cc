// The §12.1 reassembler (cip11/reassembler.h): a stream cut into pieces of
// sizes chosen by the first input byte yields exactly the frames, in order,
// that decode_frame finds in the whole stream, and stops where it stops; a
// stream that ends there is truncated exactly when bytes are left over.
#include <cstdint>

#include "cip11/reassembler.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t step = 1 + data[0] % 97;
  cowboy::ByteView stream(data + 1, size - 1);

  cowboy::net::ReadBudget budget(cowboy::cip11::kMaxFrameBytes);
  cowboy::cip11::FrameReassembler r(&budget);
  bool refused = false;
  for (std::size_t at = 0; at < stream.size() && !refused; at += step)
    refused = !r.push(stream.subspan(at, std::min(step, stream.size() - at))).ok();

  cowboy::ByteView whole = stream;
  while (!whole.empty()) {
    auto decoded = cowboy::cip11::decode_frame(whole);
    if (!decoded.ok()) break;
    auto got = r.next();
    if (!got || !(*got == decoded->frame)) __builtin_trap();
    whole = whole.subspan(decoded->consumed);
  }
  if (r.next()) __builtin_trap();  // no frame that the whole-stream decoder did not find
  if (!refused && r.end().ok() != whole.empty()) __builtin_trap();
  if (budget.in_use() != r.buffered()) __builtin_trap();
  return 0;
}
