// RFC 6455 framing, for a binary-message protocol that moves many small
// messages per TLS record. One header parser bounds every length before
// anything is allocated; one writer frames a message into an output buffer.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-------+-+-------------+-------------------------------+
//  |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
//  |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
//  |N|V|V|V|       |S|             |   (if payload len==126/127)   |
//  | |1|2|3|       |K|             |                               |
//  +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
//  |     Extended payload length continued, if payload len == 127  |
//  + - - - - - - - - - - - - - - - +-------------------------------+
//  |                               | Masking-key, if MASK set to 1 |
//  +-------------------------------+-------------------------------+
//  | Masking-key (continued)       |          Payload Data         |
//  +-------------------------------- - - - - - - - - - - - - - - - +
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"

namespace cowboy::net::ws {

enum class Opcode : std::uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xA,
};

// The close codes this layer sends (RFC 6455 §7.4.1).
/// Close, ping and pong: whole frames of at most 125 bytes (RFC 6455 §5.5).
inline bool is_control(Opcode op) { return static_cast<std::uint8_t>(op) >= 0x8; }

enum class CloseCode : std::uint16_t {
  kNormal = 1000,
  kGoingAway = 1001,
  kProtocolError = 1002,
  kUnsupportedData = 1003,
  kPolicy = 1008,        // e.g. no session within the deadline
  kTooBig = 1009,
  kTryAgainLater = 1013,  // the process's read budget cannot hold the message now
};

using Mask = std::array<std::uint8_t, 4>;

struct FrameHeader {
  bool fin = false;
  Opcode opcode = Opcode::kBinary;
  bool masked = false;
  Mask mask{};
  std::uint64_t payload_bytes = 0;
  std::size_t header_bytes = 0;
};

enum class ParseStatus {
  kFrame,          // a whole header: `header` is set
  kNeedMore,       // the buffer ends inside the header
  kProtocolError,  // reserved bits, an unknown opcode, a bad control frame, a non-minimal length
  kTooBig,         // the payload exceeds the caller's bound
};

struct Parsed {
  ParseStatus status = ParseStatus::kNeedMore;
  FrameHeader header;
};

/// Parses the header at the start of `buffer`. No extension is ever
/// negotiated, so any reserved bit is a protocol error.
Parsed parse_header(ByteView buffer, std::uint64_t max_payload_bytes);

/// XORs `data` with `mask`, starting at `offset` bytes into the payload.
void apply_mask(std::uint8_t* data, std::size_t size, const Mask& mask, std::size_t offset = 0);

/// Appends one final (FIN) frame carrying `payload` to `out`; masked with
/// `*mask` when given (the client role), unmasked otherwise (the server role).
void append_frame(std::vector<std::uint8_t>& out, Opcode opcode, ByteView payload, const Mask* mask);

/// Sec-WebSocket-Key: the client's 16-byte nonce in base64 (RFC 6455 §4.1).
std::string client_key(const std::array<std::uint8_t, 16>& nonce);
/// Sec-WebSocket-Accept for a client's Sec-WebSocket-Key (RFC 6455 §4.2.2).
std::string accept_key(std::string_view client_key);

}  // namespace cowboy::net::ws
