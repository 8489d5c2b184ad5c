// The authority journal on RocksDB: the genesis, the head, the published
// authorization records, one entry per accepted decision (its signed request
// under its position, its receipt under (principal, sequence), which answers
// exact retries). Decisions are staged into a batch, taken out with the head
// as it stands after them, and published by one synced write (group commit);
// a receipt may be answered only after commit() returns true for its batch.
// Staging and committing may run on two threads (one each). A failed write
// fails the journal closed: nothing more is written, and the next open
// recovers the last published state.
//
// History (decision 66): a batch that advances the floor also deletes the
// requests below it, in the same synced write (a range deletion); a reclaim
// thread then compacts that range so the disk space really returns. Nothing
// else is ever deleted: receipts, records, entries, inputs and blocks stay.
#pragma once

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "transit/node/authority.h"

#include "transit/node/catalog.h"

namespace rocksdb {
class DB;
class Env;
class WriteBatch;
class WriteBatchWithIndex;
}  // namespace rocksdb

namespace cowboy::transit::node {

class Journal final : public RecordSource {
 public:
  /// Opens `dir`, creating the realm from `genesis` when the directory is new:
  /// absent or empty (a mount point or a symlink to an empty directory will
  /// do), built inside it crash-safely (common/data_dir.h). An existing journal
  /// must hold the same genesis (when one is given) and a head of this build's
  /// definition; a directory holding anything else, another RocksDB store
  /// included, is refused before reading the catalogs.
  /// `env`: the file system beneath RocksDB (null: the default one; tests
  /// pass one that fails syncs on demand).
  static Result<std::unique_ptr<Journal>, std::string> open(const std::filesystem::path& dir,
                                                            const std::optional<Genesis>& genesis,
                                                            rocksdb::Env* env = nullptr);
  ~Journal() override;  // stops a compaction under way (reclaim resumes at the next open)

  /// The published state (recovery reads nothing else).
  Result<Authority, std::string> load() const;

  /// A group of staged decisions, ready to publish.
  struct Batch {
    Batch();
    ~Batch();
    std::unique_ptr<rocksdb::WriteBatchWithIndex> writes;
    std::optional<Position> trim_below;  // a new floor decided in this group: requests below it go
    std::optional<Id> relocate_through;  // the compaction cursor a storage_compact of this group advanced to
  };
  /// One accepted decision: `envelope` is the canonical SignedRequest text decided.
  void stage(const Authority& authority, const Touched& touched, std::string_view envelope, const Receipt& receipt);
  /// Everything staged since the last take, with `head` (nullptr when nothing
  /// was staged). Called once the previous batch is committed; this one stays
  /// readable through catalog() until the next take.
  std::shared_ptr<Batch> take_staged(const Head& head);
  /// The catalog as decided so far: published, being committed, staged (staging thread only).
  Catalog catalog();
  /// One synced write of `batch`. False: the journal is failed closed.
  bool commit(Batch& batch);
  bool failed() const { return failed_.load(); }

  /// The receipt of an accepted (principal, sequence), if published; it
  /// outlives the request's trimming (decision 67).
  std::optional<Receipt> receipt(PrincipalId principal, Id sequence) const;

  // The authority's process records, as decided so far (staging thread only).
  Result<std::optional<ProcessRecord>, CorruptRecord> process(Pid pid, Position position) const override;
  std::optional<CorruptRecord> processes(Pid after, Position position,
                                         const std::function<bool(const ProcessRecord&)>& visit) const override;
  std::optional<std::string> record(const std::string& record_key, Position position) const override;
  void records(char table, Id after, Position position, const std::function<bool(Id, std::string_view)>& visit) const override;
  void rows(const std::string& prefix, const std::string& after,
            const std::function<bool(std::string_view)>& visit) const override;
  std::uint64_t synced_writes() const { return synced_writes_; }
  /// How many single records (outputs, effects, payloads, resources,
  /// associations, views, runtime bindings) were read from storage since the
  /// journal opened: what a restart does not load (decisions 170, 175).
  std::uint64_t records_read() const { return records_read_; }

  /// Compacts the journal's range below `floor` on the reclaim thread, so the
  /// space of the deleted requests returns to the disk. commit() asks it after
  /// every trim; the node asks it once at open, for the recovered floor.
  void reclaim(Position floor);
  /// The floor below which compaction has finished (0: none yet).
  Id reclaimed_below() const { return reclaimed_below_.load(); }

  /// Storage maintenance (decisions 144-146): relocates the ledger's leaves up
  /// to `cursor` on the relocator's thread. commit() asks it after every group
  /// with a storage_compact; the node asks it once at open, for the head's cursor.
  void relocate(Id cursor) { relocator_->relocate(cursor); }
  /// The highest compaction cursor whose leaf has been rewritten (0: none yet).
  Id relocated_through() const { return relocator_->relocated_through(); }
  /// The live table files holding `leaf`: where its bytes are now.
  std::vector<std::uint64_t> files_of(const StorageLeaf& leaf) const { return relocator_->files_of(leaf); }

 private:
  Journal(std::unique_ptr<rocksdb::DB> db, Genesis genesis);

  bool write_synced(rocksdb::WriteBatch& batch);
  void reclaim_loop();

  std::unique_ptr<rocksdb::DB> db_;
  std::unique_ptr<rocksdb::WriteBatchWithIndex> staged_;  // the staging thread's
  std::optional<Position> staged_trim_;                        // the staging thread's
  std::optional<Id> staged_relocation_;                   // the staging thread's
  std::shared_ptr<Batch> in_flight_;                      // the staging thread's view of the last take
  Genesis genesis_;
  std::atomic<bool> failed_{false};
  std::atomic<std::uint64_t> synced_writes_{0};
  mutable std::uint64_t records_read_ = 0;  // the staging thread's

  std::mutex reclaim_mutex_;
  std::condition_variable reclaim_wake_;
  Id reclaim_target_ = 0;  // under reclaim_mutex_
  bool reclaim_stop_ = false;
  std::atomic<Id> reclaimed_below_{0};
  std::thread reclaimer_;
  std::unique_ptr<Relocator> relocator_;  // stopped first, as the journal closes
};

}  // namespace cowboy::transit::node
