// transitd's admin routes (docs/transit.md, "Operating transitd"): on a
// listener of their own, loopback by default and apart from the two POST
// routes, with no authentication. /healthz: the process answers. /readyz: the
// journal is open and not failed closed, the genesis was checked at open, the
// sync thread runs and its write under way is younger than the request
// deadline. /metrics: the Prometheus text format, transitd_* then process_*.
#include <filesystem>
#include <sstream>

#include "net/metrics_text.h"
#include "net/process_metrics.h"
#include "transit/contract/codec.h"
#include "transit/node/node.h"

namespace cowboy::transit::node {
namespace {

/// A label value as the text format wants it: backslash, quote and newline escaped.
std::string label_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

/// Every regular file under the journal's directory (RocksDB's tables, logs and manifests).
std::uint64_t bytes_under(const std::filesystem::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;  // a file compaction removed meanwhile counts nothing
    if (it->is_regular_file(size_ec)) {
      const auto size = it->file_size(size_ec);
      if (!size_ec) total += size;
    }
  }
  return total;
}

}  // namespace

std::optional<std::string> Node::not_ready() const {
  const SequencerHealth h = sequencer_->health();
  if (h.stopping) return "the node is stopping";
  if (h.journal_failed) return "the journal is failed closed after a failed synced write; restart the node";
  if (!h.sync_thread_running) return "the sync thread has stopped";
  const auto bound = static_cast<std::uint64_t>(sequencer_->options().deadline.count());
  if (bound && h.sync_running_ms >= bound)
    return "the synced write under way has run for " + std::to_string(h.sync_running_ms) + " ms (request deadline " +
           std::to_string(bound) + " ms): the disk is slow";
  return std::nullopt;
}

std::string Node::metrics_text() const {
  const SequencerStats s = sequencer_->stats();
  const Genesis& genesis = sequencer_->genesis();
  net::MetricsText e;
  e.head("transitd_info", "gauge", "The realm this node serves and its definition (always 1).");
  e.sample("transitd_info", 1,
           "{realm=\"" + label_value(genesis.realm.value) + "\",definition=\"" + label_value(definition()) + "\"}");
  e.series("transitd_ready", "gauge", "1 when /readyz answers 200.", not_ready() ? 0 : 1);
  e.head("transitd_commands_total", "counter", "Commands answered with a receipt, by outcome (replayed: an exact retry).");
  e.sample("transitd_commands_total", s.accepted, "{outcome=\"accepted\"}");
  e.sample("transitd_commands_total", s.replayed, "{outcome=\"replayed\"}");
  e.series("transitd_queries_total", "counter", "Queries decided (answered or refused by the sequencer).", s.queries);
  e.head("transitd_rejections_total", "counter",
         "Rejections answered on the command and query routes, by reason and code (413s of the HTTP layer excluded).");
  for (const auto& r : kReasons)
    e.sample("transitd_rejections_total", routes_->rejections(r.reason),
             "{reason=\"" + std::string(r.name) + "\",code=\"" + std::string(EnumTraits<RejectionCode>::kNames[static_cast<std::size_t>(r.code)]) + "\"}");
  e.series("transitd_overloaded_total", "counter", "Requests refused at once because max-pending requests were in the node.",
           s.overloaded);
  e.series("transitd_deadline_expired_total", "counter",
           "Requests answered ServiceUncertain (overloaded) at the request deadline; a command among them may still commit.",
           s.deadline_expired);
  e.series("transitd_pending_requests", "gauge", "Requests in the node: queued, being decided or awaiting their synced write.",
           s.pending);
  e.series("transitd_pending_requests_limit", "gauge", "max-pending: beyond it a request is refused overloaded.",
           sequencer_->options().max_pending);
  e.series("transitd_request_deadline_seconds", "gauge", "The request deadline (0: none).",
           static_cast<double>(sequencer_->options().deadline.count()) / 1000.0);
  e.series("transitd_authority_position", "gauge", "The durable authority position (the last published decision).",
           s.position);
  e.series("transitd_history_reclaimed_below", "gauge", "The floor below which trimmed history is compacted away.",
           s.reclaimed_below);
  e.series("transitd_storage_relocated_through", "gauge",
           "The compaction cursor up to which every relocated leaf is rewritten into new table files.", s.relocated_through);
  e.series("transitd_collection_keys_visited_total", "counter",
           "Stored entry keys visited by the scans of resource collections (each key about once per cleanup, decision 188).",
           s.collection_keys_visited);
  e.series("transitd_synced_writes_total", "counter", "Synced journal writes (one per group of decisions).", s.synced_writes);
  e.series("transitd_slow_syncs_total", "counter", "Synced journal writes that took over 5 ms.", s.slow_syncs);
  e.histogram("transitd_sync_duration_seconds", "Duration of each synced journal write.", s.sync_latency);
  e.histogram("transitd_decision_duration_seconds",
              "Commands the sequencer decided (accepted, replayed or refused): from submission (signature checked) to the "
              "release of their answer, after its synced write.",
              s.decision_latency);
  e.series("transitd_journal_bytes", "gauge", "Bytes of the files in the journal's directory.", bytes_under(data_dir_));
  e.series("transitd_journal_failed", "gauge", "1 when the journal is failed closed after a failed synced write.",
           sequencer_->health().journal_failed ? 1 : 0);
  e.series("transitd_open_connections", "gauge", "HTTP connections held on the command and query listener.",
           server_->open_connections());
  e.series("transitd_refused_connections_total", "counter", "Connections closed at accept: the slot table was full.",
           server_->refused_connections());
  e.series("transitd_accept_errors_total", "counter",
           "accept(2) failures on the command listener (EMFILE, ENFILE...), each followed by a back-off.",
           server_->accept_errors());
  return e.text() + net::process_metrics_text();
}

net::HttpReply Node::admin(const net::HttpRequest& request) const {
  if (request.method != "GET") return {405, "text/plain", "GET only\n"};
  const std::string_view path = std::string_view(request.target).substr(0, request.target.find('?'));
  if (path == "/healthz") return {200, "text/plain", "ok\n"};
  if (path == "/readyz") {
    if (auto why = not_ready()) return {503, "text/plain", "not ready: " + *why + "\n"};
    return {200, "text/plain",
            "ready: realm " + sequencer_->genesis().realm.value + " (genesis checked at open), journal open, position " +
                std::to_string(sequencer_->stats().position) + "\n"};
  }
  if (path == "/metrics") return {200, "text/plain; version=0.0.4", metrics_text()};
  return {404, "text/plain", "routes: GET /healthz, /readyz, /metrics\n"};
}

}  // namespace cowboy::transit::node
