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

/// Opens (or creates) a RocksDB store at `path`. A new store (no `path`, or an
/// empty directory) is built in `path.creating` with the format marker, then
/// renamed into place, so a crash during creation leaves nothing to refuse; an
/// existing store without the marker, or with another value, is refused
/// (kFormatMismatch: a version-1 or foreign store).
Result<std::unique_ptr<Store>, std::string> open_rocksdb_store(const std::string& path);

/// Checks or writes the §18 rule 4 marker on any store.
Result<Unit, StoreError> ensure_format_marker(Store& store, bool created);

}  // namespace cowboy::cbqs::store
