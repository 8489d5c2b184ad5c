#include "common/threshold_rsa.h"

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <sodium.h>

#include <cstdlib>
#include <memory>

#include "common/crypto.h"

namespace cowboy::crypto::threshold_rsa {

std::string_view to_string(Error e) {
  switch (e) {
    case Error::kParameters: return "threshold, share count or modulus size out of range";
    case Error::kRandomness: return "randomness or prime generation failed";
    case Error::kLength: return "encoding of the wrong length";
    case Error::kVersion: return "encoding version not 1";
    case Error::kModulusInvalid: return "modulus even, not minimally encoded or of an unsupported size";
    case Error::kElementZero: return "element is zero";
    case Error::kElementNotBelowModulus: return "element not below the modulus";
    case Error::kElementNotUnit: return "element shares a factor with the modulus";
    case Error::kIndexOutOfRange: return "share index not in 1..n";
    case Error::kShareKeyMismatch: return "secret share does not match its verification key";
    case Error::kMessageNotUnit: return "message hashes to a non-unit";
    case Error::kShareProofMismatch: return "signature share's proof does not verify";
    case Error::kNotEnoughShares: return "fewer shares than the threshold";
    case Error::kDuplicateShare: return "two shares with one index";
    case Error::kSignatureMismatch: return "signature does not verify";
  }
  return "unknown threshold RSA error";
}

SecretShare& SecretShare::operator=(const SecretShare& other) {
  if (this == &other) return *this;
  wipe();  // before the copy: a reallocation would free the old bytes unwiped
  index_ = other.index_;
  value_ = other.value_;
  return *this;
}

SecretShare& SecretShare::operator=(SecretShare&& other) noexcept {
  if (this == &other) return *this;
  wipe();
  index_ = other.index_;
  value_ = std::move(other.value_);  // takes other's buffer: no copy left behind
  return *this;
}

SecretShare::~SecretShare() { wipe(); }

void SecretShare::wipe() {
  // The whole capacity (growing to it never reallocates): a shorter value
  // assigned earlier leaves older bytes past size().
  value_.resize(value_.capacity());
  if (!value_.empty()) OPENSSL_cleanse(value_.data(), value_.size());
}

namespace {

constexpr std::size_t kPublicKeyHeader = 5;     // version, |N| (u16), k, n
constexpr std::size_t kSecretShareHeader = 4;   // version, |N| (u16), i
constexpr std::size_t kHashExtraBytes = 16;     // the full-domain hash's 128 bits of slack
constexpr std::size_t kChallengeBits = kChallengeSize * 8;
constexpr std::string_view kHashTag = "cowboy/threshold-rsa/v1/hash-to-group";
constexpr std::string_view kChallengeTag = "cowboy/threshold-rsa/v1/challenge";

struct BnFree {
  void operator()(BIGNUM* b) const { BN_clear_free(b); }
};
struct CtxFree {
  void operator()(BN_CTX* c) const { BN_CTX_free(c); }
};
using Bn = std::unique_ptr<BIGNUM, BnFree>;
using Ctx = std::unique_ptr<BN_CTX, CtxFree>;

// OpenSSL's big-number calls fail only on allocation, or on inputs these
// callers rule out first (an inverse of a unit, a division by a nonzero).
void check(int ok) {
  if (ok != 1) std::abort();
}

Bn bn() {
  Bn b(BN_new());
  if (!b) std::abort();
  return b;
}

Bn bn_of(ByteView bytes) {
  Bn b(BN_bin2bn(bytes.data(), static_cast<int>(bytes.size()), nullptr));
  if (!b) std::abort();
  return b;
}

Bn bn_word(unsigned long w) {
  Bn b = bn();
  check(BN_set_word(b.get(), w));
  return b;
}

// BN_dup does not carry BN_FLG_CONSTTIME: a copy of a secret is marked again.
Bn copy(const BIGNUM* a) {
  Bn b(BN_dup(a));
  if (!b) std::abort();
  if (BN_get_flags(a, BN_FLG_CONSTTIME) != 0) BN_set_flags(b.get(), BN_FLG_CONSTTIME);
  return b;
}

Ctx ctx() {
  Ctx c(BN_CTX_new());
  if (!c) std::abort();
  return c;
}

Bytes to_bytes(const BIGNUM* b, std::size_t width) {
  Bytes out(width);
  if (BN_bn2binpad(b, out.data(), static_cast<int>(width)) < 0) std::abort();  // callers reduce first
  return out;
}

// Secrets (shares, nonces, d) go through the constant-time exponentiation.
void secret(BIGNUM* b) { BN_set_flags(b, BN_FLG_CONSTTIME); }

Bn mul(const BIGNUM* a, const BIGNUM* b, BN_CTX* c) {
  Bn out = bn();
  check(BN_mul(out.get(), a, b, c));
  return out;
}

Bn mod_mul(const BIGNUM* a, const BIGNUM* b, const BIGNUM* n, BN_CTX* c) {
  Bn out = bn();
  check(BN_mod_mul(out.get(), a, b, n, c));
  return out;
}

Bn inverse(const BIGNUM* a, const BIGNUM* n, BN_CTX* c) {
  Bn out(BN_mod_inverse(nullptr, a, n, c));
  if (!out) std::abort();  // callers pass units
  return out;
}

bool is_unit(const BIGNUM* a, const BIGNUM* n, BN_CTX* c) {
  Bn g = bn();
  check(BN_gcd(g.get(), a, n, c));
  return BN_is_one(g.get());
}

// base^exp mod n for any integer exp (a negative one through base's inverse).
Bn power(const BIGNUM* base, const BIGNUM* exp, const BIGNUM* n, BN_CTX* c) {
  Bn out = bn();
  if (BN_is_negative(exp)) {
    Bn inv = inverse(base, n, c);
    Bn magnitude = copy(exp);
    BN_set_negative(magnitude.get(), 0);
    check(BN_mod_exp(out.get(), inv.get(), magnitude.get(), n, c));
  } else {
    check(BN_mod_exp(out.get(), base, exp, n, c));
  }
  return out;
}

Bn pow_word(const BIGNUM* base, unsigned long exp, const BIGNUM* n, BN_CTX* c) {
  Bn e = bn_word(exp);
  return power(base, e.get(), n, c);
}

Bn factorial(unsigned n) {
  Bn out = bn_word(1);
  for (unsigned i = 2; i <= n; ++i) check(BN_mul_word(out.get(), i));
  return out;
}

class Sha512 {
 public:
  Sha512() { crypto_hash_sha512_init(&state_); }
  Sha512& add(ByteView part) {
    crypto_hash_sha512_update(&state_, part.data(), part.size());
    return *this;
  }
  Sha512& add(std::string_view text) { return add(as_bytes(text)); }
  std::array<std::uint8_t, crypto_hash_sha512_BYTES> finish() {
    std::array<std::uint8_t, crypto_hash_sha512_BYTES> out;
    crypto_hash_sha512_final(&state_, out.data());
    return out;
  }

