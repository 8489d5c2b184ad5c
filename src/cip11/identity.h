// CIP-11 identities (§3.3, §12.6): scheme-tagged wire keys and role-scheme
// signatures. A runner signs with recoverable secp256k1 (65-byte r||s||recid)
// and is known by the EVM address its key derives; a validator signs with
// Ed25519 (64 bytes) under its snapshot peer_pubkey. Every check that role,
// scheme, key length and signature length agree lives here.
#pragma once

#include <string_view>

#include "cip11/errc.h"
#include "common/bytes.h"
#include "common/crypto.h"

namespace cowboy::cip11 {

/// §12.6 discriminant bytes.
enum class Role : std::uint8_t { kRunner = 0x01, kValidator = 0x02 };
enum class Scheme : std::uint8_t { kSecp256k1 = 0x01, kEd25519 = 0x02 };

constexpr Scheme scheme_of(Role role) { return role == Role::kRunner ? Scheme::kSecp256k1 : Scheme::kEd25519; }
/// The role at the other end of a connection.
constexpr Role peer_role(Role role) { return role == Role::kRunner ? Role::kValidator : Role::kRunner; }
constexpr std::size_t key_bytes(Scheme s) { return s == Scheme::kSecp256k1 ? 33 : 32; }
constexpr std::size_t signature_bytes(Scheme s) { return s == Scheme::kSecp256k1 ? 65 : 64; }

/// A wire `PubKey`: scheme_id || key bytes (34 bytes secp256k1, 33 bytes Ed25519).
/// Only parse() and the two constructors make a non-empty one, so a PubKey that
/// holds bytes is always well formed; a default one is empty until assigned.
class PubKey {
 public:
  PubKey() = default;
  static Res<PubKey> parse(ByteView wire);
  static PubKey runner(const crypto::Secp256k1Compressed& key);
  static PubKey validator(const crypto::Ed25519Public& key);

  Scheme scheme() const { return static_cast<Scheme>(wire_[0]); }
  /// The key without its tag (the authoritative, untagged form).
  ByteView raw() const { return ByteView(wire_).subspan(1); }
  const Bytes& wire() const { return wire_; }
  bool operator==(const PubKey&) const = default;

 private:
  explicit PubKey(Bytes wire) : wire_(std::move(wire)) {}
  Bytes wire_;
};

/// kRoleSchemeMismatch unless the key's scheme is the role's.
Res<Unit> check_role(const PubKey& key, Role role);
/// The runner authority a secp256k1 PubKey stands for (§3.3).
Res<Address> runner_address(const PubKey& key);

/// What a role-scheme signature covers: keccak256(domain || signer_role || scheme_id || fields).
struct Preimage {
  std::string_view domain;  // ASCII, ends "-v1"
  Role signer;
  Bytes fields;             // the §12.6 fields after the domain, big-endian scalars

  Bytes bytes() const;      // the whole hashed preimage
  Bytes32 digest() const;
};

/// A role key held in memory (tests, tools, and later the services' key files).
class Signer {
 public:
  static Res<Signer> runner(const crypto::Secp256k1Secret& secret);
  static Signer validator(const crypto::Ed25519Seed& seed);

  Role role() const { return role_; }
  const PubKey& pubkey() const { return pubkey_; }
  /// Precondition: preimage.signer == role().
  Bytes sign(const Preimage& preimage) const;

 private:
  Signer(Role role, PubKey pubkey, Bytes32 secret) : role_(role), pubkey_(std::move(pubkey)), secret_(secret) {}
  Role role_;
  PubKey pubkey_;
  Bytes32 secret_;  // the secp256k1 secret or the Ed25519 seed
};

/// Verifies `signature` over `preimage` by `signer`, after checking that the
/// preimage's role, the key's scheme and the signature's length all agree.
Res<Unit> verify(const Preimage& preimage, const PubKey& signer, ByteView signature);

}  // namespace cowboy::cip11
