// The data-directory rule (common/data_dir.h): which directories a service
// takes, how a store is built inside one, and what a creation cut short leaves.
#include "common/data_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "../support/data_dir_layouts.h"
#include "../support/temp_dir.h"

namespace cowboy::data_dir {
namespace {

namespace fs = std::filesystem;
using testing::names_in;

const Owner kOwner{"test store", {"CURRENT"}};

// A store of two files, the way a RocksDB store holds CURRENT and more.
Result<Unit, std::string> build_two_files(const fs::path& dir) {
  std::ofstream(dir / "CURRENT") << "MANIFEST-000001\n";
  std::ofstream(dir / "000001.log") << "records";
  return Unit{};
}

TEST(DataDir, AnAbsentDirectoryIsMadeAndTheStoreBuiltInsideIt) {
  testing::TempDir tmp;
  auto dir = tmp.path() / "a" / "store";
  auto built = create_store(dir, kOwner, build_two_files);
  ASSERT_TRUE(built.ok()) << built.error();
  EXPECT_TRUE(*built);
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"000001.log", "CURRENT"}));  // no .creating left
}

TEST(DataDir, ASymlinkToAnEmptyDirectoryGetsTheStoreInItsTarget) {
  testing::TempDir tmp;
  fs::create_directory(tmp.path() / "volume");
  fs::create_directory_symlink(tmp.path() / "volume", tmp.path() / "store");
  auto built = create_store(tmp.path() / "store", kOwner, build_two_files);
  ASSERT_TRUE(built.ok()) << built.error();
  EXPECT_TRUE(fs::is_symlink(tmp.path() / "store"));  // kept: the store is inside, not renamed over it
  EXPECT_EQ(names_in(tmp.path() / "volume"), (std::vector<std::string>{"000001.log", "CURRENT"}));
}

TEST(DataDir, AnEmptyLostAndFoundCountsAsEmptyAndIsKept) {
  testing::TempDir tmp;
  fs::create_directories(tmp.path() / "lost+found");
  auto built = create_store(tmp.path(), kOwner, build_two_files);
  ASSERT_TRUE(built.ok()) << built.error();
  EXPECT_EQ(names_in(tmp.path()), (std::vector<std::string>{"000001.log", "CURRENT", "lost+found"}));
}

TEST(DataDir, AStoreAlreadyThereIsNotBuiltAgain) {
  testing::TempDir tmp;
  ASSERT_TRUE(create_store(tmp.path(), kOwner, build_two_files).ok());
  bool called = false;
  auto again = create_store(tmp.path(), kOwner, [&](const fs::path&) -> Result<Unit, std::string> {
    called = true;
    return Unit{};
  });
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_FALSE(*again);
  EXPECT_FALSE(called);
}

// What a crash during a build leaves: the marker and part of the store. The
// next start clears it (lost+found stays) and builds the store whole.
TEST(DataDir, ACreationCutShortIsClearedAndBuiltAgain) {
  testing::TempDir tmp;
  fs::create_directories(tmp.path() / "lost+found");
  std::ofstream(tmp.path() / ".creating");
  std::ofstream(tmp.path() / "CURRENT") << "MANIFEST-0";  // torn
  fs::create_directories(tmp.path() / "half" / "made");
  auto built = create_store(tmp.path(), kOwner, build_two_files);
  ASSERT_TRUE(built.ok()) << built.error();
  EXPECT_TRUE(*built);
  EXPECT_EQ(names_in(tmp.path()), (std::vector<std::string>{"000001.log", "CURRENT", "lost+found"}));
  std::ifstream current(tmp.path() / "CURRENT");
  std::string line;
  std::getline(current, line);
  EXPECT_EQ(line, "MANIFEST-000001");
}

