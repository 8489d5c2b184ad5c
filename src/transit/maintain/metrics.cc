#include "transit/maintain/metrics.h"

#include "net/metrics_text.h"
#include "net/process_metrics.h"

namespace cowboy::transit::maintain {
namespace {

/// One sample of a series: its value and its labels.
struct Sample {
  Sample(std::uint64_t v, const char* l = "") : value(static_cast<double>(v)), labels(l) {}
  Sample(double v, const char* l = "") : value(v), labels(l) {}
  double value;
  const char* labels;
};

/// A series' HELP and TYPE lines, then its samples, each under the series' own name.
template <typename... Samples>
void series(net::MetricsText& out, const char* name, const char* type, const char* help, const Samples&... samples) {
  out.head(name, type, help);
  (out.sample(name, samples.value, samples.labels), ...);
}

}  // namespace

std::string Metrics::text() const {
  net::MetricsText out;
  series(out, "transit_maintain_resolved_total", "counter", "Outputs resolved by this maintainer, by disposition.",
         Sample{delivered, R"({disposition="delivered"})"},
         Sample{disposed, R"({disposition="disposed"})"},
         Sample{cancelled, R"({disposition="cancelled"})"});
  series(out, "transit_maintain_retirements_total", "counter", "Retirements recorded by this maintainer, by ending.",
         Sample{retired_expired, R"({ending="suspension_expired"})"},
         Sample{retired_dependency, R"({ending="dependency_ended"})"});
  series(out, "transit_maintain_effects_closed_total", "counter", "Effects closed by this maintainer, by closure.",
         Sample{effects_cancelled, R"({closure="unattempted_cancel"})"},
         Sample{effects_deadline, R"({closure="deadline"})"});
  series(out, "transit_maintain_checkpoints_total", "counter", "Checkpoints published by this maintainer.",
         Sample{checkpoints});
  series(out, "transit_maintain_floor_advances_total", "counter", "History floors advanced (trims) by this maintainer.",
         Sample{floor_advances});
  series(out, "transit_maintain_collected_total", "counter",
         "Collect commands accepted, by whether they finished their record (complete) or removed part of it (partial).",
         Sample{collected, R"({result="complete"})"},
         Sample{collect_steps, R"({result="partial"})"});
  series(out, "transit_maintain_storage_runs_total", "counter",
         "Storage runs by this maintainer: a storage_fence, then storage_compacts (decision 181).", Sample{storage_runs});
  series(out, "transit_maintain_storage_commands_total", "counter", "Storage commands accepted, by operation.",
         Sample{fences, R"({op="storage_fence"})"},
         Sample{compactions, R"({op="storage_compact"})"});
  series(out, "transit_maintain_lost_races_total", "counter",
         "Commands another courier or maintainer made unnecessary (not errors).",
         Sample{lost_races});
  series(out, "transit_maintain_refused_total", "counter", "Commands refused for any other reason (errors, logged).",
         Sample{refused});
  series(out, "transit_maintain_uncertain_total", "counter", "Exchanges the node did not answer; retried.",
         Sample{uncertain});
  series(out, "transit_maintain_stale_cuts_total", "counter", "Listings restarted because they changed under their cut.",
         Sample{stale_cuts});
  series(out, "transit_maintain_queries_total", "counter", "Listing pages read.", Sample{queries});
  series(out, "transit_maintain_rounds_total", "counter", "Rounds of the maintenance loop.",
         Sample{rounds});
  series(out, "transit_maintain_routes", "gauge", "Route heads in the last pass, and those waiting on their destination.",
         Sample{routes_seen, R"({state="listed"})"},
         Sample{routes_waiting, R"({state="waiting"})"});
  series(out, "transit_maintain_ended_processes", "gauge", "Ended processes awaiting their recorded retirement, last pass.",
         Sample{ended_seen});
  series(out, "transit_maintain_effects", "gauge", "Effects listed to close in the last pass, by filter.",
         Sample{cancellable_seen, R"({filter="cancellable"})"},
         Sample{overdue_seen, R"({filter="overdue"})"});
  series(out, "transit_maintain_collectable_processes", "gauge", "Processes with records listed collectable, last pass.",
         Sample{collectable_seen});
  series(out, "transit_maintain_history_floor", "gauge", "The history floor at the last trim step (0: nothing trimmed).",
         Sample{history_floor});
  series(out, "transit_maintain_storage", "gauge",
         "The storage epoch its last fence made, the grace recorded with it, and the compaction cursor it last advanced to.",
         Sample{storage_epoch, R"({field="epoch"})"},
         Sample{grace_below, R"({field="grace_below"})"},
         Sample{compaction_cursor, R"({field="compaction_cursor"})"});
  series(out, "transit_maintain_lag_positions", "gauge", "Authority positions since the oldest pending output was published.",
         Sample{lag_positions});
  series(out, "transit_maintain_lag_seconds", "gauge", "Seconds since the oldest pending output was published.",
         Sample{static_cast<double>(lag_ms) / 1000.0});
  series(out, "transit_maintain_node_position", "gauge", "The node's authority position at its last answer.",
         Sample{node_position});
  series(out, "transit_maintain_last_round_seconds", "gauge", "How long the last round took.",
         Sample{static_cast<double>(last_round_us) / 1e6});
  series(out, "transit_maintain_up", "gauge", "1 when the last exchange with the node was answered.",
         Sample{std::uint64_t{up ? 1u : 0u}});
  out.raw(net::process_metrics_text());
  return out.text();
}

}  // namespace cowboy::transit::maintain