 private:
  crypto_hash_sha512_state state_;
};

// What every function below relies on in a PublicKey, and what
// decode_public_key guarantees; a key built by hand may break it, and then an
// index would run past `seen` or verification_keys, to_bytes would not fit an
// element, or the constant-time exponentiation would abort on an even N.
// Checked here once, by Group::open, which every public entry point taking a
// key goes through: 1 <= k <= n <= kMaxShares, n verification keys, N odd with
// a nonzero top byte and a size in range, v and every v_i of N's size. The
// values of v and the v_i (range, units) are the decoder's to check: the one
// place a non-unit would abort, v_i's inverse in verify_share, refuses it there.
Result<Unit, Error> check_key(const PublicKey& key) {
  const std::size_t width = key.modulus.size();
  if (key.shares < 1 || key.shares > kMaxShares || key.threshold < 1 || key.threshold > key.shares) {
    return Err(Error::kParameters);
  }
  if (key.verification_keys.size() != key.shares) return Err(Error::kParameters);
  if (width * 8 < kMinModulusBits || width * 8 > kMaxModulusBits) return Err(Error::kParameters);
  if (key.modulus.front() == 0 || (key.modulus.back() & 1) == 0) return Err(Error::kParameters);
  if (key.v.size() != width) return Err(Error::kParameters);
  for (const auto& v_i : key.verification_keys) {
    if (v_i.size() != width) return Err(Error::kParameters);
  }
  return Unit{};
}

// The public key's values as numbers, once per operation.
struct Group {
  Ctx c = ctx();
  std::size_t width;
  Bn n;
  Bn v;
  Bn delta;  // n!