TEST(DataDir, AForeignDirectoryIsRefusedNamingWhatItHoldsAndLeftAlone) {
  testing::TempDir tmp;
  std::ofstream(tmp.path() / "notes.txt") << "mine";
  fs::create_directories(tmp.path() / "photos");
  bool called = false;
  auto refused = create_store(tmp.path(), kOwner, [&](const fs::path&) -> Result<Unit, std::string> {
    called = true;
    return Unit{};
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), "refusing " + tmp.path().string() +
                                 ": it is not empty (notes.txt, photos) and is not a test store; a new one needs an "
                                 "empty directory");
  EXPECT_FALSE(called);
  EXPECT_EQ(names_in(tmp.path()), (std::vector<std::string>{"notes.txt", "photos"}));
}

TEST(DataDir, ARefusalNamesFiveEntriesAndCountsTheRest) {
  testing::TempDir tmp;
  for (char c = 'a'; c <= 'g'; ++c) std::ofstream(tmp.path() / std::string(1, c));
  auto refused = take(tmp.path(), kOwner);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("it is not empty (a, b, c, d, e and 2 more)"), std::string::npos)
      << refused.error();
}

TEST(DataDir, AFailedBuildLeavesTheDirectoryEmpty) {
  testing::TempDir tmp;
  auto failed = create_store(tmp.path(), kOwner, [](const fs::path& dir) -> Result<Unit, std::string> {
    std::ofstream(dir / "CURRENT") << "x";
    return Err{std::string("no genesis")};
  });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error(), "no genesis");
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

TEST(DataDir, ASymlinkToNothingIsRefusedSayingSo) {
  testing::TempDir tmp;
  fs::create_directory_symlink(tmp.path() / "gone", tmp.path() / "store");
  auto refused = create_store(tmp.path() / "store", kOwner, build_two_files);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), (tmp.path() / "store").string() + " is a symlink to " + (tmp.path() / "gone").string() +
                                 ", which is not a directory");
}

TEST(DataDir, TakeAcceptsEmptyOrMarkedDirectoriesAndMakesAbsentOnes) {
  testing::TempDir tmp;
  EXPECT_TRUE(take(tmp.path() / "new", kOwner).ok());
  EXPECT_TRUE(fs::is_directory(tmp.path() / "new"));
  std::ofstream(tmp.path() / "new" / "CURRENT");
  std::ofstream(tmp.path() / "new" / "anything-else");
  EXPECT_TRUE(take(tmp.path() / "new", kOwner).ok());  // one mark is enough
}

TEST(DataDir, WriteFileReplacesWholeWithTheModeAndLeavesNoTemporary) {
  testing::TempDir tmp;
  auto path = tmp.path() / "key";
  ASSERT_TRUE(write_file(path, "one\n", 0600, IfExists::kReplace).ok());
  auto written = write_file(path, "two\n", 0600, IfExists::kReplace);
  ASSERT_TRUE(written.ok()) << written.error();
  EXPECT_TRUE(*written);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "two\n");
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"key"});
}

TEST(DataDir, WriteFileKeepsAnExistingFileWhenAskedTo) {
  testing::TempDir tmp;
  auto path = tmp.path() / "key";
  std::ofstream(path) << "first\n";
  auto kept = write_file(path, "second\n", 0600, IfExists::kKeep);
  ASSERT_TRUE(kept.ok()) << kept.error();
  EXPECT_FALSE(*kept);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "first");
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"key"});
}

// A temporary a crash left behind (write_file's own) does not make an empty
// directory foreign.
TEST(DataDir, ATemporaryACrashLeftIsTheServicesOwn) {
  testing::TempDir tmp;
  std::ofstream(tmp.path() / ".partial.root.key.Ab12Cd") << "12";
  EXPECT_TRUE(take(tmp.path(), kOwner).ok());
  auto built = create_store(tmp.path(), kOwner, build_two_files);
  ASSERT_TRUE(built.ok()) << built.error();
  EXPECT_TRUE(*built);
}

}  // namespace
}  // namespace cowboy::data_dir
