// Payloads (docs/transit.md, decisions 84-92): immutable bytes a process
// publishes, too large for a value or a block, held by the node's payload
// store and moved over a route of their own, never through a signed message
// or a journal record. The record is metadata only - digest, length,
// publisher - and goes through one lifecycle:
//
//   declare_payload --> declared --payload_ready (publisher; the bytes stored)--> ready
//        declared | ready --retire_payload (allow_delete, process retired)--> retired
//        retired --payload_deleted (the store confirms the bytes are gone)--> deleted
//
// Same conventions as types.h: one field list per type, declaration order is wire order.
#pragma once

#include "transit/contract/state.h"

namespace cowboy::transit {

// ---- bounds --------------------------------------------------------------------
/// A payload holds 0..1 TiB. The seed's 64 KiB limit is a value's (a block's,
/// kBlockBytes): a payload is how larger bytes travel (decision 84).
inline constexpr std::uint64_t kMaxPayloadBytes = std::uint64_t{1} << 40;
/// The payload route moves bytes in chunks of this size, never a body whole.
inline constexpr std::size_t kPayloadChunkBytes = 64 * 1024;

enum class PayloadState : std::uint8_t { kDeclared, kReady, kRetired, kDeleted };
template <> struct EnumTraits<PayloadState> {
  static constexpr std::array<std::string_view, 4> kNames = {"declared", "ready", "retired", "deleted"};
};

// ---- commands ----------------------------------------------------------------------

/// Declares a payload of `pid`, signed by its publisher: the digest and length
/// are fixed now and never change. `pid` null is a standalone payload, which
/// this profile refuses: every process lifetime here is finite (decision 85).
/// `allow_delete`: whether the payload may ever be deleted, given now or never.
struct DeclarePayload {
  static constexpr std::string_view kName = "declare_payload";
  std::optional<Pid> pid;
  Id length = 0;
  Digest sha256{};
  bool allow_delete = false;
  bool operator==(const DeclarePayload&) const = default;
};
template <typename V> void fields(V& v, DeclarePayload& t) {
  v("pid", t.pid)("length", t.length)("sha256", t.sha256)("allow_delete", t.allow_delete);
}

/// The publisher records that the store holds the declared bytes, synced.
struct PayloadReady {
  static constexpr std::string_view kName = "payload_ready";
  Id payload = 0;
  bool operator==(const PayloadReady&) const = default;
};
template <typename V> void fields(V& v, PayloadReady& t) { v("payload", t.payload); }

/// The publisher retires a deletable payload of a retired process: it is read no more.
struct RetirePayload {
  static constexpr std::string_view kName = "retire_payload";
  Id payload = 0;
  bool operator==(const RetirePayload&) const = default;
};
template <typename V> void fields(V& v, RetirePayload& t) { v("payload", t.payload); }

/// The publisher records the deletion of a retired payload's bytes, accepted
/// only when the store confirms they are gone.
struct PayloadDeleted {
  static constexpr std::string_view kName = "payload_deleted";
  Id payload = 0;
  bool operator==(const PayloadDeleted&) const = default;
};
template <typename V> void fields(V& v, PayloadDeleted& t) { v("payload", t.payload); }

// ---- receipts --------------------------------------------------------------------

struct PayloadChanged {
  static constexpr std::string_view kName = "payload_changed";
  Id payload = 0;
  Pid pid{};
  PayloadState state = PayloadState::kDeclared;
  bool operator==(const PayloadChanged&) const = default;
};
template <typename V> void fields(V& v, PayloadChanged& t) { v("payload", t.payload)("pid", t.pid)("state", t.state); }

// ---- queries ------------------------------------------------------------------------

/// A payload's record; needs read at its PID. The payload route asks it too:
/// its X-Transit-Query header is this query, signed (decision 88).
struct PayloadRead {
  static constexpr std::string_view kName = "payload";
  Id payload = 0;
  bool operator==(const PayloadRead&) const = default;
};
template <typename V> void fields(V& v, PayloadRead& t) { v("payload", t.payload); }

// ---- results ------------------------------------------------------------------------

/// A payload as recorded; each position is written once, by the decision that takes the step.
struct PayloadInfo {
  static constexpr std::string_view kName = "payload";
  Id payload = 0;
  Pid pid{};
  PrincipalId publisher{};  // the principal that declared it: the only one that may record its steps
  Id length = 0;
  Digest sha256{};
  bool allow_delete = false;
  PayloadState state = PayloadState::kDeclared;
  Position declared_at{};  // positions
  std::optional<Position> ready_at;
  std::optional<Position> retired_at;
  std::optional<Position> deleted_at;
  bool operator==(const PayloadInfo&) const = default;
};
template <typename V> void fields(V& v, PayloadInfo& t) {
  v("payload", t.payload)("pid", t.pid)("publisher", t.publisher)("length", t.length)("sha256", t.sha256)(
      "allow_delete", t.allow_delete)("state", t.state)("declared_at", t.declared_at)("ready_at", t.ready_at)(
      "retired_at", t.retired_at)("deleted_at", t.deleted_at);
}

}  // namespace cowboy::transit

namespace cowboy::transit {

/// The payload route's path, `/v1/payloads/{id}`: the id in canonical decimal
/// (no sign, no leading zero, 1..2^53-1), nothing before or after it; a
/// query string is refused too. None for any other target. (fuzz_transit_payload_route)
std::optional<Id> payload_of_target(std::string_view target);
std::string payload_target(Id payload);
/// The header that carries a payload route request's signed `payload` query.
inline constexpr std::string_view kPayloadQueryHeader = "X-Transit-Query";

}  // namespace cowboy::transit
