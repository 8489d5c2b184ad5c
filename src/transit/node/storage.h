// Physical storage maintenance on the node's side (docs/transit.md, decisions
// 140-149): the location definition every stored head carries, the
// compaction ledger's record, the key ranges a leaf occupies, and the
// relocator, which rewrites each relocated leaf's ranges into new table files
// after the decision that ordered it is durable. The rules of storage_fence,
// storage_compact and prepared_turn are the authority's (storage.cc).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "transit/node/records.h"

namespace rocksdb {
class DB;
}

namespace cowboy::transit::node {

/// The one current 32-byte location definition: SHA-256 of layout::kLocationScheme.
const Digest& location_definition();

/// One relocation, as the compaction ledger keeps it under `l/` + cursor.
struct CompactionRecord {
  static constexpr std::string_view kName = "CompactionRecord";
  Id cursor = 0;    // the compaction cursor this relocation advanced the head to
  StorageLeaf leaf;
  Position position{};  // the storage_compact's authority position
  Id epoch = 0;     // the storage epoch it was accepted in
  bool operator==(const CompactionRecord&) const = default;
};
template <typename V> void fields(V& v, CompactionRecord& t) {
  v("cursor", t.cursor)("leaf", t.leaf)("position", t.position)("epoch", t.epoch);
}

/// A stored ledger record as the node reads it back: strictly, bounded; none
/// for anything this build did not write. (fuzz_transit_compaction_record)
std::optional<CompactionRecord> decode_compaction_record(std::string_view stored);
/// The relocated marker's value (8 bytes, big-endian); none for anything else.
std::optional<Id> decode_relocated(std::string_view stored);

/// The key ranges, each [first, last] inclusive, that hold a leaf's stored
/// bytes: a block's body and every version of its record; every version of
/// an entry, or of any other record (key + ~position, decisions 161, 185).
std::vector<std::pair<std::string, std::string>> leaf_ranges(const StorageLeaf& leaf);
/// A leaf's record key (a block's is its record's): what its compaction need
/// is stored under (layout::need, decision 183).
std::string leaf_key(const StorageLeaf& leaf);
/// The leaf whose record key is `key`; none for a key of another shape.
std::optional<StorageLeaf> leaf_of(std::string_view key);

/// Rewrites relocated leaves into new table files, in cursor order, on its
/// own thread, recording each finished one under layout::relocated(). Opened
/// with the journal, it reads the marker; the node asks it at open for the
/// head's cursor, so a relocation a stop or a crash cut short is finished.
class Relocator {
 public:
  explicit Relocator(rocksdb::DB& db);
  ~Relocator();  // stops a rewrite under way (it is repeated at the next open)
  /// Relocates every ledger record up to `cursor` not relocated yet.
  void relocate(Id cursor);
  /// The highest cursor whose relocation has finished (0: none).
  Id relocated_through() const { return relocated_.load(); }
  /// The live table files holding any of `leaf`'s ranges: its placement now.
  std::vector<std::uint64_t> files_of(const StorageLeaf& leaf) const;

 private:
  void loop();
  bool rewrite(Id cursor);  // false: not done (read or compaction failed, or stopping)

  rocksdb::DB& db_;
  std::atomic<Id> relocated_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  Id target_ = 0;  // under mutex_
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace cowboy::transit::node
