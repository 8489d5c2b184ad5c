#include "common/ecvrf.h"

#include <sodium.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/crypto.h"

namespace cowboy::crypto::ecvrf {

std::string_view to_string(Error e) {
  switch (e) {
    case Error::kKeyNotCanonical: return "public key not canonically encoded";
    case Error::kKeyNotOnCurve: return "public key not on the curve";
    case Error::kKeySmallOrder: return "public key of small order";
    case Error::kKeyOutsidePrimeSubgroup: return "public key outside the prime-order subgroup";
    case Error::kProofSize: return "proof not 80 bytes";
    case Error::kGammaInvalid: return "proof's Gamma not a prime-subgroup point";
    case Error::kScalarNotCanonical: return "proof's s not below the group order";
    case Error::kProofMismatch: return "proof does not verify";
  }
  return "unknown ECVRF error";
}

namespace {

using Point = std::array<std::uint8_t, 32>;   // RFC 8032 encoding
using Scalar = std::array<std::uint8_t, 32>;  // little-endian, below q unless said

constexpr std::uint8_t kSuite = 0x03;  // ECVRF-EDWARDS25519-SHA512-TAI
constexpr std::uint8_t kEncodeToCurveFront = 0x01;
constexpr std::uint8_t kChallengeFront = 0x02;
constexpr std::uint8_t kProofToHashFront = 0x03;
constexpr std::uint8_t kBack = 0x00;
constexpr std::size_t kChallengeSize = 16;  // cLen

constexpr Point kIdentity = {1};
// q = 2^252 + 27742317777372353535851937790883648493, little-endian.
constexpr Scalar kOrder = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                           0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0, 0, 0, 0, 0,
                           0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};

class Sha512 {
 public:
  Sha512() { crypto_hash_sha512_init(&state_); }
  Sha512& add(ByteView part) {
    crypto_hash_sha512_update(&state_, part.data(), part.size());
    return *this;
  }
  Sha512& add(std::uint8_t byte) { return add(ByteView(&byte, 1)); }
  Output finish() {
    Output out;
    crypto_hash_sha512_final(&state_, out.data());
    return out;
  }

