#include <rocksdb/db.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/sst_file_manager.h>
#include <rocksdb/write_batch.h>

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "cbqs/store/store.h"
#include "common/data_dir.h"
#include "common/log.h"

namespace cowboy::cbqs::store {

std::string_view to_string(StoreError e) {
  switch (e) {
    case StoreError::kIo: return "storage I/O failed";
    case StoreError::kFormatMismatch: return "the store has no cbqs/store-format = 2 marker (§18 rule 4)";
    case StoreError::kFailed: return "the store failed earlier and accepts no more writes";
    case StoreError::kNoSpace: return "the store's filesystem has less than 32 MiB free";
    case StoreError::kCorrupt: return "a stored value does not decode";
  }
  return "?";
}

namespace {

// Below this much free space the store writes nothing more: RocksDB (7.8, as
// Debian builds it, with assertions) aborts the process on a write after a
// WAL write that met a full disk, so the store stops well before one can.
constexpr std::uint64_t kMinFreeBytes = 32ull << 20;

// The column family of every stream's records (s/<sid>/r/<seq>, layout.h);
// every other key is in RocksDB's default one. Records are most of what is
// written, in ascending keys, so their table files never overlap and go down
// the levels without being rewritten; the small keys every batch rewrites
// (tails, lane runs, receipts) stay out of them.
constexpr std::string_view kRecordsFamily = "records";

// In the default family once every record is in kRecordsFamily: a store
// without it was written before the split and is moved at the next open.
constexpr std::string_view kRecordsMovedKey = "cbqs/records-family";

// At most this much write-ahead log is kept: past it RocksDB flushes the
// families whose memtables hold the oldest WAL (max_total_wal_size). A start
// replays the live WAL (25-55 ms per MiB on this machine), so this bounds the
// time to ready whatever the store holds.
constexpr std::uint64_t kMaxWalBytes = 8ull << 20;

// s/<32-byte sid>/r/ : the prefix of a stream's record keys.
constexpr std::size_t kRecordPrefixBytes = 2 + 32 + 3;
bool is_record_key(std::string_view key) {
  return key.size() >= kRecordPrefixBytes && key.starts_with("s/") && key.substr(34, 3) == "/r/";
}

// Whether every key of [begin, end) is a record key of one stream: begin is
// one, and end is one of the same stream or that stream's "s/<sid>/r0".
bool records_only(std::string_view begin, std::string_view end) {
  if (!is_record_key(begin) || end.size() < kRecordPrefixBytes) return false;
  auto prefix = begin.substr(0, kRecordPrefixBytes);
  if (end.starts_with(prefix)) return true;
  return end.size() == kRecordPrefixBytes && end.substr(0, kRecordPrefixBytes - 1) == prefix.substr(0, kRecordPrefixBytes - 1) &&
         end.back() == '0';
}

class RocksDbStore final : public Store {
 public:
  RocksDbStore(std::unique_ptr<rocksdb::DB> db, std::vector<rocksdb::ColumnFamilyHandle*> families, std::string path)
      : db_(std::move(db)), families_(std::move(families)), path_(std::move(path)) {}
  ~RocksDbStore() override {
    for (auto* family : families_) (void)db_->DestroyColumnFamilyHandle(family);
  }

  rocksdb::DB& db() { return *db_; }
  rocksdb::ColumnFamilyHandle* defaults() const { return families_[0]; }
  rocksdb::ColumnFamilyHandle* records() const { return families_[1]; }
  void add_family(rocksdb::ColumnFamilyHandle* family) { families_.push_back(family); }
  rocksdb::ColumnFamilyHandle* family_of(std::string_view key) const {
    return is_record_key(key) ? records() : defaults();
  }

