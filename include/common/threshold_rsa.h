// Shoup's threshold RSA signatures ("Practical Threshold Signatures", EUROCRYPT
// 2000, protocol 1) on OpenSSL's BIGNUM: any k of n share holders sign a message
// together, and the signature is the one RSA full-domain-hash signature x^D of
// the message under the group's public key, D = e^-1 mod 4m (below) - the same
// bytes whichever k signed.
// A signature share carries Shoup's proof of correctness, so a combiner checks
// each share alone and names a wrong one.
//
// A trusted dealer (`deal`) draws N = pq from safe primes p = 2p'+1, q = 2q'+1,
// m = p'q', e = 65537, d = e^-1 mod m, a random polynomial f of degree k-1 over
// Z_m with f(0) = d, the shares s_i = f(i), a random square v of Z_N* and the
// verification keys v_i = v^s_i. (d fixes x^d only on squares: y = x^D with
// D = e^-1 mod 4m = e^-1 mod phi(N), and y^2 = (x^2)^d.) With Delta = n!:
//   share      x_i = x^(2 Delta s_i), x = hash_to_group(message)
//   proof      log_v v_i = log_x~ x_i^2 with x~ = x^(4 Delta): challenge c of
//              128 bits (L1), response z = s_i c + r, r < 2^(|N| + 2 L1)
//   combine    w = prod x_i^(2 lambda_i) (lambda_i: Delta times the Lagrange
//              coefficient at 0, an integer), y = w^a x^b, 4 Delta^2 a + e b = 1
//   verify     y^e = x (mod N)
//
// Every function taking a PublicKey first checks what decode_public_key
// guarantees of its shape (1 <= k <= n <= kMaxShares, n verification keys, N
// odd with a nonzero top byte and 1024-4096 bits, v and each v_i |N| bytes)
// and refuses a key built by hand that breaks it with kParameters.
//
// Encodings (big-endian; an element of Z_N is exactly |N| bytes, |N| the
// modulus' byte length; every decoder checks a length before reading what it
// covers: the public key's 5-byte header, then its total from |N| and n):
//   public key       01 | |N| (u16) | k (u8) | n (u8) | N | v | v_1 .. v_n
//   secret share     01 | |N| (u16) | i (u8) | s_i (|N| bytes)
//   signature share  i (u8) | x_i | c (16) | z (|N| + 33)
//   signature        y
// Elements are refused when zero, >= N or (in the public key) not units.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"

namespace cowboy::crypto::threshold_rsa {

inline constexpr std::uint32_t kPublicExponent = 65537;  // prime, above kMaxShares
inline constexpr std::size_t kMaxShares = 64;
inline constexpr std::size_t kModulusBits = 2048;     // what the devchain deals
inline constexpr std::size_t kMinModulusBits = 1024;  // tests deal at 1024: safe primes are slow
inline constexpr std::size_t kMaxModulusBits = 4096;
inline constexpr std::size_t kChallengeSize = 16;   // L1 = 128 bits
inline constexpr std::size_t kResponseExtra = 33;   // z < 2^(|N| + 2 L1 + 1): |N| + 33 bytes
inline constexpr std::uint8_t kEncodingVersion = 1;

struct PublicKey {
  Bytes modulus;  // N; its top byte is nonzero, and its size is every element's
  std::uint8_t threshold = 0;  // k
  std::uint8_t shares = 0;     // n
  Bytes v;
  std::vector<Bytes> verification_keys;  // v_1 .. v_n: share i's at [i - 1]
  std::size_t element_size() const { return modulus.size(); }
  bool operator==(const PublicKey&) const = default;
};

/// A share holder's secret s_i. Its bytes are zeroed when it is destroyed or
/// assigned over; it has no printer, and nothing logs it.
class SecretShare {
 public:
  SecretShare(std::uint8_t index, Bytes value) : index_(index), value_(std::move(value)) {}
  SecretShare(const SecretShare&) = default;
  SecretShare(SecretShare&&) = default;  // takes the buffer: nothing left to wipe
  SecretShare& operator=(const SecretShare& other);
  SecretShare& operator=(SecretShare&& other) noexcept;
  ~SecretShare();
  std::uint8_t index() const { return index_; }  // 1 .. n
  ByteView value() const { return value_; }      // |N| bytes

