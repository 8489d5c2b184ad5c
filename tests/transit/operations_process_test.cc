// transitd's operator surface as a real process on 127.0.0.1 (docs/transit.md,
// "Operating transitd"): a TOML config whose unknown keys refuse the start and
// whose values the flags override; the packaged example config and systemd
// unit; the admin listener read by `transit status`; the Grafana dashboard and
// the Prometheus alert rules against the metric names transitd exports.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../support/run.h"
#include "net/http_connection.h"
#include "process_fixture.h"
#include "../support/metric_names.h"

namespace cowboy::transit {
namespace {

using cowboy::testing::check_alert_rules;
using cowboy::testing::check_dashboard;
using cowboy::testing::exported_names;

const std::string kSource = COWBOY_SOURCE_DIR;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::uint16_t admin_port(const std::string& ready_line) {
  std::smatch m;
  if (std::regex_search(ready_line, m, std::regex(R"(admin=127\.0\.0\.1:(\d+))"))) return static_cast<std::uint16_t>(std::stoi(m[1]));
  return 0;
}

class OperationsProcessTest : public ProcessTest {
 protected:
  /// transitd with `args` after the binary; the ready line, or empty.
  std::string start(std::vector<std::string> args) {
    args.insert(args.begin(), kBin + "/transitd");
    node_ = std::make_unique<cowboy::testing::ChildProcess>(args);
    return node_->wait_for_line("transitd_ready").value_or("");
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::string node_args() {
    return "genesis = \"" + (dir_ / "genesis.json").string() + "\"\ndata = \"" + (dir_ / "journal").string() + "\"\n";
  }
  std::unique_ptr<cowboy::testing::ChildProcess> node_;
};

// Every key is a flag's long name; a flag given wins over the file; a key no
// flag knows refuses the start, naming it, so a typo cannot pass unnoticed.
TEST_F(OperationsProcessTest, AConfigFileStartsTheNodeItsFlagsWinAndAnUnknownKeyRefusesTheStartNamingIt) {
  write_sample_genesis();
  const auto config = write("transitd.toml", node_args() + "listen = \"127.0.0.1:1\"\nadmin-listen = \"127.0.0.1:0\"\n"
                                                           "request-deadline-ms = 2500\nmax-pending = 64\n");
  const auto ready = start({"--config", config, "--listen", "127.0.0.1:0"});
  ASSERT_FALSE(ready.empty());
  const auto port = ready_port_of(ready);
  ASSERT_NE(port, 0);
  ASSERT_NE(port, 1);  // the flag won
  net::HttpConnection admin("127.0.0.1", admin_port(ready));
  auto metrics = admin.get("/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->body.find("\ntransitd_request_deadline_seconds 2.5\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("\ntransitd_pending_requests_limit 64\n"), std::string::npos);
  node_.reset();

  const auto typo = write("typo.toml", node_args() + "admin-listen = \"127.0.0.1:0\"\nrequest-deadline = 2500\n");
  auto refused = cowboy::testing::run(kBin + "/transitd --config " + typo + " --listen 127.0.0.1:0");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.out.find("a key no flag knows, refused (INI was not able to parse request-deadline)"),
            std::string::npos)
      << refused.out;
  EXPECT_EQ(refused.out.find("transitd_ready"), std::string::npos) << refused.out;
}

// packaging/transitd.toml is accepted whole (every key a flag), its paths
// overridden here; packaging/transitd.service passes systemd-analyze verify
// with ExecStart pointed at this build's binary, and keeps its hardening.
TEST_F(OperationsProcessTest, ThePackagedConfigIsAcceptedWholeAndThePackagedUnitVerifies) {
  write_sample_genesis();
  const auto ready = start({"--config", kSource + "/packaging/transitd.toml", "--genesis", (dir_ / "genesis.json").string(),
                            "--data", (dir_ / "journal").string(), "--listen", "127.0.0.1:0", "--admin-listen",
                            "127.0.0.1:0", "--payload-listen", "127.0.0.1:0"});
  ASSERT_FALSE(ready.empty());
  node_.reset();

  const std::string unit = read_text(kSource + "/packaging/transitd.service");
  for (const char* must : {"\nNoNewPrivileges=yes\n", "\nProtectSystem=strict\n", "\nStateDirectory=transitd\n",
                           "\nExecStart=/usr/local/bin/transitd --config /etc/transitd/transitd.toml\n"})
    EXPECT_NE(unit.find(must), std::string::npos) << must;
  if (cowboy::testing::run("command -v systemd-analyze").status != 0) GTEST_SKIP() << "no systemd-analyze here";
  std::ofstream(dir_ / "transitd.service")
      << std::regex_replace(unit, std::regex("/usr/local/bin/transitd"), kBin + "/transitd");
  auto verified = cowboy::testing::run("systemd-analyze verify " + (dir_ / "transitd.service").string());
  EXPECT_EQ(verified.status, 0) << verified.out;
  EXPECT_EQ(verified.out, "");
}

// What an operator watches, as a real transitd serves it: `transit status`
// reads the admin listener; every series the dashboard and the alert rules
// query is one transitd exports (a panel on a missing metric fails here).
TEST_F(OperationsProcessTest, TransitStatusAndTheDashboardAndAlertsReadWhatTransitdExports) {
  write_sample_genesis();
  const auto ready = start({"--genesis", (dir_ / "genesis.json").string(), "--data", (dir_ / "journal").string(),
                            "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"});
  const auto port = ready_port_of(ready), admin = admin_port(ready);
  ASSERT_NE(admin, 0);
  Client root(kill_options(port, 1, 0));
  ASSERT_TRUE(root.submit(CreatePrincipal{PrincipalId{2}, testing::key_of(testing::seed_of(2)), RealmScope{}, Permissions{kReadOnly},
                                          std::nullopt, std::nullopt})
                  .ok());

  const std::string at = "127.0.0.1:" + std::to_string(admin);
  auto status = cowboy::testing::run(kBin + "/transit status --admin " + at);
  EXPECT_EQ(status.status, 0) << status.out;
  EXPECT_NE(status.out.find("transitd at " + at + ": healthy, ready: realm dev"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("position 1; pending 0 of 8192; request deadline 5 s"), std::string::npos) << status.out;
  auto json = cowboy::testing::run(kBin + "/transit --json status --admin " + at);
  ASSERT_EQ(json.status, 0) << json.out;
  const auto parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["ready"], true);
  EXPECT_EQ(parsed["metrics"]["transitd_authority_position"], 1.0);
  auto gone = cowboy::testing::run(kBin + "/transit status --admin 127.0.0.1:1");
  EXPECT_EQ(gone.status, 3) << gone.out;

  net::HttpConnection http("127.0.0.1", admin);
  auto metrics = http.get("/metrics");
  ASSERT_TRUE(metrics.ok());
  const auto exported = exported_names(metrics->body);
  ASSERT_GT(exported.size(), 25u);

  const auto dashboard = check_dashboard(read_text(kSource + "/packaging/grafana/transitd-dashboard.json"), "transitd", exported);
  EXPECT_EQ(dashboard.missing, std::vector<std::string>{});
  const auto& on_dashboard = dashboard.queried;
  // Rate, latency, rejections, queue, position, journal growth.
  for (const char* must : {"transitd_commands_total", "transitd_decision_duration_seconds_bucket",
                           "transitd_sync_duration_seconds_bucket", "transitd_rejections_total",
                           "transitd_pending_requests", "transitd_authority_position", "transitd_journal_bytes"})
    EXPECT_TRUE(on_dashboard.contains(must)) << must;

  const auto rules = check_alert_rules(read_text(kSource + "/packaging/prometheus/transitd-alerts.yml"), "transitd", exported);
  EXPECT_EQ(rules.missing, std::vector<std::string>{});
  const auto& alerted = rules.queried;
  for (const char* must : {"transitd_ready", "transitd_journal_failed", "transitd_deadline_expired_total",
                           "transitd_pending_requests", "transitd_decision_duration_seconds_bucket",
                           "transitd_journal_bytes"})
    EXPECT_TRUE(alerted.contains(must)) << must;
}

}  // namespace
}  // namespace cowboy::transit
