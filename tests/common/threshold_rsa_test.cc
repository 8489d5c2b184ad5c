// Shoup's threshold RSA (common/threshold_rsa.h) on real OpenSSL.
//
// The pinned fixture tests/fixtures/common/threshold_rsa_3_of_4.txt is a 2048-bit
// 3-of-4 dealing (its public key, the four secret shares, the dealer's p and q)
// with one round message, its hash-to-group value and its signature. It was
// written once by the disabled test below:
//   COWBOY_THRESHOLD_RSA_FIXTURE_OUT=tests/fixtures/common/threshold_rsa_3_of_4.txt
//     build/bin/common_tests --gtest_also_run_disabled_tests
//     --gtest_filter=ThresholdRsaFixture.DISABLED_WriteFixture
// (one command line); its last line, share 1's signature share of the round
// message with its proof (`signature_share_1`), was appended later by
// ThresholdRsaFixture.DISABLED_AppendSignatureShare (same variable, same
// flags), which leaves the lines above it as they were.
// A change to the hash to the group or to an encoding changes these bytes.
#include "common/threshold_rsa.h"

#include <gtest/gtest.h>
#include <openssl/bn.h>

#include <algorithm>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

namespace cowboy::crypto::threshold_rsa {
namespace {

const char* kFixturePath = COWBOY_FIXTURE_DIR "/common/threshold_rsa_3_of_4.txt";

// A Round(E, v) message as the planned wiring would sign it (docs/cip11.md choice 172).
Bytes round_message(std::uint64_t epoch, std::uint64_t view) {
  Bytes out(as_bytes(std::string_view("cowboy/cip11/round-seed/v1")).begin(),
            as_bytes(std::string_view("cowboy/cip11/round-seed/v1")).end());
  for (std::uint64_t value : {epoch, view}) {
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(value >> shift));
  }
  return out;
}

// Test-side big numbers, to check the scheme's algebra independently of it.
struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
using Bn = std::unique_ptr<BIGNUM, BnFree>;
Bn bn(ByteView bytes) { return Bn(BN_bin2bn(bytes.data(), static_cast<int>(bytes.size()), nullptr)); }
Bn bn_word(unsigned long w) {
  Bn b(BN_new());
  BN_set_word(b.get(), w);
  return b;
}
Bytes bytes_of(const BIGNUM* b, std::size_t width) {
  Bytes out(width);
  EXPECT_GE(BN_bn2binpad(b, out.data(), static_cast<int>(width)), 0);
  return out;
}

// x^D with D = e^-1 mod phi(N) = 4p'q' (the RSA exponent), and x^(2d) with the
// dealer's d = e^-1 mod p'q' = f(0) (Shoup's d, which agrees with D on squares).
struct DealerPowers {
  Bytes x_to_rsa_d;
  Bytes x_squared_to_d;
};
DealerPowers dealer_powers(const PublicKey& key, const DealerSecret& secret, ByteView x_bytes) {
  BN_CTX* c = BN_CTX_new();
  Bn n = bn(key.modulus), p = bn(secret.p), q = bn(secret.q), x = bn(x_bytes), e = bn_word(kPublicExponent);
  Bn p1(BN_new()), q1(BN_new()), m(BN_new()), phi(BN_new());
  BN_rshift1(p1.get(), p.get());
  BN_rshift1(q1.get(), q.get());
  BN_mul(m.get(), p1.get(), q1.get(), c);
  BN_lshift(phi.get(), m.get(), 2);
  Bn d(BN_mod_inverse(nullptr, e.get(), m.get(), c));
  Bn rsa_d(BN_mod_inverse(nullptr, e.get(), phi.get(), c));
  Bn y(BN_new()), x2(BN_new()), y2(BN_new());
  BN_mod_exp(y.get(), x.get(), rsa_d.get(), n.get(), c);
  BN_mod_mul(x2.get(), x.get(), x.get(), n.get(), c);
  BN_mod_exp(y2.get(), x2.get(), d.get(), n.get(), c);
  BN_CTX_free(c);
  return {bytes_of(y.get(), key.element_size()), bytes_of(y2.get(), key.element_size())};
}

Bytes square(const PublicKey& key, ByteView y_bytes) {
  BN_CTX* c = BN_CTX_new();
  Bn n = bn(key.modulus), y = bn(y_bytes), out(BN_new());
  BN_mod_mul(out.get(), y.get(), y.get(), n.get(), c);
  BN_CTX_free(c);
  return bytes_of(out.get(), key.element_size());
}

struct Fixture {
  PublicKey key;
  std::vector<SecretShare> shares;
  DealerSecret secret;
  Bytes message;
  Bytes x;
  Bytes signature;
  Bytes signature_share_1;  // share 1's of `message`, with its proof
  std::map<std::string, Bytes> raw;
};

Fixture load_fixture() {
  std::ifstream in(kFixturePath);
  EXPECT_TRUE(in.good()) << kFixturePath;
  Fixture f;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, hex;
    fields >> name >> hex;
    auto value = from_hex(hex);
    EXPECT_TRUE(value.has_value()) << name;
    f.raw[name] = value.value_or(Bytes{});
  }
  auto key = decode_public_key(f.raw["public_key"]);
  EXPECT_TRUE(key.ok());
  if (!key) return f;
  f.key = *key;
  for (int i = 1; i <= 4; ++i) {
    auto share = decode_secret_share(f.key, f.raw["share_" + std::to_string(i)]);
    EXPECT_TRUE(share.ok()) << i;
    if (share) f.shares.push_back(*share);
  }
  f.secret = {f.raw["p"], f.raw["q"]};
  f.message = f.raw["message"];
  f.x = f.raw["x"];
  f.signature = f.raw["signature"];
  f.signature_share_1 = f.raw["signature_share_1"];
  return f;
}