  Result<Unit, StoreError> write(const WriteBatch& batch, Sync sync) override {
    if (failed_) return Err{StoreError::kFailed};
    if (short_of_space()) {  // fail closed, as on a failed write: nothing of this batch is written
      if (!failed_.exchange(true)) log::error("store_full", log::field("path", path_), log::field("why", to_string(StoreError::kNoSpace)));
      return Err{StoreError::kNoSpace};
    }
    // RocksDB counts per-operation perf stats in thread-locals by default;
    // nothing reads them, and each count is a TLS lookup in a shared library.
    thread_local bool quiet = (rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable), true);
    (void)quiet;
    // One RocksDB batch across both families: one WAL entry, all or nothing.
    rocksdb::WriteBatch wb;
    for (const auto& op : batch.ops()) {
      switch (op.kind) {
        case WriteBatch::Op::kPut: wb.Put(family_of(op.key), op.key, op.value); break;
        case WriteBatch::Op::kDelete: wb.Delete(family_of(op.key), op.key); break;
        case WriteBatch::Op::kDeleteRange:
          if (records_only(op.key, op.value)) {
            wb.DeleteRange(records(), op.key, op.value);
          } else {  // may hold keys of both families
            wb.DeleteRange(defaults(), op.key, op.value);
            wb.DeleteRange(records(), op.key, op.value);
          }
          break;
      }
    }
    rocksdb::WriteOptions options;
    options.sync = sync == Sync::kYes;
    if (!db_->Write(options, &wb).ok()) {
      failed_ = true;  // fail closed: after an unknown outcome nothing more is written
      return Err{StoreError::kIo};
    }
    return Unit{};
  }

  Result<std::optional<std::string>, StoreError> get(std::string_view key) override {
    std::string value;
    auto status = db_->Get(rocksdb::ReadOptions(), family_of(key), rocksdb::Slice(key.data(), key.size()), &value);
    if (status.IsNotFound()) return std::optional<std::string>{};
    if (!status.ok()) return Err{StoreError::kIo};
    return std::optional<std::string>(std::move(value));
  }

  Result<Unit, StoreError> scan(std::string_view begin, std::string_view end,
                                const std::function<bool(std::string_view, std::string_view)>& visit) override {
    rocksdb::Slice from(begin.data(), begin.size());
    if (records_only(begin, end)) {
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), records()));
      for (it->Seek(from); it->Valid(); it->Next()) {
        auto key = it->key().ToStringView();
        if (key >= end) break;
        if (!visit(key, it->value().ToStringView())) break;
      }
      if (!it->status().ok()) return Err{StoreError::kIo};
      return Unit{};
    }
    // A range that may hold keys of both families: both, merged in key order
    // (no key is in both).
    rocksdb::ReadOptions read;
    std::unique_ptr<const rocksdb::Snapshot, std::function<void(const rocksdb::Snapshot*)>> snapshot(
        db_->GetSnapshot(), [this](const rocksdb::Snapshot* s) { db_->ReleaseSnapshot(s); });
    read.snapshot = snapshot.get();
    std::unique_ptr<rocksdb::Iterator> a(db_->NewIterator(read, defaults()));
    std::unique_ptr<rocksdb::Iterator> b(db_->NewIterator(read, records()));
    a->Seek(from);
    b->Seek(from);
    auto live = [&](rocksdb::Iterator& it) { return it.Valid() && it.key().ToStringView() < end; };
    while (live(*a) || live(*b)) {
      rocksdb::Iterator& next = !live(*b) || (live(*a) && a->key().compare(b->key()) < 0) ? *a : *b;
      if (!visit(next.key().ToStringView(), next.value().ToStringView())) break;
      next.Next();
    }
    if (!a->status().ok() || !b->status().ok()) return Err{StoreError::kIo};
    return Unit{};
  }

 private:
  bool short_of_space() const {
    struct statvfs fs{};
    return ::statvfs(path_.c_str(), &fs) == 0 && static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize < kMinFreeBytes;
  }

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> families_;  // default, records
  std::string path_;
  std::atomic<bool> failed_{false};  // every committer thread writes
};

}  // namespace

Result<Unit, StoreError> ensure_format_marker(Store& store, bool created) {
  if (created) {
    WriteBatch batch;
    batch.put(std::string(kFormatMarkerKey), std::string(kFormatMarkerValue));
    return store.write(batch, Sync::kYes);
  }
  auto marker = store.get(kFormatMarkerKey);
  if (!marker) return Err{marker.error()};
  if (!*marker || **marker != kFormatMarkerValue) return Err{StoreError::kFormatMismatch};
  return Unit{};
}

