// transit status: a transitd's admin listener read for a person (docs/transit.md,
// "Operating transitd"): health, readiness, the position, the queue, what was
// accepted and rejected and why, latencies, the journal's size. Needs no key.
#include <cstdio>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "net/host_port.h"
#include "net/http_connection.h"
#include "net/prometheus_text.h"

namespace cowboy::transit::cli {
namespace {

/// `transitd_rejections_total{reason="x",code="y"} n` -> x -> n, for the reasons seen at least once.
std::map<std::string, double> rejections_by_reason(const std::string& text) {
  std::map<std::string, double> out;
  static const std::regex line(R"re(^transitd_rejections_total\{reason="([a-z_]+)",[^}]*\} (\S+)$)re");
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_match(l, m, line)) continue;
    try {
      if (const double v = std::stod(m[2]); v > 0) out[m[1]] = v;
    } catch (const std::exception&) {
    }
  }
  return out;
}

/// The upper bound of the bucket holding quantile q of histogram `name` ("+Inf" beyond the last; "-" when empty).
std::string bucket_quantile(const std::string& text, const std::string& name, double q) {
  const std::regex line("^" + name + R"re(_bucket\{le="([^"]+)"\} (\S+)$)re");
  std::vector<std::pair<std::string, double>> buckets;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line)) buckets.emplace_back(m[1], std::stod(m[2]));
  }
  if (buckets.size() < 2 || buckets.back().second == 0) return "-";
  const double want = q * buckets.back().second;
  for (const auto& [le, n] : buckets)
    if (n >= want) return le == "+Inf" ? "over " + buckets[buckets.size() - 2].first + " s" : "<= " + le + " s";
  return "-";
}

}  // namespace

int status(const std::string& admin, bool json) {
  const auto at = net::parse_host_port(admin);
  if (!at) return usage("--admin wants host:port");
  net::HttpConnection http(at->first, at->second, std::chrono::seconds(5));
  auto health = http.get("/healthz");
  if (!health.ok()) {
    std::fprintf(stderr, "transit: uncertain: transitd's admin listener is unreachable at %s: %s\n", admin.c_str(),
                 health.error().c_str());
    return 3;
  }
  auto ready = http.get("/readyz");
  auto metrics = http.get("/metrics");
  if (!ready.ok() || !metrics.ok() || metrics->status != 200) {
    std::fprintf(stderr, "transit: uncertain: transitd's admin listener stopped answering at %s\n", admin.c_str());
    return 3;
  }
  std::string readiness = ready->body;
  while (!readiness.empty() && readiness.back() == '\n') readiness.pop_back();
  auto sums = net::sum_series(metrics->body);
  auto v = [&](const char* name) { return sums.contains(name) ? sums[name] : 0.0; };
  const auto reasons = rejections_by_reason(metrics->body);
  const bool is_ready = ready->status == 200;
  if (json) {
    nlohmann::json main = nlohmann::json::object();
    for (const char* name :
         {"transitd_authority_position", "transitd_pending_requests", "transitd_pending_requests_limit",
          "transitd_commands_total", "transitd_queries_total", "transitd_rejections_total", "transitd_overloaded_total",
          "transitd_deadline_expired_total", "transitd_synced_writes_total", "transitd_journal_bytes",
          "transitd_open_connections", "process_resident_memory_bytes"})
      main[name] = v(name);
    std::cout << nlohmann::json{{"healthy", health->status == 200}, {"ready", is_ready}, {"readiness", readiness},
                                {"rejections", reasons}, {"metrics", main}}
                     .dump()
              << "\n";
    return is_ready ? 0 : 1;
  }
  const auto count = [&](const char* name) { return static_cast<unsigned long long>(v(name)); };
  std::printf("transitd at %s: %s, %s\n", admin.c_str(), health->status == 200 ? "healthy" : "unhealthy",
              readiness.c_str());
  std::printf("position %llu; pending %llu of %llu; request deadline %.3g s\n", count("transitd_authority_position"),
              count("transitd_pending_requests"), count("transitd_pending_requests_limit"),
              v("transitd_request_deadline_seconds"));
  std::printf("commands %llu (accepted or replayed), queries %llu, rejections %llu, overloaded %llu, past deadline %llu\n",
              count("transitd_commands_total"), count("transitd_queries_total"), count("transitd_rejections_total"),
              count("transitd_overloaded_total"), count("transitd_deadline_expired_total"));
  for (const auto& [reason, n] : reasons) std::printf("  rejected %s: %llu\n", reason.c_str(), static_cast<unsigned long long>(n));
  const double decisions = v("transitd_decision_duration_seconds_count"), syncs = v("transitd_sync_duration_seconds_count");
  std::printf("decisions: mean %.3f ms, p99 %s; synced writes %llu: mean %.3f ms, p99 %s\n",
              decisions ? 1e3 * v("transitd_decision_duration_seconds_sum") / decisions : 0.0,
              bucket_quantile(metrics->body, "transitd_decision_duration_seconds", 0.99).c_str(),
              count("transitd_synced_writes_total"), syncs ? 1e3 * v("transitd_sync_duration_seconds_sum") / syncs : 0.0,
              bucket_quantile(metrics->body, "transitd_sync_duration_seconds", 0.99).c_str());
  std::printf("journal %.1f MiB on disk%s; %llu connections open; %.1f MiB resident, %llu open fds\n",
              v("transitd_journal_bytes") / (1 << 20), v("transitd_journal_failed") ? " (FAILED CLOSED)" : "",
              count("transitd_open_connections"), v("process_resident_memory_bytes") / (1 << 20),
              count("process_open_fds"));
  return is_ready ? 0 : 1;
}

}  // namespace cowboy::transit::cli
