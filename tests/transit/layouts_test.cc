// transitd's journal on a volume of its own (issue 47): on an empty mount
// point (--data) and through a symlink to an empty directory (--dev, its
// journal/), a first start SIGKILLed at moments spread over it always
// restarts; a directory of other files, or another service's store, is
// refused and left as it was. Real transitd processes (slow).
#include <gtest/gtest.h>

#include "../support/data_dir_layouts.h"
#include "../support/temp_dir.h"
#include "samples.h"

namespace cowboy::transit {
namespace {

namespace fs = std::filesystem;
constexpr int kKills = 20;
const std::string kReady = "transitd_ready";
const std::string kBin = COWBOY_BIN_DIR;

class TransitdJournalLayouts : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(genesis()) << to_json(testing::sample_genesis()) << "\n"; }
  fs::path genesis() const { return tmp.path() / "genesis.json"; }
  std::vector<std::string> with_data(const fs::path& journal) const {
    return {kBin + "/transitd", "--genesis", genesis().string(), "--data", journal.string(), "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"};
  }
  static std::vector<std::string> dev(const fs::path& dev_dir) {
    return {kBin + "/transitd", "--dev", "--dev-dir", dev_dir.string(), "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"};
  }

  cowboy::testing::TempDir tmp;
};

TEST_F(TransitdJournalLayouts, AFirstStartOnAnEmptyMountPointKilledAtAnyMomentRestarts) {
  if (auto why = cowboy::testing::cannot_mount(tmp.path()); !why.empty()) GTEST_SKIP() << "cannot mount: " << why;
  int before = cowboy::testing::kill_during_first_start(
      "transitd --data on an empty mount point", tmp.path() / "trials", [](const fs::path& t) { return t / "journal"; },
      cowboy::testing::empty_mount_point, [this](const fs::path& journal) { return with_data(journal); }, kReady, kKills);
  EXPECT_GT(before, kKills / 10);
}

TEST_F(TransitdJournalLayouts, ADevFirstStartWithItsJournalSymlinkedToAnEmptyDirectoryKilledAtAnyMomentRestarts) {
  int before = cowboy::testing::kill_during_first_start(
      "transitd --dev, its journal a symlink to an empty directory", tmp.path() / "trials",
      [](const fs::path& t) { return t / "dev" / "journal"; }, cowboy::testing::symlink_to_empty_dir,
      [](const fs::path& journal) { return dev(journal.parent_path()); }, kReady, kKills);
  EXPECT_GT(before, kKills / 10);
}

TEST_F(TransitdJournalLayouts, ADirectoryOfOtherFilesIsRefusedNamingThemAndLeftAsItWas) {
  const auto journal = tmp.path() / "journal";
  cowboy::testing::expect_other_files_refused(
      journal, with_data(journal),
      "transitd: refusing " + journal.string() +
          ": it is not empty (notes.txt, photos) and is not a Transit journal; a new one needs an empty directory");
  const auto dev_dir = tmp.path() / "dev";
  cowboy::testing::expect_other_files_refused(
      dev_dir, dev(dev_dir),
      "transitd: refusing " + dev_dir.string() + ": it is not empty (notes.txt, photos) and is not a transitd --dev directory");
}

// A RocksDB store of another service (a cbqsd store here): refused, where
// transitd used to write a genesis into it and serve it as a journal.
TEST_F(TransitdJournalLayouts, AnotherServicesStoreIsRefused) {
  const auto store = tmp.path() / "cbqsd-store";
  auto made = cowboy::testing::run_to_end({kBin + "/cbqs_store_probe", store.string()});
  ASSERT_EQ(made.status, 0) << made.out;
  auto refused = cowboy::testing::run_to_end(with_data(store));
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.out.find("transitd: refusing " + store.string() + ": a RocksDB store without a Transit genesis, not a journal"),
            std::string::npos)
      << refused.out;
}

}  // namespace
}  // namespace cowboy::transit