  static Result<Group, Error> open(const PublicKey& key) {
    if (auto ok = check_key(key); !ok) return Err(ok.error());
    return Group(key);
  }
  Bytes bytes(const BIGNUM* b) const { return to_bytes(b, width); }

 private:
  explicit Group(const PublicKey& key)
      : width(key.element_size()), n(bn_of(key.modulus)), v(bn_of(key.v)), delta(factorial(key.shares)) {
    crypto::init();  // libsodium's SHA-512
  }
};

// An element from its fixed-width bytes: refused when zero or >= N.
Result<Bn, Error> element(ByteView bytes, const BIGNUM* n) {
  Bn b = bn_of(bytes);
  if (BN_is_zero(b.get())) return Err(Error::kElementZero);
  if (BN_cmp(b.get(), n) >= 0) return Err(Error::kElementNotBelowModulus);
  return b;
}

// x = H(message): SHA-512(tag || counter (u32) || N || message) for counters
// 0, 1, ..., concatenated to |N| + 16 bytes and reduced mod N.
Result<Bn, Error> hash_message(const Group& g, ByteView message) {
  const std::size_t wide_size = g.width + kHashExtraBytes;
  Bytes wide;
  wide.reserve(wide_size + crypto_hash_sha512_BYTES);
  const Bytes modulus = g.bytes(g.n.get());
  for (std::uint32_t counter = 0; wide.size() < wide_size; ++counter) {
    const std::array<std::uint8_t, 4> be = {static_cast<std::uint8_t>(counter >> 24),
                                            static_cast<std::uint8_t>(counter >> 16),
                                            static_cast<std::uint8_t>(counter >> 8),
                                            static_cast<std::uint8_t>(counter)};
    const auto block = Sha512().add(kHashTag).add(be).add(modulus).add(message).finish();
    wide.insert(wide.end(), block.begin(), block.end());
  }
  wide.resize(wide_size);
  Bn x = bn_of(wide);
  check(BN_nnmod(x.get(), x.get(), g.n.get(), g.c.get()));
  if (BN_is_zero(x.get()) || !is_unit(x.get(), g.n.get(), g.c.get())) return Err(Error::kMessageNotUnit);
  return x;
}

// Shoup's challenge: 128 bits of SHA-512(tag || N || v || x~ || v_i || x_i^2 || v' || x').
std::array<std::uint8_t, kChallengeSize> challenge(const Group& g, const BIGNUM* x_tilde, const BIGNUM* v_i,
                                                   const BIGNUM* x_i_squared, const BIGNUM* v_prime,
                                                   const BIGNUM* x_prime) {
  const auto hash = Sha512()
                        .add(kChallengeTag)
                        .add(g.bytes(g.n.get()))
                        .add(g.bytes(g.v.get()))
                        .add(g.bytes(x_tilde))
                        .add(g.bytes(v_i))
                        .add(g.bytes(x_i_squared))
                        .add(g.bytes(v_prime))
                        .add(g.bytes(x_prime))
                        .finish();
  std::array<std::uint8_t, kChallengeSize> c;
  std::copy_n(hash.begin(), kChallengeSize, c.begin());
  return c;
}

bool index_in_range(const PublicKey& key, std::uint8_t index) { return index >= 1 && index <= key.shares; }

void put_u16(Bytes& out, std::size_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v));
}

std::size_t get_u16(ByteView in) { return (static_cast<std::size_t>(in[0]) << 8) | in[1]; }

void append(Bytes& out, ByteView part) { out.insert(out.end(), part.begin(), part.end()); }

std::size_t signature_share_size(std::size_t width) { return 1 + width + kChallengeSize + width + kResponseExtra; }