// Obsolete WAL and table files are deleted by a background thread, shortened
// 4 MiB at a time at up to 128 MiB/s, instead of by one unlink. Unlinking a
// 64 MiB WAL after a flush held the ext4 journal (with online discard, as on
// the reference VM) for 20-35 ms, and every fdatasync of the live WAL waited
// behind it. The rate is above what one broker writes, so trash does not build
// up; the ratio only keeps the scheduler from deleting at once while the table
// files are still small next to the first WALs.
static std::shared_ptr<rocksdb::SstFileManager> paced_file_deletion() {
  constexpr std::int64_t kDeleteBytesPerSec = 128 << 20;
  constexpr std::uint64_t kDeleteChunkBytes = 4 << 20;
  constexpr double kMaxTrashToDataRatio = 100;
  return std::shared_ptr<rocksdb::SstFileManager>(
      rocksdb::NewSstFileManager(rocksdb::Env::Default(), nullptr, "", kDeleteBytesPerSec,
                                 /*delete_existing_trash=*/true, nullptr, kMaxTrashToDataRatio, kDeleteChunkBytes));
}

namespace {

rocksdb::Options store_options() {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.sst_file_manager = paced_file_deletion();
  // Reopening replays the WAL into the memtable and keeps it, instead of
  // flushing it to a table file first: after a full disk, a start then needs
  // a few MiB free rather than the unflushed WAL's size (up to kMaxWalBytes).
  options.avoid_flush_during_recovery = true;
  options.max_total_wal_size = kMaxWalBytes;
  return options;
}

// The families as a store of this version has them: default, records.
std::vector<rocksdb::ColumnFamilyDescriptor> families(const rocksdb::Options& options) {
  return {{rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions(options)},
          {std::string(kRecordsFamily), rocksdb::ColumnFamilyOptions(options)}};
}

Result<std::unique_ptr<RocksDbStore>, std::string> open_db(const std::string& path, const rocksdb::Options& options,
                                                           std::vector<rocksdb::ColumnFamilyDescriptor> wanted) {
  rocksdb::DB* raw = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  auto status = rocksdb::DB::Open(rocksdb::DBOptions(options), path, wanted, &handles, &raw);
  if (!status.ok()) return Err{"cannot open store " + path + ": " + status.ToString()};
  return std::make_unique<RocksDbStore>(std::unique_ptr<rocksdb::DB>(raw), std::move(handles), path);
}

// Moves every record key of a store written before the records family out of
// the default family (the first open after the upgrade, before anything is
// served). The copies are written without the WAL and flushed to table files;
// then one synced batch deletes the originals and writes kRecordsMovedKey.
// A crash before that batch leaves the originals and no key, and the next
// open moves them again (the same values).
Result<Unit, std::string> move_records(RocksDbStore& store, const std::string& path) {
  auto& db = store.db();
  rocksdb::WriteOptions unlogged;
  unlogged.disableWAL = true;
  constexpr std::size_t kChunkBytes = 4 << 20;
  rocksdb::WriteBatch copies, finish;
  std::uint64_t moved = 0;
  std::string last_prefix;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions(), store.defaults()));
  for (it->Seek("s/"); it->Valid() && it->key().starts_with("s/"); it->Next()) {
    auto key = it->key().ToStringView();
    if (!is_record_key(key)) continue;
    copies.Put(store.records(), it->key(), it->value());
    ++moved;
    if (auto prefix = key.substr(0, kRecordPrefixBytes); prefix != last_prefix) {
      last_prefix = prefix;
      std::string end = last_prefix;
      end.back() = '0';
      finish.DeleteRange(store.defaults(), last_prefix, end);
    }
    if (copies.GetDataSize() >= kChunkBytes) {
      if (!db.Write(unlogged, &copies).ok()) return Err{"cannot move the records of store " + path};
      copies.Clear();
    }
  }
  if (!it->status().ok() || !db.Write(unlogged, &copies).ok() ||
      !db.Flush(rocksdb::FlushOptions(), store.records()).ok())
    return Err{"cannot move the records of store " + path};
  finish.Put(store.defaults(), kRecordsMovedKey, "1");
  rocksdb::WriteOptions synced;
  synced.sync = true;
  if (!db.Write(synced, &finish).ok()) return Err{"cannot move the records of store " + path};
  if (moved > 0) log::info("store_records_moved", log::field("path", path), log::field("records", moved));
  return Unit{};
}

// The store's directory: RocksDB's files and the reserve (below). RocksDB's
// CURRENT marks it as a store; what is inside is checked by the marker.
const data_dir::Owner kStoreDir{"cbqsd store", {"CURRENT"}};

