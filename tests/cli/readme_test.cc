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

}  // namespace
}  // namespace cowboy
