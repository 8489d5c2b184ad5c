// ECVRF-EDWARDS25519-SHA512-TAI (RFC 9381, suite 0x03) on libsodium's edwards25519
// primitives: a hash of `alpha` that only the holder of the secret key can compute
// and anyone with the public key can check. Pinned to RFC 9381 Appendix B.3.
//
// Stricter than the RFC in one respect, the same for every party: a public key or
// a proof's Gamma must lie in the prime-order subgroup (libsodium's
// crypto_core_ed25519_is_valid_point). Honest keys (x*B) and honest Gammas
// (x*8*H') always do; the RFC would also accept points with a torsion component,
// whose proofs carry the same output, so refusing them removes only alternative
// encodings of valid proofs.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"

namespace cowboy::crypto::ecvrf {

inline constexpr std::size_t kProofSize = 80;   // Gamma (32) || c (16) || s (32)
inline constexpr std::size_t kOutputSize = 64;  // beta: a SHA-512 output

using Seed = std::array<std::uint8_t, 32>;  // the secret key: an Ed25519 seed
using PublicKey = std::array<std::uint8_t, 32>;
using Proof = std::array<std::uint8_t, kProofSize>;
using Output = std::array<std::uint8_t, kOutputSize>;

struct Keypair {
  Seed seed;
  PublicKey public_key;  // the same bytes as the Ed25519 public key of `seed`
};

enum class Error : std::uint8_t {
  kKeyNotCanonical,          // y >= p, or x = 0 with the sign bit set (RFC 8032 §5.1.3)
  kKeyNotOnCurve,            // no x for this y
  kKeySmallOrder,            // cofactor * Y is the identity (RFC 9381 §5.4.5)
  kKeyOutsidePrimeSubgroup,  // a torsion component (see above)
  kProofSize,                // not 80 bytes
  kGammaInvalid,             // Gamma does not decode to a prime-subgroup point
  kScalarNotCanonical,       // s >= q (RFC 9381 §5.4.4)
  kProofMismatch,            // the challenge does not recompute: wrong key, alpha or proof
};
std::string_view to_string(Error e);

/// The key pair of a 32-byte seed: x and Y as Ed25519 derives them (RFC 8032 §5.1.5).
Keypair keypair_from_seed(const Seed& seed);
/// ECVRF_validate_key, plus the prime-subgroup rule above.
Result<Unit, Error> validate_key(const PublicKey& key);
/// ECVRF_prove (RFC 9381 §5.1); deterministic.
Proof prove(const Seed& seed, ByteView alpha);
/// ECVRF_verify (§5.3) with key validation: beta when `proof` is `key`'s proof of `alpha`.
Result<Output, Error> verify(const PublicKey& key, const Proof& proof, ByteView alpha);
/// ECVRF_proof_to_hash (§5.2): beta of a proof whose Gamma and s decode. It does not
/// verify the proof: use it only on a proof already verified.
Result<Output, Error> proof_to_hash(const Proof& proof);
/// An 80-byte proof from untrusted bytes; checks the size, Gamma and s, not the challenge.
Result<Proof, Error> decode_proof(ByteView bytes);

}  // namespace cowboy::crypto::ecvrf
