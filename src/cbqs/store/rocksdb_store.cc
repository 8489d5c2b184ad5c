#include <rocksdb/db.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/sst_file_manager.h>
#include <rocksdb/table.h>
#include <rocksdb/transaction_log.h>
#include <rocksdb/write_batch.h>

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "cbqs/store/rocksdb_settings.h"
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

// Free space a flush needs besides the table file it writes: the floor below
// which the store writes nothing, twice, so that a flush never meets it.
constexpr std::uint64_t kFlushHeadroomBytes = 2 * kMinFreeBytes;

class RocksDbStore final : public Store {
 public:
  RocksDbStore(std::unique_ptr<rocksdb::DB> db, std::string path, RocksDbSettings settings)
      : db_(std::move(db)), path_(std::move(path)), settings_(settings),
        dir_fd_(::open(path_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)) {
    // What the open replayed is in the memtable (avoid_flush_during_recovery):
    // at or above the bound, the flusher flushes it at its first tick (after
    // the start's loads, mostly), so that another crash does not replay it again.
    std::uint64_t replayed = 0;
    if (db_->GetIntProperty(rocksdb::DB::Properties::kNumEntriesActiveMemTable, &replayed)) entries_ = replayed;
    if (settings_.flush_when_idle_for.count() > 0 || settings_.flush_at_entries > 0)
      flusher_ = std::thread([this] { run_flusher(); });
  }

