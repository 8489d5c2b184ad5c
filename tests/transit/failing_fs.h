// A RocksDB file system over the real one that, once told to, fails every
// sync of a write-ahead log with an I/O error - what a disk does when fsync
// reports EIO. The bytes written before the failed sync stay in the file, as
// they would in the page cache; nothing else is faked. Told to hold syncs, it
// makes each one wait until released: a disk that stalls, for as long as a
// test wants, whatever the machine's speed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

namespace cowboy::transit::testing {

class SyncFailingFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  SyncFailingFileSystem() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  static const char* kClassName() { return "SyncFailingFileSystem"; }
  const char* Name() const override { return kClassName(); }

  void fail_syncs(bool fail) { fail_ = fail; }
  std::size_t failed_syncs() const { return failed_; }
  /// While held, a sync waits (held_syncs() counts those that started waiting).
  void hold_syncs(bool hold) {
    {
      std::lock_guard lock(hold_mutex_);
      hold_ = hold;
    }
    released_.notify_all();
  }
  std::size_t held_syncs() const { return held_; }

  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* file,
                                    rocksdb::IODebugContext* debug) override {
    auto status = target()->NewWritableFile(name, options, file, debug);
    if (status.ok() && name.ends_with(".log")) *file = std::make_unique<Log>(std::move(*file), *this);
    return status;
  }

 private:
  class Log final : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    Log(std::unique_ptr<rocksdb::FSWritableFile> file, SyncFailingFileSystem& fs)
        : FSWritableFileOwnerWrapper(std::move(file)), fs_(fs) {}
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* debug) override {
      fs_.wait_while_held();
      return fs_.fail() ? rocksdb::IOStatus::IOError("injected: sync failed") : target()->Sync(options, debug);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* debug) override {
      fs_.wait_while_held();
      return fs_.fail() ? rocksdb::IOStatus::IOError("injected: fsync failed") : target()->Fsync(options, debug);
    }

   private:
    SyncFailingFileSystem& fs_;
  };
  bool fail() {
    if (!fail_) return false;
    ++failed_;
    return true;
  }

  void wait_while_held() {
    std::unique_lock lock(hold_mutex_);
    if (!hold_) return;
    ++held_;
    released_.wait(lock, [&] { return !hold_; });
  }

  std::atomic<bool> fail_{false};
  std::atomic<std::size_t> failed_{0};
  std::mutex hold_mutex_;
  std::condition_variable released_;
  bool hold_ = false;
  std::atomic<std::size_t> held_{0};
};

/// An Env whose files go through `fs`.
inline std::unique_ptr<rocksdb::Env> env_over(const std::shared_ptr<rocksdb::FileSystem>& fs) {
  return rocksdb::NewCompositeEnv(fs);
}

}  // namespace cowboy::transit::testing
