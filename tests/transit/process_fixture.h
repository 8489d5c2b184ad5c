// transitd as a real process on 127.0.0.1: the fixture of the process tests
// (a temporary directory, a node started from a genesis there and the port it
// reports ready on, clients that treat a kill as a loss).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "../support/process.h"
#include "../support/run.h"
#include "common/bytes.h"
#include "samples.h"
#include "transit/client.h"

namespace cowboy::transit {

inline const std::string kBin = COWBOY_BIN_DIR;

/// The port a transitd_ready line names for the command listener (0: none).
inline std::uint16_t ready_port_of(const std::string& line) {
  std::smatch m;
  if (std::regex_search(line, m, std::regex(R"(listen=127\.0\.0\.1:(\d+))"))) return static_cast<std::uint16_t>(std::stoi(m[1]));
  return 0;
}

inline std::uint16_t ready_port(cowboy::testing::ChildProcess& child, std::uint16_t* payload_port = nullptr) {
  auto line = child.wait_for_line("transitd_ready");
  if (line && payload_port) {
    std::smatch m;
    if (std::regex_search(*line, m, std::regex(R"(payloads=127\.0\.0\.1:(\d+))"))) *payload_port = static_cast<std::uint16_t>(std::stoi(m[1]));
  }
  return line ? ready_port_of(*line) : 0;
}

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    crypto::init();
    dir_ = std::filesystem::temp_directory_path() /
           ("transit-process-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// A node on `port` (0: any; set to the one it got).
  /// `payload_port`, when given, receives the payload listener's port (any free one).
  std::unique_ptr<cowboy::testing::ChildProcess> start_node(std::uint16_t& port, std::uint16_t* payload_port = nullptr) {
    auto child = std::make_unique<cowboy::testing::ChildProcess>(std::vector<std::string>{
        kBin + "/transitd", "--genesis", (dir_ / "genesis.json").string(), "--data", (dir_ / "journal").string(),
        "--listen", "127.0.0.1:" + std::to_string(port), "--admin-listen", "127.0.0.1:0"});
    port = ready_port(*child, payload_port);
    return child;
  }
  /// `transitd --dev` in dir_/transitd-dev on any port, for dev_cli (ready_port gives its port, 0 if it failed).
  cowboy::testing::ChildProcess start_dev_node() {
    return cowboy::testing::ChildProcess(
        {kBin + "/transitd", "--dev", "--dev-dir", (dir_ / "transitd-dev").string(), "--listen", "127.0.0.1:0"});
  }
  /// Resource 1 ("doc") at revision 2 holding a=one and b=two, written by
  /// process 7 through the CLI: what the snapshot and segment tests read.
  void two_entries_from_the_cli() {
    for (const char* args : {"resource create --name doc", "process create --pid 7 --require doc",
                             "process associate --pid 7 --name doc --resource 1",
                             "process init --pid 7 --generation 0", "process own --pid 7 --generation 1",
                             "turn --pid 7 --generation 2 --resource 1 --put a=one --put b=two"})
      dev_cli(args);
  }
  /// The CLI against that node, expecting exit status `status`; what it printed.
  std::string dev_cli(const std::string& args, int status = 0) {
    auto r = cowboy::testing::run(kBin + "/transit --dev " + (dir_ / "transitd-dev").string() + " " + args);
    EXPECT_EQ(r.status, status) << args << ": " << r.out;
    return r.out;
  }
  /// A key file (hex, 0600) holding seed_of(seed).
  std::string key_file(const std::string& name, std::uint8_t seed) {
    const auto path = dir_ / name;
    {
      std::ofstream out(path);
      const auto s = testing::seed_of(seed);
      out << to_hex(ByteView(s.data(), s.size())) << "\n";
    }
    std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return path.string();
  }

  void write_sample_genesis() {
    std::ofstream out(dir_ / "genesis.json");
    out << to_json(testing::sample_genesis()) << "\n";
  }
  /// A client that treats a kill as a loss: it keeps what was acknowledged and resends nothing.
  static ClientOptions kill_options(std::uint16_t port, auto principal, std::uint8_t seed) {
    ClientOptions o;
    o.port = port;
    o.realm = "dev";
    o.principal = testing::id<PrincipalId>(principal);
    o.seed = testing::seed_of(seed);
    o.max_attempts = 1;
    o.timeout = std::chrono::seconds(2);
    return o;
  }

  std::filesystem::path dir_;
};

}  // namespace cowboy::transit