const Fixture& fixture() {
  static const Fixture f = load_fixture();
  return f;
}

std::vector<SignatureShare> sign_all(const PublicKey& key, const std::vector<SecretShare>& secrets, ByteView message) {
  std::vector<SignatureShare> out;
  for (const auto& secret : secrets) {
    auto share = sign_share(key, secret, message);
    EXPECT_TRUE(share.ok());
    if (share) out.push_back(*share);
  }
  return out;
}

// Every 3-subset of 4, in two orders each.
std::vector<std::vector<std::size_t>> subsets_3_of_4() {
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t left_out = 0; left_out < 4; ++left_out) {
    std::vector<std::size_t> s;
    for (std::size_t i = 0; i < 4; ++i) {
      if (i != left_out) s.push_back(i);
    }
    out.push_back(s);
    out.push_back({s[2], s[0], s[1]});
  }
  return out;
}

void expect_every_subset_combines_to(const PublicKey& key, const std::vector<SignatureShare>& shares,
                                     ByteView message, const Bytes& expected) {
  for (const auto& subset : subsets_3_of_4()) {
    std::vector<SignatureShare> picked;
    for (std::size_t i : subset) picked.push_back(shares[i]);
    auto y = combine(key, message, picked);
    ASSERT_TRUE(y.ok()) << to_string(y.error().error) << " share " << int{y.error().index};
    EXPECT_EQ(y->value, expected);
    EXPECT_TRUE(verify(key, message, *y).ok());
  }
}

TEST(ThresholdRsa, EveryThreeOfFourSharesCombineToTheDealersRsaSignature) {
  const Fixture& f = fixture();
  ASSERT_EQ(f.shares.size(), 4u);
  const Bytes message = round_message(0, 41);
  auto x = hash_to_group(f.key, message);
  ASSERT_TRUE(x.ok());
  const auto powers = dealer_powers(f.key, f.secret, *x);
  const auto shares = sign_all(f.key, f.shares, message);
  for (const auto& share : shares) EXPECT_TRUE(verify_share(f.key, message, share).ok()) << int{share.index};
  // The unique e-th root of x: the dealer's RSA signature, whichever three signed.
  expect_every_subset_combines_to(f.key, shares, message, powers.x_to_rsa_d);
  EXPECT_EQ(square(f.key, powers.x_to_rsa_d), powers.x_squared_to_d);  // y^2 = (x^2)^d, d = f(0)
  // All four: the first three are used, the same signature.
  auto all = combine(f.key, message, shares);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->value, powers.x_to_rsa_d);
}

TEST(ThresholdRsa, APinnedRoundMessageHashesAndSignsToItsPinnedBytes) {
  const Fixture& f = fixture();
  ASSERT_EQ(f.shares.size(), 4u);
  EXPECT_EQ(f.message, round_message(3, 7));
  EXPECT_EQ(encode_public_key(f.key), f.raw.at("public_key"));  // byte-exact both ways
  for (const auto& share : f.shares) {
    EXPECT_EQ(encode_secret_share(share), f.raw.at("share_" + std::to_string(share.index())));
  }
  auto x = hash_to_group(f.key, f.message);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(*x, f.x);
  const auto shares = sign_all(f.key, f.shares, f.message);
  expect_every_subset_combines_to(f.key, shares, f.message, f.signature);
  auto pinned = decode_signature(f.key, f.signature);
  ASSERT_TRUE(pinned.ok());
  EXPECT_TRUE(verify(f.key, f.message, *pinned).ok());
  EXPECT_EQ(encode_signature(*pinned), f.signature);
  EXPECT_EQ(dealer_powers(f.key, f.secret, f.x).x_to_rsa_d, f.signature);
}

