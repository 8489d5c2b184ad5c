// Working-catalog collection (docs/transit.md, decisions 110-117, 186-187): `collect`
// removes one finished record of a process that opted in with
// allow_collection at create or spawn - a resolved output, a closed effect, a
// deleted payload, a retired resource it owns - or, last, the process itself,
// which leaves a permanent identity tombstone. Each command rechecks every
// gate and removes at most kCollectRemovals records; a collection that needs
// more answers complete: false and is repeated. Nothing collected is ever
// allocated again: PIDs, resource names and every id come from counters or
// records that stay.
//
// Same conventions as types.h: one field list per type, declaration order is wire order.
#pragma once

#include "transit/contract/state.h"

namespace cowboy::transit {

/// At most this many records (views, associations, mailbox inputs, outputs,
/// effects, payloads) one collect removes (the seed's "at most eight").
inline constexpr Id kCollectRemovals = 8;

enum class CollectKind : std::uint8_t { kOutput, kEffect, kPayload, kResource, kProcess };
template <> struct EnumTraits<CollectKind> {
  static constexpr std::array<std::string_view, 5> kNames = {"output", "effect", "payload", "resource", "process"};
};

// ---- commands ----------------------------------------------------------------------

/// Collects `record` of `kind` belonging to `pid` (an output it sent, an
/// effect it authorized, a payload of it, a resource whose lifetime it owns),
/// or with kind process and no record the process itself. pid_admin at `pid`.
struct Collect {
  static constexpr std::string_view kName = "collect";
  Pid pid{};
  CollectKind kind = CollectKind::kProcess;
  std::optional<Id> record;  // null exactly for kind process
  bool operator==(const Collect&) const = default;
};
template <typename V> void fields(V& v, Collect& t) { v("pid", t.pid)("kind", t.kind)("record", t.record); }

// ---- the maintenance process's listing ------------------------------------------

/// The records `collect` would take now (decision 155): of the processes
/// admitted with allow_collection that the caller holds pid_admin at, in PID
/// order after `cursor.after`, each process's finished outputs, effects and
/// payloads, its ended resources whose gates pass, and the process itself
/// once its own gates pass. A bounded scan: a page examines at most the scan
/// budget of processes and lists at most a page of records; a process's
/// records beyond the page are listed by a later pass.
struct ListCollectable {
  static constexpr std::string_view kName = "list_collectable";
  std::optional<Cursor> cursor;
  bool operator==(const ListCollectable&) const = default;
};
template <typename V> void fields(V& v, ListCollectable& t) { v("cursor", t.cursor); }

struct CollectableRecord {
  static constexpr std::string_view kName = "CollectableRecord";
  Pid pid{};
  CollectKind kind = CollectKind::kProcess;
  Id record = 0;  // the pid itself for kind process
  bool operator==(const CollectableRecord&) const = default;
};
template <typename V> void fields(V& v, CollectableRecord& t) { v("pid", t.pid)("kind", t.kind)("record", t.record); }

struct CollectablePage {
  static constexpr std::string_view kName = "collectable_page";
  Position cut{};
  List<CollectableRecord, kPageRecords> items;
  std::optional<Cursor> cursor;  // after: the last PID examined; null: the scan is complete
  bool operator==(const CollectablePage&) const = default;
};
template <typename V> void fields(V& v, CollectablePage& t) { v("cut", t.cut)("items", t.items)("cursor", t.cursor); }

// ---- receipts ------------------------------------------------------------------

/// What one collect removed. complete: the record is gone (a resource or a
/// process: its tombstone is written); otherwise `removed` records went, and
/// the same command, sent again, goes on.
struct Collected {
  static constexpr std::string_view kName = "collected";
  Pid pid{};
  CollectKind kind = CollectKind::kProcess;
  Id record = 0;  // the pid itself for kind process
  Id removed = 0;
  bool complete = false;
  bool operator==(const Collected&) const = default;
};
template <typename V> void fields(V& v, Collected& t) {
  v("pid", t.pid)("kind", t.kind)("record", t.record)("removed", t.removed)("complete", t.complete);
}

}  // namespace cowboy::transit
