// A RocksDB file system over the real one that, once told to, fails every
// sync of a write-ahead log with an I/O error - what a disk does when fsync
// reports EIO. The bytes written before the failed sync stay in the file, as
// they would in the page cache; nothing else is faked.
#pragma once

#include <atomic>
#include <memory>

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
      return fs_.fail() ? rocksdb::IOStatus::IOError("injected: sync failed") : target()->Sync(options, debug);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* debug) override {
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

  std::atomic<bool> fail_{false};
  std::atomic<std::size_t> failed_{0};
};

/// An Env whose files go through `fs`.
inline std::unique_ptr<rocksdb::Env> env_over(const std::shared_ptr<rocksdb::FileSystem>& fs) {
  return rocksdb::NewCompositeEnv(fs);
}

}  // namespace cowboy::transit::testing