TEST(ThresholdRsa, AFreshDealingSignsAndItsEncodingsRoundTrip) {
  DealerSecret secret;
  auto dealing = deal(3, 4, kMinModulusBits, secret);
  ASSERT_TRUE(dealing.ok()) << to_string(dealing.error());
  const PublicKey& key = dealing->public_key;
  EXPECT_EQ(key.element_size() * 8, kMinModulusBits);
  EXPECT_EQ(key.threshold, 3);
  EXPECT_EQ(key.shares, 4);
  ASSERT_EQ(key.verification_keys.size(), 4u);
  ASSERT_EQ(dealing->shares.size(), 4u);
  auto decoded = decode_public_key(encode_public_key(key));
  ASSERT_TRUE(decoded.ok()) << to_string(decoded.error());
  EXPECT_EQ(*decoded, key);
  for (const auto& share : dealing->shares) {
    auto back = decode_secret_share(key, encode_secret_share(share));
    ASSERT_TRUE(back.ok()) << to_string(back.error());
    EXPECT_EQ(back->index(), share.index());
    EXPECT_TRUE(std::equal(back->value().begin(), back->value().end(), share.value().begin(), share.value().end()));
  }
  const Bytes message = round_message(1, 2);
  auto x = hash_to_group(key, message);
  ASSERT_TRUE(x.ok());
  auto shares = sign_all(key, dealing->shares, message);
  for (const auto& share : shares) {
    auto back = decode_signature_share(key, encode_signature_share(share));
    ASSERT_TRUE(back.ok()) << to_string(back.error());
    EXPECT_EQ(*back, share);
  }
  expect_every_subset_combines_to(key, shares, message, dealer_powers(key, secret, *x).x_to_rsa_d);
}

TEST(ThresholdRsa, AKOfKAndAOneOfOneDealingSign) {
  for (auto [k, n] : {std::pair<std::uint8_t, std::uint8_t>{1, 1}, {2, 2}}) {
    auto dealing = deal(k, n, kMinModulusBits);
    ASSERT_TRUE(dealing.ok());
    const Bytes message = round_message(0, 1);
    auto shares = sign_all(dealing->public_key, dealing->shares, message);
    auto y = combine(dealing->public_key, message, shares);
    ASSERT_TRUE(y.ok());
    EXPECT_TRUE(verify(dealing->public_key, message, *y).ok());
  }
}

TEST(ThresholdRsa, DealingRefusesParametersOutOfRange) {
  EXPECT_EQ(deal(0, 4, 2048).error(), Error::kParameters);
  EXPECT_EQ(deal(5, 4, 2048).error(), Error::kParameters);
  EXPECT_EQ(deal(1, 0, 2048).error(), Error::kParameters);
  EXPECT_EQ(deal(3, 65, 2048).error(), Error::kParameters);
  EXPECT_EQ(deal(3, 4, 1000).error(), Error::kParameters);  // not a multiple of 16
  EXPECT_EQ(deal(3, 4, 512).error(), Error::kParameters);
  EXPECT_EQ(deal(3, 4, 8192).error(), Error::kParameters);
}

TEST(ThresholdRsa, FewerThanKSharesRefuseToCombine) {
  const Fixture& f = fixture();
  const Bytes message = round_message(0, 5);
  auto shares = sign_all(f.key, f.shares, message);
  for (std::size_t count = 0; count < 3; ++count) {
    auto y = combine(f.key, message, std::span(shares).first(count));
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.error().error, Error::kNotEnoughShares);
    EXPECT_EQ(y.error().index, 0);
  }
  // Three shares of which two are one share: still two, and the repeat is named.
  std::vector<SignatureShare> repeated = {shares[0], shares[1], shares[1]};
  auto y = combine(f.key, message, repeated);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.error().error, Error::kDuplicateShare);
  EXPECT_EQ(y.error().index, 2);
}

// Combining shares 1..3 with `bad` in place of its index's share names `bad`.
void expect_named(const Fixture& f, ByteView message, const SignatureShare& bad) {
  EXPECT_EQ(verify_share(f.key, message, bad).error(), Error::kShareProofMismatch);
  std::vector<SignatureShare> set = sign_all(f.key, f.shares, message);
  set[bad.index - 1] = bad;
  auto y = combine(f.key, message, set);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.error().error, Error::kShareProofMismatch);
  EXPECT_EQ(y.error().index, bad.index);
}

TEST(ThresholdRsa, AShareWithAChangedByteFailsItsProofAndIsNamed) {
  const Fixture& f = fixture();
  const Bytes message = round_message(0, 9);
  const auto good = sign_all(f.key, f.shares, message)[1];  // share 2
  ASSERT_TRUE(verify_share(f.key, message, good).ok());
  for (std::size_t at : {std::size_t{1}, good.value.size() / 2, good.value.size() - 1}) {
    SignatureShare bad = good;
    bad.value[at] ^= 0x01;
    SCOPED_TRACE(at);
    expect_named(f, message, bad);
  }
  SignatureShare bad_c = good;
  bad_c.challenge[5] ^= 0x80;
  expect_named(f, message, bad_c);
  SignatureShare bad_z = good;
  bad_z.response.back() ^= 0x01;
  expect_named(f, message, bad_z);
}

TEST(ThresholdRsa, AShareOfAnotherMessageFailsItsProofAndIsNamed) {
  const Fixture& f = fixture();
  const Bytes message = round_message(2, 10);
  auto other = sign_share(f.key, f.shares[2], round_message(2, 11));
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(verify_share(f.key, round_message(2, 11), *other).ok());
  expect_named(f, message, *other);
}

