// When a RocksDB store flushes its memtables itself, besides RocksDB's own
// flush of a full memtable (64 MiB). A start replays every WAL byte not yet
// flushed and keeps it in the memtable (avoid_flush_during_recovery, for a
// start after a full disk), so without these a store that stopped idle would
// replay up to a memtable's worth at every start, and a crash under load up
// to 64 MiB of small records, 6x the ready time of a small store (issue 46).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "cbqs/store/store.h"

namespace cowboy::cbqs::store {

struct RocksDbSettings {
  /// Once no write came for this long (0: never); a restart of a store idle
  /// that long replays nothing.
  std::chrono::milliseconds flush_when_idle_for{2'000};
  /// Not for less unflushed WAL than this (its replay takes a few ms), nor
  /// when the filesystem lacks room for the table file plus 64 MiB; also the
  /// floor of the flush at a clean stop (the store's destruction).
  std::uint64_t flush_min_wal_bytes = 1u << 20;
  /// Once the memtable holds this many entries (0: never), under load too: a
  /// replay's cost is per entry (a skip-list insert each), so a crash's
  /// restart replays at most about this many, whatever the records' size
  /// (plus the memtable being flushed, if the crash came during its flush).
  std::uint64_t flush_at_entries = 50'000;
};

/// open_rocksdb_store (store.h) with other flush settings (tests).
Result<std::unique_ptr<Store>, std::string> open_rocksdb_store(const std::string& path, RocksDbSettings settings);

}  // namespace cowboy::cbqs::store
