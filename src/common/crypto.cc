#include "common/crypto.h"

#include "common/keccak_x8.h"

#include <cryptopp/keccak.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>
#include <sodium.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <mutex>

namespace cowboy::crypto {

void init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (sodium_init() < 0) std::abort();  // no usable entropy source: nothing is safe
  });
}

Bytes32 keccak256(ByteView data) { return keccak256({data}); }

Bytes32 sha256(std::initializer_list<ByteView> parts) {
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  for (auto p : parts) crypto_hash_sha256_update(&state, p.data(), p.size());
  Bytes32 out;
  crypto_hash_sha256_final(&state, out.data());
  return out;
}

static_assert(sizeof(crypto_hash_sha256_state) <= 128 && alignof(crypto_hash_sha256_state) <= 16);

Sha256::Sha256() { crypto_hash_sha256_init(reinterpret_cast<crypto_hash_sha256_state*>(state_.data())); }

void Sha256::update(ByteView part) {
  crypto_hash_sha256_update(reinterpret_cast<crypto_hash_sha256_state*>(state_.data()), part.data(), part.size());
}

Bytes32 Sha256::finish() {
  Bytes32 out;
  crypto_hash_sha256_final(reinterpret_cast<crypto_hash_sha256_state*>(state_.data()), out.data());
  return out;
}

Bytes32 keccak256(std::initializer_list<ByteView> parts) {
  CryptoPP::Keccak_256 hash;
  for (auto p : parts) hash.Update(p.data(), p.size());
  Bytes32 out;
  hash.Final(out.data());
  return out;
}

void keccak256_many(std::span<const ByteView> inputs, std::span<Bytes32> out) {
  assert(inputs.size() == out.size());
  std::size_t i = 0;
  // A lone input costs a whole 8-lane pass, about one scalar hash; two or more gain.
  while (detail::keccak_x8_available() && inputs.size() - i >= 2) {
    std::size_t n = std::min(detail::kKeccakLanes, inputs.size() - i);
    detail::keccak256_x8(inputs.data() + i, n, out.data() + i);
    i += n;
  }
  for (; i < inputs.size(); ++i) out[i] = keccak256(inputs[i]);
}

Ed25519Keypair ed25519_from_seed(const Ed25519Seed& seed) {
  init();
  Ed25519Keypair kp{seed, {}};
  std::array<std::uint8_t, crypto_sign_SECRETKEYBYTES> sk;
  crypto_sign_seed_keypair(kp.public_key.data(), sk.data(), seed.data());
  sodium_memzero(sk.data(), sk.size());
  return kp;
}

namespace {
// libsodium signs with seed || public key, and deriving the public key from the
// seed is a scalar multiplication as costly as the signature itself. A signer
// usually signs again and again with one key (cbqsd's checkpoint receipts, one
// per committed batch), so each thread keeps the last expanded key, zeroed
// when replaced and when the thread ends.
class ExpandedKeyCache {
 public:
  ~ExpandedKeyCache() { clear(); }
  const std::uint8_t* secret_key(const Ed25519Seed& seed) {
    if (!valid_ || sodium_memcmp(seed_.data(), seed.data(), seed.size()) != 0) {
      clear();
      std::array<std::uint8_t, crypto_sign_PUBLICKEYBYTES> pk;
      crypto_sign_seed_keypair(pk.data(), sk_.data(), seed.data());
      seed_ = seed;
      valid_ = true;
    }
    return sk_.data();
  }

 private:
  void clear() {
    sodium_memzero(sk_.data(), sk_.size());
    sodium_memzero(seed_.data(), seed_.size());
    valid_ = false;
  }
  std::array<std::uint8_t, crypto_sign_SECRETKEYBYTES> sk_{};
  Ed25519Seed seed_{};
  bool valid_ = false;
};
}  // namespace

Ed25519Signature ed25519_sign(const Ed25519Seed& seed, ByteView message) {
  init();
  thread_local ExpandedKeyCache cache;
  Ed25519Signature sig;
  crypto_sign_detached(sig.data(), nullptr, message.data(), message.size(), cache.secret_key(seed));
  return sig;
}