TEST(ThresholdRsa, AShareClaimingAnotherIndexFailsItsProofAndIsNamed) {
  const Fixture& f = fixture();
  const Bytes message = round_message(2, 12);
  auto share = sign_share(f.key, f.shares[0], message);
  ASSERT_TRUE(share.ok());
  SignatureShare claimed = *share;
  claimed.index = 4;
  EXPECT_EQ(verify_share(f.key, message, claimed).error(), Error::kShareProofMismatch);
  // Shares 2 and 3 and "4" (share 1's): the claimed one is named.
  auto shares = sign_all(f.key, f.shares, message);
  std::vector<SignatureShare> set = {shares[1], shares[2], claimed};
  auto y = combine(f.key, message, set);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.error().error, Error::kShareProofMismatch);
  EXPECT_EQ(y.error().index, 4);
  claimed.index = 0;
  EXPECT_EQ(verify_share(f.key, message, claimed).error(), Error::kIndexOutOfRange);
  claimed.index = 5;
  EXPECT_EQ(verify_share(f.key, message, claimed).error(), Error::kIndexOutOfRange);
}

TEST(ThresholdRsa, ASignatureWithAChangedByteFailsToVerify) {
  const Fixture& f = fixture();
  auto pinned = decode_signature(f.key, f.signature);
  ASSERT_TRUE(pinned.ok());
  ASSERT_TRUE(verify(f.key, f.message, *pinned).ok());
  EXPECT_EQ(verify(f.key, round_message(3, 8), *pinned).error(), Error::kSignatureMismatch);
  for (std::size_t at : {std::size_t{1}, f.signature.size() / 2, f.signature.size() - 1}) {
    Signature bad = *pinned;
    bad.value[at] ^= 0x04;
    EXPECT_EQ(verify(f.key, f.message, bad).error(), Error::kSignatureMismatch) << at;
  }
}

TEST(ThresholdRsa, AMessageHashingToANonUnitIsRefusedByItsType) {
  // Not a dealing's modulus: N = 3^646 (1024 bits), so a third of all messages hash to a multiple of 3.
  PublicKey key;
  BN_CTX* c = BN_CTX_new();
  Bn n(BN_new()), exp = bn_word(646), three = bn_word(3);
  BN_exp(n.get(), three.get(), exp.get(), c);
  BN_CTX_free(c);
  ASSERT_EQ(BN_num_bits(n.get()), 1024);
  key.modulus = bytes_of(n.get(), 128);
  key.threshold = key.shares = 1;
  key.v = Bytes(128, 0);
  key.v.back() = 4;
  key.verification_keys = {key.v};
  int refused = 0;
  for (std::uint64_t view = 0; view < 30; ++view) {
    auto x = hash_to_group(key, round_message(0, view));
    if (x) continue;
    EXPECT_EQ(x.error(), Error::kMessageNotUnit);
    EXPECT_EQ(verify(key, round_message(0, view), Signature{Bytes(128, 1)}).error(), Error::kMessageNotUnit);
    ++refused;
  }
  EXPECT_GT(refused, 0);
}

// An encoding's element slot set to `value`.
Bytes with_slot(Bytes encoding, std::size_t offset, const Bytes& value) {
  std::copy(value.begin(), value.end(), encoding.begin() + static_cast<std::ptrdiff_t>(offset));
  return encoding;
}

TEST(ThresholdRsa, ThePublicKeyDecoderRefusesMalformedKeys) {
  const Fixture& f = fixture();
  const Bytes good = f.raw.at("public_key");
  const std::size_t w = f.key.element_size();
  ASSERT_EQ(good.size(), 5 + 6 * w);
  EXPECT_EQ(decode_public_key(Bytes{}).error(), Error::kLength);
  EXPECT_EQ(decode_public_key(Bytes(good.begin(), good.end() - 1)).error(), Error::kLength);
  Bytes longer = good;
  longer.push_back(0);
  EXPECT_EQ(decode_public_key(longer).error(), Error::kLength);
  Bytes version = good;
  version[0] = 2;
  EXPECT_EQ(decode_public_key(version).error(), Error::kVersion);
  Bytes width = good;
  width[1] = 0x00, width[2] = 0x40;  // 512 bits
  EXPECT_EQ(decode_public_key(width).error(), Error::kModulusInvalid);
  width[1] = 0x02, width[2] = 0x01;  // 4104 bits
  EXPECT_EQ(decode_public_key(width).error(), Error::kModulusInvalid);
  for (auto [k, n] : {std::pair<int, int>{0, 4}, {5, 4}, {1, 0}, {3, 65}}) {
    Bytes kn = good;
    kn[3] = static_cast<std::uint8_t>(k), kn[4] = static_cast<std::uint8_t>(n);
    EXPECT_EQ(decode_public_key(kn).error(), Error::kParameters) << k << " of " << n;
  }
  Bytes even = good;
  even[5 + w - 1] &= 0xfe;
  EXPECT_EQ(decode_public_key(even).error(), Error::kModulusInvalid);
  Bytes leading_zero = good;
  leading_zero[5] = 0;
  EXPECT_EQ(decode_public_key(leading_zero).error(), Error::kModulusInvalid);
  // v and each v_i: zero, N, all ones, and p (a factor of N).
  for (std::size_t slot = 1; slot < 6; ++slot) {
    SCOPED_TRACE(slot);
    const std::size_t at = 5 + slot * w;
    EXPECT_EQ(decode_public_key(with_slot(good, at, Bytes(w, 0))).error(), Error::kElementZero);
    EXPECT_EQ(decode_public_key(with_slot(good, at, f.key.modulus)).error(), Error::kElementNotBelowModulus);
    EXPECT_EQ(decode_public_key(with_slot(good, at, Bytes(w, 0xff))).error(), Error::kElementNotBelowModulus);
    Bytes p(w - f.secret.p.size(), 0);
    p.insert(p.end(), f.secret.p.begin(), f.secret.p.end());
    EXPECT_EQ(decode_public_key(with_slot(good, at, p)).error(), Error::kElementNotUnit);
  }
}

