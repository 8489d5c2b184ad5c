// cip11d's and cip11-runner's operator surface as real processes on 127.0.0.1
// (docs/operations.md, "cip11d, the CIP-11 validator service" and
// "cip11-runner, a CIP-11 runner"): a TOML config whose unknown keys refuse the
// start and whose values the flags override; the packaged example configs and
// systemd units; the runner's admin listener; the Grafana dashboards and the
// Prometheus alert rules against the metric names the processes export.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "../support/metric_names.h"
#include "../support/run.h"
#include "service_world.h"

namespace cowboy::cip11 {
namespace {

using cowboy::testing::ChildProcess;
using cowboy::testing::exported_names;
using cowboy::testing::port_in;
using testing::DevWorld;
using testing::eventually;
using testing::RunnerProcess;

const std::string kSource = COWBOY_SOURCE_DIR;
const std::string kBin = COWBOY_BIN_DIR;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

devchain::ApiResult<devchain::HttpText> get(std::uint16_t port, const std::string& target) {
  devchain::HttpClient admin("127.0.0.1", port);
  return admin.get_text(target);
}

/// `<service>` in the started line: its admin port, else 0.
std::uint16_t admin_port_of(const std::optional<std::string>& line) {
  return port_in(line, R"(admin http://127\.0\.0\.1:(\d+))");
}

// The dashboard's panels and the alert rules query only series the service
// exports (`exported`: from a live /metrics); the names each file queries.
std::set<std::string> dashboard_names(const std::string& file, const std::string& prefix, const std::set<std::string>& exported) {
  const auto check = cowboy::testing::check_dashboard(read_text(kSource + "/packaging/grafana/" + file), prefix, exported);
  EXPECT_EQ(check.missing, std::vector<std::string>{}) << file;
  return check.queried;
}

std::set<std::string> alerted_names(const std::string& file, const std::string& prefix, const std::set<std::string>& exported) {
  const auto check = cowboy::testing::check_alert_rules(read_text(kSource + "/packaging/prometheus/" + file), prefix, exported);
  EXPECT_EQ(check.missing, std::vector<std::string>{}) << file;
  return check.queried;
}

// systemd-analyze verify passes on the unit with ExecStart pointed at this
// build's binary, and the unit keeps its hardening.
void check_unit(const std::string& service, const std::filesystem::path& dir) {
  const std::string unit = read_text(kSource + "/packaging/" + service + ".service");
  for (const std::string& must : {std::string("\nNoNewPrivileges=yes\n"), std::string("\nProtectSystem=strict\n"),
                                  "\nStateDirectory=" + service + "\n",
                                 "\nExecStart=/usr/local/bin/" + service + " --config /etc/" + service + "/" + service +
                                     ".toml\n"})
    EXPECT_NE(unit.find(must), std::string::npos) << service << ": " << must;
  if (cowboy::testing::run("command -v systemd-analyze").status != 0) {
    std::printf("no systemd-analyze here: %s.service not verified\n", service.c_str());
    return;
  }
  const auto copy = write(dir / (service + ".service"),
                          std::regex_replace(unit, std::regex("/usr/local/bin/" + service), kBin + "/" + service));
  auto verified = cowboy::testing::run("systemd-analyze verify " + copy);
  EXPECT_EQ(verified.status, 0) << verified.out;
  EXPECT_EQ(verified.out, "") << service;
}

// Every key is a flag's long name; a flag given wins over the file; a key no
// flag knows refuses the start, naming it, so a typo cannot pass unnoticed.
TEST(Cip11Operations, Cip11dTakesAConfigFileItsFlagsWinAndAnUnknownKeyRefusesTheStartNamingIt) {
  cowboy::testing::TempDir dir;
  const std::string dev = "dev = true\ndata-dir = \"" + (dir.path() / "data").string() +
                          "\"\ndev-listen = \"127.0.0.1:0\"\nchain-listen = \"127.0.0.1:0\"\ndev-runners = 2\n";
  const auto config = write(dir.path() / "cip11d.toml", dev + "admin-listen = \"127.0.0.1:1\"\nblock-ms = 150\n"
                                                              "signature-threads = 2\n");
  {
    ChildProcess cip11d({kBin + "/cip11d", "--config", config, "--admin-listen", "127.0.0.1:0"});
    auto chain_line = cip11d.wait_for_line("devchain API");
    ASSERT_TRUE(chain_line);
    EXPECT_NE(chain_line->find("a block every 150 ms"), std::string::npos) << *chain_line;  // from the file
    const auto admin = admin_port_of(cip11d.wait_for_line("cip11d listening on quic://"));
    ASSERT_NE(admin, 0);
    EXPECT_NE(admin, 1);  // the flag won
    auto ready = get(admin, "/readyz");
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, 200) << ready->body;
    auto health = get(admin, "/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    EXPECT_EQ(nlohmann::json::parse(read_text((dir.path() / "data" / "cip11-dev.json").string()))["runners"].size(), 2u);
  }

  const auto typo = write(dir.path() / "typo.toml", dev + "admin-listen = \"127.0.0.1:0\"\nsignature-thread = 2\n");
  auto refused = cowboy::testing::run(kBin + "/cip11d --config " + typo);
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.out.find("cip11d: --config: a key no flag knows, refused (INI was not able to parse signature-thread); "
                             "see packaging/cip11d.toml"),
            std::string::npos)
      << refused.out;
  EXPECT_EQ(refused.out.find("cip11d listening"), std::string::npos) << refused.out;
}

TEST(Cip11Operations, TheRunnerTakesAConfigFileItsFlagsWinAndAnUnknownKeyRefusesTheStartNamingIt) {
  DevWorld w;
  const std::string dev = "dev = \"" + w.data().string() + "\"\nrunner = 0\nblock-ms = 100\n";
  const auto config = write(w.dir.path() / "runner.toml", dev + "admin-listen = \"127.0.0.1:1\"\nmax-concurrent = 3\n");
  {
    RunnerProcess runner({"--config", config, "--admin-listen", "127.0.0.1:0"});
    const auto admin = admin_port_of(runner.wait_for({"cip11-runner", "started at height"}));
    ASSERT_NE(admin, 0);
    EXPECT_NE(admin, 1);  // the flag won
    ASSERT_TRUE(runner.wait_for({"event=connected"}));
    auto health = get(admin, "/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    // /readyz: at least one validator of its Sub(R) (here the one) admitted it.
    EXPECT_TRUE(eventually([&] {
      auto ready = get(admin, "/readyz");
      return ready && ready->status == 200 && ready->body.find("ready: 1 of 1 validators connected") != std::string::npos;
    }));
    auto metrics = get(admin, "/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_NE(metrics->body.find("\ncip11_runner_max_concurrent 3\n"), std::string::npos) << metrics->body;  // from the file
  }

  const auto typo = write(w.dir.path() / "typo.toml", dev + "max_concurrent = 3\n");
  auto refused = cowboy::testing::run(kBin + "/cip11-runner --config " + typo);
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.out.find("cip11-runner: --config: a key no flag knows, refused (INI was not able to parse "
                             "max_concurrent); see packaging/cip11-runner.toml"),
            std::string::npos)
      << refused.out;
  EXPECT_EQ(refused.out.find("started at height"), std::string::npos) << refused.out;
}

// The runner's /readyz answers 503 while no validator has admitted it: here
// the only validator of its Sub(R) has stopped.
TEST(Cip11Operations, TheRunnersReadyzAnswers503WhileNoValidatorAdmitsIt) {
  DevWorld w;
  auto& runner = w.runner(0, {"--admin-listen", "127.0.0.1:0"});
  const auto admin = admin_port_of(runner.wait_for({"started at height"}));
  ASSERT_NE(admin, 0);
  ASSERT_TRUE(runner.wait_for({"event=connected"}));
  w.validator->terminate();  // Goodbye{Shutdown}, and the chain goes with it; the runner's admin listener stays
  EXPECT_TRUE(eventually(
      [&] {
        auto ready = get(admin, "/readyz");
        return ready && ready->status == 503 &&
               ready->body.find("no validator of 1 in Sub(R) has admitted this runner") != std::string::npos;
      },
      std::chrono::seconds(20)));
  auto metrics = get(admin, "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("\ncip11_runner_ready 0\n"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("\ncip11_runner_connected_validators 0\n"), std::string::npos) << metrics->body;
}

// packaging/cip11d.toml and packaging/cip11-runner.toml are accepted whole
// (every key a flag), their paths overridden here for a dev chain; the units
// pass systemd-analyze verify where it is installed.
TEST(Cip11Operations, ThePackagedConfigsAreAcceptedWholeAndThePackagedUnitsVerify) {
  cowboy::testing::TempDir dir;
  const auto data = dir.path() / "data";
  std::uint16_t admin = 0;
  {
    ChildProcess cip11d({kBin + "/cip11d", "--config", kSource + "/packaging/cip11d.toml", "--dev", "--data-dir",
                         data.string(), "--dev-listen", "127.0.0.1:0", "--chain-listen", "127.0.0.1:0", "--admin-listen",
                         "127.0.0.1:0", "--block-ms", "100"});
    admin = admin_port_of(cip11d.wait_for_line("cip11d listening on quic://"));
    ASSERT_NE(admin, 0);
    RunnerProcess runner({"--config", kSource + "/packaging/cip11-runner.toml", "--dev", data.string(), "--runner", "0",
                          "--state-dir", (dir.path() / "runner-state").string(), "--admin-listen", "127.0.0.1:0"});
    const auto runner_admin = admin_port_of(runner.wait_for({"started at height"}));
    ASSERT_NE(runner_admin, 0);
    auto health = get(runner_admin, "/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
  }
  check_unit("cip11d", dir.path());
  check_unit("cip11-runner", dir.path());
}

// What an operator watches, as real processes serve it: every series the
// dashboards and the alert rules query is one cip11d or cip11-runner exports
// (a panel on a missing metric fails here), and the dashboard shows what the
// issue asks of it.
TEST(Cip11Operations, TheDashboardsAndAlertsReadWhatCip11dAndTheRunnerExport) {
  DevWorld w;
  auto& runner = w.runner(0, {"--admin-listen", "127.0.0.1:0"});
  const auto runner_admin = admin_port_of(runner.wait_for({"started at height"}));
  ASSERT_NE(runner_admin, 0);
  ASSERT_TRUE(runner.wait_for({"event=connected"}));
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"echo":"watched"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(runner.wait_for({"event=included", testing::hex(*id)}));

  const std::string validator_text = w.validator->metrics_text();
  const auto validator = exported_names(validator_text);
  ASSERT_GT(validator.size(), 40u);
  EXPECT_NE(validator_text.find("\ncip11d_ready 1\n"), std::string::npos);
  EXPECT_GE(w.validator->metric("cip11d_admissions_total"), 1);
  EXPECT_NE(validator_text.find("\ncip11d_admission_refusals_total{reason=\"NotInSubset\"} 0\n"), std::string::npos);
  EXPECT_NE(validator_text.find("\ncip11d_registered_runners 1\n"), std::string::npos);
  EXPECT_NE(validator_text.find("\ncip11d_presence_input_runners 1\n"), std::string::npos) << validator_text;
  EXPECT_NE(validator_text.find("\ncip11d_push_latency_seconds_bucket{le=\"+Inf\"} 1\n"), std::string::npos);
  EXPECT_NE(validator_text.find("\ncip11d_signature_queue_depth{queue=\"peers\"} "), std::string::npos);

  const auto on_dashboard = dashboard_names("cip11d-dashboard.json", "cip11d", validator);
  // Connections, admissions and refusals by reason, presence per block, push
  // latency, acks, rejects and hard failures, the signature queue.
  for (const char* must :
       {"cip11d_quic_connections", "cip11d_connected_runners", "cip11d_admissions_total", "cip11d_admission_refusals_total",
        "cip11d_present_runners", "cip11d_presence_input_runners", "cip11d_push_latency_seconds_bucket", "cip11d_acks_total",
        "cip11d_hard_failures_total", "cip11d_signature_queue_depth"})
    EXPECT_TRUE(on_dashboard.contains(must)) << must;
  const auto alerted = alerted_names("cip11d-alerts.yml", "cip11d", validator);
  for (const char* must : {"cip11d_ready", "cip11d_block_height", "cip11d_push_latency_seconds_bucket",
                           "cip11d_hard_failures_total", "cip11d_admission_refusals_total", "cip11d_signature_queue_depth"})
    EXPECT_TRUE(alerted.contains(must)) << must;

  auto runner_text = get(runner_admin, "/metrics");
  ASSERT_TRUE(runner_text);
  EXPECT_TRUE(eventually([&] {  // the runner's status is published at its next block
    runner_text = get(runner_admin, "/metrics");
    return runner_text && runner_text->body.find("\ncip11_runner_jobs_completed_total 1\n") != std::string::npos;
  })) << runner_text->body;
  EXPECT_NE(runner_text->body.find("\ncip11_runner_connected_validators 1\n"), std::string::npos);
  EXPECT_NE(runner_text->body.find("\ncip11_runner_acks_sent_total{status=\"accepted\"} 1\n"), std::string::npos);
  EXPECT_NE(runner_text->body.find("\ncip11_runner_jobs_failed_total 0\n"), std::string::npos);
  const auto runner_names = exported_names(runner_text->body);
  const auto on_runner_dashboard = dashboard_names("cip11-runner-dashboard.json", "cip11_runner", runner_names);
  for (const char* must : {"cip11_runner_connected_validators", "cip11_runner_jobs_running", "cip11_runner_jobs_completed_total",
                           "cip11_runner_jobs_failed_total", "cip11_runner_acks_sent_total", "cip11_runner_reconnects_total"})
    EXPECT_TRUE(on_runner_dashboard.contains(must)) << must;
  const auto runner_alerted = alerted_names("cip11-runner-alerts.yml", "cip11_runner", runner_names);
  for (const char* must : {"cip11_runner_ready", "cip11_runner_jobs_failed_total", "cip11_runner_reconnects_total"})
    EXPECT_TRUE(runner_alerted.contains(must)) << must;
}

}  // namespace
}  // namespace cowboy::cip11
