// RFC 6455 framing, byte for byte: the examples of RFC 6455 §5.7 and §1.3,
// and every header the parser must refuse before allocating.
#include "net/websocket_frames.h"

#include <gtest/gtest.h>

namespace cowboy::net::ws {
namespace {

const Mask kRfcMask{0x37, 0xfa, 0x21, 0x3d};

Bytes hello() { return Bytes{'H', 'e', 'l', 'l', 'o'}; }

Bytes framed(Opcode op, const Bytes& payload, const Mask* mask) {
  Bytes out;
  append_frame(out, op, payload, mask);
  return out;
}

TEST(WebSocketFrames, TheRfc6455Section5_7ExamplesByteForByte) {
  EXPECT_EQ(framed(Opcode::kText, hello(), nullptr), (Bytes{0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f}));
  EXPECT_EQ(framed(Opcode::kText, hello(), &kRfcMask),
            (Bytes{0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}));
  EXPECT_EQ(framed(Opcode::kPing, hello(), nullptr), (Bytes{0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f}));
  EXPECT_EQ(framed(Opcode::kPong, hello(), &kRfcMask),
            (Bytes{0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}));
  // 256 bytes: a 16-bit length; 64 KiB: a 64-bit length.
  Bytes medium = framed(Opcode::kBinary, Bytes(256, 0xAB), nullptr);
  ASSERT_EQ(medium.size(), 4u + 256);
  EXPECT_EQ(Bytes(medium.begin(), medium.begin() + 4), (Bytes{0x82, 0x7E, 0x01, 0x00}));
  Bytes large = framed(Opcode::kBinary, Bytes(65536, 0xCD), nullptr);
  ASSERT_EQ(large.size(), 10u + 65536);
  EXPECT_EQ(Bytes(large.begin(), large.begin() + 10), (Bytes{0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0, 0}));
}

TEST(WebSocketFrames, ParsingGivesBackWhatWasFramed) {
  for (std::size_t size : {0, 125, 126, 65535, 65536}) {
    Bytes payload(size);
    for (std::size_t i = 0; i < size; ++i) payload[i] = static_cast<std::uint8_t>(i * 7);
    Bytes frame = framed(Opcode::kBinary, payload, &kRfcMask);
    auto parsed = parse_header(frame, 1 << 20);
    ASSERT_EQ(parsed.status, ParseStatus::kFrame) << size;
    const auto& h = parsed.header;
    EXPECT_TRUE(h.fin);
    EXPECT_EQ(h.opcode, Opcode::kBinary);
    EXPECT_TRUE(h.masked);
    EXPECT_EQ(h.mask, kRfcMask);
    EXPECT_EQ(h.payload_bytes, size);
    ASSERT_EQ(h.header_bytes + size, frame.size());
    apply_mask(frame.data() + h.header_bytes, size, h.mask);
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), frame.begin() + static_cast<std::ptrdiff_t>(h.header_bytes)));
    // Any shorter prefix of the header asks for more.
    for (std::size_t cut = 0; cut < h.header_bytes; ++cut)
      EXPECT_EQ(parse_header(ByteView(frame.data(), cut), 1 << 20).status, ParseStatus::kNeedMore) << size << "/" << cut;
  }
}

TEST(WebSocketFrames, MaskingInPiecesEqualsMaskingAtOnce) {
  Bytes whole(1000), pieces(1000);
  for (std::size_t i = 0; i < whole.size(); ++i) whole[i] = pieces[i] = static_cast<std::uint8_t>(i);
  apply_mask(whole.data(), whole.size(), kRfcMask);
  apply_mask(pieces.data(), 3, kRfcMask, 0);
  apply_mask(pieces.data() + 3, 500, kRfcMask, 3);
  apply_mask(pieces.data() + 503, 497, kRfcMask, 503);
  EXPECT_EQ(whole, pieces);
  EXPECT_EQ(whole[4], 4 ^ kRfcMask[0]);
}

TEST(WebSocketFrames, TheBoundIsCheckedFromTheHeaderAlone) {
  // A header announcing 2^40 bytes, with no payload behind it: refused as too big.
  Bytes huge{0x82, 0xFF, 0, 0, 0x01, 0, 0, 0, 0, 0, 1, 2, 3, 4};
  EXPECT_EQ(parse_header(huge, 16 << 20).status, ParseStatus::kTooBig);
  Bytes at_bound = framed(Opcode::kBinary, Bytes(1000), nullptr);
  EXPECT_EQ(parse_header(at_bound, 1000).status, ParseStatus::kFrame);
  EXPECT_EQ(parse_header(at_bound, 999).status, ParseStatus::kTooBig);
}

TEST(WebSocketFrames, MalformedHeadersAreProtocolErrors) {
  auto status = [](Bytes b) { return parse_header(b, 1 << 20).status; };
  EXPECT_EQ(status({0xC2, 0x00}), ParseStatus::kProtocolError);  // RSV1 set: no extension was negotiated
  EXPECT_EQ(status({0x83, 0x00}), ParseStatus::kProtocolError);  // opcode 3 is reserved
  EXPECT_EQ(status({0x8B, 0x00}), ParseStatus::kProtocolError);  // opcode 0xB is reserved
  EXPECT_EQ(status({0x09, 0x00}), ParseStatus::kProtocolError);  // a fragmented ping
  EXPECT_EQ(status({0x89, 0x7E, 0x00, 0x7E}), ParseStatus::kProtocolError);  // a ping of 126 bytes
  EXPECT_EQ(status({0x82, 0x7E, 0x00, 0x64}), ParseStatus::kProtocolError);  // 100 in the 16-bit form
  EXPECT_EQ(status({0x82, 0x7F, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF}), ParseStatus::kProtocolError);  // 65535 in the 64-bit form
  EXPECT_EQ(status({0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0}), ParseStatus::kProtocolError);  // the top bit set
  EXPECT_EQ(status({0x02, 0x01}), ParseStatus::kFrame);  // a first fragment is fine
}

TEST(WebSocketFrames, TheAcceptKeyOfRfc6455Section1_3) {
  EXPECT_EQ(accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(WebSocketFrames, TheClientKeyOfRfc6455Section1_3IsItsNonceInBase64) {
  std::array<std::uint8_t, 16> nonce;
  std::string_view text = "the sample nonce";
  std::copy(text.begin(), text.end(), nonce.begin());
  EXPECT_EQ(client_key(nonce), "dGhlIHNhbXBsZSBub25jZQ==");
}

}  // namespace
}  // namespace cowboy::net::ws