TEST(ThresholdRsa, TheSecretShareDecoderRefusesMalformedShares) {
  const Fixture& f = fixture();
  const Bytes good = f.raw.at("share_2");
  const std::size_t w = f.key.element_size();
  ASSERT_EQ(good.size(), 4 + w);
  ASSERT_TRUE(decode_secret_share(f.key, good).ok());
  EXPECT_EQ(decode_secret_share(f.key, Bytes(good.begin(), good.end() - 1)).error(), Error::kLength);
  Bytes longer = good;
  longer.push_back(0);
  EXPECT_EQ(decode_secret_share(f.key, longer).error(), Error::kLength);
  Bytes version = good;
  version[0] = 0;
  EXPECT_EQ(decode_secret_share(f.key, version).error(), Error::kVersion);
  Bytes width = good;
  width[2] ^= 1;
  EXPECT_EQ(decode_secret_share(f.key, width).error(), Error::kLength);
  for (std::uint8_t index : {0, 5, 255}) {
    Bytes bad = good;
    bad[3] = index;
    EXPECT_EQ(decode_secret_share(f.key, bad).error(), Error::kIndexOutOfRange) << int{index};
  }
  EXPECT_EQ(decode_secret_share(f.key, with_slot(good, 4, Bytes(w, 0))).error(), Error::kElementZero);
  EXPECT_EQ(decode_secret_share(f.key, with_slot(good, 4, f.key.modulus)).error(), Error::kElementNotBelowModulus);
  EXPECT_EQ(decode_secret_share(f.key, with_slot(good, 4, Bytes(w, 0xff))).error(), Error::kElementNotBelowModulus);
  Bytes other_index = good;
  other_index[3] = 1;  // share 2's value claimed as share 1's
  EXPECT_EQ(decode_secret_share(f.key, other_index).error(), Error::kShareKeyMismatch);
}

TEST(ThresholdRsa, TheSignatureShareAndSignatureDecodersRefuseMalformedBytes) {
  const Fixture& f = fixture();
  const std::size_t w = f.key.element_size();
  auto share = sign_share(f.key, f.shares[3], f.message);
  ASSERT_TRUE(share.ok());
  const Bytes good = encode_signature_share(*share);
  ASSERT_EQ(good.size(), 1 + w + kChallengeSize + w + kResponseExtra);
  EXPECT_EQ(decode_signature_share(f.key, Bytes{}).error(), Error::kLength);
  EXPECT_EQ(decode_signature_share(f.key, Bytes(good.begin(), good.end() - 1)).error(), Error::kLength);
  Bytes longer = good;
  longer.push_back(0);
  EXPECT_EQ(decode_signature_share(f.key, longer).error(), Error::kLength);
  for (std::uint8_t index : {0, 5}) {
    Bytes bad = good;
    bad[0] = index;
    EXPECT_EQ(decode_signature_share(f.key, bad).error(), Error::kIndexOutOfRange);
  }
  EXPECT_EQ(decode_signature_share(f.key, with_slot(good, 1, Bytes(w, 0))).error(), Error::kElementZero);
  EXPECT_EQ(decode_signature_share(f.key, with_slot(good, 1, f.key.modulus)).error(), Error::kElementNotBelowModulus);
  EXPECT_EQ(decode_signature_share(f.key, with_slot(good, 1, Bytes(w, 0xff))).error(),
            Error::kElementNotBelowModulus);

  const Bytes& sig = f.signature;
  EXPECT_EQ(decode_signature(f.key, Bytes{}).error(), Error::kLength);
  EXPECT_EQ(decode_signature(f.key, Bytes(sig.begin(), sig.end() - 1)).error(), Error::kLength);
  Bytes sig_longer = sig;
  sig_longer.push_back(0);
  EXPECT_EQ(decode_signature(f.key, sig_longer).error(), Error::kLength);
  EXPECT_EQ(decode_signature(f.key, Bytes(w, 0)).error(), Error::kElementZero);
  EXPECT_EQ(decode_signature(f.key, f.key.modulus).error(), Error::kElementNotBelowModulus);
  EXPECT_EQ(decode_signature(f.key, Bytes(w, 0xff)).error(), Error::kElementNotBelowModulus);
  // verify() checks the same on a Signature built without the decoder.
  EXPECT_EQ(verify(f.key, f.message, Signature{Bytes(w, 0)}).error(), Error::kElementZero);
  EXPECT_EQ(verify(f.key, f.message, Signature{Bytes(w - 1, 1)}).error(), Error::kLength);
}


