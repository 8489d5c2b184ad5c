// §8.3 / §12.6 PresenceReceipt: its encoding pinned byte for byte
// (tests/fixtures/cip11/presence_receipt.hex, and the signed preimage in
// presence_receipt_preimage.hex), built by hand from RFC 8949, every decoder
// refusal, and the signature bound to the executing chain.
// Regenerate the fixtures deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/cip11_tests --gtest_filter='Cip11Receipt.*'
#include <gtest/gtest.h>

#include <cstdlib>

#include "../support/hex_fixture.h"
#include "cip11/link/seal.h"
#include "samples.h"

namespace cowboy::cip11 {
namespace {

using testing::filled;

std::string fixture_path(const std::string& name) { return std::string(COWBOY_FIXTURE_DIR) + "/cip11/" + name + ".hex"; }

void check_fixture(const std::string& name, const std::string& what, const Bytes& bytes) {
  const std::string path = fixture_path(name);
  if (std::getenv("COWBOY_WRITE_FIXTURES"))
    cowboy::testing::write_hex_fixture(path, name + ": " + std::to_string(bytes.size()) + " bytes, " + what, bytes);
  auto expected = cowboy::testing::read_hex_fixture(path);
  ASSERT_TRUE(expected) << "missing fixture " << path;
  EXPECT_EQ(to_hex(bytes), to_hex(*expected)) << name;
}

TEST(Cip11Receipt, TheReceiptAndItsPreimageMatchTheirFixturesByteForByte) {
  const PresenceReceipt r = testing::presence_receipt();
  const Bytes encoded = encode_receipt(r);
  check_fixture("presence_receipt", "PresenceReceipt (deterministic CBOR map keyed 0..7, receipt.h)", encoded);
  check_fixture("presence_receipt_preimage",
                "the signed PresenceReceipt preimage: domain | signer_role | scheme_id | fields (chain 7)",
                presence_receipt_preimage(7, r).bytes());
  auto decoded = decode_receipt(*cowboy::testing::read_hex_fixture(fixture_path("presence_receipt")));
  ASSERT_TRUE(decoded.ok()) << to_string(decoded.error());
  EXPECT_EQ(*decoded, r);
  EXPECT_TRUE(verify_receipt(7, *decoded).ok());
}

// Built from the receipt.h layout and RFC 8949, not by the encoder.
TEST(Cip11Receipt, HandAssembledReceipt) {
  const PresenceReceipt r = testing::presence_receipt();
  Bytes expected{0xa8, 0x00, 0x58, 0x21};
  for (auto b : r.validator_pubkey.wire()) expected.push_back(b);
  expected.insert(expected.end(), {0x01, 0x58, 0x22});
  for (auto b : r.runner_pubkey.wire()) expected.push_back(b);
  expected.insert(expected.end(), {0x02, 0x00, 0x03, 0x58, 0x20});
  for (auto b : filled(0x40)) expected.push_back(b);
  expected.insert(expected.end(), {0x04, 0x19, 0x03, 0xed, 0x05, 0x03, 0x06, 0xf5, 0x07, 0x58, 0x40});
  for (auto b : r.validator_signed) expected.push_back(b);
  EXPECT_EQ(to_hex(encode_receipt(r)), to_hex(expected));
  // The §12.6 domain: "cowboy-cip11-presence-receipt-v1" || Validator(0x02) || Ed25519(0x02) || fields.
  const Bytes pre = presence_receipt_preimage(7, r).bytes();
  const std::string domain = "cowboy-cip11-presence-receipt-v1";
  ASSERT_GT(pre.size(), domain.size() + 2);
  EXPECT_EQ(std::string(pre.begin(), pre.begin() + static_cast<std::ptrdiff_t>(domain.size())), domain);
  EXPECT_EQ(pre[domain.size()], 0x02);
  EXPECT_EQ(pre[domain.size() + 1], 0x02);
  // chain_id u64 BE, 33 + 34 key bytes, epoch, hash, height, nonce, bool: 8+33+34+8+32+8+8+1.
  EXPECT_EQ(pre.size(), domain.size() + 2 + 132);
  EXPECT_EQ(pre[domain.size() + 2 + 7], 7);  // chain_id's last byte
  EXPECT_EQ(pre.back(), 0x01);               // accepting_new
}

Errc refusal(const Bytes& bytes) {
  auto d = decode_receipt(bytes);
  EXPECT_FALSE(d.ok());
  return d.ok() ? Errc{} : d.error();
}

TEST(Cip11Receipt, EachDecoderRefusal) {
  const PresenceReceipt r = testing::presence_receipt();
  const Bytes good = encode_receipt(r);
  // Longer than any receipt: refused before a byte is read.
  EXPECT_EQ(refusal(Bytes(kMaxReceiptBytes + 1, 0xa8)), Errc::kReceiptTooLarge);
  EXPECT_EQ(refusal(Bytes(good.begin(), good.end() - 1)), Errc::kCborTruncated);
  Bytes trailing = good;
  trailing.push_back(0x00);
  EXPECT_EQ(refusal(trailing), Errc::kTrailingBytes);
  Bytes seven = good;
  seven[0] = 0xa7;
  EXPECT_EQ(refusal(seven), Errc::kWrongFieldCount);
  // The two keys in each other's places: role and scheme disagree.
  PresenceReceipt swapped = r;
  std::swap(swapped.validator_pubkey, swapped.runner_pubkey);
  EXPECT_EQ(refusal(encode_receipt(swapped)), Errc::kRoleSchemeMismatch);
  PresenceReceipt runner_twice = r;
  runner_twice.validator_pubkey = r.runner_pubkey;
  EXPECT_EQ(refusal(encode_receipt(runner_twice)), Errc::kRoleSchemeMismatch);
  // An unknown scheme byte, and a key of the wrong length for its scheme.
  Bytes scheme = good;
  scheme[4] = 0x03;  // validator_pubkey's tag
  EXPECT_EQ(refusal(scheme), Errc::kBadScheme);
  Bytes short_key = good;
  short_key[3] = 0x20;  // bytes(32): the tag and 31 key bytes, the rest shifted
  EXPECT_EQ(refusal(short_key), Errc::kBadKeyLength);
  // accepting_new as an integer, a block height in a longer head than it needs.
  Bytes not_bool = good;
  const std::size_t accepting = good.size() - 64 - 2 - 1 - 1;  // before key 7 and the signature
  ASSERT_EQ(not_bool[accepting], 0xf5);
  not_bool[accepting] = 0x01;
  EXPECT_EQ(refusal(not_bool), Errc::kUnexpectedType);
  PresenceReceipt small = r;
  small.block_height = Height{5};
  Bytes wide = encode_receipt(small);
  const std::size_t height_at = 1 + 36 + 37 + 2 + 35 + 1;  // the head after key 4
  ASSERT_EQ(wide[height_at], 0x05);
  wide[height_at] = 0x18;
  wide.insert(wide.begin() + static_cast<std::ptrdiff_t>(height_at) + 1, 0x05);
  EXPECT_EQ(refusal(wide), Errc::kNonShortestInteger);
  // A 63-byte signature.
  Bytes sig = good;
  sig[good.size() - 65] = 0x3f;
  sig.pop_back();
  EXPECT_EQ(refusal(sig), Errc::kWrongLength);
}

// The chain verifies a receipt with its own chain_id (§8.3): a receipt
// signed for another chain, or changed after signing, does not verify.
TEST(Cip11Receipt, TheSignatureBindsTheExecutingChainAndEveryField) {
  const PresenceReceipt r = testing::presence_receipt();
  EXPECT_TRUE(verify_receipt(7, r).ok());
  EXPECT_EQ(verify_receipt(8, r).error(), Errc::kBadSignature);
  PresenceReceipt later = r;
  later.block_height += 1;
  EXPECT_EQ(verify_receipt(7, later).error(), Errc::kBadSignature);
  PresenceReceipt epoch = r;
  epoch.subset_epoch = Epoch{1};
  EXPECT_EQ(verify_receipt(7, epoch).error(), Errc::kBadSignature);
  PresenceReceipt other = r;
  other.validator_pubkey = testing::runner_key(1).pubkey();  // not even a validator key
  EXPECT_EQ(verify_receipt(7, other).error(), Errc::kRoleSchemeMismatch);
}

// On a connection (choice 73) the receipt is a frame the validator sends on
// the control stream: its seal binds the connection's two keys, epoch and set
// hash, and signs with the chain's id; a receipt for anything else is refused.
TEST(Cip11Receipt, AsAFrameItIsSealedToItsConnectionAndGoesValidatorToRunnerOnControl) {
  const auto& p = testing::party();
  const BoundConnection bound(p.binding);
  Frame frame = PresenceReceipt{{}, {}, Epoch{0}, {}, Height{1005}, 3, true, {}};
  seal(frame, p.validator, bound);
  EXPECT_EQ(std::get<PresenceReceipt>(frame), testing::presence_receipt());  // the same bytes as the chain's
  EXPECT_TRUE(check_seal(frame, Role::kValidator, bound).ok());
  ConnectionBinding other_epoch = p.binding;
  other_epoch.subset_epoch = Epoch{1};
  EXPECT_EQ(check_seal(frame, Role::kValidator, BoundConnection(other_epoch)).error(), Errc::kReceiptMismatch);
  ConnectionBinding other_runner = p.binding;
  other_runner.runner = testing::runner_key(9).pubkey();
  EXPECT_EQ(check_seal(frame, Role::kValidator, BoundConnection(other_runner)).error(), Errc::kReceiptMismatch);
  ConnectionBinding other_chain = p.binding;
  other_chain.chain_id = 8;
  EXPECT_EQ(check_seal(frame, Role::kValidator, BoundConnection(other_chain)).error(), Errc::kBadSignature);
  EXPECT_TRUE(placement_allowed(FrameType::kPresenceReceipt, Role::kValidator, StreamKind::kControl, false));
  EXPECT_FALSE(placement_allowed(FrameType::kPresenceReceipt, Role::kRunner, StreamKind::kControl, false));
  EXPECT_FALSE(placement_allowed(FrameType::kPresenceReceipt, Role::kValidator, StreamKind::kJob, false));
}

}  // namespace
}  // namespace cowboy::cip11
