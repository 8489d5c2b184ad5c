#include "transit/node/payload_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/bytes.h"
#include "common/crypto.h"
#include "common/data_dir.h"

namespace cowboy::transit::node {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kUploadPrefix = ".upload-";

Err<StoreFailure> failure(StoreFailure::Kind kind, std::string message) {
  return Err{StoreFailure{kind, std::move(message)}};
}
Err<StoreFailure> io_failure(std::string what) {
  return failure(StoreFailure::Kind::kIo, what + ": " + std::strerror(errno));
}

/// The size of a regular file, or none.
std::optional<std::uint64_t> size_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<std::uint64_t>(st.st_size);
}

class FileDownload final : public PayloadStore::Download {
 public:
  explicit FileDownload(int fd) : fd_(fd) {}
  ~FileDownload() override { ::close(fd_); }
  Result<std::size_t, StoreFailure> read(std::span<std::uint8_t> out) override {
    for (;;) {
      const ssize_t n = ::read(fd_, out.data(), out.size());
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno != EINTR) return io_failure("read");
    }
  }

 private:
  int fd_;
};

}  // namespace

class LocalPayloadStore::LocalUpload final : public PayloadStore::Upload {
 public:
  LocalUpload(LocalPayloadStore& store, Id payload, Id length, const Digest& sha256, fs::path temp, int fd)
      : store_(store), payload_(payload), length_(length), sha256_(sha256), temp_(std::move(temp)), fd_(fd) {}
  ~LocalUpload() override {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) {
      std::error_code ignored;
      fs::remove(temp_, ignored);
    }
    store_.finished(payload_);
  }

  Result<Unit, StoreFailure> write(std::span<const std::uint8_t> chunk) override {
    if (chunk.size() > length_ - written_)
      return failure(StoreFailure::Kind::kMismatch, "more bytes than the declared " + std::to_string(length_));
    hash_.update(ByteView(chunk.data(), chunk.size()));  // the digest is computed as the bytes go by
    for (std::size_t at = 0; at < chunk.size();) {
      const ssize_t n = ::write(fd_, chunk.data() + at, chunk.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return io_failure("write " + temp_.string());
      at += static_cast<std::size_t>(n);
    }
    written_ += chunk.size();
    return Unit{};
  }

  Result<Unit, StoreFailure> commit() override {
    if (written_ != length_)
      return failure(StoreFailure::Kind::kMismatch,
                     std::to_string(written_) + " bytes, declared " + std::to_string(length_));
    const auto digest = hash_.finish();
    if (!std::equal(digest.begin(), digest.end(), sha256_.begin()))
      return failure(StoreFailure::Kind::kMismatch, "the bytes' SHA-256 is not the declared one");
    // The bytes durable under the temporary name, then the name durable: only
    // then does the final file exist for holds() to report.
    if (::fsync(fd_) != 0) return io_failure("fsync " + temp_.string());
    ::close(std::exchange(fd_, -1));
    const auto final_path = store_.path_of(payload_, sha256_);
    if (::rename(temp_.c_str(), final_path.c_str()) != 0) return io_failure("rename " + temp_.string());
    committed_ = true;
    if (!data_dir::sync_directory(store_.dir_)) return io_failure("fsync " + store_.dir_.string());
    return Unit{};
  }

 private:
  LocalPayloadStore& store_;
  const Id payload_;
  const Id length_;
  const Digest sha256_;
  const fs::path temp_;
  int fd_;
  Id written_ = 0;
  crypto::Sha256 hash_;
  bool committed_ = false;
};

Result<std::unique_ptr<LocalPayloadStore>, std::string> LocalPayloadStore::open(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Err{"cannot make the payload directory " + dir.string() + ": " + ec.message()};
  // What a crash left in the middle of an upload: never reported, removed.
  bool removed = false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().starts_with(kUploadPrefix)) {
      fs::remove(entry.path(), ec);
      if (ec) return Err{"cannot remove " + entry.path().string() + ": " + ec.message()};
      removed = true;
    }
  }
  if (ec) return Err{"cannot list " + dir.string() + ": " + ec.message()};
  if (!data_dir::sync_directory(dir) && removed) return Err{"cannot sync " + dir.string()};
  return std::unique_ptr<LocalPayloadStore>(new LocalPayloadStore(dir));
}

fs::path LocalPayloadStore::path_of(Id payload, const Digest& sha256) const {
  return dir_ / (std::to_string(payload) + "-" + to_hex(ByteView(sha256.data(), sha256.size())));
}

bool LocalPayloadStore::uploading(Id payload) const {
  std::lock_guard lock(mutex_);
  return uploading_.count(payload) > 0;
}

void LocalPayloadStore::finished(Id payload) {
  std::lock_guard lock(mutex_);
  uploading_.erase(payload);
}

bool LocalPayloadStore::holds(Id payload, Id length, const Digest& sha256) const {
  // Only a committed upload makes the final name, and only of bytes with that digest.
  return size_of(path_of(payload, sha256)) == length;
}

bool LocalPayloadStore::absent(Id payload, const Digest& sha256) const {
  return !uploading(payload) && !size_of(path_of(payload, sha256));
}

Result<std::unique_ptr<PayloadStore::Upload>, StoreFailure> LocalPayloadStore::upload(Id payload, Id length,
                                                                                       const Digest& sha256) {
  std::uint64_t n = 0;
  {
    std::lock_guard lock(mutex_);
    if (!uploading_.insert(payload).second)
      return failure(StoreFailure::Kind::kBusy, "an upload of payload " + std::to_string(payload) + " is under way");
    n = next_upload_++;
  }
  const auto temp = dir_ / (std::string(kUploadPrefix) + std::to_string(payload) + "-" + std::to_string(n));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    auto error = io_failure("create " + temp.string());
    finished(payload);
    return error;
  }
  return std::unique_ptr<Upload>(new LocalUpload(*this, payload, length, sha256, temp, fd));
}

Result<std::unique_ptr<PayloadStore::Download>, StoreFailure> LocalPayloadStore::download(Id payload, Id length,
                                                                                           const Digest& sha256) const {
  const auto path = path_of(payload, sha256);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return failure(StoreFailure::Kind::kMissing, "payload " + std::to_string(payload) + " is not stored");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) != length) {
    ::close(fd);
    return failure(StoreFailure::Kind::kMissing, "payload " + std::to_string(payload) + " is stored incomplete");
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<Download>(new FileDownload(fd));
}

Result<Unit, StoreFailure> LocalPayloadStore::remove(Id payload, const Digest& sha256) {
  if (uploading(payload))
    return failure(StoreFailure::Kind::kBusy, "an upload of payload " + std::to_string(payload) + " is under way");
  const auto path = path_of(payload, sha256);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return io_failure("unlink " + path.string());
  if (!data_dir::sync_directory(dir_)) return io_failure("fsync " + dir_.string());
  return Unit{};
}

}  // namespace cowboy::transit::node
