#include "transit/node/catalog.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/write_batch_with_index.h>

#include "transit/contract/codec.h"
#include "transit/contract/envelope.h"
#include "transit/node/layout.h"

namespace cowboy::transit::node {
namespace {

constexpr std::size_t kMaxInputBytes = 1024;
constexpr std::size_t kMaxProcessBytes = 256 * 1024;  // the journal's bound on a stored record
constexpr std::size_t kMaxBlockRecordBytes = 1024;  // a BlockInfo spelled at its longest is under 700

// The prefix of an entry version: everything but its revision.
class EntryPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "transit.entry_prefix.v1"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), layout::kEntryPrefix);
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return key.size() >= layout::kEntryPrefix && key.starts_with(layout::table(layout::kEntries));
  }
};

constexpr std::size_t kBlockCacheBytes = 256 << 20;

}  // namespace

void configure_entry_filters(rocksdb::Options& options) {
  options.prefix_extractor = std::make_shared<EntryPrefix>();
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.block_cache = rocksdb::NewLRUCache(kBlockCacheBytes);  // keep the versions read often in memory
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options.memtable_prefix_bloom_size_ratio = 0.05;
}

Catalog::Catalog(rocksdb::DB& db, rocksdb::WriteBatchWithIndex* staged, rocksdb::WriteBatchWithIndex* in_flight)
    : db_(db), staged_(staged), in_flight_(in_flight) {}
Catalog::~Catalog() = default;

rocksdb::Iterator& Catalog::iterator(bool within_entry) const {
  auto& slot = within_entry ? within_entry_ : ordered_;
  if (!slot) {
    rocksdb::ReadOptions options;
    options.total_order_seek = !within_entry;
    options.prefix_same_as_start = within_entry;
    rocksdb::Iterator* it = db_.NewIterator(options);
    if (in_flight_) it = in_flight_->NewIteratorWithBase(it);
    if (staged_) it = staged_->NewIteratorWithBase(it);
    slot.reset(it);
  }
  return *slot;
}

std::optional<std::string> Catalog::get(const std::string& key) const {
  auto* it = &iterator(false);
  it->Seek(key);
  if (!it->Valid() || it->key() != key) return std::nullopt;
  return it->value().ToString();
}

std::optional<Entry> Catalog::entry(ResourceId resource, const EntryKey& key, Revision revision) const {
  auto* it = &iterator(true);
  it->Seek(layout::entry(resource, key, revision));
  if (!it->Valid() || !it->key().starts_with(layout::entry_versions(resource, key))) return std::nullopt;
  auto value = layout::parse_entry_value(it->value().ToStringView());
  if (!value) return std::nullopt;  // deleted at that revision
  return Entry{key, std::move(*value), layout::parse_entry(it->key().ToStringView()).second};
}

bool Catalog::stores(const StorageLeaf& leaf) const {
  auto* it = &iterator(false);
  for (const auto& [first, last] : leaf_ranges(leaf)) {
    it->Seek(first);
    if (it->Valid() && it->key().compare(rocksdb::Slice(last)) <= 0) return true;
  }
  return false;
}

CatalogReader::Scan Catalog::entries(ResourceId resource, Revision revision, const std::optional<EntryKey>& after,
                                     std::size_t limit, std::size_t budget) const {
  Scan scan;
  const std::string prefix = layout::entries_of(resource);
  auto* it = &iterator(false);
  it->Seek(after ? layout::entry_end(resource, *after) : prefix);
  std::size_t examined = 0;
  auto in_range = [&] { return it->Valid() && it->key().starts_with(prefix); };
  while (in_range() && scan.entries.size() < limit && examined < budget) {
    auto [key, version] = layout::parse_entry(it->key().ToStringView());
    ++examined;
    scan.last_key = key;
    if (version > revision) {
      // Only newer versions seen so far: the one as of `revision`, if any, is further on.
      it->Seek(layout::entry(resource, key, revision));
      if (!in_range() || layout::parse_entry(it->key().ToStringView()).first != key) continue;
      version = layout::parse_entry(it->key().ToStringView()).second;
    }
    if (auto value = layout::parse_entry_value(it->value().ToStringView())) scan.entries.push_back(Entry{key, std::move(*value), version});
    it->Seek(layout::entry_end(resource, key));
  }
  scan.complete = !in_range();
  scan.examined = examined;
  return scan;
}

std::optional<std::string> Catalog::version_at(const std::string& record_key, Position position) const {
  auto* it = &iterator(false);
  it->Seek(layout::version(record_key, position));
  if (!it->Valid() || !it->key().starts_with(record_key) || it->key().size() != record_key.size() + 8) return std::nullopt;
  if (it->value() == layout::kRemoved) return std::nullopt;
  return it->value().ToString();
}

CorruptRecord Catalog::corrupt(const std::string& record_key, std::string detail) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : record_key) hex += {kHex[c >> 4], kHex[c & 15]};
  const auto* table = record_key.empty() ? nullptr : layout::table_of(record_key[0]);
  CorruptRecord c;
  c.kind = "record";
  c.table = table ? std::string(table->name) : std::string("unknown");
  c.record = std::move(hex);
  c.detail = std::move(detail);
  return c;
}

