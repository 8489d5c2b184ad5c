// cbqsd's storage interface. The durability contract every implementation
// keeps: when write(batch, Sync::kYes) returns ok, every put and delete in the
// batch survives a crash, together or not at all; a write that returns an
// error may or may not have happened, and the caller must treat the store as
// failed (fail closed: acknowledge nothing more).
//
// Implementations: RocksDbStore (production) and MemoryStore (tests), which can
// drop unsynced writes on a simulated crash and fail syncs on demand.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"

namespace cowboy::cbqs::store {

enum class StoreError : std::uint8_t {
  kIo,              // the write or read failed (including a failed sync)
  kFormatMismatch,  // §18 rule 4: no cbqs/store-format = 2 marker
  kFailed,          // a previous write failed: the store refuses further writes
  kNoSpace,         // too little free space to write safely: refused, and the store fails closed
  kCorrupt,         // a stored value does not decode
};
std::string_view to_string(StoreError e);

/// §18 rule 4: the marker key and its single-character value.
inline constexpr std::string_view kFormatMarkerKey = "cbqs/store-format";
inline constexpr std::string_view kFormatMarkerValue = "2";

class WriteBatch {
 public:
  struct Op {
    enum Kind : std::uint8_t { kPut, kDelete, kDeleteRange } kind;
    std::string key;
    std::string value;  // kPut: the value; kDeleteRange: the exclusive end key
  };
  void put(std::string key, std::string value) { ops_.push_back({Op::kPut, std::move(key), std::move(value)}); }
  void del(std::string key) { ops_.push_back({Op::kDelete, std::move(key), {}}); }
  /// Deletes every key in [begin, end).
  void delete_range(std::string begin, std::string end) {
    ops_.push_back({Op::kDeleteRange, std::move(begin), std::move(end)});
  }
  void append(const WriteBatch& other) { ops_.insert(ops_.end(), other.ops_.begin(), other.ops_.end()); }
  void append(WriteBatch&& other) {
    if (ops_.empty()) ops_ = std::move(other.ops_);
    else ops_.insert(ops_.end(), std::make_move_iterator(other.ops_.begin()), std::make_move_iterator(other.ops_.end()));
    other.ops_.clear();
  }
  const std::vector<Op>& ops() const { return ops_; }
  bool empty() const { return ops_.empty(); }
  std::size_t size() const { return ops_.size(); }

 private:
  std::vector<Op> ops_;
};

enum class Sync : bool { kNo = false, kYes = true };

class Store {
 public:
  virtual ~Store() = default;
  virtual Result<Unit, StoreError> write(const WriteBatch& batch, Sync sync) = 0;
  virtual Result<std::optional<std::string>, StoreError> get(std::string_view key) = 0;
  /// Visits keys in [begin, end) in order until `visit` returns false.
  virtual Result<Unit, StoreError> scan(std::string_view begin, std::string_view end,
                                        const std::function<bool(std::string_view, std::string_view)>& visit) = 0;
};

/// Opens (or creates) a RocksDB store in the directory `path`. The layout:
///
///   path/                 the store's directory: absent, or an empty directory
///                         for a new store - a mount point of its own volume, or
///                         a symlink to an empty directory, are both fine (a
///                         lost+found directory is ignored)
///     CURRENT, MANIFEST-*, *.log, *.sst, OPTIONS-*, ...   RocksDB's files
///     cbqsd.reserve       64 MiB kept free on the store's filesystem, for a
///                         restart after a full disk (released, then remade)
///     .creating           only while a new store is built: its presence at a
///                         start means a first start was cut short
///
/// A new store is built inside `path` (never beside it and renamed: that
/// fails onto a mount point or a symlink) under the `.creating` marker, as
/// common/data_dir.h describes: the marker is made durable first, the store
/// gets the format marker in a synced write (RocksDB syncs its WAL, MANIFEST
/// and CURRENT), the directory is synced, and the marker is removed last. A start that finds the marker clears the directory and builds
/// again, so a crash at any moment of a first start leaves nothing to refuse.
/// Refused: a directory holding other files and no RocksDB store (the error
/// names the path and what it holds), and a store without the format marker
/// or with another value (kFormatMismatch: a version-1 or foreign store).
Result<std::unique_ptr<Store>, std::string> open_rocksdb_store(const std::string& path);

/// Checks or writes the §18 rule 4 marker on any store.
Result<Unit, StoreError> ensure_format_marker(Store& store, bool created);

}  // namespace cowboy::cbqs::store
