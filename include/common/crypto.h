// The project's only crypto entry points. Keccak-256 is the original Keccak
// (Ethereum's padding), not SHA3-256. Ed25519 is libsodium's strict verifier,
// used by every party so that all of them accept the same signatures.
#pragma once

#include <optional>

#include "common/bytes.h"

namespace cowboy::crypto {

/// Must run once before any other function here; safe to call repeatedly.
void init();

Bytes32 keccak256(ByteView data);
Bytes32 keccak256(std::initializer_list<ByteView> parts);
/// out[i] = keccak256(inputs[i]) (`out` has one slot per input). Eight at a time where the CPU
/// has AVX-512, so many short inputs cost a fraction of hashing each alone.
void keccak256_many(std::span<const ByteView> inputs, std::span<Bytes32> out);
/// SHA-256 (libsodium's crypto_hash_sha256) over the parts in order.
Bytes32 sha256(std::initializer_list<ByteView> parts);
inline Bytes32 sha256(ByteView data) { return sha256({data}); }
/// SHA-256 over parts fed one at a time, for input too large to hold at once.
class Sha256 {
 public:
  Sha256();
  void update(ByteView part);
  Bytes32 finish();

 private:
  alignas(16) std::array<std::uint8_t, 128> state_;  // libsodium's crypto_hash_sha256_state
};

// ---- Ed25519 -------------------------------------------------------------
using Ed25519Public = std::array<std::uint8_t, 32>;
using Ed25519Seed = std::array<std::uint8_t, 32>;
using Ed25519Signature = std::array<std::uint8_t, 64>;

struct Ed25519Keypair {
  Ed25519Seed seed;
  Ed25519Public public_key;
};
Ed25519Keypair ed25519_from_seed(const Ed25519Seed& seed);
/// Each thread keeps the last key it signed with expanded (zeroed when replaced
/// or when the thread ends), so signing again with one key costs half as much.
Ed25519Signature ed25519_sign(const Ed25519Seed& seed, ByteView message);
bool ed25519_verify(const Ed25519Public& key, ByteView message, const Ed25519Signature& sig);

// ---- secp256k1 recoverable ECDSA (chain transaction signers) -------------
using Secp256k1Secret = std::array<std::uint8_t, 32>;
/// r (32) || s (32) || recovery id (1, 0..3).
using RecoverableSignature = std::array<std::uint8_t, 65>;

/// nullopt when the secret is zero or not below the curve order.
std::optional<Address> secp256k1_address(const Secp256k1Secret& secret);
/// Signs a 32-byte digest; nullopt for an invalid secret.
std::optional<RecoverableSignature> secp256k1_sign(const Secp256k1Secret& secret, const Bytes32& digest);
/// The EVM-style address (last 20 bytes of keccak256 of the 64-byte public key)
/// of the key that produced `sig` over `digest`; nullopt when nothing recovers
/// and for a high-S signature, as secp256k1_recover_key (so a transaction has
/// one valid signature, and one hash, per signer).
std::optional<Address> secp256k1_recover_address(const Bytes32& digest, const RecoverableSignature& sig);

/// SEC1 compressed public key: 0x02/0x03 then the 32-byte x coordinate.
using Secp256k1Compressed = std::array<std::uint8_t, 33>;
/// nullopt for an invalid secret.
std::optional<Secp256k1Compressed> secp256k1_public_key(const Secp256k1Secret& secret);
/// The address of a compressed key; nullopt when the bytes are not a point on the curve.
std::optional<Address> secp256k1_key_address(const Secp256k1Compressed& key);
/// The compressed key that produced `sig` over `digest`. A high-S signature
/// (the malleated twin of a valid one) recovers nothing, so each message has
/// one accepted signature per key.
std::optional<Secp256k1Compressed> secp256k1_recover_key(const Bytes32& digest, const RecoverableSignature& sig);

// ---- randomness ----------------------------------------------------------
void random_bytes(std::span<std::uint8_t> out);

}  // namespace cowboy::crypto