// One attempt at a dealing: `retry` when a negligible event (p = q, N one bit
// short, e dividing 4m, a zero share) needs new primes; kRandomness only when
// OpenSSL's generator fails.
struct Attempt {
  bool retry = false;
  Dealing dealing;
  DealerSecret secret;
};

Result<Attempt, Error> deal_once(std::uint8_t k, std::uint8_t n_shares, std::size_t bits) {
  Ctx c = ctx();
  Bn p = bn();
  Bn q = bn();
  secret(p.get());
  secret(q.get());
  const int half = static_cast<int>(bits / 2);
  if (BN_generate_prime_ex(p.get(), half, 1, nullptr, nullptr, nullptr) != 1) return Err(Error::kRandomness);
  if (BN_generate_prime_ex(q.get(), half, 1, nullptr, nullptr, nullptr) != 1) return Err(Error::kRandomness);
  secret(p.get());  // again, whatever the generator did to the flags
  secret(q.get());
  Attempt retry{true, {}, {}};
  if (BN_cmp(p.get(), q.get()) == 0) return retry;
  Bn n = mul(p.get(), q.get(), c.get());
  if (static_cast<std::size_t>(BN_num_bits(n.get())) != bits) return retry;
  // p' = (p - 1) / 2, q' likewise, m = p'q'.
  Bn p1 = bn();
  Bn q1 = bn();
  check(BN_rshift1(p1.get(), p.get()));
  check(BN_rshift1(q1.get(), q.get()));
  secret(p1.get());  // marked on every value derived from p and q: v^p' below exponentiates by p'
  secret(q1.get());
  Bn m = mul(p1.get(), q1.get(), c.get());
  secret(m.get());
  Bn e = bn_word(kPublicExponent);
  Bn four_m = copy(m.get());
  check(BN_lshift(four_m.get(), four_m.get(), 2));
  if (!is_unit(e.get(), four_m.get(), c.get())) return retry;  // p' or q' = e: never at these sizes
  Bn d = inverse(e.get(), m.get(), c.get());
  secret(d.get());

  // f(X) = d + a_1 X + ... + a_{k-1} X^{k-1} over Z_m, a_j uniform in [0, m).
  std::vector<Bn> coefficients;
  coefficients.push_back(copy(d.get()));
  for (unsigned j = 1; j < k; ++j) {
    Bn a = bn();
    secret(a.get());
    if (BN_priv_rand_range(a.get(), m.get()) != 1) return Err(Error::kRandomness);
    coefficients.push_back(std::move(a));
  }
  const std::size_t width = bits / 8;
  std::vector<Bn> shares;
  for (unsigned i = 1; i <= n_shares; ++i) {
    Bn s = bn_word(0);  // Horner, from the top coefficient
    secret(s.get());
    for (std::size_t j = coefficients.size(); j-- > 0;) {
      check(BN_mul_word(s.get(), i));
      check(BN_mod_add(s.get(), s.get(), coefficients[j].get(), m.get(), c.get()));
    }
    if (BN_is_zero(s.get())) return retry;  // decoders refuse a zero share
    shares.push_back(std::move(s));
  }

  // v: a random square that generates Q_N (order p'q': v^p' != 1 and v^q' != 1).
  Bn v = bn();
  for (;;) {
    Bn r = bn();
    if (BN_priv_rand_range(r.get(), n.get()) != 1) return Err(Error::kRandomness);
    if (BN_is_zero(r.get()) || !is_unit(r.get(), n.get(), c.get())) continue;
    v = mod_mul(r.get(), r.get(), n.get(), c.get());
    if (BN_is_one(power(v.get(), p1.get(), n.get(), c.get()).get())) continue;
    if (BN_is_one(power(v.get(), q1.get(), n.get(), c.get()).get())) continue;
    break;
  }

  Attempt out;
  PublicKey& key = out.dealing.public_key;
  key.modulus = to_bytes(n.get(), width);
  key.threshold = k;
  key.shares = n_shares;
  key.v = to_bytes(v.get(), width);
  for (unsigned i = 1; i <= n_shares; ++i) {
    key.verification_keys.push_back(to_bytes(power(v.get(), shares[i - 1].get(), n.get(), c.get()).get(), width));
    out.dealing.shares.emplace_back(static_cast<std::uint8_t>(i), to_bytes(shares[i - 1].get(), width));
  }
  out.secret.p = to_bytes(p.get(), width / 2);
  out.secret.q = to_bytes(q.get(), width / 2);
  return out;
}

}  // namespace

