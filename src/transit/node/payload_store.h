// The payload store: where a payload's bytes live (docs/transit.md, decision
// 87). Physical I/O is the backend's; the authority only asks it, through
// PayloadFacts, whether a payload's declared bytes are held (payload_ready)
// or gone (payload_deleted).
//
// Durability contract: an upload writes a temporary file while computing the
// SHA-256 of what it writes; commit() accepts it only when exactly the
// declared length with the declared digest was written, then fsyncs the file,
// renames it to its final name and fsyncs the directory, and only then does
// holds() report it. A crash (SIGKILL included) at any point leaves at most a
// temporary file, which the next open removes: never a final file of partial
// or unsynced bytes. Bytes are moved in caller-sized chunks; nothing holds a
// payload whole.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <span>

#include "transit/node/authority.h"

namespace cowboy::transit::node {

/// Why a store operation failed.
struct StoreFailure {
  enum class Kind { kBusy, kMismatch, kMissing, kIo };
  Kind kind;
  std::string message;
};

class PayloadStore : public PayloadFacts {
 public:
  /// One upload. Destroyed without a successful commit(), it leaves nothing.
  class Upload {
   public:
    virtual ~Upload() = default;
    /// Appends `chunk`; kMismatch once more than the declared length is written.
    virtual Result<Unit, StoreFailure> write(std::span<const std::uint8_t> chunk) = 0;
    /// kMismatch unless exactly the declared length with the declared SHA-256 was written.
    virtual Result<Unit, StoreFailure> commit() = 0;
  };
  /// One download of a held payload.
  class Download {
   public:
    virtual ~Download() = default;
    /// Up to out.size() next bytes; 0 at the end.
    virtual Result<std::size_t, StoreFailure> read(std::span<std::uint8_t> out) = 0;
  };

  /// kBusy while another upload of `payload` is under way.
  virtual Result<std::unique_ptr<Upload>, StoreFailure> upload(Id payload, Id length, const Digest& sha256) = 0;
  /// kMissing unless holds(payload, length, sha256).
  virtual Result<std::unique_ptr<Download>, StoreFailure> download(Id payload, Id length, const Digest& sha256) const = 0;
  /// Deletes the payload's bytes, durably (the directory synced); kBusy while an upload of it is under way.
  virtual Result<Unit, StoreFailure> remove(Id payload, const Digest& sha256) = 0;
};

/// The local filesystem backend: `<data>/payloads/<id>-<sha256 hex>`, its
/// uploads beside it as `.upload-<id>-<n>` (one directory: rename is atomic).
class LocalPayloadStore final : public PayloadStore {
 public:
  /// Creates the directory when absent and removes temporary files a crash left.
  static Result<std::unique_ptr<LocalPayloadStore>, std::string> open(const std::filesystem::path& dir);

  bool holds(Id payload, Id length, const Digest& sha256) const override;
  bool absent(Id payload, const Digest& sha256) const override;
  Result<std::unique_ptr<Upload>, StoreFailure> upload(Id payload, Id length, const Digest& sha256) override;
  Result<std::unique_ptr<Download>, StoreFailure> download(Id payload, Id length, const Digest& sha256) const override;
  Result<Unit, StoreFailure> remove(Id payload, const Digest& sha256) override;

  /// The final file of a payload's bytes.
  std::filesystem::path path_of(Id payload, const Digest& sha256) const;

 private:
  class LocalUpload;
  explicit LocalPayloadStore(std::filesystem::path dir) : dir_(std::move(dir)) {}
  bool uploading(Id payload) const;
  void finished(Id payload);

  const std::filesystem::path dir_;
  mutable std::mutex mutex_;
  std::set<Id> uploading_;  // under mutex_
  std::uint64_t next_upload_ = 0;  // under mutex_
};

}  // namespace cowboy::transit::node
