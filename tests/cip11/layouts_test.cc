// cip11d's data directory on a volume of its own (issue 47): `cip11d --dev`
// on an empty mount point and through a symlink to an empty directory - its
// keys, genesis, certificate and in-process chain - SIGKILLed at moments
// spread over its first start, always restarts; a directory of other files is
// refused and left as it was. Real cip11d processes (slow).
#include <gtest/gtest.h>

#include "../support/data_dir_layouts.h"
#include "../support/temp_dir.h"

namespace cowboy::cip11 {
namespace {

namespace fs = std::filesystem;
constexpr int kKills = 20;
const std::string kReady = "cip11d listening";

std::vector<std::string> argv(const fs::path& data) {
  return {std::string(COWBOY_BIN_DIR) + "/cip11d", "--dev", "--data-dir", data.string(), "--dev-listen", "127.0.0.1:0",
          "--chain-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--dev-runners", "1", "--block-ms", "100"};
}

int kill_trials(const fs::path& root, const std::string& layout_name, const testing::Layout& layout) {
  return testing::kill_during_first_start(
      "cip11d --dev, its data directory " + layout_name, root, [](const fs::path& trial) { return trial / "data"; },
      layout, argv, kReady, kKills);
}

TEST(Cip11dDataDirLayouts, AFirstStartOnAnEmptyMountPointKilledAtAnyMomentRestarts) {
  testing::TempDir tmp;
  if (auto why = testing::cannot_mount(tmp.path()); !why.empty()) GTEST_SKIP() << "cannot mount: " << why;
  EXPECT_GT(kill_trials(tmp.path(), "on an empty mount point", testing::empty_mount_point), kKills / 10);
}

TEST(Cip11dDataDirLayouts, AFirstStartThroughASymlinkToAnEmptyDirectoryKilledAtAnyMomentRestarts) {
  testing::TempDir tmp;
  EXPECT_GT(kill_trials(tmp.path(), "a symlink to an empty directory", testing::symlink_to_empty_dir), kKills / 10);
}

TEST(Cip11dDataDirLayouts, ADirectoryOfOtherFilesIsRefusedNamingThemAndLeftAsItWas) {
  testing::TempDir tmp;
  const auto data = tmp.path() / "data";
  testing::expect_other_files_refused(data, argv(data),
                                      "cip11d: refusing " + data.string() +
                                          ": it is not empty (notes.txt, photos) and is not a cip11d data directory; a "
                                          "new one needs an empty directory");
}

}  // namespace
}  // namespace cowboy::cip11