Result<Dealing, Error> deal(std::uint8_t threshold, std::uint8_t shares, std::size_t modulus_bits,
                            DealerSecret& secret_out) {
  if (shares < 1 || shares > kMaxShares || threshold < 1 || threshold > shares) return Err(Error::kParameters);
  if (modulus_bits % 16 != 0 || modulus_bits < kMinModulusBits || modulus_bits > kMaxModulusBits) {
    return Err(Error::kParameters);
  }
  for (;;) {
    auto attempt = deal_once(threshold, shares, modulus_bits);
    if (!attempt) return Err(attempt.error());
    if (attempt->retry) continue;
    secret_out = std::move(attempt->secret);
    return std::move(attempt->dealing);
  }
}

Result<Dealing, Error> deal(std::uint8_t threshold, std::uint8_t shares, std::size_t modulus_bits) {
  DealerSecret discarded;
  auto dealing = deal(threshold, shares, modulus_bits, discarded);
  OPENSSL_cleanse(discarded.p.data(), discarded.p.size());
  OPENSSL_cleanse(discarded.q.data(), discarded.q.size());
  return dealing;
}

Result<Bytes, Error> hash_to_group(const PublicKey& key, ByteView message) {
  auto opened = Group::open(key);
  if (!opened) return Err(opened.error());
  const Group& g = *opened;
  auto x = hash_message(g, message);
  if (!x) return Err(x.error());
  return g.bytes(x->get());
}

Result<SignatureShare, Error> sign_share(const PublicKey& key, const SecretShare& secret_share, ByteView message) {
  auto opened = Group::open(key);
  if (!opened) return Err(opened.error());
  const Group& g = *opened;
  if (!index_in_range(key, secret_share.index())) return Err(Error::kIndexOutOfRange);
  if (secret_share.value().size() != key.element_size()) return Err(Error::kLength);
  auto x = hash_message(g, message);
  if (!x) return Err(x.error());
  BN_CTX* c = g.c.get();
  Bn s = bn_of(secret_share.value());
  secret(s.get());

  // x_i = x^(2 Delta s_i).
  Bn two_delta = copy(g.delta.get());
  check(BN_lshift1(two_delta.get(), two_delta.get()));
  Bn exponent = mul(two_delta.get(), s.get(), c);
  secret(exponent.get());
  Bn x_i = power(x->get(), exponent.get(), g.n.get(), c);

  // The proof: r < 2^(|N| + 2 L1), v' = v^r, x' = x~^r, c = H'(...), z = s_i c + r.
  Bn x_tilde = power(x->get(), mul(two_delta.get(), bn_word(2).get(), c).get(), g.n.get(), c);
  Bn r = bn();
  secret(r.get());
  if (BN_priv_rand(r.get(), BN_num_bits(g.n.get()) + 2 * static_cast<int>(kChallengeBits), BN_RAND_TOP_ANY,
                   BN_RAND_BOTTOM_ANY) != 1) {
    return Err(Error::kRandomness);
  }
  Bn v_prime = power(g.v.get(), r.get(), g.n.get(), c);
  Bn x_prime = power(x_tilde.get(), r.get(), g.n.get(), c);
  Bn x_i_squared = mod_mul(x_i.get(), x_i.get(), g.n.get(), c);
  Bn v_i = bn_of(key.verification_keys[secret_share.index() - 1]);

  SignatureShare out;
  out.index = secret_share.index();
  out.value = g.bytes(x_i.get());
  out.challenge = challenge(g, x_tilde.get(), v_i.get(), x_i_squared.get(), v_prime.get(), x_prime.get());
  Bn z = mul(s.get(), bn_of(out.challenge).get(), c);
  check(BN_add(z.get(), z.get(), r.get()));
  out.response = to_bytes(z.get(), key.element_size() + kResponseExtra);
  return out;
}

