// The value kinds Transit types are built from, each with one JSON spelling
// (docs/transit.md, "Representation"): integers are decimal and at most
// 2^53 - 1; fixed byte arrays are JSON arrays of 0..255; variable opaque bytes
// are lowercase hex strings; text is UTF-8 bounded in bytes; optional values
// are null when absent; unions are single-key objects.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/strong_id.h"

namespace cowboy::transit {

/// The public numeric address space of every identity and counter.
inline constexpr std::uint64_t kMaxSafeInteger = (std::uint64_t{1} << 53) - 1;
/// Canonical logical requests and queries are bounded at 16 KiB.
inline constexpr std::size_t kMaxRequestBytes = 16 * 1024;
inline constexpr std::uint64_t kVersion = 1;

using Id = std::uint64_t;

// Identities and counters that are one integer on the wire and a type of their
// own in the code (common/strong_id.h): a pid passed where a principal is
// expected does not compile (tests/transit/strong_ids_test.cc). Built
// explicitly from the wire value, read back with `.value`; the codec, the
// schema and the reference treat each as its Rep.
using Pid = StrongId<struct PidTag, std::uint64_t>;                  // a process
using PrincipalId = StrongId<struct PrincipalIdTag, std::uint64_t>;  // a signer: admin, worker, executor
using ResourceId = StrongId<struct ResourceIdTag, std::uint64_t>;    // a resource (a map of entries)

// Points on a counted axis (common/strong_id.h's Counted): moved by a plain
// count, two of one axis differ by one, and a point of one axis is never taken
// for another's - a revision passed where a position is expected does not
// compile.
struct RevisionTag {
  static constexpr bool kCounted = true;
};
struct PositionTag {
  static constexpr bool kCounted = true;
};
using Revision = StrongId<RevisionTag, std::uint64_t>;  // a resource's revision: 1 at creation, +1 per change
using Position = StrongId<PositionTag, std::uint64_t>;  // an authority position: one per decision (cuts, floors)

// Trusted time (decision 178): a point is milliseconds since the Unix epoch by
// the authority's clock (a deadline, an acceptance, an expiry), a duration is
// a count of milliseconds (a lease, a grace). A point moves only by a Millis
// and two points differ by one; a lease where a deadline is expected, or
// either where a raw integer is, does not compile. On the wire each is its u64.
using Millis = StrongId<struct MillisTag, std::uint64_t>;
struct TrustedMsTag {
  static constexpr bool kCounted = true;
  using Count = Millis;
};
using TrustedMs = StrongId<TrustedMsTag, std::uint64_t>;
template <std::size_t N> using Fixed = std::array<std::uint8_t, N>;
using PublicKey = Fixed<32>;
using Signature = Fixed<64>;
using Digest = Fixed<32>;

/// UTF-8 text of MinBytes..MaxBytes bytes.
template <std::size_t MinBytes, std::size_t MaxBytes> struct Text {
  std::string value;
  bool operator==(const Text&) const = default;
};

/// Variable-length opaque bytes (MinBytes..MaxBytes), lowercase hex on the wire.
template <std::size_t MaxBytes, std::size_t MinBytes = 0> struct Hex {
  std::vector<std::uint8_t> value;
  bool operator==(const Hex&) const = default;
};

/// At most Max items.
template <typename T, std::size_t Max> struct List {
  std::vector<T> items;
  bool operator==(const List&) const = default;
};

/// Exactly N slots, each a value or null (e.g. read_entries' eight keys).
template <typename T, std::size_t N> struct Slots {
  std::array<std::optional<T>, N> items{};
  bool operator==(const Slots&) const = default;
};

/// `version`: always 1; any other number is unknown_version.
struct Version {
  std::uint64_t value = kVersion;
  bool operator==(const Version&) const = default;
};

/// `definition`: the exact identifier of this build's schema (definition()).
/// A missing field is missing_definition; any other value, of any JSON type,
/// is foreign_definition. There are no alternate spellings.
struct Definition {
  std::string value;  // empty means "this build's" when writing
  bool operator==(const Definition&) const = default;
};

/// Native permission bits (docs/transit.md, decision 7); unknown bits are malformed.
enum Permission : std::uint64_t {
  kInspect = 1u << 0,
  kRead = 1u << 1,
  kWrite = 1u << 2,
  kSend = 1u << 3,
  kExecute = 1u << 4,
  kEffect = 1u << 5,
  kCourier = 1u << 6,
  kPidAdmin = 1u << 7,
  kRealmControl = 1u << 8,
};
inline constexpr std::uint64_t kAllPermissions = (1u << 9) - 1;
/// Each bit's name, bit i at index i.
inline constexpr std::array<std::string_view, 9> kPermissionNames = {
    "inspect", "read", "write", "send", "execute", "effect", "courier", "pid_admin", "realm_control"};
/// The name of a single permission bit.
constexpr std::string_view permission_name(Permission bit) {
  for (std::size_t i = 0; i < kPermissionNames.size(); ++i)
    if (bit == (std::uint64_t{1} << i)) return kPermissionNames[i];
  return "?";
}
inline constexpr std::uint64_t kReadOnly = kInspect | kRead;

struct Permissions {
  std::uint64_t bits = 0;
  bool has(std::uint64_t wanted) const { return (bits & wanted) == wanted; }
  bool operator==(const Permissions&) const = default;
};

/// A closed set of names, spelled as JSON strings. E supplies
/// `names(E)` -> a span of its spellings indexed by value.
template <typename E> struct EnumTraits;

}  // namespace cowboy::transit
