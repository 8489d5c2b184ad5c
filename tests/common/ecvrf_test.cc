#include "common/ecvrf.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <random>

#include "common/crypto.h"

namespace cowboy::crypto::ecvrf {
namespace {

template <std::size_t N>
std::array<std::uint8_t, N> hex(std::string_view text) {
  auto bytes = fixed_from_hex<N>(text);
  EXPECT_TRUE(bytes.has_value()) << text;
  return bytes.value_or(std::array<std::uint8_t, N>{});
}

// RFC 9381 Appendix B.3, ECVRF-EDWARDS25519-SHA512-TAI, Examples 16-18 (17 needs ctr = 1).
struct Vector {
  const char* sk;
  const char* pk;
  const char* alpha;
  const char* pi;
  const char* beta;
};
const Vector kVectors[] = {
    {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "8657106690b5526245a92b003bb079ccd1a92130477671f6fc01ad16f26f723f26f8a57ccaed74ee1b190bed1f479d9727d2d0f9b005a6e4"
     "56a35d4fb0daab1268a1b0db10836d9826a528ca76567805",
     "90cf1df3b703cce59e2a35b925d411164068269d7b2d29f3301c03dd757876ff66b71dda49d2de59d03450451af026798e8f81cd2e333de5"
     "cdf4f3e140fdd8ae"},
    {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "f3141cd382dc42909d19ec5110469e4feae18300e94f304590abdced48aed5933bf0864a62558b3ed7f2fea45c92a465301b3bbf5e3e54dd"
     "f2d935be3b67926da3ef39226bbc355bdc9850112c8f4b02",
     "eb4440665d3891d668e7e0fcaf587f1b4bd7fbfe99d0eb2211ccec90496310eb5e33821bc613efb94db5e5b54c70a848a0bef4553a41befc"
     "57663b56373a5031"},
    {"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "9bc0f79119cc5604bf02d23b4caede71393cedfbb191434dd016d30177ccbf8096bb474e53895c362d8628ee9f9ea3c0e52c7a5c691b6c18"
     "c9979866568add7a2d41b00b05081ed0f58ee5e31b3a970e",
     "645427e5d00c62a23fb703732fa5d892940935942101e456ecca7bb217c61c452118fec1219202a0edcf038bb6373241578be7217ba85a26"
     "87f7a0310b2df19f"},
};

Bytes alpha_of(const Vector& v) { return from_hex(v.alpha).value(); }

TEST(Ecvrf, Rfc9381ExamplesGiveTheirPublicKeyProofAndOutput) {
  for (const auto& v : kVectors) {
    SCOPED_TRACE(v.pk);
    const auto kp = keypair_from_seed(hex<32>(v.sk));
    EXPECT_EQ(to_hex(kp.public_key), v.pk);
    EXPECT_EQ(kp.public_key, ed25519_from_seed(hex<32>(v.sk)).public_key);  // the Ed25519 key of the seed
    const Proof pi = prove(kp.seed, alpha_of(v));
    EXPECT_EQ(to_hex(pi), v.pi);
    auto beta = proof_to_hash(pi);
    ASSERT_TRUE(beta.ok());
    EXPECT_EQ(to_hex(*beta), v.beta);
  }
}

TEST(Ecvrf, Rfc9381ExamplesVerifyToTheirOutput) {
  for (const auto& v : kVectors) {
    SCOPED_TRACE(v.pk);
    auto beta = verify(hex<32>(v.pk), hex<80>(v.pi), alpha_of(v));
    ASSERT_TRUE(beta.ok()) << to_string(beta.error());
    EXPECT_EQ(to_hex(*beta), v.beta);
  }
}

TEST(Ecvrf, ProveThenVerifyForManyKeysAndMessages) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20; ++i) {
    Seed seed;
    for (auto& b : seed) b = static_cast<std::uint8_t>(rng());
    Bytes alpha(static_cast<std::size_t>(i * 13));
    for (auto& b : alpha) b = static_cast<std::uint8_t>(rng());
    const auto kp = keypair_from_seed(seed);
    const Proof pi = prove(seed, alpha);
    auto beta = verify(kp.public_key, pi, alpha);
    ASSERT_TRUE(beta.ok()) << to_string(beta.error());
    EXPECT_EQ(*beta, proof_to_hash(pi).value());
  }
}

