// §12.1 frames out of a byte stream that arrives in pieces (a QUIC stream):
// a frame split at any byte boundary comes out whole, once. The 4-byte length
// prefix is judged as soon as it is complete (0 or above MAX_FRAME_BYTES is
// refused before a payload byte is kept); the payload is kept as it arrives,
// never for what the prefix declares, and those bytes are taken from a
// process-wide net::ReadBudget shared by every stream, so that thousands of
// connections cannot pin unbounded memory with half-sent frames.
//
// The first refusal is final for the stream (the caller answers Goodbye
// ProtocolError, §12.5); frames decoded before it stay available. A stream
// that ends (FIN) inside a frame, even inside its prefix, is a truncated
// frame (§12.1): end() says so.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "cip11/frames.h"
#include "net/read_budget.h"

namespace cowboy::cip11 {

class FrameReassembler {
 public:
  explicit FrameReassembler(net::ReadBudget* budget = nullptr) : budget_(budget) {}
  ~FrameReassembler();
  FrameReassembler(const FrameReassembler&) = delete;
  FrameReassembler& operator=(const FrameReassembler&) = delete;

  /// Takes the next bytes of the stream. The error, once there is one, is
  /// returned again for every later push.
  Res<Unit> push(ByteView bytes);
  /// The peer ended the stream: kFrameTruncated if a frame was begun and not
  /// finished. Like push(), the first refusal is final.
  Res<Unit> end();
  /// The next whole frame, in stream order; nullopt when none is ready.
  std::optional<Frame> next();
  /// Payload bytes of the frame in progress (all taken from the budget).
  std::size_t buffered() const { return payload_.size(); }
  /// A tighter bound than MAX_FRAME_BYTES for the lengths declared from now
  /// on (kFrameTooLarge from the prefix alone); the channel's, before admission.
  void set_max_frame_bytes(std::uint32_t max) { max_length_ = std::min(max, kMaxFrameBytes); }

 private:
  Res<Unit> refuse(Errc e);
  void release();

  net::ReadBudget* budget_;
  std::uint8_t prefix_[4]{};
  std::size_t prefix_have_ = 0;
  std::uint32_t length_ = 0;  // of type byte + body, once the prefix is whole
  std::uint32_t max_length_ = kMaxFrameBytes;
  Bytes payload_;             // the type byte and body received so far
  std::vector<Frame> ready_;  // rarely more than one: a vector costs nothing while empty
  std::optional<Errc> error_;
};

}  // namespace cowboy::cip11
