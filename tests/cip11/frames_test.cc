// §12.1-§12.2 frames: byte-pinned fixtures (tests/fixtures/cip11/<name>.hex),
// hand-assembled frames, the envelope's refusals and each body rule.
// Regenerate the fixtures deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/cip11_tests --gtest_filter='Cip11Frames.*'
#include <gtest/gtest.h>

#include <cstdlib>

#include "../support/hex_fixture.h"
#include "samples.h"

namespace cowboy::cip11 {
namespace {

using testing::filled;

std::string fixture_path(const std::string& name) { return std::string(COWBOY_FIXTURE_DIR) + "/cip11/" + name + ".hex"; }

Bytes frame_with_body(std::uint8_t type, const Bytes& body) {
  const auto length = static_cast<std::uint32_t>(1 + body.size());
  Bytes out;
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(length >> shift));
  out.push_back(type);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

Errc decode_error(const Bytes& frame) {
  auto d = decode_frame(frame);
  return d.ok() ? Errc{} : d.error();
}

TEST(Cip11Frames, EveryFrameMatchesItsFixtureByteForByte) {
  const bool write = std::getenv("COWBOY_WRITE_FIXTURES") != nullptr;
  for (const auto& s : testing::frame_samples()) {
    const Bytes encoded = encode_frame(s.frame);
    const std::string path = fixture_path(s.name);
    if (write)
      cowboy::testing::write_hex_fixture(path, s.name + ": " + std::to_string(encoded.size()) +
                                                   " bytes, CIP-11 frame (length | type | deterministic CBOR body)",
                                         encoded);
    auto expected = cowboy::testing::read_hex_fixture(path);
    ASSERT_TRUE(expected) << "missing fixture " << path;
    EXPECT_EQ(to_hex(encoded), to_hex(*expected)) << s.name;
    auto decoded = decode_frame(*expected);
    ASSERT_TRUE(decoded.ok()) << s.name << ": " << to_string(decoded.error());
    EXPECT_EQ(decoded->consumed, expected->size());
    EXPECT_TRUE(decoded->frame == s.frame) << s.name;
    EXPECT_EQ(type_of(decoded->frame), type_of(s.frame));
  }
}

// Built by hand from the §12.1 layout and RFC 8949, not by the encoder.
TEST(Cip11Frames, HandAssembledUnsignedGoodbye) {
  // {0: WrongChain(1), 1: "x", 2: null, 3: null}
  const Bytes expected{0x00, 0x00, 0x00, 0x0b, 0xf0, 0xa4, 0x00, 0x01, 0x01, 0x61, 'x', 0x02, 0xf6, 0x03, 0xf6};
  EXPECT_EQ(encode_frame(Goodbye{GoodbyeReason::kWrongChain, std::string("x"), std::nullopt, std::nullopt}), expected);
}

// §12.6 canonical_frame_body: the body map with `signed` left out. It is
// the last field, so the other keys keep their numbers (0..n-2) and only the
// map's count drops; nothing is renumbered and nothing stands in for it.
TEST(Cip11Frames, HandAssembledCanonicalFrameBodyLeavesOutSignedAndKeepsTheKeys) {
  // BackpressureSignal{block_height 1, active_jobs 4, max_concurrent 4, accepting_new false, reason "full"}
  const Bytes backpressure{0xa5, 0x00, 0x01, 0x01, 0x04, 0x02, 0x04, 0x03, 0xf4, 0x04, 0x64, 'f', 'u', 'l', 'l'};
  RunnerSig any{};
  any.fill(0x77);
  EXPECT_EQ(canonical_frame_body(BackpressureSignal{Height{1}, 4, 4, false, std::string("full"), any}), backpressure);
  // CapabilityDelta{block_height 2, added ["gpu"], removed [], added_entitlements [], removed_entitlements []}
  const Bytes delta{0xa5, 0x00, 0x02, 0x01, 0x81, 0x63, 'g', 'p', 'u', 0x02, 0x80, 0x03, 0x80, 0x04, 0x80};
  EXPECT_EQ(canonical_frame_body(CapabilityDelta{Height{2}, {"gpu"}, {}, {}, {}, any}), delta);
}

TEST(Cip11Frames, HandAssembledJobProgressAndRejectStatus) {
  // {0: h'c0..df', 1: 100, 2: null}
  Bytes body{0xa3, 0x00, 0x58, 0x20};
  for (auto b : filled(0xc0)) body.push_back(b);
  body.insert(body.end(), {0x01, 0x18, 0x64, 0x02, 0xf6});
  EXPECT_EQ(encode_frame(JobProgress{JobId{filled(0xc0)}, 100, std::nullopt}), frame_with_body(0x22, body));

  // AckStatus::Reject(UnverifiableAssignment) is the array [2, 3]; Accepted is the integer 0.
  const Bytes reject = encode_body(testing::job_ack(AckStatus::reject(RejectReason::kUnverifiableAssignment), {}));
  const Bytes accepted = encode_body(testing::job_ack(AckStatus::accepted(), {}));
  EXPECT_NE(to_hex(reject).find("02820203" "03f6"), std::string::npos);  // key 2, [2, 3], key 3, null
  EXPECT_NE(to_hex(accepted).find("0200" "03f6"), std::string::npos);
}

TEST(Cip11Frames, OptionalStringsAreNullOrText) {
  const Bytes with_reason = encode_body(testing::backpressure_signal());
  EXPECT_NE(to_hex(with_reason).find("046b" + to_hex(as_bytes("at capacity"))), std::string::npos);
  BackpressureSignal none = testing::backpressure_signal();
  none.reason.reset();
  EXPECT_NE(to_hex(encode_body(none)).find("04f6"), std::string::npos);
  BackpressureSignal empty = testing::backpressure_signal();
  empty.reason = "";
  EXPECT_NE(to_hex(encode_body(empty)).find("0460"), std::string::npos);  // "" is not null
  EXPECT_FALSE(Frame{none} == Frame{empty});
}

TEST(Cip11Frames, ConsecutiveFramesInOneStream) {
  Bytes stream = encode_frame(testing::heartbeat_ping());
  const Bytes second = encode_frame(testing::goodbye_signed());
  stream.insert(stream.end(), second.begin(), second.end());
  auto first = decode_frame(stream);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(std::holds_alternative<HeartbeatPing>(first->frame));
  auto next = decode_frame(ByteView(stream).subspan(first->consumed));
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(std::holds_alternative<Goodbye>(next->frame));
  EXPECT_EQ(first->consumed + next->consumed, stream.size());
}

TEST(Cip11Frames, EnvelopeRefusals) {
  EXPECT_EQ(decode_error({0x00, 0x00, 0x00}), Errc::kFrameTruncated);
  EXPECT_EQ(decode_error({0x00, 0x00, 0x00, 0x00}), Errc::kFrameEmpty);
  // One byte above MAX_FRAME_BYTES is refused from the 4-byte prefix alone, before any payload arrives.
  EXPECT_EQ(decode_error({0x00, 0x20, 0x00, 0x01, 0x01}), Errc::kFrameTooLarge);
  EXPECT_EQ(decode_error({0xff, 0xff, 0xff, 0xff}), Errc::kFrameTooLarge);
  // Exactly MAX_FRAME_BYTES is allowed by the envelope: with too few bytes it is merely truncated.
  EXPECT_EQ(decode_error({0x00, 0x20, 0x00, 0x00, 0x01}), Errc::kFrameTruncated);
  Bytes whole = encode_frame(testing::heartbeat_ping());
  whole.pop_back();
  EXPECT_EQ(decode_error(whole), Errc::kFrameTruncated);
  for (std::uint8_t type : {0x00, 0x03, 0x15, 0x26, 0xef, 0xff})  // 0x14 is PresenceReceipt (choice 73)
    EXPECT_EQ(decode_error(frame_with_body(type, {0xa0})), Errc::kUnknownFrameType) << int(type);
}

TEST(Cip11Frames, MaxSizeJobResultRoundTrips) {
  JobResult big{JobId{filled(0xc0)}, Bytes(kMaxFrameBytes - 64, 0x5a)};
  const Bytes frame = encode_frame(big);
  ASSERT_LE(frame.size() - 4, kMaxFrameBytes);
  auto decoded = decode_frame(frame);
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded->frame == Frame{big});
}

struct BodyCase {
  const char* what;
  std::uint8_t type;
  Bytes body;
  Errc error;
};

Bytes cbor_hex(std::string_view h) { return *from_hex(h); }
std::string bstr32(std::uint8_t first) { return "5820" + to_hex(filled(first)); }

TEST(Cip11Frames, BodyRulesRefuseWithTypedErrors) {
  const std::string runner_key = "5822" + to_hex(testing::party().runner.pubkey().wire());
  const std::string validator_key = "5821" + to_hex(testing::party().validator.pubkey().wire());
  const std::string sig65 = "5841" + std::string(130, '1');
  const std::string sig64 = "5840" + std::string(128, '1');
  const std::string hello_head = "a8" "00190100" "0107" "02" + bstr32(0x40) + "0300";
  const BodyCase cases[] = {
      {"extra key", 0x22, cbor_hex("a4" "00" + bstr32(0xc0) + "0101" "02f6" "03f6"), Errc::kWrongFieldCount},
      {"missing key", 0x22, cbor_hex("a2" "00" + bstr32(0xc0) + "0101"), Errc::kWrongFieldCount},
      {"keys out of order", 0x22, cbor_hex("a3" "01" + bstr32(0xc0) + "0001" "02f6"), Errc::kWrongKey},
      {"text keys", 0x22, cbor_hex("a3" "6161" + bstr32(0xc0) + "616201" "6163f6"), Errc::kUnexpectedType},
      {"not a map", 0x22, cbor_hex("83010203"), Errc::kUnexpectedType},
      {"fraction above 100", 0x22, cbor_hex("a3" "00" + bstr32(0xc0) + "011865" "02f6"), Errc::kOutOfRange},
      {"fraction beyond u8", 0x22, cbor_hex("a3" "00" + bstr32(0xc0) + "01190100" "02f6"), Errc::kOutOfRange},
      {"31-byte job_id", 0x22, cbor_hex("a3" "00" "581f" + to_hex(filled(0xc0)).substr(0, 62) + "0101" "02f6"),
       Errc::kWrongLength},
      {"job_id as text", 0x22, cbor_hex("a3" "00" "6161" "0101" "02f6"), Errc::kUnexpectedType},
      {"non-shortest key", 0x22, cbor_hex("a3" "1800" + bstr32(0xc0) + "0101" "02f6"), Errc::kNonShortestInteger},
      {"trailing bytes", 0x22, cbor_hex("a3" "00" + bstr32(0xc0) + "0101" "02f6" "00"), Errc::kTrailingBytes},
      {"invalid UTF-8 detail", 0x22, cbor_hex("a3" "00" + bstr32(0xc0) + "0101" "0261ff"), Errc::kInvalidUtf8},
      {"u32 beyond range", 0x12, cbor_hex("a6" "0001" "011b0000000100000000" "0201" "03f4" "04f6" "05" + sig65),
       Errc::kOutOfRange},
      {"bool as integer", 0x12, cbor_hex("a6" "0001" "0101" "0201" "0300" "04f6" "05" + sig65), Errc::kUnexpectedType},
      {"64-byte runner signature", 0x12, cbor_hex("a6" "0001" "0101" "0201" "03f4" "04f6" "05" + sig64),
       Errc::kWrongLength},
      {"unknown goodbye reason", 0xf0, cbor_hex("a4" "0009" "01f6" "02f6" "03f6"), Errc::kUnknownVariant},
      {"unknown cancel reason", 0x24, cbor_hex("a4" "00" + bstr32(0xc0) + "01" + bstr32(0xe0) + "0203" "03" + sig64),
       Errc::kUnknownVariant},
      {"goodbye signature of 63 bytes", 0xf0, cbor_hex("a4" "0008" "01f6" "02f6" "03" "583f" + std::string(126, '1')),
       Errc::kBadSignatureLength},
      {"bare Reject without reason", 0x21,
       cbor_hex("a5" "00" + bstr32(0xc0) + "01" + bstr32(0xe0) + "0202" "03f6" "04" + sig65), Errc::kUnknownVariant},
      {"Accepted with a payload", 0x21,
       cbor_hex("a5" "00" + bstr32(0xc0) + "01" + bstr32(0xe0) + "02820003" "03f6" "04" + sig65), Errc::kUnknownVariant},
      {"unknown reject reason", 0x21,
       cbor_hex("a5" "00" + bstr32(0xc0) + "01" + bstr32(0xe0) + "02820205" "03f6" "04" + sig65), Errc::kUnknownVariant},
      {"unknown ack status", 0x21, cbor_hex("a5" "00" + bstr32(0xc0) + "01" + bstr32(0xe0) + "0203" "03f6" "04" + sig65),
       Errc::kUnknownVariant},
      {"Reject array of three", 0x21,
       cbor_hex("a5" "00" + bstr32(0xc0) + "01" + bstr32(0xe0) + "0283020300" "03f6" "04" + sig65),
       Errc::kWrongFieldCount},
      {"unknown role", 0x01, cbor_hex(hello_head + "04" + runner_key + "0503" "0600" "07" + bstr32(0x60)),
       Errc::kUnknownVariant},
      {"runner role with an Ed25519 key", 0x01,
       cbor_hex(hello_head + "04" + validator_key + "0501" "0600" "07" + bstr32(0x60)), Errc::kRoleSchemeMismatch},
      {"unknown key scheme", 0x01,
       cbor_hex(hello_head + "04" "5821" "03" + to_hex(filled(0x01)) + "0502" "0600" "07" + bstr32(0x60)),
       Errc::kBadScheme},
      {"secp256k1 key of 32 bytes", 0x01,
       cbor_hex(hello_head + "04" "5821" "01" + to_hex(filled(0x01)) + "0501" "0600" "07" + bstr32(0x60)),
       Errc::kBadKeyLength},
      {"secp256k1 key off the curve", 0x01,
       cbor_hex(hello_head + "04" "5822" "0102" + std::string(64, 'f') + "0501" "0600" "07" + bstr32(0x60)),
       Errc::kInvalidKey},
      {"validator HelloAck with a 65-byte signature", 0x02,
       cbor_hex(hello_head + "04" + validator_key + "0502" "0600" "07" + sig65), Errc::kBadSignatureLength},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(decode_error(frame_with_body(c.type, c.body)), c.error)
        << c.what << ": got " << to_string(decode_error(frame_with_body(c.type, c.body)));
  }
}

TEST(Cip11Frames, AssignmentKeysMustHaveTheirRolesSchemes) {
  JobAssignment swapped = testing::job_assignment();
  std::swap(swapped.runner_pubkey, swapped.validator_pubkey);
  EXPECT_EQ(decode_error(encode_frame(swapped)), Errc::kRoleSchemeMismatch);
}

TEST(Cip11Frames, VersionCompatibilityFollowsSection123) {
  EXPECT_EQ(check_version(0x0100), VersionVerdict::kSupported);
  EXPECT_EQ(check_version(0x0200), VersionVerdict::kUnsupportedMajor);
  EXPECT_EQ(check_version(0x00ff), VersionVerdict::kUnsupportedMajor);
  EXPECT_EQ(check_version(0x0101), VersionVerdict::kUnsupportedMinor);
  EXPECT_EQ(check_version(0x0100, 0x0103), VersionVerdict::kSupported);  // an older minor is a subset
}

TEST(Cip11Frames, DiscriminantTablesArePinned) {
  // §12.2 frame types.
  EXPECT_EQ(static_cast<int>(FrameType::kHello), 0x01);
  EXPECT_EQ(static_cast<int>(FrameType::kHelloAck), 0x02);
  EXPECT_EQ(static_cast<int>(FrameType::kHeartbeatPing), 0x10);
  EXPECT_EQ(static_cast<int>(FrameType::kHeartbeatPong), 0x11);
  EXPECT_EQ(static_cast<int>(FrameType::kBackpressureSignal), 0x12);
  EXPECT_EQ(static_cast<int>(FrameType::kCapabilityDelta), 0x13);
  EXPECT_EQ(static_cast<int>(FrameType::kJobAssignment), 0x20);
  EXPECT_EQ(static_cast<int>(FrameType::kJobAck), 0x21);
  EXPECT_EQ(static_cast<int>(FrameType::kJobProgress), 0x22);
  EXPECT_EQ(static_cast<int>(FrameType::kJobResult), 0x23);
  EXPECT_EQ(static_cast<int>(FrameType::kJobCancel), 0x24);
  EXPECT_EQ(static_cast<int>(FrameType::kJobResultCommit), 0x25);
  EXPECT_EQ(static_cast<int>(FrameType::kGoodbye), 0xF0);
  EXPECT_EQ(static_cast<int>(FrameType::kPresenceReceipt), 0x14);  // ours, not §12.2's (choice 73)
  // §12.6 enum bytes.
  EXPECT_EQ(static_cast<int>(Role::kRunner), 0x01);
  EXPECT_EQ(static_cast<int>(Role::kValidator), 0x02);
  EXPECT_EQ(static_cast<int>(AckStatus::Kind::kAccepted), 0x00);
  EXPECT_EQ(static_cast<int>(AckStatus::Kind::kDuplicate), 0x01);
  EXPECT_EQ(static_cast<int>(AckStatus::Kind::kReject), 0x02);
  EXPECT_EQ(static_cast<int>(RejectReason::kAtCapacity), 0x00);
  EXPECT_EQ(static_cast<int>(RejectReason::kMissingEntitlement), 0x01);
  EXPECT_EQ(static_cast<int>(RejectReason::kMissingCapability), 0x02);
  EXPECT_EQ(static_cast<int>(RejectReason::kUnverifiableAssignment), 0x03);
  EXPECT_EQ(static_cast<int>(RejectReason::kOther), 0x04);
  EXPECT_EQ(kRejectReasonNotApplicable, 0xFF);
  EXPECT_EQ(static_cast<int>(CancelReason::kReassigned), 0x00);
  EXPECT_EQ(static_cast<int>(CancelReason::kExpired), 0x01);
  EXPECT_EQ(static_cast<int>(CancelReason::kFailed), 0x02);
  const GoodbyeReason goodbye[] = {GoodbyeReason::kUnsupportedVersion, GoodbyeReason::kWrongChain,
                                   GoodbyeReason::kAuthFailed,        GoodbyeReason::kNotInSubset,
                                   GoodbyeReason::kOverlapExpired,    GoodbyeReason::kRateLimited,
                                   GoodbyeReason::kProtocolError,     GoodbyeReason::kDraining,
                                   GoodbyeReason::kShutdown};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(static_cast<int>(goodbye[i]), i);
  EXPECT_EQ(static_cast<int>(Scheme::kSecp256k1), 0x01);
  EXPECT_EQ(static_cast<int>(Scheme::kEd25519), 0x02);
  EXPECT_EQ(kMaxFrameBytes, 2u * 1024 * 1024);
  EXPECT_EQ(kProtocolVersion, 0x0100);
}

}  // namespace
}  // namespace cowboy::cip11
