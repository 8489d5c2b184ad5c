// The devchain's data directory on a volume of its own (issue 47): on an
// empty mount point and through a symlink to an empty directory, a first
// start SIGKILLed at moments spread over it always restarts; a directory of
// other files, or another service's store in chain.rocksdb/, is refused and
// left as it was. Real devchain processes (slow).
#include <gtest/gtest.h>

#include "../support/data_dir_layouts.h"
#include "../support/temp_dir.h"

namespace cowboy::devchain {
namespace {

namespace fs = std::filesystem;
constexpr int kKills = 20;
const std::string kReady = "devchain listening";
const std::string kBin = COWBOY_BIN_DIR;

class DevchainDataDirLayouts : public ::testing::Test {
 protected:
  std::vector<std::string> argv(const fs::path& data) const {
    return {kBin + "/devchain", "--dev", "--dev-key-file", (tmp.path() / "dev-key").string(), "--data-dir", data.string(),
            "--listen", "127.0.0.1:0", "--block-ms", "100"};
  }
  int kill_trials(const std::string& layout_name, const testing::Layout& layout) {
    return testing::kill_during_first_start(
        "devchain, its data directory " + layout_name, tmp.path() / "trials",
        [](const fs::path& trial) { return trial / "chain"; }, layout,
        [this](const fs::path& data) { return argv(data); }, kReady, kKills);
  }

  testing::TempDir tmp;
};

TEST_F(DevchainDataDirLayouts, AFirstStartOnAnEmptyMountPointKilledAtAnyMomentRestarts) {
  if (auto why = testing::cannot_mount(tmp.path()); !why.empty()) GTEST_SKIP() << "cannot mount: " << why;
  EXPECT_GT(kill_trials("on an empty mount point", testing::empty_mount_point), kKills / 10);
}

TEST_F(DevchainDataDirLayouts, AFirstStartThroughASymlinkToAnEmptyDirectoryKilledAtAnyMomentRestarts) {
  EXPECT_GT(kill_trials("a symlink to an empty directory", testing::symlink_to_empty_dir), kKills / 10);
}

TEST_F(DevchainDataDirLayouts, ADirectoryOfOtherFilesIsRefusedNamingThemAndLeftAsItWas) {
  const auto data = tmp.path() / "chain";
  testing::expect_other_files_refused(data, argv(data),
                                      "devchain: refusing " + data.string() +
                                          ": it is not empty (notes.txt, photos) and is not a devchain data directory; a "
                                          "new one needs an empty directory");
}

// chain.rocksdb/ holding another service's RocksDB store (a cbqsd store):
// refused, where the devchain used to write its genesis into it.
TEST_F(DevchainDataDirLayouts, AnotherServicesStoreIsRefused) {
  const auto data = tmp.path() / "chain";
  fs::create_directories(data);
  auto made = testing::run_to_end({kBin + "/cbqs_store_probe", (data / "chain.rocksdb").string()});
  ASSERT_EQ(made.status, 0) << made.out;
  auto refused = testing::run_to_end(argv(data));
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.out.find("devchain: refusing " + (data / "chain.rocksdb").string() +
                             ": a RocksDB store without a chain, not the devchain's"),
            std::string::npos)
      << refused.out;
}

}  // namespace
}  // namespace cowboy::devchain