 private:
  void wipe();
  std::uint8_t index_;
  Bytes value_;
};

struct SignatureShare {
  std::uint8_t index = 0;  // i, 1 .. n
  Bytes value;             // x_i
  std::array<std::uint8_t, kChallengeSize> challenge{};  // c
  Bytes response;          // z, |N| + kResponseExtra bytes
  bool operator==(const SignatureShare&) const = default;
};

struct Signature {
  Bytes value;  // y = x^D, D = e^-1 mod 4m
  bool operator==(const Signature&) const = default;
};

struct Dealing {
  PublicKey public_key;
  std::vector<SecretShare> shares;  // share i at [i - 1]
};

/// What only the dealer knows; `deal` discards it. For tests and fixture tools.
/// Whoever holds p or q computes every signature alone, so every future round
/// seed (docs/cip11.md choice 167): never keep them for a real key.
struct DealerSecret {
  Bytes p;
  Bytes q;
};

enum class Error : std::uint8_t {
  kParameters,              // k, n or the modulus size out of range; a hand-built PublicKey's shape broken
  kRandomness,              // OpenSSL's RAND or prime generation failed
  kLength,                  // an encoding of the wrong size
  kVersion,                 // an encoding's version byte is not 1
  kModulusInvalid,          // N even, its top byte zero, or its size out of range
  kElementZero,             // an element (or s_i) that is zero
  kElementNotBelowModulus,  // an element (or s_i) >= N
  kElementNotUnit,          // a public-key element sharing a factor with N
  kIndexOutOfRange,         // a share index not in 1 .. n
  kShareKeyMismatch,        // a secret share whose v^s_i is not v_i
  kMessageNotUnit,          // gcd(H(message), N) != 1: negligible, a factor of N
  kShareProofMismatch,      // a signature share's proof does not verify
  kNotEnoughShares,         // fewer than k shares to combine
  kDuplicateShare,          // two shares with one index
  kSignatureMismatch,       // y^e != H(message)
};
std::string_view to_string(Error e);

/// A share refused by `combine`: what, and which share (its index; 0 when the
/// refusal is of the set, e.g. too few).
struct CombineError {
  Error error;
  std::uint8_t index = 0;
};

/// Deals a k-of-n key with a modulus of `modulus_bits` bits (a multiple of 16,
/// so p and q are whole bytes, within [kMinModulusBits, kMaxModulusBits]);
/// randomness from OpenSSL's RAND. The
/// safe primes take seconds at 2048 bits (docs/cip11.md choice 170): deal once
/// per genesis, never per start.
Result<Dealing, Error> deal(std::uint8_t threshold, std::uint8_t shares, std::size_t modulus_bits = kModulusBits);
Result<Dealing, Error> deal(std::uint8_t threshold, std::uint8_t shares, std::size_t modulus_bits,
                            DealerSecret& secret_out);

/// The full-domain hash x of `message` under `key`, |N| bytes: SHA-512 in
/// counter mode over the modulus and the message, |N| + 16 bytes reduced mod N.
Result<Bytes, Error> hash_to_group(const PublicKey& key, ByteView message);

/// Share `secret.index()`'s signature share of `message` with its proof.
Result<SignatureShare, Error> sign_share(const PublicKey& key, const SecretShare& secret, ByteView message);
/// Whether `share` is share `share.index`'s of `message` (its proof verifies);
/// kParameters also when the key's v_i is not a unit (the decoder refuses one).
Result<Unit, Error> verify_share(const PublicKey& key, ByteView message, const SignatureShare& share);
/// The signature of `message` from the first k of `shares`, after checking every
/// one's proof; the first wrong, out-of-range or duplicate share is named. A
/// refusal that is no share's fault (the key; a message hashing to a non-unit;
/// too few shares) names index 0.
Result<Signature, CombineError> combine(const PublicKey& key, ByteView message,
                                        std::span<const SignatureShare> shares);
/// Whether `signature` is y with y^e = H(message).
Result<Unit, Error> verify(const PublicKey& key, ByteView message, const Signature& signature);

Bytes encode_public_key(const PublicKey& key);
Result<PublicKey, Error> decode_public_key(ByteView bytes);
/// The secret share's bytes, for its holder's key file (mode 0600). They are a
/// plain copy of s_i: the caller wipes them (OPENSSL_cleanse or sodium_memzero,
/// and any hex text made from them) once written; nothing here can.
Bytes encode_secret_share(const SecretShare& share);
/// Checks the share against `key`: its size, index, range and v^s_i = v_i.
Result<SecretShare, Error> decode_secret_share(const PublicKey& key, ByteView bytes);
Bytes encode_signature_share(const SignatureShare& share);
Result<SignatureShare, Error> decode_signature_share(const PublicKey& key, ByteView bytes);
Bytes encode_signature(const Signature& signature);
Result<Signature, Error> decode_signature(const PublicKey& key, ByteView bytes);

}  // namespace cowboy::crypto::threshold_rsa
