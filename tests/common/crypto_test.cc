#include "common/crypto.h"

#include <gtest/gtest.h>

#include "../support/high_s.h"

#include <random>

#include "common/keccak_x8.h"

namespace cowboy::crypto {

TEST(Keccak256, MatchesTheOriginalKeccakVectorsNotSha3) {
  EXPECT_EQ(to_hex(keccak256(as_bytes(""))), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  EXPECT_EQ(to_hex(keccak256(as_bytes("abc"))), "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
  // SHA3-256("") would be a7ffc6f8...
  EXPECT_NE(to_hex(keccak256(as_bytes(""))).substr(0, 8), "a7ffc6f8");
}

TEST(Sha256, MatchesTheFips180Vectors) {
  EXPECT_EQ(to_hex(sha256(as_bytes(""))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256(as_bytes("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256({as_bytes("a"), as_bytes("bc")}), sha256(as_bytes("abc")));
}

TEST(Sha256, FedInPartsItHashesTheConcatenation) {
  Sha256 empty;
  EXPECT_EQ(to_hex(empty.finish()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string text(1000, 'x');  // parts across the 64-byte blocks
  Sha256 parts;
  for (std::size_t at = 0; at < text.size(); at += 7) parts.update(as_bytes(std::string_view(text).substr(at, 7)));
  EXPECT_EQ(parts.finish(), sha256(as_bytes(text)));
}

TEST(Keccak256, PartsHashLikeTheirConcatenation) {
  EXPECT_EQ(keccak256({as_bytes("ab"), as_bytes(""), as_bytes("c")}), keccak256(as_bytes("abc")));
}

// Inputs of every length that moves the padding: empty, one byte short of a
// 136-byte block (pad bytes 0x01 and 0x80 share the last byte), exact blocks,
// one over, and a few blocks.
std::vector<Bytes> inputs_around_block_edges() {
  std::mt19937_64 rng(7);
  std::vector<Bytes> inputs;
  for (std::size_t size : {0, 1, 31, 32, 100, 135, 136, 137, 200, 255, 256, 271, 272, 273, 1000, 4096}) {
    Bytes b(size);
    for (auto& byte : b) byte = static_cast<std::uint8_t>(rng());
    inputs.push_back(std::move(b));
  }
  return inputs;
}

TEST(Keccak256Many, EachOutputIsThatInputsKeccak256ForEveryCountAndLengthMix) {
  auto pool = inputs_around_block_edges();
  // Every count 0..20 (partial and several 8-lane passes), lengths rotated so
  // each pass mixes short and long inputs.
  for (std::size_t count = 0; count <= 20; ++count) {
    std::vector<ByteView> views;
    for (std::size_t i = 0; i < count; ++i) views.push_back(pool[(i * 5 + count) % pool.size()]);
    std::vector<Bytes32> out(count);
    keccak256_many(views, out);
    for (std::size_t i = 0; i < count; ++i)
      EXPECT_EQ(out[i], keccak256(views[i])) << "count " << count << " input " << i << " size " << views[i].size();
  }
}

TEST(Keccak256Many, TheEightLanePathMatchesTheKnownVectors) {
  if (!detail::keccak_x8_available()) GTEST_SKIP() << "no AVX-512 on this CPU; keccak256_many hashes one at a time";
  std::vector<ByteView> views{as_bytes(""), as_bytes("abc")};
  Bytes32 out[2];
  detail::keccak256_x8(views.data(), views.size(), out);
  EXPECT_EQ(to_hex(out[0]), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  EXPECT_EQ(to_hex(out[1]), "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
}

TEST(Keccak256Many, TheEightLanePathMatchesTheLibraryOnRandomInputs) {
  if (!detail::keccak_x8_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    std::size_t count = 1 + rng() % detail::kKeccakLanes;
    std::vector<Bytes> inputs(count);
    for (auto& b : inputs) {
      b.resize(rng() % 700);
      for (auto& byte : b) byte = static_cast<std::uint8_t>(rng());
    }
    std::vector<ByteView> views(inputs.begin(), inputs.end());
    Bytes32 out[detail::kKeccakLanes];
    detail::keccak256_x8(views.data(), count, out);
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(out[i], keccak256(views[i])) << "size " << views[i].size();
  }
}

TEST(Ed25519, Rfc8032TestOne) {
  auto seed = *fixed_from_hex<32>("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
  auto kp = ed25519_from_seed(seed);
  EXPECT_EQ(to_hex(kp.public_key), "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  auto sig = ed25519_sign(seed, {});
  EXPECT_EQ(to_hex(sig),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46b"
            "d25bf5f0595bbe24655141438e7a100b");
  EXPECT_TRUE(ed25519_verify(kp.public_key, {}, sig));
  sig[0] ^= 1;
  EXPECT_FALSE(ed25519_verify(kp.public_key, {}, sig));
}

// Signing keeps the last expanded key per thread; switching keys must never sign with a stale one.
TEST(Ed25519, AlternatingKeysEachSignWithTheirOwn) {
  auto tv1 = *fixed_from_hex<32>("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
  Ed25519Seed other;
  other.fill(0x42);
  const Bytes message{1, 2, 3};
  for (int round = 0; round < 3; ++round) {
    for (const auto& seed : {tv1, other, tv1, tv1, other}) {
      auto sig = ed25519_sign(seed, message);
      EXPECT_TRUE(ed25519_verify(ed25519_from_seed(seed).public_key, message, sig));
      const auto& another = seed == tv1 ? other : tv1;
      EXPECT_FALSE(ed25519_verify(ed25519_from_seed(another).public_key, message, sig));
    }
  }
  EXPECT_EQ(to_hex(ed25519_sign(tv1, {})).substr(0, 16), "e5564300c360ac72");  // RFC 8032 TV1 after the switches
}

TEST(Secp256k1, KnownKeyGivesItsEvmAddress) {
  auto secret = *fixed_from_hex<32>("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318");
  auto address = secp256k1_address(secret);
  ASSERT_TRUE(address);
  EXPECT_EQ(to_hex(*address), "2c7536e3605d9c16a7a3d7b1898e529396a65c23");
}

TEST(Secp256k1, RecoverableSignatureRecoversTheSignerAndNotAnother) {
  auto secret = *fixed_from_hex<32>("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318");
  Bytes32 digest = keccak256(as_bytes("cowboy"));
  auto sig = secp256k1_sign(secret, digest);
  ASSERT_TRUE(sig);
  EXPECT_EQ(secp256k1_recover_address(digest, *sig), secp256k1_address(secret));
  Bytes32 other = keccak256(as_bytes("cowgirl"));
  EXPECT_NE(secp256k1_recover_address(other, *sig), secp256k1_address(secret));
  auto bad = *sig;
  bad[64] = 7;  // recovery id out of range
  EXPECT_FALSE(secp256k1_recover_address(digest, bad));
  auto twin = *sig;  // (r, n - s, v ^ 1) verifies under the same key: refused, low S only
  cowboy::testing::make_high_s_twin(twin);
  EXPECT_FALSE(secp256k1_recover_address(digest, twin));
  EXPECT_FALSE(secp256k1_recover_key(digest, twin));
}

TEST(Secp256k1, ZeroSecretIsRefused) { EXPECT_FALSE(secp256k1_address(Secp256k1Secret{})); }

TEST(Random, FillsDistinctBuffers) {
  std::array<std::uint8_t, 32> a{}, b{};
  random_bytes(a);
  random_bytes(b);
  EXPECT_NE(a, b);
}

}  // namespace cowboy::crypto
