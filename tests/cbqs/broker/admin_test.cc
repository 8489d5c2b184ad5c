// The Prometheus text cbqsd serves at /metrics.
#include "admin.h"

#include <gtest/gtest.h>

#include "cowboy_version.h"

namespace cowboy::cbqsd {
namespace {

TEST(Metrics, PrometheusTextCarriesCountersGaugesAndPerStreamSeries) {
  cbqs::broker::CoreMetrics m;
  m.appends = 7;
  m.batches = 2;
  m.batch_records = 7;
  m.sessions = 3;
  for (std::uint64_t us : {150, 300, 20'000, 2'000'000}) m.sync_latency.observe_us(us);
  cbqs::broker::StreamMetrics s;
  s.stream_id[0] = 0xab;
  s.head = 42;
  s.lanes_with_records = 300;
  s.lane_heads = {{1, 40}, {2, 42}};
  s.subscription_lags = {{Bytes32{0x01}, 5}};
  cbqs::broker::GroupMetrics g;
  g.group_id = cbqs::GroupId{3};
  g.pending = 11;
  g.in_flight = 4;
  g.dead_letters = 2;
  g.oldest_unacked_age_ms = 1'500;
  g.ack_floor = 30;
  g.consumers = 2;
  g.counters.acked = 90;
  g.counters.redelivered = 6;
  s.groups.push_back(g);
  m.streams.push_back(s);
  std::string text = prometheus_text(m, 99, 2.5, true);
  auto has = [&](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
  EXPECT_TRUE(has("cbqs_appends_total 7"));
  EXPECT_TRUE(has("cbqs_commit_batch_records_total 7"));
  EXPECT_TRUE(has("cbqs_sessions 3"));
  EXPECT_TRUE(has("cbqs_snapshot_height 99"));
  EXPECT_TRUE(has("cbqs_ready 1"));
  EXPECT_TRUE(has("cbqs_snapshot_age_seconds 2.5"));
  std::string sid = "ab" + std::string(62, '0');
  EXPECT_TRUE(has("cbqs_stream_head_sequence{stream=\"" + sid + "\"} 42"));
  EXPECT_TRUE(has("cbqs_lane_head_sequence{stream=\"" + sid + "\",lane=\"2\"} 42"));
  EXPECT_TRUE(has("cbqs_subscription_lag_records{stream=\"" + sid + "\",subscription=\"0100000000000000\"} 5"));
  std::string group = "{stream=\"" + sid + "\",group=\"3\"} ";
  EXPECT_TRUE(has("cbqs_group_pending_records" + group + "11"));
  EXPECT_TRUE(has("cbqs_group_in_flight" + group + "4"));
  EXPECT_TRUE(has("cbqs_group_dead_letters" + group + "2"));
  EXPECT_TRUE(has("cbqs_group_oldest_unacked_age_seconds" + group + "1.5"));  // seconds, not _ms
  EXPECT_TRUE(has("cbqs_group_ack_floor_sequence" + group + "30"));
  EXPECT_TRUE(has("cbqs_group_consumers" + group + "2"));
  EXPECT_TRUE(has("cbqs_stream_lanes_with_records{stream=\"" + sid + "\"} 300"));  // past the 256 lane series
  EXPECT_TRUE(has("cbqs_group_acked_total" + group + "90"));
  EXPECT_TRUE(has("cbqs_group_redelivered_total" + group + "6"));
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_bucket{le=\"0.0001\"} 0"));
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_bucket{le=\"0.00025\"} 1"));
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_bucket{le=\"0.0005\"} 2"));  // cumulative
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_bucket{le=\"0.025\"} 3"));
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_bucket{le=\"1\"} 3"));  // 2 s is above the last bound
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_bucket{le=\"+Inf\"} 4"));
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_count 4"));
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_sum 2.02045"));
  // Conventions every exporter follows: build info, and the process_* series.
  EXPECT_NE(text.find("cbqs_build_info{version=\"" COWBOY_VERSION_NUMBER "\",commit=\""), std::string::npos);
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
                           "process_max_fds", "process_start_time_seconds"})
    EXPECT_NE(text.find(std::string("\n# TYPE ") + name + " "), std::string::npos) << name;
  EXPECT_EQ(text.find("_ms{"), std::string::npos) << "durations are in seconds";
}

TEST(Metrics, TheSyncHistogramKeepsCountingPastAnyWindow) {
  LatencyHistogram h;
  for (int i = 0; i < 10'000; ++i) h.observe_us(400);  // 0.4 ms
  cbqs::broker::CoreMetrics m;
  m.sync_latency.add(h);
  m.sync_latency.add(h);  // two streams' owners
  std::string text = prometheus_text(m, 1, 0.5, true);
  auto has = [&](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_bucket{le=\"0.00025\"} 0"));
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_bucket{le=\"0.0005\"} 20000"));
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_count 20000"));
  EXPECT_TRUE(has("cbqs_sync_latency_seconds_sum 8"));
}

}  // namespace
}  // namespace cowboy::cbqsd
