// What cbqsd and the SDK parse from every peer before a CBQS frame exists:
// RFC 6455 frame headers (net/websocket_frames.h). Frames are taken one after
// another as WssChannel takes them; each whole frame, unmasked and framed
// again, must parse to the same header.
#include <cstdint>
#include <vector>

#include "net/websocket_frames.h"

using namespace cowboy::net::ws;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> buffer(data, data + size);
  constexpr std::uint64_t kBound = 1 << 16;
  std::size_t at = 0;
  while (at < buffer.size()) {
    auto parsed = parse_header(cowboy::ByteView(buffer.data() + at, buffer.size() - at), kBound);
    if (parsed.status != ParseStatus::kFrame) break;
    const FrameHeader& h = parsed.header;
    if (h.payload_bytes > kBound) __builtin_trap();  // the bound holds before any allocation
    std::size_t whole = h.header_bytes + static_cast<std::size_t>(h.payload_bytes);
    if (buffer.size() - at < whole) break;
    std::uint8_t* payload = buffer.data() + at + h.header_bytes;
    if (h.masked) apply_mask(payload, h.payload_bytes, h.mask);
    std::vector<std::uint8_t> again;
    append_frame(again, h.opcode, cowboy::ByteView(payload, h.payload_bytes), h.masked ? &h.mask : nullptr);
    auto reparsed = parse_header(again, kBound);
    if (reparsed.status != ParseStatus::kFrame || reparsed.header.opcode != h.opcode ||
        reparsed.header.payload_bytes != h.payload_bytes || again.size() != reparsed.header.header_bytes + h.payload_bytes)
      __builtin_trap();
    at += whole;
  }
  return 0;
}