// A new store is written with its marker in a synced write and closed before
// data_dir publishes it: a crash at any moment of a first start leaves no
// store (the next start builds it again) or a whole one.
Result<Unit, std::string> build_store(const std::filesystem::path& dir) {
  rocksdb::Options options = store_options();
  options.create_missing_column_families = true;
  auto db = open_db(dir.string(), options, families(options));
  if (!db) return Err{db.error()};
  WriteBatch moved;  // a new store has every record in the records family from the start
  moved.put(std::string(kRecordsMovedKey), "1");
  if (auto written = (*db)->write(moved, Sync::kYes); !written)
    return Err{"cannot create store " + dir.string() + ": " + std::string(to_string(written.error()))};
  if (auto marked = ensure_format_marker(**db, true); !marked)
    return Err{"cannot create store " + dir.string() + ": " + std::string(to_string(marked.error()))};
  return Unit{};
}

// Room kept on the store's filesystem for a start after a full disk: replaying
// the WAL may need to flush memtables (up to kMaxWalBytes of WAL) to table files.
constexpr std::uintmax_t kReserveBytes = 64ull << 20;

// `store` + `suffix`, beside the store's directory (given with or without a trailing slash).
std::filesystem::path beside(const std::filesystem::path& store, std::string_view suffix) {
  auto dir = store.lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();
  return dir += suffix;
}

// `PATH/cbqsd.reserve`: released when a start finds less than kReserveBytes
// free, so that it can recover; made again by a start that finds twice that
// free. Inside the store's directory, so on its filesystem when that is a
// volume of its own.
void keep_disk_reserve(const std::filesystem::path& store) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove(beside(store, ".reserve"), ec);  // where cbqsd kept it before: above a mount point, on another filesystem
  const fs::path reserve = store / "cbqsd.reserve";
  auto space = fs::space(store, ec);
  if (ec) return;
  if (fs::exists(reserve, ec)) {
    if (space.available >= kReserveBytes) return;
    fs::remove(reserve, ec);
    log::warn("disk_reserve_released", log::field("path", reserve.string()),
              log::field("free_bytes", static_cast<std::uint64_t>(space.available)));
    return;
  }
  if (space.available < 2 * kReserveBytes) return;
  int fd = ::open(reserve.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return;
  bool ok = ::posix_fallocate(fd, 0, static_cast<off_t>(kReserveBytes)) == 0 && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) fs::remove(reserve, ec);
}

}  // namespace

Result<std::unique_ptr<Store>, std::string> open_rocksdb_store(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove_all(beside(path, ".creating"), ec);  // what an older cbqsd's first start, cut short, left
  auto created = data_dir::create_store(path, kStoreDir, build_store);
  if (!created) return Err{created.error()};
  keep_disk_reserve(path);
  rocksdb::Options options = store_options();
  options.create_if_missing = false;  // created above, whole, or refused: never half-made here
  // A store written before the records family has the default one only: it is
  // opened as it is, its marker checked, and only then given the family.
  std::vector<std::string> names;
  bool split = rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(options), path, &names).ok() &&
               std::find(names.begin(), names.end(), kRecordsFamily) != names.end();
  auto wanted = families(options);
  if (!split) wanted.pop_back();
  auto store = open_db(path, options, wanted);
  if (!store) return Err{store.error()};
  if (auto ok = ensure_format_marker(**store, false); !ok)
    return Err{"refusing store " + path + ": " + std::string(to_string(ok.error()))};
  if (!split) {
    rocksdb::ColumnFamilyHandle* records = nullptr;
    auto made = (*store)->db().CreateColumnFamily(rocksdb::ColumnFamilyOptions(options), std::string(kRecordsFamily), &records);
    if (!made.ok()) return Err{"cannot open store " + path + ": " + made.ToString()};
    (*store)->add_family(records);
  }
  auto moved = (*store)->get(kRecordsMovedKey);
  if (!moved) return Err{"cannot open store " + path + ": " + std::string(to_string(moved.error()))};
  if (!*moved)
    if (auto done = move_records(**store, path); !done) return Err{done.error()};
  return std::unique_ptr<Store>(std::move(*store));
}

}  // namespace cowboy::cbqs::store