 private:
  crypto_hash_sha512_state state_;
};

bool is_zero(const Scalar& s) {
  return std::all_of(s.begin(), s.end(), [](std::uint8_t b) { return b == 0; });
}

// s < q, compared from the most significant byte.
bool below_order(const Scalar& s) {
  for (std::size_t i = s.size(); i-- > 0;) {
    if (s[i] != kOrder[i]) return s[i] < kOrder[i];
  }
  return false;
}

// RFC 8032 §5.1.3 refuses y >= p and x = 0 with the sign bit set; libsodium's
// decoder reduces y and ignores the sign of zero, so both are checked here.
bool canonical_encoding(const Point& p) {
  Point y = p;
  y[31] &= 0x7f;
  const bool sign = (p[31] & 0x80) != 0;
  // p = 2^255 - 19: y >= p exactly when bytes 1..30 are 0xff, byte 31 is 0x7f, byte 0 >= 0xed.
  const bool high_all_ones = y[31] == 0x7f && std::all_of(y.begin() + 1, y.begin() + 31, [](std::uint8_t b) {
                               return b == 0xff;
                             });
  if (high_all_ones && y[0] >= 0xed) return false;
  // x = 0 exactly when y = 1 or y = p - 1.
  const bool y_is_one = y == kIdentity;
  const bool y_is_minus_one = high_all_ones && y[0] == 0xec;
  return !(sign && (y_is_one || y_is_minus_one));
}

// Whether the bytes decode to a curve point: crypto_core_ed25519_add checks only that.
bool on_curve(const Point& p) {
  Point sum;
  return crypto_core_ed25519_add(sum.data(), p.data(), kIdentity.data()) == 0;
}

// cofactor * P by three doublings: libsodium's scalar multiplications refuse
// points outside the prime-order subgroup, its addition does not (it checks
// only that its inputs decode). nullopt when P does not decode.
std::optional<Point> try_times_cofactor(Point p) {
  for (int i = 0; i < 3; ++i) {
    if (crypto_core_ed25519_add(p.data(), p.data(), p.data()) != 0) return std::nullopt;
  }
  return p;
}

Point times_cofactor(const Point& p) {
  auto out = try_times_cofactor(p);
  if (!out) std::abort();  // callers pass points that decode
  return *out;
}

// n * P for a prime-subgroup P other than the identity and n < q; 0 * P is the identity.
Point mul(const Scalar& n, const Point& p) {
  if (is_zero(n)) return kIdentity;
  Point out;
  // Cannot fail: P is valid and n * P (n nonzero below q, P of order q) is not the identity.
  if (crypto_scalarmult_ed25519_noclamp(out.data(), n.data(), p.data()) != 0) std::abort();
  return out;
}

Point mul_base(const Scalar& n) {
  if (is_zero(n)) return kIdentity;
  Point out;
  if (crypto_scalarmult_ed25519_base_noclamp(out.data(), n.data()) != 0) std::abort();
  return out;
}

Point sub(const Point& a, const Point& b) {
  Point out;
  if (crypto_core_ed25519_sub(out.data(), a.data(), b.data()) != 0) std::abort();  // both encode points
  return out;
}

Scalar reduce(const Output& wide) {
  Scalar out;
  crypto_core_ed25519_scalar_reduce(out.data(), wide.data());
  return out;
}

// The secret scalar x (mod q) and the nonce prefix: SHA-512 of the seed, its
// first half clamped as Ed25519 does (RFC 8032 §5.1.5).
struct Expanded {
  Scalar x;
  std::array<std::uint8_t, 32> prefix;
  ~Expanded() {
    sodium_memzero(x.data(), x.size());
    sodium_memzero(prefix.data(), prefix.size());
  }
};

void expand(const Seed& seed, Expanded& out) {
  Output h = Sha512().add(seed).finish();
  h[0] &= 248;
  h[31] &= 127;
  h[31] |= 64;
  Output wide{};
  std::copy_n(h.begin(), 32, wide.begin());
  out.x = reduce(wide);  // x mod q: the same multiples of prime-subgroup points
  std::copy_n(h.begin() + 32, 32, out.prefix.begin());
  sodium_memzero(h.data(), h.size());
  sodium_memzero(wide.data(), wide.size());
}

// ECVRF_encode_to_curve_try_and_increment (§5.4.1.1) with the public key as salt.
// A candidate whose cofactor multiple is the identity (8 of 2^255 hash values) is
// skipped like an undecodable one, so H is always of order q.
Point encode_to_curve(const PublicKey& salt, ByteView alpha) {
  for (unsigned ctr = 0; ctr < 256; ++ctr) {
    Output hash = Sha512()
                      .add(kSuite)
                      .add(kEncodeToCurveFront)
                      .add(salt)
                      .add(alpha)
                      .add(static_cast<std::uint8_t>(ctr))
                      .add(kBack)
                      .finish();
    Point candidate;
    std::copy_n(hash.begin(), 32, candidate.begin());
    if (!canonical_encoding(candidate)) continue;
    auto h = try_times_cofactor(candidate);  // nullopt: not on the curve
    if (h && *h != kIdentity) return *h;
  }
  std::abort();  // 256 failures in a row: probability about 2^-256
}

// ECVRF_challenge_generation (§5.4.3): the first 16 bytes of the hash, as a scalar.
Scalar challenge(const Point& y, const Point& h, const Point& gamma, const Point& u, const Point& v) {
  Output hash =
      Sha512().add(kSuite).add(kChallengeFront).add(y).add(h).add(gamma).add(u).add(v).add(kBack).finish();
  Scalar c{};
  std::copy_n(hash.begin(), kChallengeSize, c.begin());
  return c;
}

struct Decoded {
  Point gamma;
  Scalar c{};
  Scalar s;
};

Result<Decoded, Error> decode(const Proof& proof) {
  Decoded d;
  std::copy_n(proof.begin(), 32, d.gamma.begin());
  std::copy_n(proof.begin() + 32, kChallengeSize, d.c.begin());
  std::copy_n(proof.begin() + 32 + kChallengeSize, 32, d.s.begin());
  if (crypto_core_ed25519_is_valid_point(d.gamma.data()) != 1) return Err(Error::kGammaInvalid);
  if (!below_order(d.s)) return Err(Error::kScalarNotCanonical);
  return d;
}

Output beta_of(const Point& gamma) {
  return Sha512().add(kSuite).add(kProofToHashFront).add(times_cofactor(gamma)).add(kBack).finish();
}

}  // namespace

