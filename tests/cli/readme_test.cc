// The README's quickstart, run literally: the console block's commands, in a
// directory where `cbqsd-dev` is a running `cbqsd --dev`'s data directory, each
// compared with the output the README shows.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/cbqsd_process.h"
#include "../support/run.h"
#include "../support/temp_dir.h"

namespace cowboy {
namespace {

struct Step {
  std::string command;
  std::string expected;
};

// The first ```console block after the marker that names this test.
std::vector<Step> quickstart_steps() {
  std::ifstream in(std::string(COWBOY_SOURCE_DIR) + "/README.md");
  std::vector<Step> steps;
  bool marked = false, inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!marked) {
      marked = line.find("tests/cli/readme_test.cc") != std::string::npos;
    } else if (!inside) {
      inside = line == "```console";
    } else if (line == "```") {
      break;
    } else if (line.starts_with("$ ")) {
      steps.push_back({line.substr(2), ""});
    } else if (!steps.empty()) {
      steps.back().expected += line + "\n";
    }
  }
  return steps;
}

TEST(Readme, TheQuickstartRunsAsWritten) {
  auto steps = quickstart_steps();
  ASSERT_GE(steps.size(), 3u) << "no quickstart block found in README.md";
  ASSERT_LE(steps.size(), 5u) << "the quickstart promises at most five commands";
  testing::TempDir dir;
  testing::CbqsdProcess cbqsd(dir.path());  // what `make run` starts
  ASSERT_TRUE(cbqsd.up());
  std::filesystem::create_directory_symlink(cbqsd.data(), dir.path() / "cbqsd-dev");
  std::filesystem::create_directory_symlink(std::filesystem::path(COWBOY_BIN_DIR).parent_path(), dir.path() / "build");
  for (const auto& step : steps) {
    auto r = testing::run("cd " + dir.path().string() + " && " + step.command);
    EXPECT_EQ(r.status, 0) << step.command << "\n" << r.out;
    EXPECT_EQ(r.out, step.expected) << step.command;
  }
}

// docs/quickstart.md, sections 1 to 5: each indented block of `build/bin/cbqs`
// lines is commands; an indented block after one is the output of its last
// command, compared exactly.
std::vector<Step> guide_steps() {
  std::ifstream in(std::string(COWBOY_SOURCE_DIR) + "/docs/quickstart.md");
  std::vector<Step> steps;
  bool output = false;     // inside an indented block that is output
  bool in_block = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("## 6")) break;
    if (!line.starts_with("    ")) {
      in_block = false;
      continue;
    }
    std::string text = line.substr(4);
    if (!in_block) output = !text.starts_with("build/bin/cbqs ");
    in_block = true;
    if (!output) steps.push_back({text, ""});
    else if (!steps.empty()) steps.back().expected += text + "\n";
  }
  return steps;
}

TEST(Quickstart, RunsTopToBottomAfterTheReadme) {
  auto readme = quickstart_steps();
  auto guide = guide_steps();
  ASSERT_GE(guide.size(), 10u) << "docs/quickstart.md's commands were not found";
  testing::TempDir dir;
  testing::CbqsdProcess cbqsd(dir.path());
  ASSERT_TRUE(cbqsd.up());
  std::filesystem::create_directory_symlink(cbqsd.data(), dir.path() / "cbqsd-dev");
  std::filesystem::create_directory_symlink(std::filesystem::path(COWBOY_BIN_DIR).parent_path(), dir.path() / "build");
  for (const auto& step : readme) ASSERT_EQ(testing::run("cd " + dir.path().string() + " && " + step.command).status, 0);
  int compared = 0;
  for (const auto& step : guide) {
    auto r = testing::run("cd " + dir.path().string() + " && " + step.command);
    EXPECT_EQ(r.status, 0) << step.command << "\n" << r.out;
    if (step.expected.empty()) continue;
    EXPECT_EQ(r.out, step.expected) << step.command;
    ++compared;
  }
  EXPECT_GE(compared, 7);
}

}  // namespace
}  // namespace cowboy
