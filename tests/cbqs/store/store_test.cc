// The storage contract, run against both implementations, and §18 rule 4.
#include <gtest/gtest.h>

#include <rocksdb/db.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

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

// A store on a volume of its own, reached through a symlink (issue 47): built
// inside the target, the symlink kept. Renaming a store built beside it onto
// the symlink failed ("Not a directory").
TEST(Store, RocksDbBuildsANewStoreInsideASymlinkToAnEmptyDirectory) {
  testing::TempDir dir;
  std::filesystem::create_directory(dir.path() / "volume");
  std::filesystem::create_directory_symlink(dir.path() / "volume", dir.path() / "store");
  {
    auto s = open_rocksdb_store((dir.path() / "store").string());
    ASSERT_TRUE(s.ok()) << s.error();
    EXPECT_EQ(**(*s)->get(kFormatMarkerKey), kFormatMarkerValue);
  }
  EXPECT_TRUE(std::filesystem::is_symlink(dir.path() / "store"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "volume" / "CURRENT"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "volume" / ".creating"));
  EXPECT_TRUE(open_rocksdb_store((dir.path() / "store").string()).ok());
}

TEST(Store, RocksDbRefusesADirectoryOfOtherFilesNamingThem) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "notes.txt") << "not a store";
  auto s = open_rocksdb_store(dir.path().string());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "refusing " + dir.path().string() +
                           ": it is not empty (notes.txt) and is not a cbqsd store; a new one needs an empty directory");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "CURRENT"));  // nothing written among them
}

// A first start killed after RocksDB made its files but before the store was
// published: the marker is there, the format marker is not. The next start
// builds the store again instead of refusing it.
TEST(Store, RocksDbBuildsAgainAFirstStartCutShort) {
  testing::TempDir dir;
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir.path().string(), &db).ok());
    delete db;
  }
  std::ofstream(dir.path() / ".creating");
  auto s = open_rocksdb_store(dir.path().string());
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(**(*s)->get(kFormatMarkerKey), kFormatMarkerValue);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / ".creating"));
}

// A record key as the broker's layout writes it: s/<32-byte sid>/r/<be64 seq>.
std::string record_key(char sid, std::uint64_t seq) {
  std::string k = "s/" + std::string(32, sid) + "/r/";
  for (int i = 7; i >= 0; --i) k.push_back(static_cast<char>(seq >> (8 * i)));
  return k;
}
std::string stream_key(char sid, std::string_view rest) { return "s/" + std::string(32, sid) + "/" + std::string(rest); }

// The bytes of write-ahead log a start would replay: the live *.log files
// (an obsolete one renamed *.trash for paced deletion is not replayed).
std::uint64_t live_wal_bytes(const std::filesystem::path& store) {
  std::uint64_t total = 0;
  for (const auto& e : std::filesystem::directory_iterator(store))
    if (e.path().extension() == ".log") total += e.file_size();
  return total;
}

// What each family of a closed store holds, read with RocksDB directly.
std::map<std::string, std::vector<std::string>> family_keys(const std::filesystem::path& path) {
  std::vector<std::string> names;
  EXPECT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path.string(), &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> wanted;
  for (const auto& n : names) wanted.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  EXPECT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::DBOptions(), path.string(), wanted, &handles, &db).ok());
  std::map<std::string, std::vector<std::string>> keys;
  if (db == nullptr) return keys;
  for (auto* h : handles) {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), h));
    auto& list = keys[h->GetName()];
    for (it->SeekToFirst(); it->Valid(); it->Next()) list.push_back(it->key().ToString());
    (void)db->DestroyColumnFamilyHandle(h);
  }
  delete db;
  return keys;
}

std::vector<std::string> scanned(Store& s, std::string_view begin, std::string_view end) {
  std::vector<std::string> keys;
  EXPECT_TRUE(s.scan(begin, end, [&](std::string_view k, std::string_view) {
    keys.emplace_back(k);
    return true;
  }).ok());
  return keys;
}

// Issue 46: records live in a column family of their own, every other key in
// the default one; one batch writes both atomically, a range over both is
// scanned and deleted in both.
TEST(Store, RocksDbKeepsRecordsInAFamilyOfTheirOwn) {
  testing::TempDir dir;
  auto path = dir.path() / "s";
  {
    auto s = open_rocksdb_store(path.string());
    ASSERT_TRUE(s.ok()) << s.error();
    WriteBatch b;
    for (std::uint64_t q = 1; q <= 3; ++q) b.put(record_key('a', q), "rec" + std::to_string(q));
    b.put(stream_key('a', "m"), "tail");
    b.put(stream_key('a', "c/x"), "receipt");
    b.put(record_key('b', 1), "other stream");
    ASSERT_TRUE((*s)->write(b, Sync::kYes).ok());
    EXPECT_EQ(**(*s)->get(record_key('a', 2)), "rec2");
    EXPECT_EQ(**(*s)->get(stream_key('a', "m")), "tail");
    // Records only, then a whole stream: both families, in key order.
    EXPECT_EQ(scanned(**s, record_key('a', 2), stream_key('a', "r0")),
              (std::vector<std::string>{record_key('a', 2), record_key('a', 3)}));
    EXPECT_EQ(scanned(**s, stream_key('a', ""), stream_key('a', "z")),
              (std::vector<std::string>{stream_key('a', "c/x"), stream_key('a', "m"), record_key('a', 1),
                                        record_key('a', 2), record_key('a', 3)}));
    WriteBatch d;
    d.delete_range(record_key('a', 1), record_key('a', 2));   // records only
    d.delete_range(stream_key('a', "c"), stream_key('a', "n"));  // the default family only
    ASSERT_TRUE((*s)->write(d, Sync::kYes).ok());
    EXPECT_EQ(scanned(**s, stream_key('a', ""), stream_key('a', "z")),
              (std::vector<std::string>{record_key('a', 2), record_key('a', 3)}));
    WriteBatch all;
    all.delete_range(stream_key('a', ""), stream_key('b', ""));  // spans both families
    ASSERT_TRUE((*s)->write(all, Sync::kYes).ok());
    EXPECT_TRUE(scanned(**s, "s/", "s0") == (std::vector<std::string>{record_key('b', 1)}));
  }
  auto keys = family_keys(path);
  EXPECT_EQ(keys["records"], (std::vector<std::string>{record_key('b', 1)}));
  EXPECT_EQ(keys["default"], (std::vector<std::string>{"cbqs/records-family", std::string(kFormatMarkerKey)}));
}