// ---- A PublicKey built by hand: its invariants are checked by every call ----

// The pinned share 1's signature share of the fixture's message.
SignatureShare pinned_share(const Fixture& f) {
  auto share = decode_signature_share(f.key, f.signature_share_1);
  EXPECT_TRUE(share.ok());
  return share.ok() ? *share : SignatureShare{};
}

// Every public call taking a key refuses `bad` with kParameters (combine names
// no share). hash_to_group first: before the check, it returned a value for
// every key below, so the old code fails here without reaching the calls that
// wrote past an array or aborted.
void expect_key_refused(const PublicKey& bad) {
  const Fixture& f = fixture();
  auto x = hash_to_group(bad, f.message);
  ASSERT_FALSE(x.ok()) << "hash_to_group accepted the key";
  EXPECT_EQ(x.error(), Error::kParameters);
  auto signed_share = sign_share(bad, f.shares[0], f.message);
  ASSERT_FALSE(signed_share.ok());
  EXPECT_EQ(signed_share.error(), Error::kParameters);
  SignatureShare share = pinned_share(f);
  auto verified = verify_share(bad, f.message, share);
  ASSERT_FALSE(verified.ok());
  EXPECT_EQ(verified.error(), Error::kParameters);
  // The last index the key claims (65 for the oversized key: one past combine's table).
  SignatureShare last = share;
  last.index = bad.shares;
  const std::vector<SignatureShare> set = {share, last};
  auto y = combine(bad, f.message, set);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.error().error, Error::kParameters);
  EXPECT_EQ(y.error().index, 0);
  auto checked = verify(bad, f.message, Signature{f.signature});
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error(), Error::kParameters);
  for (const Bytes& encoded : {f.raw.at("share_1"), f.raw.at("share_4")}) {
    auto secret_share = decode_secret_share(bad, encoded);
    ASSERT_FALSE(secret_share.ok());
    EXPECT_EQ(secret_share.error(), Error::kParameters);
  }
  auto decoded_share = decode_signature_share(bad, f.signature_share_1);
  ASSERT_FALSE(decoded_share.ok());
  EXPECT_EQ(decoded_share.error(), Error::kParameters);
  auto decoded_signature = decode_signature(bad, f.signature);
  ASSERT_FALSE(decoded_signature.ok());
  EXPECT_EQ(decoded_signature.error(), Error::kParameters);
}

TEST(ThresholdRsaKeyInvariants, MoreThan64SharesAreRefused) {
  PublicKey bad = fixture().key;
  bad.shares = kMaxShares + 1;
  bad.verification_keys.resize(bad.shares, bad.verification_keys[0]);
  expect_key_refused(bad);
  bad.shares = 255;
  bad.verification_keys.resize(bad.shares, bad.verification_keys[0]);
  expect_key_refused(bad);
}

TEST(ThresholdRsaKeyInvariants, AVerificationKeyCountOtherThanNIsRefused) {
  for (std::size_t count : {0, 3, 5}) {
    SCOPED_TRACE(count);
    PublicKey bad = fixture().key;
    bad.verification_keys.resize(count, bad.verification_keys[0]);
    expect_key_refused(bad);
  }
}

TEST(ThresholdRsaKeyInvariants, AThresholdOutsideOneToNIsRefused) {
  for (auto [k, n] : {std::pair<int, int>{5, 4}, {0, 4}, {1, 0}}) {
    SCOPED_TRACE(std::to_string(k) + " of " + std::to_string(n));
    PublicKey bad = fixture().key;
    bad.threshold = static_cast<std::uint8_t>(k);
    bad.shares = static_cast<std::uint8_t>(n);
    bad.verification_keys.resize(bad.shares, bad.verification_keys[0]);
    expect_key_refused(bad);
  }
}

TEST(ThresholdRsaKeyInvariants, AnEvenModulusIsRefused) {
  PublicKey bad = fixture().key;
  bad.modulus.back() &= 0xfe;
  expect_key_refused(bad);
}

TEST(ThresholdRsaKeyInvariants, AModulusNotOfItsDeclaredWidthIsRefused) {
  const PublicKey& good = fixture().key;
  {
    SCOPED_TRACE("a leading zero byte: N is one byte shorter than every element");
    PublicKey bad = good;
    bad.modulus[0] = 0;
    expect_key_refused(bad);
  }
  for (std::size_t width : {kMinModulusBits / 8 - 1, kMaxModulusBits / 8 + 1, std::size_t{0}}) {
    SCOPED_TRACE("every value " + std::to_string(width) + " bytes");
    PublicKey bad = good;
    auto resize = [&](Bytes& b) { b.resize(width, 0x01); };
    resize(bad.modulus);
    resize(bad.v);
    for (auto& v_i : bad.verification_keys) resize(v_i);
    expect_key_refused(bad);
  }
  {
    SCOPED_TRACE("v one byte longer than N");
    PublicKey bad = good;
    bad.v.insert(bad.v.begin(), 0x01);
    expect_key_refused(bad);
  }
  {
    SCOPED_TRACE("v_4 one byte longer than N");
    PublicKey bad = good;
    bad.verification_keys[3].insert(bad.verification_keys[3].begin(), 0x01);
    expect_key_refused(bad);
  }
}