Result<Unit, Error> verify_share(const PublicKey& key, ByteView message, const SignatureShare& share) {
  auto opened = Group::open(key);
  if (!opened) return Err(opened.error());
  const Group& g = *opened;
  if (!index_in_range(key, share.index)) return Err(Error::kIndexOutOfRange);
  if (share.value.size() != key.element_size() || share.response.size() != key.element_size() + kResponseExtra) {
    return Err(Error::kLength);
  }
  auto x = hash_message(g, message);
  if (!x) return Err(x.error());
  BN_CTX* c = g.c.get();
  auto x_i = element(share.value, g.n.get());
  if (!x_i) return Err(x_i.error());
  Bn x_i_squared = mod_mul(x_i->get(), x_i->get(), g.n.get(), c);
  if (!is_unit(x_i_squared.get(), g.n.get(), c)) return Err(Error::kShareProofMismatch);

  Bn four_delta = copy(g.delta.get());
  check(BN_lshift(four_delta.get(), four_delta.get(), 2));
  Bn x_tilde = power(x->get(), four_delta.get(), g.n.get(), c);
  Bn v_i = bn_of(key.verification_keys[share.index - 1]);
  // v_i^-c below takes v_i's inverse, which a hand-built key's v_i that is no
  // unit lacks (the decoder refuses one): kParameters, not an abort. Taken
  // here, where it costs nothing extra, rather than a gcd per call; the mark
  // drops the error OpenSSL queues for a missing inverse.
  ERR_set_mark();
  Bn v_i_inverse(BN_mod_inverse(nullptr, v_i.get(), g.n.get(), c));
  ERR_pop_to_mark();
  if (!v_i_inverse) return Err(Error::kParameters);
  Bn z = bn_of(share.response);
  Bn c_value = bn_of(share.challenge);
  Bn minus_c = copy(c_value.get());
  BN_set_negative(minus_c.get(), 1);
  // v' = v^z v_i^-c and x' = x~^z (x_i^2)^-c, as the prover's when the share is right.
  Bn v_prime = mod_mul(power(g.v.get(), z.get(), g.n.get(), c).get(),
                       power(v_i_inverse.get(), c_value.get(), g.n.get(), c).get(), g.n.get(), c);
  Bn x_prime = mod_mul(power(x_tilde.get(), z.get(), g.n.get(), c).get(),
                       power(x_i_squared.get(), minus_c.get(), g.n.get(), c).get(), g.n.get(), c);
  if (challenge(g, x_tilde.get(), v_i.get(), x_i_squared.get(), v_prime.get(), x_prime.get()) != share.challenge) {
    return Err(Error::kShareProofMismatch);
  }
  return Unit{};
}

