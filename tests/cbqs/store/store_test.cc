// The storage contract, run against both implementations, and §18 rule 4.
#include <gtest/gtest.h>

#include <rocksdb/db.h>

#include "../../support/temp_dir.h"
#include "cbqs/store/memory_store.h"

namespace cowboy::cbqs::store {
namespace {

void exercise(Store& s) {
  WriteBatch b;
  b.put("a/1", "one");
  b.put("a/2", "two");
  b.put("a/3", "three");
  b.put("b/1", "other");
  ASSERT_TRUE(s.write(b, Sync::kYes).ok());
  EXPECT_EQ(**s.get("a/2"), "two");
  EXPECT_FALSE(*s.get("a/9"));
  WriteBatch d;
  d.delete_range("a/2", "a/3");
  d.del("b/1");
  ASSERT_TRUE(s.write(d, Sync::kYes).ok());
  std::vector<std::string> keys;
  ASSERT_TRUE(s.scan("a/", "b0", [&](std::string_view k, std::string_view) {
    keys.emplace_back(k);
    return true;
  }).ok());
  EXPECT_EQ(keys, (std::vector<std::string>{"a/1", "a/3"}));
}

TEST(Store, RocksDbKeepsTheContractAndWritesTheMarker) {
  testing::TempDir dir;
  auto path = (dir.path() / "s").string();
  {
    auto s = open_rocksdb_store(path);
    ASSERT_TRUE(s.ok()) << s.error();
    exercise(**s);
    EXPECT_EQ(**(*s)->get(kFormatMarkerKey), "2");
  }
  auto again = open_rocksdb_store(path);  // reopening a marked store works
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(**(*again)->get("a/1"), "one");
}

TEST(Store, RocksDbRefusesAStoreWithoutTheMarkerOrWithAnotherValue) {
  testing::TempDir dir;
  auto path = (dir.path() / "v1").string();
  {  // a "version-1" store: data, and a marker under another key
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, path, &db).ok());
    ASSERT_TRUE(db->Put({}, "cbqs/format-version", "1").ok());
    delete db;
  }
  auto s = open_rocksdb_store(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("store-format"), std::string::npos);

  auto wrong = (dir.path() / "wrong").string();
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, wrong, &db).ok());
    ASSERT_TRUE(db->Put({}, "cbqs/store-format", "1").ok());
    delete db;
  }
  EXPECT_FALSE(open_rocksdb_store(wrong).ok());
}

TEST(Store, RocksDbTakesAnEmptyDirectoryAsANewStore) {
  testing::TempDir dir;
  auto path = dir.path() / "mounted";
  std::filesystem::create_directory(path);  // e.g. a volume mounted for the store
  auto s = open_rocksdb_store(path.string());
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(**(*s)->get(kFormatMarkerKey), kFormatMarkerValue);
}

TEST(Store, MemoryStoreKeepsTheContract) {
  MemoryStore s;
  exercise(s);
}

TEST(Store, MemoryStoreCrashDropsUnsyncedWritesOnly) {
  MemoryStore s;
  WriteBatch synced, unsynced;
  synced.put("k/1", "durable");
  unsynced.put("k/2", "volatile");
  unsynced.del("k/1");
  ASSERT_TRUE(s.write(synced, Sync::kYes).ok());
  ASSERT_TRUE(s.write(unsynced, Sync::kNo).ok());
  EXPECT_FALSE(*s.get("k/1"));  // visible before the crash
  s.crash();
  EXPECT_EQ(**s.get("k/1"), "durable");
  EXPECT_FALSE(*s.get("k/2"));
}

TEST(Store, MemoryStoreFailedSyncMakesNothingDurable) {
  MemoryStore s;
  s.fail_syncs(true);
  WriteBatch b;
  b.put("k", "v");
  EXPECT_EQ(s.write(b, Sync::kYes).error(), StoreError::kIo);
  s.crash();
  EXPECT_FALSE(*s.get("k"));
  EXPECT_EQ(ensure_format_marker(s, false).error(), StoreError::kFormatMismatch);
}

}  // namespace
}  // namespace cowboy::cbqs::store