TEST(ThresholdRsaKeyInvariants, AVerificationKeyThatIsNoUnitIsRefusedNotAborted) {
  // The decoder refuses such a key (kElementNotUnit); built by hand, verify_share
  // took v_1's inverse and aborted.
  const Fixture& f = fixture();
  PublicKey bad = f.key;
  Bytes p(bad.element_size() - f.secret.p.size(), 0);
  p.insert(p.end(), f.secret.p.begin(), f.secret.p.end());
  bad.verification_keys[0] = p;
  const SignatureShare share = pinned_share(f);
  EXPECT_EQ(verify_share(bad, f.message, share).error(), Error::kParameters);
  const std::vector<SignatureShare> set = {share};
  auto y = combine(bad, f.message, set);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.error().error, Error::kParameters);
  EXPECT_EQ(y.error().index, 0);
}

// ---- The pinned signature share, and what the proof allows ----

TEST(ThresholdRsa, ThePinnedSignatureShareVerifiesAndIsXToTwoDeltaSi) {
  const Fixture& f = fixture();
  ASSERT_EQ(f.signature_share_1.size(), 1 + 2 * f.key.element_size() + kChallengeSize + kResponseExtra);
  const SignatureShare share = pinned_share(f);
  EXPECT_EQ(share.index, 1);
  EXPECT_EQ(encode_signature_share(share), f.signature_share_1);
  EXPECT_TRUE(verify_share(f.key, f.message, share).ok());
  // x_1 = x^(2 Delta s_1), Delta = 4! = 24, from the pinned x and s_1, test-side.
  BN_CTX* c = BN_CTX_new();
  Bn n = bn(f.key.modulus), x = bn(f.x), exponent = bn(f.shares[0].value()), x_1(BN_new());
  BN_mul_word(exponent.get(), 2 * 24);
  BN_mod_exp(x_1.get(), x.get(), exponent.get(), n.get(), c);
  BN_CTX_free(c);
  EXPECT_EQ(share.value, bytes_of(x_1.get(), f.key.element_size()));
  // It combines with shares 2 and 3 into the pinned signature; of another message it fails.
  auto others = sign_all(f.key, f.shares, f.message);
  const std::vector<SignatureShare> set = {others[2], share, others[1]};
  auto y = combine(f.key, f.message, set);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->value, f.signature);
  EXPECT_EQ(verify_share(f.key, round_message(3, 8), share).error(), Error::kShareProofMismatch);
}

TEST(ThresholdRsa, ANegatedShareVerifiesAndCombinesToTheSameSignature) {
  // The proof is of x_i^2, so -x_i passes too (choice 168); combining squares it away.
  const Fixture& f = fixture();
  const SignatureShare share = pinned_share(f);
  BN_CTX* c = BN_CTX_new();
  Bn n = bn(f.key.modulus), x_1 = bn(share.value), negated(BN_new());
  BN_sub(negated.get(), n.get(), x_1.get());
  BN_CTX_free(c);
  SignatureShare minus = share;
  minus.value = bytes_of(negated.get(), f.key.element_size());
  ASSERT_NE(minus.value, share.value);
  EXPECT_TRUE(verify_share(f.key, f.message, minus).ok());
  auto others = sign_all(f.key, f.shares, f.message);
  for (const auto& first : {share, minus}) {
    const std::vector<SignatureShare> set = {first, others[1], others[3]};
    auto y = combine(f.key, f.message, set);
    ASSERT_TRUE(y.ok()) << to_string(y.error().error);
    EXPECT_EQ(y->value, f.signature);
  }
}

bool is_prime(const BIGNUM* b) {
  BN_CTX* c = BN_CTX_new();
  const int prime = BN_check_prime(b, c, nullptr);
  BN_CTX_free(c);
  return prime == 1;
}

// p and q safe primes (p' and q' prime too), distinct, with N = pq.
void expect_safe_primes(const PublicKey& key, const DealerSecret& secret) {
  Bn p = bn(secret.p), q = bn(secret.q), p1(BN_new()), q1(BN_new()), n(BN_new());
  BN_rshift1(p1.get(), p.get());
  BN_rshift1(q1.get(), q.get());
  EXPECT_TRUE(is_prime(p.get()));
  EXPECT_TRUE(is_prime(q.get()));
  EXPECT_TRUE(is_prime(p1.get())) << "p' = (p - 1) / 2 not prime: p is not a safe prime";
  EXPECT_TRUE(is_prime(q1.get())) << "q' = (q - 1) / 2 not prime: q is not a safe prime";
  EXPECT_NE(BN_cmp(p.get(), q.get()), 0);
  BN_CTX* c = BN_CTX_new();
  BN_mul(n.get(), p.get(), q.get(), c);
  BN_CTX_free(c);
  EXPECT_EQ(bytes_of(n.get(), key.element_size()), key.modulus);
}