  // A clean stop leaves no WAL for the next start to replay.
  ~RocksDbStore() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (flusher_.joinable()) flusher_.join();
    flush_if_worth_it("stop");
    if (dir_fd_ >= 0) ::close(dir_fd_);
  }
  RocksDbStore(const RocksDbStore&) = delete;
  RocksDbStore& operator=(const RocksDbStore&) = delete;

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
    rocksdb::WriteBatch wb;
    for (const auto& op : batch.ops()) {
      switch (op.kind) {
        case WriteBatch::Op::kPut: wb.Put(op.key, op.value); break;
        case WriteBatch::Op::kDelete: wb.Delete(op.key); break;
        case WriteBatch::Op::kDeleteRange: wb.DeleteRange(op.key, op.value); break;
      }
    }
    rocksdb::WriteOptions options;
    options.sync = sync == Sync::kYes;
    writes_.fetch_add(1, std::memory_order_relaxed);
    if (!db_->Write(options, &wb).ok()) {
      failed_ = true;  // fail closed: after an unknown outcome nothing more is written
      return Err{StoreError::kIo};
    }
    count_entries(batch.size());
    return Unit{};
  }

  Result<std::optional<std::string>, StoreError> get(std::string_view key) override {
    std::string value;
    auto status = db_->Get(rocksdb::ReadOptions(), rocksdb::Slice(key.data(), key.size()), &value);
    if (status.IsNotFound()) return std::optional<std::string>{};
    if (!status.ok()) return Err{StoreError::kIo};
    return std::optional<std::string>(std::move(value));
  }

  Result<Unit, StoreError> scan(std::string_view begin, std::string_view end,
                                const std::function<bool(std::string_view, std::string_view)>& visit) override {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek(rocksdb::Slice(begin.data(), begin.size())); it->Valid(); it->Next()) {
      auto key = it->key().ToStringView();
      if (key >= end) break;
      if (!visit(key, it->value().ToStringView())) break;
    }
    if (!it->status().ok()) return Err{StoreError::kIo};
    return Unit{};
  }

 private:
  // The filesystem's free bytes; nullopt when it cannot be asked. Asked
  // before every write, so through an open descriptor of the store's
  // directory: statvfs(path) walked the path each time, three quarters of the
  // call's cost (docs/performance.md, h58p50).
  std::optional<std::uint64_t> free_bytes() const {
    struct statvfs fs{};
    int got = dir_fd_ >= 0 ? ::fstatvfs(dir_fd_, &fs) : ::statvfs(path_.c_str(), &fs);
    if (got != 0) return std::nullopt;
    return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  }
  bool short_of_space() const {
    auto free = free_bytes();
    return free && *free < kMinFreeBytes;
  }

  // The bytes a start would replay: every WAL file still alive.
  std::uint64_t unflushed_wal_bytes() {
    rocksdb::VectorLogPtr files;
    if (!db_->GetSortedWalFiles(files).ok()) return 0;
    std::uint64_t bytes = 0;
    for (const auto& f : files)
      if (f->Type() == rocksdb::kAliveLogFile) bytes += f->SizeFileBytes();
    return bytes;
  }

  // Flushes the memtables into a table file, RocksDB then dropping the WAL
  // they stand for, when the disk has room for the file: a full disk's
  // restart keeps its WAL (docs/operations.md, "A full disk"). What was
  // counted before the flush leaves the count with it.
  bool flush(std::string_view when, std::uint64_t wal, bool allow_write_stall) {
    auto free = free_bytes();
    if (!free || *free < wal + kFlushHeadroomBytes) return false;
    std::uint64_t counted = entries_.load(std::memory_order_relaxed);
    rocksdb::FlushOptions options;
    options.allow_write_stall = allow_write_stall;
    if (auto status = db_->Flush(options); !status.ok()) {
      note_flush_failure(when, status.ToString());
      return false;
    }
    if (flush_failures_ > 0) log::info("store_flush_recovered", log::field("failures", flush_failures_));
    flush_failures_ = 0;
    entries_.fetch_sub(counted, std::memory_order_relaxed);  // what came since is the next memtable's
    return true;
  }

  // A failing disk fails the flush retried every tick: the first failure of a
  // run is logged, then one line a minute with the count, not one each 500 ms.
  void note_flush_failure(std::string_view when, const std::string& why) {
    const auto now = std::chrono::steady_clock::now();
    ++flush_failures_;
    if (flush_failures_ > 1 && now - flush_warned_at_ < kFlushWarningInterval) return;
    flush_warned_at_ = now;
    log::warn("store_flush_failed", log::field("when", when), log::field("why", why),
              log::field("failures", flush_failures_));
  }

  // When idle, or at a stop: once the WAL is worth replaying no more.
  void flush_if_worth_it(std::string_view when) {
    if (failed_) return;
    std::uint64_t wal = unflushed_wal_bytes();
    if (wal < settings_.flush_min_wal_bytes) return;
    // Nobody is writing; at a stop nobody will.
    if (flush(when, wal, /*allow_write_stall=*/true))
      log::info("store_flushed", log::field("when", when), log::field("wal_bytes", wal));
  }

  // The committers count what they write; the one whose batch takes the
  // memtable to `flush_at_entries` entries wakes the flusher (once per
  // memtable, so the lock is rare).
  void count_entries(std::size_t n) {
    const std::uint64_t limit = settings_.flush_at_entries;
    if (limit == 0) return;
    std::uint64_t before = entries_.fetch_add(n, std::memory_order_relaxed);
    if (before >= limit || before + n < limit) return;
    {
      std::lock_guard lock(mu_);
      memtable_full_ = true;
    }
    wake_.notify_all();
  }

  // A crash under load replays the memtable's entries, each a skip-list
  // insert (that, not the WAL's bytes, is the replay's cost): flushing at
  // `flush_at_entries` bounds it whatever the records' size. RocksDB's own
  // flush of a 64 MiB memtable stays, and comes first for large records.
  // The flush runs on RocksDB's flush thread; this thread only waits for it.
  bool flush_full_memtable() {
    if (failed_) return false;
    std::uint64_t counted = entries_.load(std::memory_order_relaxed);
    std::uint64_t in_memtable = 0;  // the count drifts when RocksDB flushed on its own (a full 64 MiB memtable)
    if (db_->GetIntProperty(rocksdb::DB::Properties::kNumEntriesActiveMemTable, &in_memtable) &&
        in_memtable < settings_.flush_at_entries) {
      entries_.fetch_sub(counted - std::min(counted, in_memtable), std::memory_order_relaxed);
      return true;
    }
    // Waits here rather than stall the committers.
    return flush("entries", unflushed_wal_bytes(), /*allow_write_stall=*/false);
  }

  // The flusher thread: flushes a memtable that reached `flush_at_entries`,
  // and flushes once no write came for `flush_when_idle_for` - a store nobody
  // writes would replay the same WAL at every start (avoid_flush_during_recovery
  // keeps what a start replays in the memtable). Writes only count; under load
  // this thread reads a counter a few times a second, and flushes once per
  // `flush_at_entries` entries.
  void run_flusher() {
    const auto idle = settings_.flush_when_idle_for;
    const auto tick = idle.count() > 0 ? std::max<std::chrono::milliseconds>(idle / 4, std::chrono::milliseconds(1))
                                       : std::chrono::milliseconds(1'000);
    std::uint64_t seen = writes_.load(std::memory_order_relaxed);
    auto quiet_since = std::chrono::steady_clock::now();
    bool checked = false;  // this quiet spell's flush was tried (the WAL does not grow without writes)
    std::unique_lock lock(mu_);
    while (!stopping_) {
      wake_.wait_for(lock, tick, [&] { return stopping_ || memtable_full_; });
      if (stopping_) break;
      const std::uint64_t limit = settings_.flush_at_entries;
      // A flush that could not run (no room, a failed store) is tried again each tick, not in a loop.
      if (memtable_full_ || (limit > 0 && entries_.load(std::memory_order_relaxed) >= limit)) {
        memtable_full_ = false;
        lock.unlock();
        bool flushed = flush_full_memtable();
        lock.lock();
        if (flushed && entries_.load(std::memory_order_relaxed) >= limit) memtable_full_ = true;
        continue;
      }
      if (idle.count() == 0) continue;
      std::uint64_t now_writes = writes_.load(std::memory_order_relaxed);
      auto now = std::chrono::steady_clock::now();
      if (now_writes != seen) {
        seen = now_writes;
        quiet_since = now;
        checked = false;
        continue;
      }
      if (checked || now - quiet_since < idle) continue;
      checked = true;
      lock.unlock();
      flush_if_worth_it("idle");
      lock.lock();
    }
  }

  std::unique_ptr<rocksdb::DB> db_;
  std::string path_;
  RocksDbSettings settings_;
  int dir_fd_;  // the store's directory (O_PATH), for the free-space check; -1: by path
  std::atomic<bool> failed_{false};  // every committer thread writes
  std::atomic<std::uint64_t> writes_{0};
  std::atomic<std::uint64_t> entries_{0};  // written since the last flush (about: the memtable's entries)
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool memtable_full_ = false;  // entries_ reached flush_at_entries
  // The flusher's (and, once it is joined, the stop's): failed flushes in a row, and when one was last logged.
  static constexpr std::chrono::seconds kFlushWarningInterval{60};
  std::uint64_t flush_failures_ = 0;
  std::chrono::steady_clock::time_point flush_warned_at_{};
  std::thread flusher_;  // last: started once the rest is built, joined first
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
  // a few MiB free rather than the unflushed WAL's size (up to a memtable).
  options.avoid_flush_during_recovery = true;
  // The store flushes a memtable of small records at 50,000 entries
  // (RocksDbSettings::flush_at_entries), 13x sooner than at 64 MiB, and each
  // level-0 compaction rewrites level 1 whole (every table spans a stream's
  // keys, receipts to newest record): at RocksDB's 4 files a 10^7-record fill
  // ran 201 flushes and 47 compactions, not 15 and 3. So level 0 is
  // compacted at 16 files, or at 256 MiB (max_bytes_for_level_base), as
  // before for 256 B records and larger; the write-stall marks move up by as
  // much (RocksDB's 20 and 36).
  options.level0_file_num_compaction_trigger = 16;
  options.level0_slowdown_writes_trigger = 36;
  options.level0_stop_writes_trigger = 52;
  // A start opens every table and reads its whole index (max_open_files =
  // -1), so its cost grows with the stream: about 4 % of the data with a
  // full key per 4 KiB block. Prefix-compressing the index keys in runs of
  // 16 (RocksDB's data-block default) makes it 7x smaller and a loaded
  // 10^7-record start 25-75 ms shorter (docs/performance.md, "h60restart");
  // a lookup scans at most 16 index entries after its binary search. Tables
  // written before keep their index until compacted; both read the same.
  rocksdb::BlockBasedTableOptions table;
  table.index_block_restart_interval = 16;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

Result<std::unique_ptr<RocksDbStore>, std::string> open_db(const std::string& path, const rocksdb::Options& options,
                                                            RocksDbSettings settings = {}) {
  // Replaying the WAL counts perf stats per record otherwise (a TLS lookup
  // each, 9 % of a replay's CPU); nothing reads them.
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  rocksdb::DB* raw = nullptr;
  auto status = rocksdb::DB::Open(options, path, &raw);
  if (!status.ok()) return Err{"cannot open store " + path + ": " + status.ToString()};
  return std::make_unique<RocksDbStore>(std::unique_ptr<rocksdb::DB>(raw), path, settings);
}

// The store's directory: RocksDB's files and the reserve (below). RocksDB's
// CURRENT marks it as a store; what is inside is checked by the marker.
const data_dir::Owner kStoreDir{"cbqsd store", {"CURRENT"}};

// A new store is written with its marker in a synced write and closed before
// data_dir publishes it: a crash at any moment of a first start leaves no
// store (the next start builds it again) or a whole one.
Result<Unit, std::string> build_store(const std::filesystem::path& dir) {
  auto db = open_db(dir.string(), store_options(), RocksDbSettings{.flush_when_idle_for = {}, .flush_at_entries = 0});
  if (!db) return Err{db.error()};
  if (auto marked = ensure_format_marker(**db, true); !marked)
    return Err{"cannot create store " + dir.string() + ": " + std::string(to_string(marked.error()))};
  return Unit{};
}

// Room kept on the store's filesystem for a start after a full disk: replaying
// the WAL may need to flush a memtable (64 MiB) to a table file.
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
  return open_rocksdb_store(path, RocksDbSettings{});
}

Result<std::unique_ptr<Store>, std::string> open_rocksdb_store(const std::string& path, RocksDbSettings settings) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove_all(beside(path, ".creating"), ec);  // what an older cbqsd's first start, cut short, left
  auto created = data_dir::create_store(path, kStoreDir, build_store);
  if (!created) return Err{created.error()};
  keep_disk_reserve(path);
  rocksdb::Options options = store_options();
  options.create_if_missing = false;  // created above, whole, or refused: never half-made here
  auto store = open_db(path, options, settings);
  if (!store) return Err{store.error()};
  if (auto ok = ensure_format_marker(**store, false); !ok)
    return Err{"refusing store " + path + ": " + std::string(to_string(ok.error()))};
  return std::unique_ptr<Store>(std::move(*store));
}

}  // namespace cowboy::cbqs::store
