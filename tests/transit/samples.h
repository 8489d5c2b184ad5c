// Shared Transit test values: fixed keys and requests, and raw-text helpers
// for spelling requests the canonical writer never would.
#pragma once

#include <ostream>
#include <string>

#include "common/crypto.h"
#include "transit/contract/codec.h"
#include "transit/contract/signing.h"

namespace cowboy::transit {

// gtest prints a reason, a code or a state by its wire name. In this header,
// which every Transit test includes, so that every test's printer is the same.
template <typename E> void print_name(E value, std::ostream* out) {
  *out << EnumTraits<E>::kNames[static_cast<std::size_t>(value)];
}
inline void PrintTo(Reason value, std::ostream* out) { print_name(value, out); }
inline void PrintTo(RejectionCode value, std::ostream* out) { print_name(value, out); }
inline void PrintTo(ProcessState value, std::ostream* out) { print_name(value, out); }

}  // namespace cowboy::transit

namespace cowboy::transit::testing {

inline crypto::Ed25519Seed seed_of(std::uint8_t first) {
  crypto::Ed25519Seed seed{};
  for (std::size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<std::uint8_t>(first + i);
  return seed;
}
inline PublicKey key_of(const crypto::Ed25519Seed& seed) { return crypto::ed25519_from_seed(seed).public_key; }

/// Tests name an id by its number or by its type (values.h): either, as the type.
template <typename T> T id(std::uint64_t v) { return T{v}; }
template <typename T> T id(T v) { return v; }
/// The number an id is, typed or not.
inline std::uint64_t raw(std::uint64_t v) { return v; }
template <typename Tag> std::uint64_t raw(StrongId<Tag, std::uint64_t> v) { return v.value; }
/// ... and an optional one: absent, a number, an optional number, or the type.
template <typename T> std::optional<T> opt_id(std::nullopt_t) { return std::nullopt; }
template <typename T> std::optional<T> opt_id(std::uint64_t v) { return T{v}; }
template <typename T> std::optional<T> opt_id(T v) { return v; }
template <typename T> std::optional<T> opt_id(const std::optional<std::uint64_t>& v) {
  return v ? std::optional<T>(T{*v}) : std::nullopt;
}
template <typename T> std::optional<T> opt_id(const std::optional<T>& v) { return v; }

/// The fixture request: root (principal 1) creates principal 2 with inspect+read.
inline Request sample_request() {
  return Request{Version{}, Definition{}, {"dev"}, PrincipalId{1}, 1,
                 CreatePrincipal{PrincipalId{2}, key_of(seed_of(100)), RealmScope{}, Permissions{kReadOnly}, std::nullopt, 1}};
}
inline Query sample_query() { return Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, IdentityQuery{}}; }

inline Genesis sample_genesis(std::optional<Id> ceiling = std::nullopt, Id reserve = 0) {
  Genesis g;
  g.realm.value = "dev";
  g.root_principal = PrincipalId{1};
  g.root_public_key = key_of(seed_of(0));
  g.admission_ceiling = ceiling;
  g.control_reserve = reserve;
  return g;
}

/// Replaces the first `from` in `text` with `to`.
inline std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace cowboy::transit::testing