class Tampered : public ::testing::Test {
 protected:
  const Vector& v = kVectors[2];
  const PublicKey key = hex<32>(v.pk);
  const Proof pi = hex<80>(v.pi);
  const Bytes alpha = alpha_of(v);

  Error verify_error(const PublicKey& k, const Proof& p, ByteView a) {
    auto r = verify(k, p, a);
    EXPECT_FALSE(r.ok());
    return r.ok() ? Error::kProofMismatch : r.error();
  }
};

TEST_F(Tampered, AnotherMessageIsRefused) {
  EXPECT_EQ(verify_error(key, pi, as_bytes("x")), Error::kProofMismatch);
  EXPECT_EQ(verify_error(key, pi, Bytes(alpha.begin(), alpha.end() - 1)), Error::kProofMismatch);
}

TEST_F(Tampered, AnotherValidKeyIsRefused) {
  EXPECT_EQ(verify_error(hex<32>(kVectors[0].pk), pi, alpha), Error::kProofMismatch);
}

TEST_F(Tampered, EachChallengeBitFlipIsRefused) {
  for (std::size_t byte = 32; byte < 48; ++byte) {
    Proof bad = pi;
    bad[byte] ^= 0x10;
    EXPECT_EQ(verify_error(key, bad, alpha), Error::kProofMismatch) << byte;
  }
}

TEST_F(Tampered, ADifferentButValidScalarIsRefused) {
  Proof bad = pi;
  bad[48] ^= 0x01;  // s changes in its lowest byte and stays below q
  EXPECT_EQ(verify_error(key, bad, alpha), Error::kProofMismatch);
}

TEST_F(Tampered, AScalarAtOrAboveTheGroupOrderIsRefused) {
  // q itself, and s + q (the same value mod q: a malleated proof).
  const auto q = hex<32>("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010");
  Proof at_q = pi;
  std::copy(q.begin(), q.end(), at_q.begin() + 48);
  EXPECT_EQ(verify_error(key, at_q, alpha), Error::kScalarNotCanonical);
  Proof plus_q = pi;
  unsigned carry = 0;
  for (std::size_t i = 0; i < 32; ++i) {
    unsigned sum = plus_q[48 + i] + q[i] + carry;
    plus_q[48 + i] = static_cast<std::uint8_t>(sum);
    carry = sum >> 8;
  }
  ASSERT_EQ(carry, 0u);
  EXPECT_EQ(verify_error(key, plus_q, alpha), Error::kScalarNotCanonical);
  EXPECT_EQ(decode_proof(plus_q).error(), Error::kScalarNotCanonical);
}

TEST_F(Tampered, AnotherValidGammaIsRefused) {
  Proof bad = pi;
  const Proof other = hex<80>(kVectors[0].pi);
  std::copy_n(other.begin(), 32, bad.begin());
  EXPECT_EQ(verify_error(key, bad, alpha), Error::kProofMismatch);
}

