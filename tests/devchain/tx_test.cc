#include "devchain/tx.h"

#include <gtest/gtest.h>

#include "../support/refusals_fixture.h"

namespace cowboy::devchain {
namespace {

crypto::Secp256k1Secret secret(std::uint8_t b) {
  crypto::Secp256k1Secret s{};
  s[31] = b;
  return s;
}

Transaction sample() {
  Transaction tx;
  tx.chain_instance_id[0] = 0xcc;
  tx.nonce = 7;
  tx.body = Transfer{Address{1}, 12345};
  EXPECT_TRUE(sign_tx(tx, secret(1)));
  return tx;
}

TEST(DevchainTx, RoundTripsEveryBodyKind) {
  for (TxBody body : {TxBody{CbqsCall{{2, 5, 0}}}, TxBody{ParameterWrite{"cbqs.visibility_ms", 60'000}},
                      TxBody{Transfer{Address{9}, u128{1} << 100}}}) {
    Transaction tx = sample();
    tx.body = body;
    ASSERT_TRUE(sign_tx(tx, secret(2)));
    auto decoded = decode_tx(encode_tx(tx));
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, tx);
  }
}

TEST(DevchainTx, SenderIsTheSignersAddress) {
  Transaction tx = sample();
  EXPECT_EQ(recover_sender(tx), crypto::secp256k1_address(secret(1)));
  // Changing any signed field changes who the signature recovers to.
  tx.nonce = 8;
  EXPECT_NE(recover_sender(tx), crypto::secp256k1_address(secret(1)));
  // The chain id is inside the preimage: a replay on another chain is another sender.
  Transaction other_chain = sample();
  other_chain.chain_instance_id[0] = 0xcd;
  EXPECT_NE(recover_sender(other_chain), crypto::secp256k1_address(secret(1)));
}

TEST(DevchainTx, UnrecoverableSignatureHasNoSender) {
  Transaction tx = sample();
  tx.signature.fill(0);
  EXPECT_FALSE(recover_sender(tx));
}

TEST(DevchainTx, DecoderRejectsBadInput) {
  Bytes b = encode_tx(sample());
  Bytes bad_version = b;
  bad_version[0] = 2;
  EXPECT_EQ(decode_tx(bad_version).error(), codec::DecodeError::kBadVersion);
  Bytes bad_kind = b;
  bad_kind[41] = 9;
  EXPECT_EQ(decode_tx(bad_kind).error(), codec::DecodeError::kUnknownVariant);
  EXPECT_EQ(decode_tx(ByteView(b).first(b.size() - 1)).error(), codec::DecodeError::kTruncated);
  Bytes huge(kMaxTxBytes + 1, 0);
  EXPECT_EQ(decode_tx(huge).error(), codec::DecodeError::kLengthOverCap);
}

// Byte-exact fixtures, one a body kind (tests/fixtures/devchain/tx_<kind>.hex),
// and the typed error decode_tx answers to every prefix and single-byte change
// of each (tx_refusals.txt). Regenerate deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/devchain_tests --gtest_filter='DevchainTx.*'
std::vector<std::pair<std::string, Transaction>> fixture_txs() {
  Transaction tx;
  for (std::size_t i = 0; i < tx.chain_instance_id.size(); ++i) tx.chain_instance_id[i] = static_cast<std::uint8_t>(0xc0 + i);
  tx.nonce = 0x0102030405060708;
  for (std::size_t i = 0; i < tx.signature.size(); ++i) tx.signature[i] = static_cast<std::uint8_t>(0x40 + i);
  std::vector<std::pair<std::string, Transaction>> out;
  for (auto& [name, body] : std::vector<std::pair<std::string, TxBody>>{
           {"tx_cbqs_call", CbqsCall{{2, 5, 0}}},
           {"tx_parameter_write", ParameterWrite{"cbqs.visibility_ms", 60'000}},
           {"tx_transfer", Transfer{Address{9, 8, 7}, (u128{1} << 100) + 3}},
           {"tx_cip11_call", Cip11Call{{1, 2}}}}) {
    tx.body = body;
    out.emplace_back(name, tx);
  }
  return out;
}

std::vector<cowboy::testing::CodecSample> fixture_samples() {
  std::vector<cowboy::testing::CodecSample> out;
  for (const auto& [name, tx] : fixture_txs()) out.push_back(cowboy::testing::codec_sample(name, tx, encode_tx, decode_tx));
  return out;
}

TEST(DevchainTx, EveryBodyKindMatchesItsFileByteForByte) {
  cowboy::testing::expect_fixture_files(std::string(COWBOY_FIXTURE_DIR) + "/devchain/", fixture_samples());
}

TEST(DevchainTx, EveryPrefixAndByteChangeIsRefusedWithTheErrorOfItsFile) {
  cowboy::testing::expect_refusals_file(std::string(COWBOY_FIXTURE_DIR) + "/devchain/tx_refusals.txt", fixture_samples());
}

}  // namespace
}  // namespace cowboy::devchain
