#include "devchain/tx.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace cowboy::devchain