TEST(ThresholdRsa, ADealingsPrimesAreSafe) {
  expect_safe_primes(fixture().key, fixture().secret);
  for (int dealing = 0; dealing < 2; ++dealing) {
    DealerSecret secret;
    auto dealt = deal(2, 3, kMinModulusBits, secret);
    ASSERT_TRUE(dealt.ok());
    EXPECT_EQ(BN_num_bits(bn(dealt->public_key.modulus).get()), static_cast<int>(kMinModulusBits));
    expect_safe_primes(dealt->public_key, secret);
  }
}

TEST(ThresholdRsa, CombineNamesAShareWhoseIndexIsOutOfRange) {
  const Fixture& f = fixture();
  const SignatureShare share = pinned_share(f);
  for (std::uint8_t index : {0, 5, 65, 255}) {
    SCOPED_TRACE(int{index});
    SignatureShare bad = share;
    bad.index = index;
    const std::vector<SignatureShare> set = {share, bad};
    auto y = combine(f.key, f.message, set);
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.error().error, Error::kIndexOutOfRange);
    EXPECT_EQ(y.error().index, index);
  }
}

TEST(ThresholdRsa, CombineRefusesAMessageHashingToANonUnitWithoutNamingAShare) {
  // The modulus 3^646 of AMessageHashingToANonUnitIsRefusedByItsType: the message
  // is at fault, not share 1 (before: CombineError{kMessageNotUnit, 1}).
  PublicKey key;
  BN_CTX* c = BN_CTX_new();
  Bn n(BN_new()), exp = bn_word(646), three = bn_word(3);
  BN_exp(n.get(), three.get(), exp.get(), c);
  BN_CTX_free(c);
  key.modulus = bytes_of(n.get(), 128);
  key.threshold = key.shares = 1;
  key.v = Bytes(128, 0);
  key.v.back() = 4;
  key.verification_keys = {key.v};
  SignatureShare share;
  share.index = 1;
  share.value = Bytes(128, 1);
  share.response = Bytes(128 + kResponseExtra, 1);
  int refused = 0;
  for (std::uint64_t view = 0; view < 30; ++view) {
    if (hash_to_group(key, round_message(0, view))) continue;
    const std::vector<SignatureShare> set = {share};
    auto y = combine(key, round_message(0, view), set);
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.error().error, Error::kMessageNotUnit);
    EXPECT_EQ(y.error().index, 0);
    ++refused;
  }
  EXPECT_GT(refused, 0);
}

// Appends share 1's signature share of the fixture's message (see the top of this file).
TEST(ThresholdRsaFixture, DISABLED_AppendSignatureShare) {
  const char* out_path = std::getenv("COWBOY_THRESHOLD_RSA_FIXTURE_OUT");
  ASSERT_NE(out_path, nullptr) << "set COWBOY_THRESHOLD_RSA_FIXTURE_OUT";
  const Fixture& f = fixture();
  ASSERT_TRUE(f.signature_share_1.empty()) << "already there";
  auto share = sign_share(f.key, f.shares[0], f.message);
  ASSERT_TRUE(share.ok());
  std::ofstream out(out_path, std::ios::app);
  out << "signature_share_1 " << to_hex(encode_signature_share(*share)) << "\n";
  ASSERT_TRUE(out.good());
}

// Writes the pinned fixture (see the top of this file); deals a 2048-bit key.
TEST(ThresholdRsaFixture, DISABLED_WriteFixture) {
  const char* out_path = std::getenv("COWBOY_THRESHOLD_RSA_FIXTURE_OUT");
  ASSERT_NE(out_path, nullptr) << "set COWBOY_THRESHOLD_RSA_FIXTURE_OUT";
  DealerSecret secret;
  auto dealing = deal(3, 4, kModulusBits, secret);
  ASSERT_TRUE(dealing.ok());
  const PublicKey& key = dealing->public_key;
  const Bytes message = round_message(3, 7);
  auto x = hash_to_group(key, message);
  ASSERT_TRUE(x.ok());
  auto shares = sign_all(key, dealing->shares, message);
  auto y = combine(key, message, shares);
  ASSERT_TRUE(y.ok());
  std::ofstream out(out_path);
  out << "# A 3-of-4 threshold RSA dealing at 2048 bits for tests only (common/threshold_rsa.h):\n"
         "# written by tests/common/threshold_rsa_test.cc ThresholdRsaFixture.DISABLED_WriteFixture.\n"
         "# The secrets are public here on purpose; never use this key.\n";
  out << "public_key " << to_hex(encode_public_key(key)) << "\n";
  for (const auto& share : dealing->shares) {
    out << "share_" << int{share.index()} << " " << to_hex(encode_secret_share(share)) << "\n";
  }
  out << "p " << to_hex(secret.p) << "\nq " << to_hex(secret.q) << "\n";
  out << "message " << to_hex(message) << "\nx " << to_hex(*x) << "\nsignature " << to_hex(encode_signature(*y))
      << "\nsignature_share_1 " << to_hex(encode_signature_share(shares[0])) << "\n";
  ASSERT_TRUE(out.good());
}

}  // namespace
}  // namespace cowboy::crypto::threshold_rsa
