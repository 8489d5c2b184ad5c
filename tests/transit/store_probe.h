// A stopped transitd's RocksDB opened directly, as the journal opens it, for
// tests that look at what is on disk (docs/transit.md, decisions 13 and 66).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include <rocksdb/db.h>

#include "transit/node/catalog.h"
#include "transit/node/layout.h"

namespace cowboy::transit::testing {

inline std::unique_ptr<rocksdb::DB> open_store(const std::filesystem::path& dir) {
  rocksdb::Options options;
  node::configure_entry_filters(options);
  rocksdb::DB* db = nullptr;
  const auto status = rocksdb::DB::Open(options, dir.string(), &db);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return std::unique_ptr<rocksdb::DB>(db);
}

/// The keys of one table (`j/`, `s/`...), in order.
inline std::vector<std::string> table_keys(rocksdb::DB& db, char table) {
  const std::string prefix = node::layout::table(table);
  rocksdb::ReadOptions in_order;
  in_order.total_order_seek = true;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(in_order));
  std::vector<std::string> keys;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) keys.push_back(it->key().ToString());
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return keys;
}

/// The key of the newest stored version of the record under `record_key`
/// (decision 161); empty when it has none.
inline std::string newest_version(rocksdb::DB& db, const std::string& record_key) {
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions()));
  it->Seek(record_key);
  if (!it->Valid() || !it->key().starts_with(record_key) || it->key().size() != record_key.size() + 8) return {};
  return it->key().ToString();
}

/// The positions of the journal's requests (`j/` + position).
inline std::vector<Position> journal_positions(rocksdb::DB& db) {
  std::vector<Position> positions;
  for (const auto& k : table_keys(db, node::layout::kJournal)) positions.push_back(Position{node::layout::get_be64(k.substr(2))});
  return positions;
}

/// The bytes of the store's table files: what its data takes once flushed.
inline std::uint64_t table_file_bytes(const std::filesystem::path& dir) {
  std::uint64_t bytes = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().extension() == ".sst") bytes += f.file_size();
  return bytes;
}

}  // namespace cowboy::transit::testing
