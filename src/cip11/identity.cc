#include "cip11/identity.h"

#include <algorithm>
#include <cassert>

namespace cowboy::cip11 {

Res<PubKey> PubKey::parse(ByteView wire) {
  if (wire.empty()) return Err{Errc::kBadKeyLength};
  if (wire[0] != 0x01 && wire[0] != 0x02) return Err{Errc::kBadScheme};
  const auto scheme = static_cast<Scheme>(wire[0]);
  if (wire.size() != 1 + key_bytes(scheme)) return Err{Errc::kBadKeyLength};
  if (scheme == Scheme::kSecp256k1) {
    crypto::Secp256k1Compressed key;
    std::copy(wire.begin() + 1, wire.end(), key.begin());
    if (!crypto::secp256k1_key_address(key)) return Err{Errc::kInvalidKey};
  }
  // Ed25519 keys are checked by libsodium's strict verifier when a signature is verified.
  return PubKey(Bytes(wire.begin(), wire.end()));
}

PubKey PubKey::runner(const crypto::Secp256k1Compressed& key) {
  Bytes wire{static_cast<std::uint8_t>(Scheme::kSecp256k1)};
  wire.insert(wire.end(), key.begin(), key.end());
  return PubKey(std::move(wire));
}

PubKey PubKey::validator(const crypto::Ed25519Public& key) {
  Bytes wire{static_cast<std::uint8_t>(Scheme::kEd25519)};
  wire.insert(wire.end(), key.begin(), key.end());
  return PubKey(std::move(wire));
}

Res<Unit> check_role(const PubKey& key, Role role) {
  if (key.scheme() != scheme_of(role)) return Err{Errc::kRoleSchemeMismatch};
  return Unit{};
}

Res<Address> runner_address(const PubKey& key) {
  if (key.scheme() != Scheme::kSecp256k1) return Err{Errc::kRoleSchemeMismatch};
  crypto::Secp256k1Compressed raw;
  std::copy(key.raw().begin(), key.raw().end(), raw.begin());
  auto address = crypto::secp256k1_key_address(raw);
  if (!address) return Err{Errc::kInvalidKey};
  return *address;
}

namespace {
std::array<std::uint8_t, 2> role_and_scheme(Role r) {
  return {static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(scheme_of(r))};
}
}  // namespace

Bytes Preimage::bytes() const { return concat({as_bytes(domain), role_and_scheme(signer), fields}); }

Bytes32 Preimage::digest() const { return crypto::keccak256({as_bytes(domain), role_and_scheme(signer), fields}); }

Res<Signer> Signer::runner(const crypto::Secp256k1Secret& secret) {
  auto key = crypto::secp256k1_public_key(secret);
  if (!key) return Err{Errc::kInvalidKey};
  return Signer(Role::kRunner, PubKey::runner(*key), secret);
}

Signer Signer::validator(const crypto::Ed25519Seed& seed) {
  return Signer(Role::kValidator, PubKey::validator(crypto::ed25519_from_seed(seed).public_key), seed);
}

Bytes Signer::sign(const Preimage& preimage) const {
  assert(preimage.signer == role_);
  const Bytes32 digest = preimage.digest();
  if (role_ == Role::kRunner) {
    auto sig = crypto::secp256k1_sign(secret_, digest);
    assert(sig);  // the secret was validated when the signer was made
    return Bytes(sig->begin(), sig->end());
  }
  auto sig = crypto::ed25519_sign(secret_, digest);
  return Bytes(sig.begin(), sig.end());
}

Res<Unit> verify(const Preimage& preimage, const PubKey& signer, ByteView signature) {
  if (auto ok = check_role(signer, preimage.signer); !ok) return ok;
  if (signature.size() != signature_bytes(signer.scheme())) return Err{Errc::kBadSignatureLength};
  const Bytes32 digest = preimage.digest();
  if (signer.scheme() == Scheme::kSecp256k1) {
    crypto::RecoverableSignature sig;
    std::copy(signature.begin(), signature.end(), sig.begin());
    auto recovered = crypto::secp256k1_recover_key(digest, sig);
    if (!recovered) return Err{Errc::kBadSignature};
    if (!std::equal(recovered->begin(), recovered->end(), signer.raw().begin())) return Err{Errc::kSignerMismatch};
    return Unit{};
  }
  crypto::Ed25519Public key;
  crypto::Ed25519Signature sig;
  std::copy(signer.raw().begin(), signer.raw().end(), key.begin());
  std::copy(signature.begin(), signature.end(), sig.begin());
  if (!crypto::ed25519_verify(key, digest, sig)) return Err{Errc::kBadSignature};
  return Unit{};
}

}  // namespace cowboy::cip11
