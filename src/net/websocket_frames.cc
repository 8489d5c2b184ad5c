#include "net/websocket_frames.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cstring>

namespace cowboy::net::ws {

namespace {


bool known(std::uint8_t op) { return op <= 0x2 || (op >= 0x8 && op <= 0xA); }

std::uint64_t read_be(const std::uint8_t* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

std::string base64(const unsigned char* data, std::size_t size) {
  std::string out(4 * ((size + 2) / 3) + 1, '\0');  // EVP_EncodeBlock adds a NUL
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace

Parsed parse_header(ByteView b, std::uint64_t max_payload_bytes) {
  Parsed out;
  if (b.size() < 2) return out;
  FrameHeader& h = out.header;
  h.fin = (b[0] & 0x80) != 0;
  std::uint8_t op = b[0] & 0x0F;
  h.masked = (b[1] & 0x80) != 0;
  std::uint8_t len7 = b[1] & 0x7F;
  if ((b[0] & 0x70) != 0 || !known(op)) return {ParseStatus::kProtocolError, h};
  h.opcode = static_cast<Opcode>(op);
  // Control frames are whole and short (RFC 6455 §5.5).
  if (is_control(h.opcode) && (!h.fin || len7 > 125)) return {ParseStatus::kProtocolError, h};
  std::size_t extended = len7 == 126 ? 2 : len7 == 127 ? 8 : 0;
  h.header_bytes = 2 + extended + (h.masked ? 4 : 0);
  if (b.size() < h.header_bytes) return out;
  h.payload_bytes = extended ? read_be(b.data() + 2, static_cast<int>(extended)) : len7;
  // The minimal encoding is required, and the top bit of a 64-bit length is 0.
  if ((extended == 2 && h.payload_bytes < 126) || (extended == 8 && h.payload_bytes <= 0xFFFF) ||
      (h.payload_bytes >> 63) != 0)
    return {ParseStatus::kProtocolError, h};
  if (h.payload_bytes > max_payload_bytes) return {ParseStatus::kTooBig, h};
  if (h.masked) std::memcpy(h.mask.data(), b.data() + 2 + extended, 4);
  out.status = ParseStatus::kFrame;
  return out;
}

void apply_mask(std::uint8_t* data, std::size_t size, const Mask& mask, std::size_t offset) {
  std::uint8_t rotated[8];
  for (int i = 0; i < 8; ++i) rotated[i] = mask[(offset + i) % 4];
  std::uint64_t word_mask;
  std::memcpy(&word_mask, rotated, 8);
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, data + i, 8);
    w ^= word_mask;
    std::memcpy(data + i, &w, 8);
  }
  for (; i < size; ++i) data[i] ^= rotated[i % 8];
}

void append_frame(std::vector<std::uint8_t>& out, Opcode opcode, ByteView payload, const Mask* mask) {
  std::uint8_t header[14];
  std::size_t n = 0;
  header[n++] = static_cast<std::uint8_t>(0x80 | static_cast<std::uint8_t>(opcode));
  std::uint8_t mask_bit = mask ? 0x80 : 0;
  std::uint64_t size = payload.size();
  if (size < 126) {
    header[n++] = static_cast<std::uint8_t>(mask_bit | size);
  } else if (size <= 0xFFFF) {
    header[n++] = mask_bit | 126;
    header[n++] = static_cast<std::uint8_t>(size >> 8);
    header[n++] = static_cast<std::uint8_t>(size);
  } else {
    header[n++] = mask_bit | 127;
    for (int shift = 56; shift >= 0; shift -= 8) header[n++] = static_cast<std::uint8_t>(size >> shift);
  }
  if (mask) {
    std::memcpy(header + n, mask->data(), 4);
    n += 4;
  }
  std::size_t at = out.size();
  out.resize(at + n + payload.size());
  std::memcpy(out.data() + at, header, n);
  if (!payload.empty()) std::memcpy(out.data() + at + n, payload.data(), payload.size());
  if (mask) apply_mask(out.data() + at + n, payload.size(), *mask);
}

std::string accept_key(std::string_view client_key) {
  static constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  std::string joined(client_key);
  joined.append(kGuid);
  unsigned char digest[SHA_DIGEST_LENGTH];
  unsigned int digest_bytes = 0;
  EVP_Digest(joined.data(), joined.size(), digest, &digest_bytes, EVP_sha1(), nullptr);
  return base64(digest, SHA_DIGEST_LENGTH);
}

std::string client_key(const std::array<std::uint8_t, 16>& nonce) { return base64(nonce.data(), nonce.size()); }

}  // namespace cowboy::net::ws
