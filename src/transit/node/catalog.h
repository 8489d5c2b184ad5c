// The growing catalog as the decide thread sees it: what is published in
// RocksDB, under the group being synced, under the group being staged. Entry
// versions and record versions are immutable, so a read at a revision or a
// position gives the same answer whichever of the three holds it, and
// whatever was decided after it (decisions 130, 161).
#pragma once

#include <memory>

#include "transit/contract/codec.h"
#include "transit/node/authority.h"

namespace rocksdb {
class DB;
struct Options;
class Iterator;
class WriteBatchWithIndex;
}  // namespace rocksdb

namespace cowboy::transit::node {

/// The store's options for entry versions: a prefix extractor and bloom filters.
void configure_entry_filters(rocksdb::Options& options);

/// A stored block record (layout::block_record's value) as the node reads it
/// back: strictly, bounded; none for anything this build did not write.
/// (fuzz_transit_block_record)
std::optional<BlockInfo> decode_block_record(std::string_view stored);

class Catalog final : public CatalogReader {
 public:
  /// `staged` and `in_flight` may be null; both outlive this reader, and
  /// nothing is staged while it lives (its iterator would not see it).
  Catalog(rocksdb::DB& db, rocksdb::WriteBatchWithIndex* staged, rocksdb::WriteBatchWithIndex* in_flight);
  ~Catalog() override;

  std::optional<Entry> entry(ResourceId resource, const EntryKey& key, Revision revision) const override;
  Scan entries(ResourceId resource, Revision revision, const std::optional<EntryKey>& after, std::size_t limit,
               std::size_t budget) const override;
  std::optional<Input> input(Pid pid, Id input) const override;
  std::optional<std::pair<Revision, Bytes>> block(ResourceId resource, const EntryKey& name) const override;
  std::optional<BlockInfo> block_record(ResourceId resource, const EntryKey& name) const override;
  bool stores(const StorageLeaf& leaf) const override;
  std::optional<JournalEntry> committed_entry(Position position) const override;

  /// The stored value of the record under `record_key` (a table's prefix and
  /// its ids: layout::key, layout::block_record) as of `position`: its newest
  /// version at or below it; none when it had none by then or its newest was
  /// a removal (layout::kRemoved).
  std::optional<std::string> version_at(const std::string& record_key, Position position) const;
  /// The same, decoded as `T` (bounded by the journal's record size).
  template <typename T>
  Result<std::optional<T>, CorruptRecord> record_at(const std::string& record_key, Position position) const {
    auto stored = version_at(record_key, position);
    if (!stored) return std::optional<T>{};
    auto decoded = from_json<T>(*stored, kMaxStoredRecord);
    if (!decoded.ok()) return Err{corrupt(record_key, decoded.error().message())};
    return std::optional<T>(std::move(*decoded));
  }
  static constexpr std::size_t kMaxStoredRecord = 256 * 1024;  // the journal's bound on a stored record

  /// `pid`'s record as of `position`: its newest version at or below it;
  /// CorruptRecord when that version does not decode (decision 157).
  Result<std::optional<ProcessRecord>, CorruptRecord> process(Pid pid, Position position) const;
  /// The records in PID order after `after`, each as of `position`, until
  /// `visit` returns false; a PID with no version by then is skipped, and a
  /// version that does not decode stops the scan and is returned.
  std::optional<CorruptRecord> processes(Pid after, Position position, const std::function<bool(const ProcessRecord&)>& visit) const;
  /// The records of the id-keyed `table` in id order after `after`, each
  /// stored value as of `position`, removed ones skipped, until `visit`
  /// returns false (decision 170).
  void records(char table, Id after, Position position, const std::function<bool(Id, std::string_view)>& visit) const;
  /// The keys of the rows that start with `prefix` and sort after `after`
  /// (from the first when empty), until `visit` returns false (decision 170).
  void rows(const std::string& prefix, const std::string& after, const std::function<bool(std::string_view)>& visit) const;

 private:
  /// Two iterators for the reader's life (creating one costs more than a
  /// seek): one in key order across everything, one that stays within an
  /// entry's versions and so can skip, by their prefix bloom filters, the
  /// files that hold none of them.
  rocksdb::Iterator& iterator(bool within_entry) const;
  std::optional<std::string> get(const std::string& key) const;
  static CorruptRecord corrupt(const std::string& record_key, std::string detail);

  rocksdb::DB& db_;
  rocksdb::WriteBatchWithIndex* staged_;
  rocksdb::WriteBatchWithIndex* in_flight_;
  mutable std::unique_ptr<rocksdb::Iterator> ordered_, within_entry_;
};

}  // namespace cowboy::transit::node