Keypair keypair_from_seed(const Seed& seed) {
  crypto::init();
  Expanded e;
  expand(seed, e);
  return Keypair{seed, mul_base(e.x)};
}

Result<Unit, Error> validate_key(const PublicKey& key) {
  crypto::init();
  if (!canonical_encoding(key)) return Err(Error::kKeyNotCanonical);
  if (crypto_core_ed25519_is_valid_point(key.data()) == 1) return Unit{};  // the usual case, in one check
  // Refused: say why.
  if (!on_curve(key)) return Err(Error::kKeyNotOnCurve);
  if (times_cofactor(key) == kIdentity) return Err(Error::kKeySmallOrder);
  return Err(Error::kKeyOutsidePrimeSubgroup);
}

Proof prove(const Seed& seed, ByteView alpha) {
  crypto::init();
  Expanded e;
  expand(seed, e);
  const Point y = mul_base(e.x);
  const Point h = encode_to_curve(y, alpha);
  const Point gamma = mul(e.x, h);
  // ECVRF_nonce_generation_RFC8032 (§5.4.2.2).
  Output k_hash = Sha512().add(e.prefix).add(h).finish();
  Scalar k = reduce(k_hash);
  sodium_memzero(k_hash.data(), k_hash.size());
  const Scalar c = challenge(y, h, gamma, mul_base(k), mul(k, h));
  Scalar s;
  crypto_core_ed25519_scalar_mul(s.data(), c.data(), e.x.data());
  crypto_core_ed25519_scalar_add(s.data(), s.data(), k.data());
  sodium_memzero(k.data(), k.size());

  Proof proof;
  std::copy(gamma.begin(), gamma.end(), proof.begin());
  std::copy_n(c.begin(), kChallengeSize, proof.begin() + 32);
  std::copy(s.begin(), s.end(), proof.begin() + 32 + kChallengeSize);
  return proof;
}

Result<Output, Error> verify(const PublicKey& key, const Proof& proof, ByteView alpha) {
  if (auto valid = validate_key(key); !valid) return Err(valid.error());
  auto d = decode(proof);
  if (!d) return Err(d.error());
  const Point h = encode_to_curve(key, alpha);
  const Point u = sub(mul_base(d->s), mul(d->c, key));
  const Point v = sub(mul(d->s, h), mul(d->c, d->gamma));
  const Scalar expected = challenge(key, h, d->gamma, u, v);
  if (sodium_memcmp(expected.data(), d->c.data(), kChallengeSize) != 0) return Err(Error::kProofMismatch);
  return beta_of(d->gamma);
}

Result<Output, Error> proof_to_hash(const Proof& proof) {
  crypto::init();
  auto d = decode(proof);
  if (!d) return Err(d.error());
  return beta_of(d->gamma);
}

Result<Proof, Error> decode_proof(ByteView bytes) {
  if (bytes.size() != kProofSize) return Err(Error::kProofSize);
  Proof proof;
  std::copy(bytes.begin(), bytes.end(), proof.begin());
  crypto::init();
  if (auto d = decode(proof); !d) return Err(d.error());
  return proof;
}

}  // namespace cowboy::crypto::ecvrf