Result<Signature, CombineError> combine(const PublicKey& key, ByteView message,
                                        std::span<const SignatureShare> shares) {
  auto opened = Group::open(key);  // from here on, an index in 1..n is at most kMaxShares
  if (!opened) return Err(CombineError{opened.error(), 0});
  const Group& g = *opened;
  BN_CTX* c = g.c.get();
  // The message first: a message hashing to a non-unit is no share's fault.
  auto x = hash_message(g, message);
  if (!x) return Err(CombineError{x.error(), 0});
  std::array<bool, kMaxShares + 1> seen{};
  for (const auto& share : shares) {
    if (!index_in_range(key, share.index)) return Err(CombineError{Error::kIndexOutOfRange, share.index});
    if (seen[share.index]) return Err(CombineError{Error::kDuplicateShare, share.index});
    seen[share.index] = true;
    if (auto ok = verify_share(key, message, share); !ok) {
      // kParameters is the key's (a v_i that is no unit), not the share's.
      return Err(CombineError{ok.error(), ok.error() == Error::kParameters ? std::uint8_t{0} : share.index});
    }
  }
  if (shares.size() < key.threshold) return Err(CombineError{Error::kNotEnoughShares, 0});
  const auto used = shares.first(key.threshold);

  // w = prod x_j^(2 lambda_j), lambda_j = Delta prod_{j' != j} j' / (j' - j): an integer.
  Bn w = bn_word(1);
  for (const auto& share : used) {
    Bn numerator = copy(g.delta.get());
    Bn denominator = bn_word(1);
    for (const auto& other : used) {
      if (other.index == share.index) continue;
      check(BN_mul_word(numerator.get(), other.index));
      const int difference = static_cast<int>(other.index) - static_cast<int>(share.index);
      check(BN_mul_word(denominator.get(), static_cast<BN_ULONG>(difference < 0 ? -difference : difference)));
      if (difference < 0) BN_set_negative(denominator.get(), !BN_is_negative(denominator.get()));
    }
    Bn lambda = bn();
    Bn remainder = bn();
    check(BN_div(lambda.get(), remainder.get(), numerator.get(), denominator.get(), c));
    if (!BN_is_zero(remainder.get())) std::abort();  // Delta = n! clears every denominator
    check(BN_lshift1(lambda.get(), lambda.get()));
    w = mod_mul(w.get(), power(bn_of(share.value).get(), lambda.get(), g.n.get(), c).get(), g.n.get(), c);
  }
  // y = w^a x^b with 4 Delta^2 a + e b = 1: w^e = x^(4 Delta^2), so y^e = x.
  Bn e_prime = mul(g.delta.get(), g.delta.get(), c);
  check(BN_lshift(e_prime.get(), e_prime.get(), 2));
  Bn e = bn_word(kPublicExponent);
  Bn a = inverse(e_prime.get(), e.get(), c);  // e prime, above n: coprime to 4 Delta^2
  Bn b = mul(e_prime.get(), a.get(), c);      // b = (1 - e' a) / e
  check(BN_sub(b.get(), bn_word(1).get(), b.get()));
  Bn remainder = bn();
  Bn b_exact = bn();
  check(BN_div(b_exact.get(), remainder.get(), b.get(), e.get(), c));
  if (!BN_is_zero(remainder.get())) std::abort();
  b = std::move(b_exact);
  Bn y = mod_mul(power(w.get(), a.get(), g.n.get(), c).get(), power(x->get(), b.get(), g.n.get(), c).get(), g.n.get(), c);

  Signature signature{g.bytes(y.get())};
  // Every share's proof held, so this holds unless the public key is not a dealing's.
  if (auto ok = verify(key, message, signature); !ok) return Err(CombineError{ok.error(), 0});
  return signature;
}

Result<Unit, Error> verify(const PublicKey& key, ByteView message, const Signature& signature) {
  auto opened = Group::open(key);
  if (!opened) return Err(opened.error());
  const Group& g = *opened;
  if (signature.value.size() != key.element_size()) return Err(Error::kLength);
  auto x = hash_message(g, message);
  if (!x) return Err(x.error());
  auto y = element(signature.value, g.n.get());
  if (!y) return Err(y.error());
  if (BN_cmp(pow_word(y->get(), kPublicExponent, g.n.get(), g.c.get()).get(), x->get()) != 0) {
    return Err(Error::kSignatureMismatch);
  }
  return Unit{};
}

Bytes encode_public_key(const PublicKey& key) {
  Bytes out;
  out.reserve(kPublicKeyHeader + (2 + key.verification_keys.size()) * key.element_size());
  out.push_back(kEncodingVersion);
  put_u16(out, key.element_size());
  out.push_back(key.threshold);
  out.push_back(key.shares);
  append(out, key.modulus);
  append(out, key.v);
  for (const auto& v_i : key.verification_keys) append(out, v_i);
  return out;
}

