#include "transit/maintain/metrics.h"

#include "net/process_metrics.h"

namespace cowboy::transit::maintain {
namespace {

void series(std::string& out, const char* name, const char* type, const char* help, const std::string& samples) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
  out += samples;
}

std::string sample(const char* name, std::uint64_t v, const char* labels = "") {
  return std::string(name) + labels + " " + std::to_string(v) + "\n";
}

}  // namespace

std::string Metrics::text() const {
  std::string out;
  series(out, "transit_maintain_resolved_total", "counter", "Outputs resolved by this maintainer, by disposition.",
         sample("transit_maintain_resolved_total", delivered, R"({disposition="delivered"})") +
             sample("transit_maintain_resolved_total", disposed, R"({disposition="disposed"})") +
             sample("transit_maintain_resolved_total", cancelled, R"({disposition="cancelled"})"));
  series(out, "transit_maintain_retirements_total", "counter", "Retirements recorded by this maintainer, by ending.",
         sample("transit_maintain_retirements_total", retired_expired, R"({ending="suspension_expired"})") +
             sample("transit_maintain_retirements_total", retired_dependency, R"({ending="dependency_ended"})"));
  series(out, "transit_maintain_effects_closed_total", "counter", "Effects closed by this maintainer, by closure.",
         sample("transit_maintain_effects_closed_total", effects_cancelled, R"({closure="unattempted_cancel"})") +
             sample("transit_maintain_effects_closed_total", effects_deadline, R"({closure="deadline"})"));
  series(out, "transit_maintain_checkpoints_total", "counter", "Checkpoints published by this maintainer.",
         sample("transit_maintain_checkpoints_total", checkpoints));
  series(out, "transit_maintain_floor_advances_total", "counter", "History floors advanced (trims) by this maintainer.",
         sample("transit_maintain_floor_advances_total", floor_advances));
  series(out, "transit_maintain_lost_races_total", "counter",
         "Commands another courier or maintainer made unnecessary (not errors).",
         sample("transit_maintain_lost_races_total", lost_races));
  series(out, "transit_maintain_refused_total", "counter", "Commands refused for any other reason (errors, logged).",
         sample("transit_maintain_refused_total", refused));
  series(out, "transit_maintain_uncertain_total", "counter", "Exchanges the node did not answer; retried.",
         sample("transit_maintain_uncertain_total", uncertain));
  series(out, "transit_maintain_stale_cuts_total", "counter", "Listings restarted because they changed under their cut.",
         sample("transit_maintain_stale_cuts_total", stale_cuts));
  series(out, "transit_maintain_queries_total", "counter", "Listing pages read.", sample("transit_maintain_queries_total", queries));
  series(out, "transit_maintain_rounds_total", "counter", "Rounds of the maintenance loop.",
         sample("transit_maintain_rounds_total", rounds));
  series(out, "transit_maintain_routes", "gauge", "Route heads in the last pass, and those waiting on their destination.",
         sample("transit_maintain_routes", routes_seen, R"({state="listed"})") +
             sample("transit_maintain_routes", routes_waiting, R"({state="waiting"})"));
  series(out, "transit_maintain_ended_processes", "gauge", "Ended processes awaiting their recorded retirement, last pass.",
         sample("transit_maintain_ended_processes", ended_seen));
  series(out, "transit_maintain_effects", "gauge", "Effects listed to close in the last pass, by filter.",
         sample("transit_maintain_effects", cancellable_seen, R"({filter="cancellable"})") +
             sample("transit_maintain_effects", overdue_seen, R"({filter="overdue"})"));
  series(out, "transit_maintain_history_floor", "gauge", "The history floor at the last trim step (0: nothing trimmed).",
         sample("transit_maintain_history_floor", history_floor));
  series(out, "transit_maintain_lag_positions", "gauge", "Authority positions since the oldest pending output was published.",
         sample("transit_maintain_lag_positions", lag_positions));
  series(out, "transit_maintain_lag_seconds", "gauge", "Seconds since the oldest pending output was published.",
         std::string("transit_maintain_lag_seconds ") + std::to_string(static_cast<double>(lag_ms) / 1000.0) + "\n");
  series(out, "transit_maintain_node_position", "gauge", "The node's authority position at its last answer.",
         sample("transit_maintain_node_position", node_position));
  series(out, "transit_maintain_last_round_seconds", "gauge", "How long the last round took.",
         std::string("transit_maintain_last_round_seconds ") + std::to_string(static_cast<double>(last_round_us) / 1e6) +
             "\n");
  series(out, "transit_maintain_up", "gauge", "1 when the last exchange with the node was answered.",
         sample("transit_maintain_up", up ? 1 : 0));
  return out + net::process_metrics_text();
}

}  // namespace cowboy::transit::maintain