bool ed25519_verify(const Ed25519Public& key, ByteView message, const Ed25519Signature& sig) {
  init();
  return crypto_sign_verify_detached(sig.data(), message.data(), message.size(), key.data()) == 0;
}

namespace {
const secp256k1_context* secp_context() {
  static secp256k1_context* ctx = [] {
    auto* c = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
    std::array<std::uint8_t, 32> seed;
    random_bytes(seed);
    if (!secp256k1_context_randomize(c, seed.data())) std::abort();
    return c;
  }();
  return ctx;
}

Address address_of(const secp256k1_pubkey& pub) {
  std::array<std::uint8_t, 65> ser;
  std::size_t len = ser.size();
  secp256k1_ec_pubkey_serialize(secp_context(), ser.data(), &len, &pub, SECP256K1_EC_UNCOMPRESSED);
  Bytes32 h = keccak256(ByteView(ser.data() + 1, 64));
  Address a;
  std::copy(h.begin() + 12, h.end(), a.begin());
  return a;
}
}  // namespace

std::optional<Address> secp256k1_address(const Secp256k1Secret& secret) {
  secp256k1_pubkey pub;
  if (!secp256k1_ec_pubkey_create(secp_context(), &pub, secret.data())) return std::nullopt;
  return address_of(pub);
}

std::optional<RecoverableSignature> secp256k1_sign(const Secp256k1Secret& secret, const Bytes32& digest) {
  secp256k1_ecdsa_recoverable_signature sig;
  if (!secp256k1_ecdsa_sign_recoverable(secp_context(), &sig, digest.data(), secret.data(), nullptr, nullptr))
    return std::nullopt;
  RecoverableSignature out;
  int recid = 0;
  secp256k1_ecdsa_recoverable_signature_serialize_compact(secp_context(), out.data(), &recid, &sig);
  out[64] = static_cast<std::uint8_t>(recid);
  return out;
}

std::optional<Address> secp256k1_recover_address(const Bytes32& digest, const RecoverableSignature& sig) {
  auto key = secp256k1_recover_key(digest, sig);  // low S only: one accepted signature per key and message
  return key ? secp256k1_key_address(*key) : std::nullopt;
}

namespace {
Secp256k1Compressed compressed(const secp256k1_pubkey& pub) {
  Secp256k1Compressed out;
  std::size_t len = out.size();
  secp256k1_ec_pubkey_serialize(secp_context(), out.data(), &len, &pub, SECP256K1_EC_COMPRESSED);
  return out;
}
}  // namespace

std::optional<Secp256k1Compressed> secp256k1_public_key(const Secp256k1Secret& secret) {
  secp256k1_pubkey pub;
  if (!secp256k1_ec_pubkey_create(secp_context(), &pub, secret.data())) return std::nullopt;
  return compressed(pub);
}

std::optional<Address> secp256k1_key_address(const Secp256k1Compressed& key) {
  // The parser also accepts 65-byte forms; only the 33-byte 0x02/0x03 form is a compressed key.
  if (key[0] != 0x02 && key[0] != 0x03) return std::nullopt;
  secp256k1_pubkey pub;
  if (!secp256k1_ec_pubkey_parse(secp_context(), &pub, key.data(), key.size())) return std::nullopt;
  return address_of(pub);
}

std::optional<Secp256k1Compressed> secp256k1_recover_key(const Bytes32& digest, const RecoverableSignature& sig) {
  if (sig[64] > 3) return std::nullopt;
  secp256k1_ecdsa_recoverable_signature parsed;
  if (!secp256k1_ecdsa_recoverable_signature_parse_compact(secp_context(), &parsed, sig.data(), sig[64]))
    return std::nullopt;
  secp256k1_ecdsa_signature plain;
  secp256k1_ecdsa_recoverable_signature_convert(secp_context(), &plain, &parsed);
  if (secp256k1_ecdsa_signature_normalize(secp_context(), nullptr, &plain)) return std::nullopt;  // high S
  secp256k1_pubkey pub;
  if (!secp256k1_ecdsa_recover(secp_context(), &pub, &parsed, digest.data())) return std::nullopt;
  return compressed(pub);
}

void random_bytes(std::span<std::uint8_t> out) {
  init();
  randombytes_buf(out.data(), out.size());
}

}  // namespace cowboy::crypto