Result<PublicKey, Error> decode_public_key(ByteView bytes) {
  if (bytes.size() < kPublicKeyHeader) return Err(Error::kLength);
  if (bytes[0] != kEncodingVersion) return Err(Error::kVersion);
  const std::size_t width = get_u16(bytes.subspan(1));
  if (width * 8 < kMinModulusBits || width * 8 > kMaxModulusBits) return Err(Error::kModulusInvalid);
  PublicKey key;
  key.threshold = bytes[3];
  key.shares = bytes[4];
  if (key.shares < 1 || key.shares > kMaxShares || key.threshold < 1 || key.threshold > key.shares) {
    return Err(Error::kParameters);
  }
  if (bytes.size() != kPublicKeyHeader + (2 + std::size_t{key.shares}) * width) return Err(Error::kLength);
  auto at = [&](std::size_t slot) { return bytes.subspan(kPublicKeyHeader + slot * width, width); };
  key.modulus.assign(at(0).begin(), at(0).end());
  if (key.modulus[0] == 0 || (key.modulus.back() & 1) == 0) return Err(Error::kModulusInvalid);
  Ctx c = ctx();
  Bn n = bn_of(key.modulus);
  for (std::size_t slot = 1; slot < 2 + std::size_t{key.shares}; ++slot) {
    auto e = element(at(slot), n.get());
    if (!e) return Err(e.error());
    if (!is_unit(e->get(), n.get(), c.get())) return Err(Error::kElementNotUnit);
    Bytes value(at(slot).begin(), at(slot).end());
    if (slot == 1) {
      key.v = std::move(value);
    } else {
      key.verification_keys.push_back(std::move(value));
    }
  }
  return key;
}

Bytes encode_secret_share(const SecretShare& share) {
  Bytes out;
  out.reserve(kSecretShareHeader + share.value().size());
  out.push_back(kEncodingVersion);
  put_u16(out, share.value().size());
  out.push_back(share.index());
  append(out, share.value());
  return out;
}

Result<SecretShare, Error> decode_secret_share(const PublicKey& key, ByteView bytes) {
  auto opened = Group::open(key);
  if (!opened) return Err(opened.error());
  const Group& g = *opened;
  if (bytes.size() != kSecretShareHeader + key.element_size()) return Err(Error::kLength);
  if (bytes[0] != kEncodingVersion) return Err(Error::kVersion);
  if (get_u16(bytes.subspan(1)) != key.element_size()) return Err(Error::kLength);
  const std::uint8_t index = bytes[3];
  if (!index_in_range(key, index)) return Err(Error::kIndexOutOfRange);
  auto s = element(bytes.subspan(kSecretShareHeader), g.n.get());
  if (!s) return Err(s.error());
  secret(s->get());
  const Bn expected = bn_of(key.verification_keys[index - 1]);
  if (BN_cmp(power(g.v.get(), s->get(), g.n.get(), g.c.get()).get(), expected.get()) != 0) {
    return Err(Error::kShareKeyMismatch);
  }
  return SecretShare(index, Bytes(bytes.begin() + kSecretShareHeader, bytes.end()));
}

Bytes encode_signature_share(const SignatureShare& share) {
  Bytes out;
  out.reserve(1 + share.value.size() + kChallengeSize + share.response.size());
  out.push_back(share.index);
  append(out, share.value);
  append(out, share.challenge);
  append(out, share.response);
  return out;
}

Result<SignatureShare, Error> decode_signature_share(const PublicKey& key, ByteView bytes) {
  auto opened = Group::open(key);
  if (!opened) return Err(opened.error());
  const Group& g = *opened;
  const std::size_t width = key.element_size();
  if (bytes.size() != signature_share_size(width)) return Err(Error::kLength);
  SignatureShare share;
  share.index = bytes[0];
  if (!index_in_range(key, share.index)) return Err(Error::kIndexOutOfRange);
  const ByteView value = bytes.subspan(1, width);
  if (auto e = element(value, g.n.get()); !e) return Err(e.error());
  share.value.assign(value.begin(), value.end());
  std::copy_n(bytes.begin() + 1 + static_cast<std::ptrdiff_t>(width), kChallengeSize, share.challenge.begin());
  const ByteView response = bytes.subspan(1 + width + kChallengeSize);
  share.response.assign(response.begin(), response.end());
  return share;
}

Bytes encode_signature(const Signature& signature) { return signature.value; }

Result<Signature, Error> decode_signature(const PublicKey& key, ByteView bytes) {
  auto opened = Group::open(key);
  if (!opened) return Err(opened.error());
  const Group& g = *opened;
  if (bytes.size() != key.element_size()) return Err(Error::kLength);
  if (auto e = element(bytes, g.n.get()); !e) return Err(e.error());
  return Signature{Bytes(bytes.begin(), bytes.end())};
}

}  // namespace cowboy::crypto::threshold_rsa
