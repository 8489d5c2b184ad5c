// cbqsd's store on a volume of its own (issue 47): on an empty mount point and
// through a symlink to an empty directory, a first start SIGKILLed at moments
// spread over it always restarts; a directory of other files is refused and
// left as it was. Real cbqsd processes (slow: over forty of them per layout).
#include <gtest/gtest.h>

#include <cstdlib>

#include "../../support/data_dir_layouts.h"
#include "../../support/temp_dir.h"
#include "net/dev_cert.h"

namespace cowboy::cbqs::store {
namespace {

namespace fs = std::filesystem;
constexpr int kKills = 20;
const std::string kReady = "cbqsd listening";

// cbqsd in provider mode: it builds or opens its store first thing, then
// listens; no chain answers (port 1), which it only logs.
class CbqsdStoreLayouts : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = net::ensure_dev_certificate(tmp.path() / "tls");
    ASSERT_TRUE(made.ok()) << made.error();
    cert = *made;
    std::ofstream(tmp.path() / "provider-key") << std::string(64, '5') << "\n";
  }
  std::vector<std::string> argv(const fs::path& store) const {
    return {std::string(COWBOY_BIN_DIR) + "/cbqsd", "--store", store.string(), "--tls-cert", cert.certificate.string(),
            "--tls-key", cert.private_key.string(), "--provider-key", (tmp.path() / "provider-key").string(),
            "--provider-address", "0x" + std::string(40, '1'), "--chain-url", "http://127.0.0.1:1",
            "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"};
  }
  int kill_trials(const std::string& layout_name, const testing::Layout& layout) {
    return testing::kill_during_first_start(
        "cbqsd, its store " + layout_name, tmp.path() / "trials", [](const fs::path& trial) { return trial / "store"; },
        layout, [this](const fs::path& store) { return argv(store); }, kReady, kKills);
  }

  testing::TempDir tmp;
  net::CertFiles cert;
};

TEST_F(CbqsdStoreLayouts, AFirstStartOnAnEmptyMountPointKilledAtAnyMomentRestarts) {
  if (auto why = testing::cannot_mount(tmp.path()); !why.empty()) GTEST_SKIP() << "cannot mount: " << why;
  EXPECT_GT(kill_trials("on an empty mount point", testing::empty_mount_point), kKills / 10);
}

TEST_F(CbqsdStoreLayouts, AFirstStartThroughASymlinkToAnEmptyDirectoryKilledAtAnyMomentRestarts) {
  EXPECT_GT(kill_trials("a symlink to an empty directory", testing::symlink_to_empty_dir), kKills / 10);
}

// The report of issue 47: `cbqsd --dev` with DATA/store a symlink to an empty
// directory on a volume of its own. The store and its disk reserve land there.
TEST_F(CbqsdStoreLayouts, TheDevDataDirWithItsStoreSymlinkedToAnEmptyVolume) {
  testing::EmptyMount volume(tmp.path() / "volume");
  if (!volume.mounted()) GTEST_SKIP() << "cannot mount: " << volume.why_not();
  fs::create_directories(tmp.path() / "data");
  fs::create_directory_symlink(tmp.path() / "volume", tmp.path() / "data" / "store");
  ::setenv("CBQS_HOME", (tmp.path() / "home").c_str(), 1);  // the dev owner key
  testing::ChildProcess cbqsd({std::string(COWBOY_BIN_DIR) + "/cbqsd", "--dev", "--data-dir", (tmp.path() / "data").string(),
                               "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--chain-listen", "127.0.0.1:0"},
                              (tmp.path() / "cbqsd.log").string());
  ASSERT_TRUE(cbqsd.wait_for_line(kReady, std::chrono::seconds(60))) << testing::read_text(tmp.path() / "cbqsd.log");
  EXPECT_TRUE(fs::is_symlink(tmp.path() / "data" / "store"));
  EXPECT_TRUE(fs::exists(tmp.path() / "volume" / "CURRENT"));
  if (volume.kind() == "tmpfs") {  // 256 MiB: room for the reserve, on the store's own filesystem
    EXPECT_TRUE(fs::exists(tmp.path() / "volume" / "cbqsd.reserve"));
  }
  EXPECT_FALSE(fs::exists(tmp.path() / "data" / "store.reserve"));
}

// CBQS_HOME in the data directory (as the JS client's tests run it): the dev
// owner key is made there first, so a first start killed at once may leave
// nothing else. That is still cbqsd's directory.
TEST_F(CbqsdStoreLayouts, ADevDataDirHoldingOnlyTheDevOwnerKeyIsItsOwn) {
  const auto data = tmp.path() / "data";
  fs::create_directories(data);
  std::ofstream(data / "dev-key") << std::string(64, '5') << "\n";
  ::setenv("CBQS_HOME", data.c_str(), 1);
  testing::ChildProcess cbqsd({std::string(COWBOY_BIN_DIR) + "/cbqsd", "--dev", "--data-dir", data.string(), "--listen",
                               "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--chain-listen", "127.0.0.1:0"},
                              (tmp.path() / "cbqsd.log").string());
  EXPECT_TRUE(cbqsd.wait_for_line(kReady, std::chrono::seconds(60))) << testing::read_text(tmp.path() / "cbqsd.log");
}

TEST_F(CbqsdStoreLayouts, ADirectoryOfOtherFilesIsRefusedNamingThemAndLeftAsItWas) {
  const auto store = tmp.path() / "store";
  testing::expect_other_files_refused(
      store, argv(store),
      "cbqsd: refusing " + store.string() +
          ": it is not empty (notes.txt, photos) and is not a cbqsd store; a new one needs an empty directory");
}

}  // namespace
}  // namespace cowboy::cbqs::store