// Issue 46: a start replays the live WAL, so the store keeps it bounded
// however much is written (max_total_wal_size over the two families): 48 MiB
// of records in synced 1 MiB batches, each with a small key of the default
// family as the broker's batches have, leave about 8 MiB of WAL plus what is
// written while the flush runs (13 MiB at most here); with one family and
// the default 64 MiB memtable, all 48 MiB stayed.
TEST(Store, RocksDbKeepsTheLiveWalBounded) {
  testing::TempDir dir;
  auto path = dir.path() / "s";
  auto s = open_rocksdb_store(path.string());
  ASSERT_TRUE(s.ok()) << s.error();
  std::uint64_t most = 0, state = 0x9e3779b97f4a7c15;
  for (std::uint64_t w = 0; w < 48; ++w) {
    WriteBatch b;
    for (std::uint64_t i = 0; i < 16; ++i) {
      std::string value(64 << 10, '\0');
      for (auto& c : value) c = static_cast<char>((state = state * 6364136223846793005 + 1442695040888963407) >> 56);
      b.put(record_key('a', w * 16 + i + 1), std::move(value));
    }
    b.put(stream_key('a', "m"), std::to_string(w));
    ASSERT_TRUE((*s)->write(b, Sync::kYes).ok());
    most = std::max(most, live_wal_bytes(path));
  }
  EXPECT_LE(most, (24u << 20)) << "the live WAL reached " << most << " bytes";
  EXPECT_EQ((**(*s)->get(record_key('a', 1))).size(), 64u << 10);
  EXPECT_EQ(**(*s)->get(stream_key('a', "m")), "47");
}

// A store written before the records family (the default family only, or a
// move cut short after the family was made): the first open moves every
// record into the records family, once; the data reads the same.
TEST(Store, RocksDbMovesTheRecordsOfAStoreWrittenBeforeTheFamily) {
  for (bool family_made : {false, true}) {
    testing::TempDir dir;
    auto path = dir.path() / "old";
    {
      rocksdb::Options o;
      o.create_if_missing = true;
      o.create_missing_column_families = true;
      std::vector<rocksdb::ColumnFamilyDescriptor> wanted{{rocksdb::kDefaultColumnFamilyName, {}}};
      if (family_made) wanted.emplace_back("records", rocksdb::ColumnFamilyOptions());
      std::vector<rocksdb::ColumnFamilyHandle*> handles;
      rocksdb::DB* db = nullptr;
      ASSERT_TRUE(rocksdb::DB::Open(o, path.string(), wanted, &handles, &db).ok());
      rocksdb::WriteBatch b;
      b.Put(kFormatMarkerKey, kFormatMarkerValue);
      for (std::uint64_t q = 1; q <= 1000; ++q) b.Put(record_key('a', q), std::to_string(q));
      b.Put(record_key('b', 7), "b7");
      b.Put(stream_key('a', "m"), "tail");
      b.Put(stream_key('b', "l/1"), "lane");
      ASSERT_TRUE(db->Write({}, &b).ok());
      for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
      delete db;
    }
    for (int open = 0; open < 2; ++open) {
      auto s = open_rocksdb_store(path.string());
      ASSERT_TRUE(s.ok()) << s.error();
      EXPECT_EQ(**(*s)->get(record_key('a', 500)), "500");
      EXPECT_EQ(**(*s)->get(stream_key('a', "m")), "tail");
      EXPECT_EQ(scanned(**s, record_key('a', 0), stream_key('a', "r0")).size(), 1000u);
      EXPECT_EQ(scanned(**s, "s/", "s0").size(), 1003u);
    }
    auto keys = family_keys(path);
    EXPECT_EQ(keys["records"].size(), 1001u) << family_made;
    EXPECT_EQ(keys["default"], (std::vector<std::string>{"cbqs/records-family", std::string(kFormatMarkerKey),
                                                         stream_key('a', "m"), stream_key('b', "l/1")}))
        << family_made;
  }
}

// A store without the format marker is refused before anything is added to
// it: no records family is made.
TEST(Store, RocksDbRefusesAnUnmarkedStoreWithoutAddingTheFamily) {
  testing::TempDir dir;
  auto path = (dir.path() / "v1").string();
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, path, &db).ok());
    ASSERT_TRUE(db->Put({}, record_key('a', 1), "r").ok());
    delete db;
  }
  EXPECT_FALSE(open_rocksdb_store(path).ok());
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
  EXPECT_EQ(names, (std::vector<std::string>{rocksdb::kDefaultColumnFamilyName}));
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
