// Every service started for real with --log-format=json: each stderr line up
// to `ready` (and through `stopped` after SIGTERM) is one JSON object with ts,
// level, service and event, and the same happening has the same event name in
// cbqsd, transitd, cip11d and cip11-runner (common/log_events.h).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "../support/poll.h"
#include "../support/process.h"
#include "../support/temp_dir.h"

namespace cowboy {
namespace {

namespace fs = std::filesystem;
const std::string kBin = COWBOY_BIN_DIR;

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool has_event(const fs::path& file, const std::string& event) {
  for (const auto& l : lines_of(file))
    if (l.find("\"event\":\"" + event + "\"") != std::string::npos) return true;
  return false;
}

/// Every line of `file` parsed as a JSON object holding the shared fields
/// (a failure names the line); the events in order.
std::vector<nlohmann::json> events_of(const fs::path& file, const std::string& service) {
  std::vector<nlohmann::json> out;
  const std::regex ts(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  for (const auto& line : lines_of(file)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << service << " wrote a line that is not a JSON object: " << line;
    if (!j.is_object()) continue;
    EXPECT_TRUE(j["ts"].is_string() && std::regex_match(j["ts"].get<std::string>(), ts)) << line;
    EXPECT_TRUE(j["level"].is_string()) << line;
    EXPECT_EQ(j.value("service", ""), service) << line;
    EXPECT_TRUE(j["event"].is_string()) << line;
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<std::string> names(const std::vector<nlohmann::json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.value("event", ""));
  return out;
}

std::vector<std::string> listeners(const std::vector<nlohmann::json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events)
    if (e.value("event", "") == "listening") {
      EXPECT_TRUE(std::regex_match(e.value("address", ""), std::regex(R"(127\.0\.0\.1:[1-9]\d*)"))) << e.dump();
      out.push_back(e.value("listener", ""));
    }
  return out;
}

/// The shared lifecycle names in the order each first appears, the others left out.
std::vector<std::string> lifecycle(const std::vector<std::string>& all) {
  static const std::set<std::string> shared{"starting", "config_loaded", "store_opened", "listening",
                                            "ready",    "shutdown",      "stopped"};
  std::vector<std::string> out;
  for (const auto& n : all)
    if (shared.contains(n) && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

const std::vector<std::string> kServiceLifecycle{"starting", "store_opened", "listening", "ready", "shutdown", "stopped"};

// Starts `argv` with stderr to `log`, waits for `ready` there, stops it with
// SIGTERM; the events it logged, every line checked.
std::vector<nlohmann::json> run_to_stop(std::vector<std::string> argv, const fs::path& log, const std::string& service,
                                        const std::string& stdout_ready) {
  testing::ChildProcess child(std::move(argv), log.string());
  EXPECT_TRUE(child.wait_for_line(stdout_ready, std::chrono::seconds(60))) << service << " did not start";
  EXPECT_TRUE(testing::eventually([&] { return has_event(log, "ready"); }, std::chrono::seconds(30)));
  // Up to `ready`, before anything else happens.
  auto before = names(events_of(log, service));
  EXPECT_EQ(before.front(), "starting");
  EXPECT_EQ(before.back(), "ready");
  const int status = child.kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  auto events = events_of(log, service);
  EXPECT_EQ(names(events).back(), "stopped");
  return events;
}

TEST(ServiceLogs, TransitdWritesJsonLinesWithTheSharedEvents) {
  testing::TempDir tmp;
  auto events = run_to_stop({kBin + "/transitd", "--dev", "--dev-dir", (tmp.path() / "dev").string(), "--listen",
                             "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--log-format", "json"},
                            tmp.path() / "transitd.log", "transitd", "transitd_ready");
  EXPECT_EQ(lifecycle(names(events)), kServiceLifecycle);
  EXPECT_EQ(listeners(events), (std::vector<std::string>{"http", "admin", "payloads"}));
  for (const auto& e : events) {
    if (e["event"] == "store_opened") {
      EXPECT_EQ(e.value("store", ""), "journal");
    }
    if (e["event"] == "shutdown") {
      EXPECT_EQ(e.value("signal", ""), "SIGTERM");
    }
  }
}

TEST(ServiceLogs, TransitdNamesItsConfigFile) {
  testing::TempDir tmp;
  const auto config = tmp.path() / "transitd.toml";
  std::ofstream(config) << "log-format = \"json\"\nadmin-listen = \"127.0.0.1:0\"\n";
  auto events = run_to_stop({kBin + "/transitd", "--config", config.string(), "--dev", "--dev-dir",
                             (tmp.path() / "dev").string(), "--listen", "127.0.0.1:0"},
                            tmp.path() / "transitd.log", "transitd", "transitd_ready");
  EXPECT_EQ(lifecycle(names(events)),
            (std::vector<std::string>{"starting", "config_loaded", "store_opened", "listening", "ready", "shutdown",
                                      "stopped"}));
  EXPECT_EQ(events.at(1).value("path", ""), config.string());
}

TEST(ServiceLogs, Cip11dAndItsRunnerWriteJsonLinesWithTheSharedEvents) {
  testing::TempDir tmp;
  const auto dev = tmp.path() / "dev";
  const auto cip11d_log = tmp.path() / "cip11d.log";
  testing::ChildProcess cip11d({kBin + "/cip11d", "--data-dir", dev.string(), "--admin-listen", "127.0.0.1:0", "--dev",
                                "--dev-listen", "127.0.0.1:0", "--chain-listen", "127.0.0.1:0", "--block-ms", "100",
                                "--log-format", "json"},
                               cip11d_log.string());
  ASSERT_TRUE(cip11d.wait_for_line("cip11d listening on quic://", std::chrono::seconds(60)));
  ASSERT_TRUE(testing::eventually([&] { return has_event(cip11d_log, "ready"); }, std::chrono::seconds(30)));
  auto before = names(events_of(cip11d_log, "cip11d"));
  EXPECT_EQ(before.front(), "starting");
  EXPECT_EQ(before.back(), "ready");

  // The runner: its log on stderr, its job events on stdout, both JSON.
  const auto runner_log = tmp.path() / "runner.log";
  testing::ChildProcess runner({kBin + "/cip11-runner", "--dev", dev.string(), "--runner", "0", "--block-ms", "100",
                                "--log-format", "json"},
                               runner_log.string());
  auto connected = runner.wait_for_line("\"event\":\"connected\"", std::chrono::seconds(30));
  ASSERT_TRUE(connected);
  auto j = nlohmann::json::parse(*connected, nullptr, false);
  ASSERT_TRUE(j.is_object()) << *connected;
  EXPECT_EQ(j.value("service", ""), "cip11-runner");
  EXPECT_TRUE(j["height"].is_number_unsigned()) << *connected;
  ASSERT_TRUE(testing::eventually([&] { return has_event(runner_log, "ready"); }, std::chrono::seconds(30)));
  const int runner_status = runner.kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(runner_status) && WEXITSTATUS(runner_status) == 0) << runner_status;
  auto runner_events = events_of(runner_log, "cip11-runner");
  EXPECT_EQ(lifecycle(names(runner_events)),
            (std::vector<std::string>{"starting", "store_opened", "ready", "shutdown", "stopped"}));
  EXPECT_TRUE(listeners(runner_events).empty());  // a runner listens on nothing

  const int status = cip11d.kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  auto events = events_of(cip11d_log, "cip11d");
  EXPECT_EQ(lifecycle(names(events)), kServiceLifecycle);
  EXPECT_EQ(listeners(events), (std::vector<std::string>{"chain", "quic", "admin"}));
  EXPECT_EQ(names(events).back(), "stopped");
}

TEST(ServiceLogs, CbqsdWritesJsonLinesWithTheSharedEvents) {
  testing::TempDir tmp;
  ::setenv("CBQS_HOME", (tmp.path() / "home").c_str(), 1);  // the dev owner's key
  auto events = run_to_stop({kBin + "/cbqsd", "--dev", "--data-dir", (tmp.path() / "data").string(), "--listen",
                             "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--chain-listen", "127.0.0.1:0",
                             "--log-format", "json"},
                            tmp.path() / "cbqsd.log", "cbqsd", "cbqsd listening on wss://");
  EXPECT_EQ(lifecycle(names(events)), kServiceLifecycle);
  EXPECT_EQ(listeners(events), (std::vector<std::string>{"chain", "wss", "admin"}));
}

}  // namespace
}  // namespace cowboy