// Inputs and block records: their newest version (position ~0 sorts first).
std::optional<Input> Catalog::input(Pid pid, Id input) const {
  auto stored = version_at(layout::key(layout::kInputs, pid, input), layout::kNewest);
  if (!stored) return std::nullopt;
  auto decoded = from_json<Input>(*stored, kMaxInputBytes);
  if (!decoded.ok()) return std::nullopt;
  return std::move(*decoded);
}

std::optional<std::pair<Revision, Bytes>> Catalog::block(ResourceId resource, const EntryKey& name) const {
  auto stored = get(layout::block(resource, name));
  if (!stored || stored->size() < 8) return std::nullopt;
  return std::pair<Revision, Bytes>{Revision{layout::get_be64(*stored)}, Bytes(stored->begin() + 8, stored->end())};
}

// A version that does not decode - or decodes as another PID's - is an
// error, never an absent process (decision 157): reading it as absent would
// let a decision take the PID for unknown.
Result<std::optional<ProcessRecord>, CorruptRecord> Catalog::process(Pid pid, Position position) const {
  auto* it = &iterator(false);
  it->Seek(layout::process_version(pid, position));
  if (!it->Valid() || !it->key().starts_with(layout::process_versions(pid))) return std::optional<ProcessRecord>{};
  auto record = from_json<ProcessRecord>(it->value().ToStringView(), kMaxProcessBytes);
  if (!record.ok() || record->pid != pid) return Err{CorruptRecord{pid.value}};
  return std::optional<ProcessRecord>{std::move(*record)};
}

// One seek per PID: (pid, ~position) lands on its version as of `position`,
// or past its versions onto the next PID's newest, which is then sought as of
// `position` in turn.
std::optional<CorruptRecord> Catalog::processes(Pid after, Position position,
                                                const std::function<bool(const ProcessRecord&)>& visit) const {
  const std::string table = layout::table(layout::kProcesses);
  auto* it = &iterator(false);
  for (Id next = after.value + 1; next != 0;) {
    it->Seek(layout::process_version(Pid{next}, position));
    if (!it->Valid() || !it->key().starts_with(table) || it->key().size() != layout::kProcessKey) return std::nullopt;
    const Pid pid = layout::parse_process(it->key().ToStringView()).first;
    if (pid.value != next) {
      next = pid.value;
      continue;
    }
    next = pid.value + 1;
    auto record = from_json<ProcessRecord>(it->value().ToStringView(), kMaxProcessBytes);
    if (!record.ok() || record->pid != pid) return CorruptRecord{pid.value};
    if (!visit(*record)) return std::nullopt;
  }
  return std::nullopt;
}

// processes()' walk, for any table of records keyed by one id: one seek per record.
void Catalog::records(char table, Id after, Position position, const std::function<bool(Id, std::string_view)>& visit) const {
  const std::string prefix = layout::table(table);
  auto* it = &iterator(false);
  for (Id next = after + 1; next != 0;) {
    it->Seek(layout::version(layout::key(table, next), position));
    if (!it->Valid() || !it->key().starts_with(prefix) || it->key().size() != layout::kIdKey + 8) return;
    const Id id = layout::get_be64(it->key().ToStringView().substr(2));
    if (id != next) {
      next = id;
      continue;
    }
    next = id + 1;
    if (it->value() == layout::kRemoved) continue;
    if (!visit(id, it->value().ToStringView())) return;
  }
}

void Catalog::rows(const std::string& prefix, const std::string& after,
                   const std::function<bool(std::string_view)>& visit) const {
  auto* it = &iterator(false);
  it->Seek(after.empty() ? prefix : after);
  if (!after.empty() && it->Valid() && it->key() == after) it->Next();
  for (; it->Valid() && it->key().starts_with(prefix); it->Next())
    if (!visit(it->key().ToStringView())) return;
}

std::optional<BlockInfo> decode_block_record(std::string_view stored) {
  auto decoded = from_json<BlockInfo>(stored, kMaxBlockRecordBytes);
  if (!decoded.ok()) return std::nullopt;
  return std::move(*decoded);
}

std::optional<BlockInfo> Catalog::block_record(ResourceId resource, const EntryKey& name) const {
  auto stored = version_at(layout::block_record(resource, name), layout::kNewest);
  if (!stored) return std::nullopt;
  return decode_block_record(*stored);
}

// Read from the store alone: the batches hold what is not durable yet.
std::optional<JournalEntry> Catalog::committed_entry(Position position) const {
  std::string request, receipt;
  if (!db_.Get(rocksdb::ReadOptions(), layout::key(layout::kJournal, position), &request).ok()) return std::nullopt;
  // The receipt's key is in the request: decode the request's identity first.
  auto signed_request = from_json<SignedRequest>(request, kMaxEnvelopeBytes);
  if (!signed_request.ok()) return std::nullopt;
  const Request& r = signed_request->request;
  if (!db_.Get(rocksdb::ReadOptions(), layout::key(layout::kSequences, r.principal, r.sequence), &receipt).ok())
    return std::nullopt;
  return stored_entry(request, receipt);
}

}  // namespace cowboy::transit::node