TEST_F(Tampered, AGammaWithATorsionComponentIsRefused) {
  // Gamma + (0, -1): the RFC's verifier could accept it with the same beta; this one refuses.
  const auto order2 = hex<32>("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
  Proof bad = pi;
  ASSERT_EQ(crypto_core_ed25519_add(bad.data(), pi.data(), order2.data()), 0);
  EXPECT_EQ(verify_error(key, bad, alpha), Error::kGammaInvalid);
  EXPECT_EQ(proof_to_hash(bad).error(), Error::kGammaInvalid);
}

TEST_F(Tampered, AGammaOffTheCurveIsRefused) {
  Proof bad = pi;
  Proof sum;
  bool found = false;
  for (unsigned flip = 1; flip < 256 && !found; ++flip) {  // the first change of Gamma's low byte with no x
    bad[0] = static_cast<std::uint8_t>(pi[0] ^ flip);
    found = crypto_core_ed25519_add(sum.data(), bad.data(), bad.data()) != 0;
  }
  ASSERT_TRUE(found);
  EXPECT_EQ(verify_error(key, bad, alpha), Error::kGammaInvalid);
}

TEST(Ecvrf, DecodeProofChecksItsSize) {
  const Bytes pi = from_hex(kVectors[0].pi).value();
  EXPECT_EQ(decode_proof(ByteView(pi).first(79)).error(), Error::kProofSize);
  Bytes longer = pi;
  longer.push_back(0);
  EXPECT_EQ(decode_proof(longer).error(), Error::kProofSize);
  auto decoded = decode_proof(pi);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(to_hex(*decoded), kVectors[0].pi);
}

// The eight points of order dividing 8, canonically encoded.
const char* const kSmallOrder[] = {
    "0100000000000000000000000000000000000000000000000000000000000000",  // identity
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  // order 2
    "0000000000000000000000000000000000000000000000000000000000000000",  // order 4
    "0000000000000000000000000000000000000000000000000000000000000080",  // order 4
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  // order 8
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
};

TEST(EcvrfKey, SmallOrderKeysAreRefused) {
  const Proof pi = hex<80>(kVectors[0].pi);
  for (const char* k : kSmallOrder) {
    EXPECT_EQ(validate_key(hex<32>(k)).error(), Error::kKeySmallOrder) << k;
    EXPECT_EQ(verify(hex<32>(k), pi, {}).error(), Error::kKeySmallOrder) << k;
  }
}

TEST(EcvrfKey, NonCanonicalEncodingsAreRefused) {
  // y + p for each y < 19 (the only y with a second encoding), either sign.
  for (std::uint8_t y = 0; y < 19; ++y) {
    for (std::uint8_t sign : {0x00, 0x80}) {
      PublicKey k;
      k.fill(0xff);
      k[0] = static_cast<std::uint8_t>(0xed + y);
      k[31] = static_cast<std::uint8_t>(0x7f | sign);
      EXPECT_EQ(validate_key(k).error(), Error::kKeyNotCanonical) << int(y) << " " << int(sign);
    }
  }
  // x = 0 with the sign bit set: y = 1 and y = p - 1.
  EXPECT_EQ(validate_key(hex<32>("0100000000000000000000000000000000000000000000000000000000000080")).error(),
            Error::kKeyNotCanonical);
  EXPECT_EQ(validate_key(hex<32>("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff")).error(),
            Error::kKeyNotCanonical);
}

TEST(EcvrfKey, AKeyWithATorsionComponentIsRefused) {
  const auto order8 = hex<32>(kSmallOrder[4]);
  PublicKey mixed;
  ASSERT_EQ(crypto_core_ed25519_add(mixed.data(), hex<32>(kVectors[0].pk).data(), order8.data()), 0);
  EXPECT_EQ(validate_key(mixed).error(), Error::kKeyOutsidePrimeSubgroup);
}

TEST(EcvrfKey, AYWithoutAnXIsRefused) {
  PublicKey k{};
  PublicKey sum;
  bool found = false;
  for (unsigned y = 2; y < 256 && !found; ++y) {  // the first small y with no x (about half of all y have none)
    k[0] = static_cast<std::uint8_t>(y);
    found = crypto_core_ed25519_add(sum.data(), k.data(), k.data()) != 0;
  }
  ASSERT_TRUE(found);
  EXPECT_EQ(validate_key(k).error(), Error::kKeyNotOnCurve);
}

TEST(EcvrfKey, TheExampleKeysAreValid) {
  for (const auto& v : kVectors) EXPECT_TRUE(validate_key(hex<32>(v.pk)).ok()) << v.pk;
}

}  // namespace
}  // namespace cowboy::crypto::ecvrf
