// Leased snapshots (docs/transit.md, decisions 70-78): bounded, volatile read
// snapshots of one resource, pinned at the authority position they were
// opened at, held by a token bound to the principal that opened them, kept
// alive by a lease that reads renew. They are queries: nothing of them is
// journaled, and a node restart ends every one. Same conventions as types.h:
// one field list per type, declaration order is wire order.
#pragma once

#include "transit/contract/state.h"

namespace cowboy::transit {

// ---- bounds --------------------------------------------------------------------
inline constexpr Millis kSnapshotLeaseMaxMs{60'000};  // a lease is 1..60,000 ms
inline constexpr std::size_t kSnapshotRangeRecords = 32;      // snapshot_read's own range budget
inline constexpr std::size_t kSnapshotRangeScan = 256;        // keys one range examines at most
inline constexpr std::size_t kSnapshotTokenBytes = 32;

/// Unguessable: the node's incarnation (16 bytes) and 16 random bytes.
using SnapshotToken = Hex<kSnapshotTokenBytes, kSnapshotTokenBytes>;

// ---- queries ---------------------------------------------------------------------

/// Opens a snapshot of `resource` at its current revision (which `revision`,
/// when given, must be), leased for `lease_ms`.
struct OpenSnapshot {
  static constexpr std::string_view kName = "open_snapshot";
  ResourceId resource{};
  std::optional<Revision> revision;
  Millis lease_ms{};
  bool operator==(const OpenSnapshot&) const = default;
};
template <typename V> void fields(V& v, OpenSnapshot& t) {
  v("resource", t.resource)("revision", t.revision)("lease_ms", t.lease_ms);
}

/// A page of the snapshot's entries (the ordinary page budget); `key` (a
/// direct lookup) and `cursor` are exclusive, and a cursor's cut is the
/// snapshot's position.
struct SnapshotEntries {
  static constexpr std::string_view kName = "snapshot_entries";
  SnapshotToken token;
  std::optional<EntryKey> key;
  std::optional<EntryCursor> cursor;
  bool operator==(const SnapshotEntries&) const = default;
};
template <typename V> void fields(V& v, SnapshotEntries& t) { v("token", t.token)("key", t.key)("cursor", t.cursor); }

/// Releases the snapshot; closing one that is not open (any more) is answered too.
struct CloseSnapshot {
  static constexpr std::string_view kName = "close_snapshot";
  SnapshotToken token;
  bool operator==(const CloseSnapshot&) const = default;
};
template <typename V> void fields(V& v, CloseSnapshot& t) { v("token", t.token); }

/// snapshot_read's source: acquire a new snapshot with this read, or continue one.
struct AcquireSource {
  static constexpr std::string_view kName = "acquire";
  ResourceId resource{};
  std::optional<Revision> revision;
  Millis lease_ms{};
  bool operator==(const AcquireSource&) const = default;
};
template <typename V> void fields(V& v, AcquireSource& t) {
  v("resource", t.resource)("revision", t.revision)("lease_ms", t.lease_ms);
}

struct TokenSource {
  static constexpr std::string_view kName = "token";
  SnapshotToken token;
  bool operator==(const TokenSource&) const = default;
};
template <typename V> void fields(V& v, TokenSource& t) { v("token", t.token); }

using SnapshotSource = std::variant<AcquireSource, TokenSource>;

/// A range of up to `limit` (1..32) captured entries after `after`, with the
/// resource's current metadata; `finish` validates once more and releases the
/// snapshot with this read.
struct SnapshotRead {
  static constexpr std::string_view kName = "snapshot_read";
  SnapshotSource source;
  std::optional<EntryKey> after;
  Id limit = kSnapshotRangeRecords;
  bool finish = false;
  bool operator==(const SnapshotRead&) const = default;
};
template <typename V> void fields(V& v, SnapshotRead& t) {
  v("source", t.source)("after", t.after)("limit", t.limit)("finish", t.finish);
}

// ---- results ---------------------------------------------------------------------

/// What a snapshot holds: `resource` at `revision`, as published at
/// `position`, its lease ending at `expires_at_ms` (trusted time).
struct SnapshotInfo {
  static constexpr std::string_view kName = "SnapshotInfo";
  SnapshotToken token;
  ResourceId resource{};
  Revision revision{};
  Position position{};
  TrustedMs expires_at_ms{};
  bool operator==(const SnapshotInfo&) const = default;
};
template <typename V> void fields(V& v, SnapshotInfo& t) {
  v("token", t.token)("resource", t.resource)("revision", t.revision)("position", t.position)(
      "expires_at_ms", t.expires_at_ms);
}

struct SnapshotOpened {
  static constexpr std::string_view kName = "snapshot_opened";
  SnapshotInfo snapshot;
  ResourceInfo resource;  // the metadata it was opened on
  bool operator==(const SnapshotOpened&) const = default;
};
template <typename V> void fields(V& v, SnapshotOpened& t) { v("snapshot", t.snapshot)("resource", t.resource); }

struct SnapshotPage {
  static constexpr std::string_view kName = "snapshot_page";
  SnapshotInfo snapshot;  // its lease renewed by this read
  List<Entry, kPageRecords> items;
  std::optional<EntryCursor> cursor;  // null: the snapshot's entries are complete
  bool operator==(const SnapshotPage&) const = default;
};
template <typename V> void fields(V& v, SnapshotPage& t) { v("snapshot", t.snapshot)("items", t.items)("cursor", t.cursor); }

/// `released`: true when this call closed an open snapshot of the caller;
/// false when there was none to close (closed before, expired, of an earlier
/// node incarnation, unknown, or another principal's, which stays open).
struct SnapshotClosed {
  static constexpr std::string_view kName = "snapshot_closed";
  SnapshotToken token;
  bool released = false;
  bool operator==(const SnapshotClosed&) const = default;
};
template <typename V> void fields(V& v, SnapshotClosed& t) { v("token", t.token)("released", t.released); }

/// Captured entries at `snapshot.revision` beside `current`, the resource's
/// metadata now: two bases, each named. `next`: the last key examined when
/// more may follow (null: the range reached the end). `released`: the
/// snapshot was released with this read (finish).
struct SnapshotRange {
  static constexpr std::string_view kName = "snapshot_range";
  SnapshotInfo snapshot;
  ResourceInfo current;
  List<Entry, kSnapshotRangeRecords> items;
  std::optional<EntryKey> next;
  bool released = false;
  bool operator==(const SnapshotRange&) const = default;
};
template <typename V> void fields(V& v, SnapshotRange& t) {
  v("snapshot", t.snapshot)("current", t.current)("items", t.items)("next", t.next)("released", t.released);
}

}  // namespace cowboy::transit
