// DevchainBlockV1 (devchain/block.h) and ConsumedSeedsV1
// (cip11/chain/consumed_seeds.h): pinned byte for byte, every field under the
// digest, every length bounded before anything is allocated. Regenerate the
// fixture deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/devchain_tests --gtest_filter='DevchainBlock.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>

#include "../support/hex_fixture.h"
#include "../support/refusals_fixture.h"
#include "cip11/chain/consumed_seeds.h"
#include "devchain/block.h"

namespace cowboy::devchain {
namespace {

namespace chain = cip11::chain;


chain::ConsumedSeed seed(std::uint64_t epoch, std::uint64_t view, std::uint8_t fill = 0xab) {
  return chain::ConsumedSeed{cip11::RoundEpoch{epoch}, cip11::View{view}, Bytes(chain::kSeedSignatureBytes, fill)};
}

Block sample() {
  Block b;
  b.chain_instance_id.fill(0x11);
  b.height = 7;
  b.epoch = 0;
  b.view = cip11::View{9};
  b.proposer = 1;
  b.parent.fill(0x22);
  b.txs = {Bytes{0x01, 0x02, 0x03}, Bytes{0x04}};
  b.presence = Bytes{0x01, 0x00, 0x05};  // PresenceInputV1 bitmap: indices 0 and 2 of 3
  b.consumed_seeds = chain::encode_consumed_seeds({seed(0, 4)});
  b.seed_evidence = {};
  b.state_root.fill(0x33);
  return b;
}

crypto::Ed25519Seed proposer_key() {
  crypto::Ed25519Seed s{};
  s[0] = 0x42;
  return s;
}

TEST(DevchainBlock, TheSignedBlockIsPinned) {
  crypto::init();
  const SignedBlock sealed = seal_block(sample(), proposer_key());
  const Bytes encoded = encode_signed_block(sealed);
  const std::string path = std::string(COWBOY_FIXTURE_DIR) + "/devchain/block_v1.hex";
  if (std::getenv("COWBOY_WRITE_FIXTURES"))
    cowboy::testing::write_hex_fixture(path, "a DevchainBlockV1 || digest || Ed25519 signature", encoded);
  auto expected = cowboy::testing::read_hex_fixture(path);
  ASSERT_TRUE(expected) << "missing fixture " << path;
  EXPECT_EQ(to_hex(encoded), to_hex(*expected));
  // The field list by hand: version, chain, height, epoch, view, proposer, parent.
  Bytes head{0x01};
  head.insert(head.end(), 32, 0x11);
  for (std::uint64_t v : {7ull, 0ull, 9ull})
    for (int i = 7; i >= 0; --i) head.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  for (std::uint8_t b : {0, 0, 0, 1}) head.push_back(b);
  head.insert(head.end(), 32, 0x22);
  // txs: count 2, then each with its u32 length; presence: Some, length 3.
  for (std::uint8_t b : {0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 0, 0, 0, 1, 4, 1, 0, 0, 0, 3, 1, 0, 5}) head.push_back(b);
  ASSERT_GE(encoded.size(), head.size());
  EXPECT_EQ(to_hex(Bytes(encoded.begin(), encoded.begin() + static_cast<std::ptrdiff_t>(head.size()))), to_hex(head));
  // The tail is the digest then the signature over it.
  EXPECT_EQ(encoded.size(), encode_block(sealed.block).size() + 32 + 64);
  EXPECT_EQ(sealed.digest, block_digest(sealed.block));
  crypto::Ed25519Public pub = crypto::ed25519_from_seed(proposer_key()).public_key;
  EXPECT_TRUE(crypto::ed25519_verify(pub, sealed.digest, sealed.signature));
  auto decoded = decode_signed_block(*expected);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, sealed);
}

TEST(DevchainBlock, EveryTruncationAndATrailingByteAreRefused) {
  crypto::init();
  const Bytes encoded = encode_signed_block(seal_block(sample(), proposer_key()));
  for (std::size_t n = 0; n < encoded.size(); ++n)
    EXPECT_FALSE(decode_signed_block(ByteView(encoded.data(), n)).ok()) << "prefix of " << n << " bytes";
  Bytes longer = encoded;
  longer.push_back(0);
  EXPECT_EQ(decode_signed_block(longer).error(), codec::DecodeError::kTrailingBytes);
  Bytes other_version = encoded;
  other_version[0] = 2;
  EXPECT_EQ(decode_signed_block(other_version).error(), codec::DecodeError::kBadVersion);
}

// The typed error decode_signed_block answers to every prefix and single-byte
// change of the pinned block (tests/fixtures/devchain/block_v1_refusals.txt).
TEST(DevchainBlock, EveryPrefixAndByteChangeIsRefusedWithTheErrorOfItsFile) {
  crypto::init();
  const Bytes encoded = encode_signed_block(seal_block(sample(), proposer_key()));
  auto roundtrip = [](ByteView b) -> Result<Bytes, codec::DecodeError> {
    auto block = decode_signed_block(b);
    if (!block) return Err{block.error()};
    return encode_signed_block(*block);
  };
  const std::string path = std::string(COWBOY_FIXTURE_DIR) + "/devchain/block_v1_refusals.txt";
  if (std::getenv("COWBOY_WRITE_FIXTURES")) std::ofstream(path) << cowboy::testing::refusals(encoded, roundtrip) << "\n";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::string prefixes, changes;
  in >> prefixes >> changes;
  EXPECT_EQ(cowboy::testing::refusals(encoded, roundtrip), prefixes + " " + changes);
}

TEST(DevchainBlock, LengthsAreBoundedBeforeAllocating) {
  crypto::init();
  const std::size_t txs_at = 1 + 32 + 8 + 8 + 8 + 4 + 32;  // where the tx count starts
  const Bytes encoded = encode_signed_block(seal_block(sample(), proposer_key()));
  auto with_u32_at = [&](std::size_t at, std::uint32_t v) {
    Bytes b = encoded;
    for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
    return b;
  };
  // A count over kMaxBlockTxs, and one of four billion, are refused by the cap.
  EXPECT_EQ(decode_signed_block(with_u32_at(txs_at, kMaxBlockTxs + 1)).error(), codec::DecodeError::kLengthOverCap);
  EXPECT_EQ(decode_signed_block(with_u32_at(txs_at, 0xffffffff)).error(), codec::DecodeError::kLengthOverCap);
  // A count the remaining bytes cannot hold (four bytes a transaction at least) is truncated.
  EXPECT_EQ(decode_signed_block(with_u32_at(txs_at, 4'000)).error(), codec::DecodeError::kTruncated);
  // A transaction longer than kMaxTxBytes.
  EXPECT_EQ(decode_signed_block(with_u32_at(txs_at + 4, kMaxTxBytes + 1)).error(), codec::DecodeError::kLengthOverCap);
  // The presence option's tag, then its length over its cap.
  const std::size_t presence_at = txs_at + 4 + 4 + 3 + 4 + 1;
  Bytes bad_tag = encoded;
  bad_tag[presence_at] = 2;
  EXPECT_EQ(decode_signed_block(bad_tag).error(), codec::DecodeError::kBadOptionTag);
  EXPECT_EQ(decode_signed_block(with_u32_at(presence_at + 1, kMaxBlockPresenceBytes + 1)).error(),
            codec::DecodeError::kLengthOverCap);
  // The whole block over kMaxBlockBytes is refused before it is read.
  Bytes huge(kMaxBlockBytes + 1, 0);
  huge[0] = 1;
  EXPECT_EQ(decode_signed_block(huge).error(), codec::DecodeError::kLengthOverCap);
}

TEST(DevchainBlock, TheDigestCoversEveryField) {
  const Block base = sample();
  const Bytes32 digest = block_digest(base);
  std::vector<std::pair<const char*, std::function<void(Block&)>>> edits = {
      {"chain_instance_id", [](Block& b) { b.chain_instance_id[31] ^= 1; }},
      {"height", [](Block& b) { ++b.height; }},
      {"epoch", [](Block& b) { ++b.epoch; }},
      {"view", [](Block& b) { ++b.view; }},
      {"proposer", [](Block& b) { ++b.proposer; }},
      {"parent", [](Block& b) { b.parent[0] ^= 1; }},
      {"txs", [](Block& b) { b.txs[1][0] ^= 1; }},
      {"tx order", [](Block& b) { std::swap(b.txs[0], b.txs[1]); }},
      {"presence bytes", [](Block& b) { (*b.presence)[2] = 0x04; }},
      {"presence absent", [](Block& b) { b.presence.reset(); }},
      {"consumed_seeds", [](Block& b) { b.consumed_seeds = chain::encode_consumed_seeds({}); }},
      {"seed_evidence", [](Block& b) { b.seed_evidence = {0x00}; }},
      {"state_root", [](Block& b) { b.state_root[5] ^= 1; }},
  };
  for (auto& [name, edit] : edits) {
    Block b = base;
    edit(b);
    EXPECT_NE(block_digest(b), digest) << name;
  }
  // Domain separated: not the hash of the bare encoding.
  EXPECT_NE(digest, crypto::keccak256(encode_block(base)));
}

TEST(DevchainConsumedSeeds, EncodesAsTheDeterministicCborListOfSection92) {
  EXPECT_EQ(to_hex(chain::encode_consumed_seeds({})), "80");
  // [[0, 5, h'ab…' (48 bytes)], [1, 24, h'cd…']]: 24 takes a one-byte argument.
  Bytes expected{0x82, 0x83, 0x00, 0x05, 0x58, 0x30};
  expected.insert(expected.end(), 48, 0xab);
  for (std::uint8_t b : {0x83, 0x01, 0x18, 0x18, 0x58, 0x30}) expected.push_back(b);
  expected.insert(expected.end(), 48, 0xcd);
  const std::vector<chain::ConsumedSeed> seeds{seed(0, 5), seed(1, 24, 0xcd)};
  EXPECT_EQ(to_hex(chain::encode_consumed_seeds(seeds)), to_hex(expected));
  auto decoded = chain::decode_consumed_seeds(expected);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, seeds);
  EXPECT_TRUE(chain::decode_consumed_seeds(Bytes{0x80})->empty());
}

TEST(DevchainConsumedSeeds, EveryRuleOfTheFieldIsEnforcedOnDecode) {
  using cip11::Errc;
  auto err = [](const Bytes& b) { return chain::decode_consumed_seeds(b).error(); };
  // Not ascending by round, and a round twice.
  EXPECT_EQ(err(chain::encode_consumed_seeds({seed(0, 6), seed(0, 5)})), Errc::kSeedsNotAscending);
  EXPECT_EQ(err(chain::encode_consumed_seeds({seed(0, 5), seed(0, 5, 0xcd)})), Errc::kSeedsNotAscending);
  EXPECT_EQ(err(chain::encode_consumed_seeds({seed(1, 0), seed(0, 9)})), Errc::kSeedsNotAscending);
  // A signature of another length.
  EXPECT_EQ(err(chain::encode_consumed_seeds({chain::ConsumedSeed{cip11::RoundEpoch{0}, cip11::View{5}, Bytes(47, 0xab)}})), Errc::kWrongLength);
  EXPECT_EQ(err(chain::encode_consumed_seeds({chain::ConsumedSeed{cip11::RoundEpoch{0}, cip11::View{5}, Bytes(63, 0xab)}})), Errc::kWrongLength);
  EXPECT_EQ(err(chain::encode_consumed_seeds({chain::ConsumedSeed{cip11::RoundEpoch{0}, cip11::View{5}, Bytes(65, 0xab)}})), Errc::kWrongLength);
  // The devchain's 64-byte round seed (an ECVRF output) decodes, its bytes kept.
  const chain::ConsumedSeed devchain_seed{cip11::RoundEpoch{0}, cip11::View{5}, Bytes(chain::kDevchainSeedBytes, 0xab)};
  auto decoded = chain::decode_consumed_seeds(chain::encode_consumed_seeds({devchain_seed}));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, std::vector<chain::ConsumedSeed>{devchain_seed});
  // An entry of two fields, a field of another type, bytes after the list, an empty input.
  EXPECT_EQ(err(Bytes{0x81, 0x82, 0x00, 0x05}), Errc::kWrongFieldCount);
  EXPECT_EQ(err(Bytes{0x81, 0x83, 0x00, 0x05, 0x00}), Errc::kUnexpectedType);
  EXPECT_EQ(err(Bytes{0x80, 0x00}), Errc::kTrailingBytes);
  EXPECT_FALSE(chain::decode_consumed_seeds(Bytes{}).ok());
  // A non-shortest head (profile) and a count over the cap, refused before anything is read.
  EXPECT_EQ(err(Bytes{0x98, 0x00}), Errc::kNonShortestInteger);
  Bytes many{0x99, 0x10, 0x01};  // 4097 entries announced
  many.resize(many.size() + 4'097, 0x00);
  EXPECT_EQ(err(many), Errc::kTooManyItems);
}

}  // namespace
}  // namespace cowboy::devchain
