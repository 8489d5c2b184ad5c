#include "transit/node/catalog.h"

#include <rocksdb/db.h>
#include <rocksdb/utilities/write_batch_with_index.h>

#include "transit/contract/codec.h"
#include "transit/node/layout.h"

namespace cowboy::transit::node {
namespace {

constexpr std::size_t kMaxInputBytes = 1024;

}  // namespace

std::unique_ptr<rocksdb::Iterator> Catalog::iterator() const {
  rocksdb::Iterator* it = db_.NewIterator(rocksdb::ReadOptions());
  if (in_flight_) it = in_flight_->NewIteratorWithBase(it);
  if (staged_) it = staged_->NewIteratorWithBase(it);
  return std::unique_ptr<rocksdb::Iterator>(it);
}

std::optional<std::string> Catalog::get(const std::string& key) const {
  auto it = iterator();
  it->Seek(key);
  if (!it->Valid() || it->key() != key) return std::nullopt;
  return it->value().ToString();
}

std::optional<Entry> Catalog::entry(Id resource, const EntryKey& key, Id revision) const {
  auto it = iterator();
  it->Seek(layout::entry(resource, key, revision));
  if (!it->Valid() || !it->key().starts_with(layout::entry_versions(resource, key))) return std::nullopt;
  auto value = layout::parse_entry_value(it->value().ToStringView());
  if (!value) return std::nullopt;  // deleted at that revision
  return Entry{key, std::move(*value), layout::parse_entry(it->key().ToStringView()).second};
}

CatalogReader::Scan Catalog::entries(Id resource, Id revision, const std::optional<EntryKey>& after,
                                     std::size_t limit, std::size_t budget) const {
  Scan scan;
  const std::string prefix = layout::entries_of(resource);
  auto it = iterator();
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
  return scan;
}

std::optional<Input> Catalog::input(Id pid, Id input) const {
  auto stored = get(layout::key(layout::kInputs, pid, input));
  if (!stored) return std::nullopt;
  auto decoded = from_json<Input>(*stored, kMaxInputBytes);
  if (!decoded.ok()) return std::nullopt;
  return std::move(*decoded);
}

std::optional<std::pair<Id, Bytes>> Catalog::block(Id resource, const EntryKey& name) const {
  auto stored = get(layout::block(resource, name));
  if (!stored || stored->size() < 8) return std::nullopt;
  return std::pair<Id, Bytes>{layout::get_be64(*stored), Bytes(stored->begin() + 8, stored->end())};
}

}  // namespace cowboy::transit::node
