// The growing catalog as the decide thread sees it: what is published in
// RocksDB, under the group being synced, under the group being staged. Entry
// versions are immutable, so a read at a revision gives the same answer
// whichever of the three holds it.
#pragma once

#include <memory>

#include "transit/node/authority.h"

namespace rocksdb {
class DB;
class Iterator;
class WriteBatchWithIndex;
}  // namespace rocksdb

namespace cowboy::transit::node {

class Catalog final : public CatalogReader {
 public:
  /// `staged` and `in_flight` may be null; both outlive this reader.
  Catalog(rocksdb::DB& db, rocksdb::WriteBatchWithIndex* staged, rocksdb::WriteBatchWithIndex* in_flight)
      : db_(db), staged_(staged), in_flight_(in_flight) {}

  std::optional<Entry> entry(Id resource, const EntryKey& key, Id revision) const override;
  Scan entries(Id resource, Id revision, const std::optional<EntryKey>& after, std::size_t limit,
               std::size_t budget) const override;
  std::optional<Input> input(Id pid, Id input) const override;
  std::optional<std::pair<Id, Bytes>> block(Id resource, const EntryKey& name) const override;

 private:
  std::unique_ptr<rocksdb::Iterator> iterator() const;
  std::optional<std::string> get(const std::string& key) const;

  rocksdb::DB& db_;
  rocksdb::WriteBatchWithIndex* staged_;
  rocksdb::WriteBatchWithIndex* in_flight_;
};

}  // namespace cowboy::transit::node
