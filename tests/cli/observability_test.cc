// The Grafana dashboard and the Prometheus alert rules in packaging/ against
// what a real cbqsd serves at /metrics: every series they query must exist.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "../support/cbqsd_process.h"
#include "../support/temp_dir.h"
#include "devchain/http_client.h"
#include "../support/metric_names.h"

namespace cowboy {
namespace {

using cowboy::testing::exported_names;
using cowboy::testing::check_alert_rules;
using cowboy::testing::check_dashboard;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Observability, TheDashboardAndTheAlertRulesQueryOnlyMetricsCbqsdExports) {
  testing::TempDir dir;
  testing::CbqsdProcess cbqsd(dir.path());
  ASSERT_TRUE(cbqsd.up());
  auto admin = *devchain::HttpClient::from_url("http://127.0.0.1:" + std::to_string(cbqsd.admin_port()));
  auto metrics = admin.get_text("/metrics");
  ASSERT_TRUE(metrics) << metrics.error().message;
  auto exported = exported_names(metrics->body);
  ASSERT_GT(exported.size(), 40u);

  const auto dashboard = check_dashboard(read_file(COWBOY_SOURCE_DIR "/packaging/grafana/cbqsd-dashboard.json"), "cbqs", exported);
  EXPECT_EQ(dashboard.missing, std::vector<std::string>{});
  EXPECT_GE(dashboard.queried.size(), 25u);

  const auto rules = check_alert_rules(read_file(COWBOY_SOURCE_DIR "/packaging/prometheus/cbqsd-alerts.yml"), "cbqs", exported);
  EXPECT_EQ(rules.missing, std::vector<std::string>{});
  const auto& alerted = rules.queried;
  // What an operator pages on: failed syncs, not ready, an aging group backlog, a stale chain snapshot.
  for (const char* must : {"cbqs_sync_failures_total", "cbqs_ready", "cbqs_group_oldest_unacked_age_seconds",
                           "cbqs_snapshot_age_seconds"})
    EXPECT_TRUE(alerted.contains(must)) << must;
}

}  // namespace
}  // namespace cowboy
