#include "admin.h"

#include "cowboy_version.h"
#include "net/metrics_text.h"
#include "net/process_metrics.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cowboy::cbqsd {

std::string prometheus_text(const cbqs::broker::CoreMetrics& m, std::uint64_t snapshot_height, double snapshot_age_seconds,
                            bool ready) {
  net::MetricsText out;
  auto counter = [&](const char* name, const char* help, std::uint64_t v) { out.series(name, "counter", help, v); };
  auto gauge = [&](const char* name, const char* help, auto v) { out.series(name, "gauge", help, v); };
  counter("cbqs_appends_total", "Appends acknowledged or staged.", m.appends);
  counter("cbqs_appended_bytes_total", "Payload bytes appended.", m.appended_bytes);
  counter("cbqs_commit_batches_total", "Synced commit batches.", m.batches);
  counter("cbqs_commit_batch_records_total", "Records in synced commit batches.", m.batch_records);
  counter("cbqs_deliveries_total", "Delivery frames sent.", m.deliveries);
  counter("cbqs_delivered_bytes_total", "Delivery frame bytes sent.", m.delivered_bytes);
  counter("cbqs_errors_total", "Error frames sent.", m.errors_sent);
  counter("cbqs_group_journal_writes_total", "Synced writes carrying changes other than records: leases, lease actions, lanes, groups, settings, retention.", m.journal_writes);
  counter("cbqs_group_journal_ops_total", "Puts and deletes of those changes.", m.journal_ops);
  counter("cbqs_sync_failures_total", "Failed synced writes (the store then fails closed).", m.sync_failures);
  gauge("cbqs_sessions", "Open sessions.", m.sessions);
  gauge("cbqs_subscriptions", "Open subscriptions.", m.subscriptions);
  gauge("cbqs_connections", "Connections held (accepted sockets, before the upgrade too).", m.connections);
  gauge("cbqs_connection_slots_free", "Connections that can still be accepted (0: saturated).",
        m.connection_limit > m.connections ? m.connection_limit - m.connections : 0);
  gauge("cbqs_connections_without_session", "Upgraded connections with no session open.", m.sessionless_connections);
  counter("cbqs_connections_refused_total", "Connections closed at accept: the total or the per-address cap was full.",
          m.connections_refused);
  counter("cbqs_connections_sessionless_closed_total",
          "Connections closed for opening no session within cbqs.session_handshake_timeout_ms.", m.sessionless_closed);
  counter("cbqs_accept_errors_total", "accept(2) failures (EMFILE, ENFILE...), each followed by a back-off.",
          m.accept_errors);
  gauge("cbqs_read_budget_bytes", "Read memory for large frames, beyond 64 KiB per connection.", m.read_budget_bytes);
  gauge("cbqs_read_budget_in_use_bytes", "Of it, held now by messages being read.", m.read_budget_in_use);
  gauge("cbqs_snapshot_height", "Height of the chain snapshot in force.", snapshot_height);
  gauge("cbqs_snapshot_age_seconds", "Seconds since the chain snapshot in force was fetched (-1: none yet).",
        snapshot_age_seconds);
  gauge("cbqs_ready", "1 when /readyz answers 200.", ready ? 1 : 0);
  out.head("cbqs_build_info", "gauge", "The running cbqsd's version and commit (always 1).");
  out.sample("cbqs_build_info", 1,
             std::string("{version=\"") + COWBOY_VERSION_NUMBER + "\",commit=\"" + COWBOY_COMMIT + "\"}");
  out.raw(net::process_metrics_text());
  // Per stream, per lane, per subscription.
  auto stream_label = [](const auto& s) { return "{stream=\"" + to_hex(s.stream_id) + "\""; };
  out.head("cbqs_stream_head_sequence", "gauge", "Highest durable sequence of a stream.");
  for (const auto& s : m.streams) out.sample("cbqs_stream_head_sequence", s.head, stream_label(s) + "}");
  out.head("cbqs_stream_retained_bytes", "gauge", "Bytes counted against retained_bytes_limit.");
  for (const auto& s : m.streams) out.sample("cbqs_stream_retained_bytes", s.retained_bytes, stream_label(s) + "}");
  out.head("cbqs_stream_lanes_with_records", "gauge",
           "Lanes of a stream holding records (all of them, past the 256 cap below).");
  for (const auto& s : m.streams) out.sample("cbqs_stream_lanes_with_records", s.lanes_with_records, stream_label(s) + "}");
  // A series per lane, capped so a stream with millions of room lanes cannot
  // flood the scrape (docs/operations.md, "Metrics").
  out.head("cbqs_lane_head_sequence", "gauge", "Highest durable sequence of a lane (the 256 lowest lane ids of a stream).");
  for (const auto& s : m.streams)
    for (const auto& [lane, head] : s.lane_heads)
      out.sample("cbqs_lane_head_sequence", head, stream_label(s) + ",lane=\"" + std::to_string(lane) + "\"}");
  out.head("cbqs_subscription_lag_records", "gauge", "Committed records a subscription has not yet been sent.");
  for (const auto& s : m.streams)
    for (const auto& [sub, lag] : s.subscription_lags)
      out.sample("cbqs_subscription_lag_records", lag,
                 stream_label(s) + ",subscription=\"" + to_hex(ByteView(sub).first(8)) + "\"}");
  // Per consumer group (groups loaded since the broker started).
  auto group_gauge = [&](const char* name, const char* type, const char* help, auto value) {
    out.head(name, type, help);
    for (const auto& s : m.streams)
      for (const auto& g : s.groups)
        out.sample(name, value(g), stream_label(s) + ",group=\"" + std::to_string(g.group_id.value) + "\"}");
  };
  using GM = cbqs::broker::GroupMetrics;
  group_gauge("cbqs_group_pending_records", "gauge", "Records not yet delivered or waiting for redelivery.",
              [](const GM& g) { return g.pending; });
  group_gauge("cbqs_group_in_flight", "gauge", "Leases outstanding.", [](const GM& g) { return g.in_flight; });
  group_gauge("cbqs_group_dead_letters", "gauge", "EXPIRED records kept in the dead-letter view.",
              [](const GM& g) { return g.dead_letters; });
  group_gauge("cbqs_group_oldest_unacked_age_seconds", "gauge", "Age of the oldest record not yet acked, in seconds (0: none).",
              [](const GM& g) { return static_cast<double>(g.oldest_unacked_age_ms) / 1'000.0; });
  group_gauge("cbqs_group_ack_floor_sequence", "gauge", "Every record of the group's lane up to this sequence is acked or dead-lettered.",
              [](const GM& g) { return g.ack_floor; });
  group_gauge("cbqs_group_consumers", "gauge", "Consumers (group subscriptions) attached now.",
              [](const GM& g) { return g.consumers; });
  group_gauge("cbqs_group_delivered_total", "counter", "Leases issued.", [](const GM& g) { return g.counters.delivered; });
  group_gauge("cbqs_group_redelivered_total", "counter", "Leases issued for a second or later attempt.",
              [](const GM& g) { return g.counters.redelivered; });
  group_gauge("cbqs_group_acked_total", "counter", "Cycles ACKED (rate() of this is the acked rate).",
              [](const GM& g) { return g.counters.acked; });
  group_gauge("cbqs_group_expired_total", "counter", "Cycles EXPIRED.", [](const GM& g) { return g.counters.expired; });
  out.histogram("cbqs_sync_latency_seconds", "Latency of synced store writes since start.", m.sync_latency);
  return out.text();
}

namespace {

// "a=1&b=2" -> {a: 1, b: 2}; the last of a repeated key wins.
std::map<std::string, std::string> query_params(std::string_view query) {
  std::map<std::string, std::string> out;
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    auto eq = pair.find('=');
    if (eq != std::string_view::npos) out[std::string(pair.substr(0, eq))] = std::string(pair.substr(eq + 1));
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
  }
  return out;
}

std::optional<std::uint64_t> number(const std::map<std::string, std::string>& q, const std::string& key) {
  auto it = q.find(key);
  if (it == q.end()) return std::nullopt;
  const std::string& text = it->second;
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

net::HttpReply bad_request(std::string why) { return {400, "text/plain", why + "\n"}; }

std::optional<Bytes32> stream_param(const std::map<std::string, std::string>& q) {
  auto it = q.find("stream");
  auto bytes = it == q.end() ? std::nullopt : from_hex(it->second);
  if (!bytes || bytes->size() != 32) return std::nullopt;
  Bytes32 id;
  std::copy(bytes->begin(), bytes->end(), id.begin());
  return id;
}

// A group as `cbqs groups list` and `groups info` show it (docs/operations.md).
nlohmann::json group_json(const cbqs::broker::GroupReport& r) {
  const auto& c = r.config;
  const auto& m = r.metrics;
  nlohmann::json start = std::holds_alternative<cbqs::StartHead>(c.start) ? nlohmann::json("head")
                                                                          : nlohmann::json(std::get<cbqs::StartAt>(c.start).sequence.value);
  return {{"group", c.group_id.value},
          {"lane", c.lane_id.value},
          {"start", start},
          {"visibility_timeout_ms", c.visibility_timeout_ms},
          {"max_visibility_ms", c.max_visibility_ms},
          {"max_in_flight", c.max_in_flight},
          {"max_in_flight_per_holder", c.max_in_flight_per_holder},
          {"max_attempts", c.max_attempts},
          {"record_deadline_ms", c.record_deadline_ms},
          {"pending", m.pending},
          {"in_flight", m.in_flight},
          {"dead_letters", m.dead_letters},
          {"delivered", m.counters.delivered},
          {"redelivered", m.counters.redelivered},
          {"acked", m.counters.acked},
          {"expired", m.counters.expired},
          {"ack_floor", m.ack_floor},
          {"oldest_unacked_age_seconds", static_cast<double>(m.oldest_unacked_age_ms) / 1'000.0},
          {"consumers", m.consumers}};
}

// GET /v1/groups?stream=<hex>[&group=<id>]: every group of the stream, or one.
net::HttpReply groups_route(cbqs::broker::Broker& broker, const std::map<std::string, std::string>& q) {
  auto stream = stream_param(q);
  if (!stream) return bad_request("stream (64 hex digits) is required");
  auto reports = broker.group_reports(*stream);
  if (!reports) return {503, "text/plain", "the stream cannot be loaded now\n"};
  auto only = q.contains("group") ? number(q, "group") : std::nullopt;
  if (q.contains("group") && !only) return bad_request("group must be a number");
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& r : *reports)
    if (!only || r.config.group_id == cbqs::GroupId{*only}) groups.push_back(group_json(r));
  if (only && groups.empty()) return {404, "text/plain", "no such group\n"};
  return {200, "application/json", nlohmann::json{{"groups", groups}}.dump() + "\n"};
}

// GET /v1/streams?stream=<hex>: a stream's size and activity (cbqs stream info).
net::HttpReply stream_route(cbqs::broker::Broker& broker, const std::map<std::string, std::string>& q) {
  auto stream = stream_param(q);
  if (!stream) return bad_request("stream (64 hex digits) is required");
  auto groups = broker.group_reports(*stream);
  for (const auto& s : broker.metrics().streams) {
    if (s.stream_id != *stream) continue;
    nlohmann::json out{{"stream", to_hex(s.stream_id)},           {"head", s.head},
                       {"floor", s.floor},                        {"retained_bytes", s.retained_bytes},
                       {"lanes_with_records", s.lanes_with_records}, {"subscriptions", s.subscriptions},
                       {"groups", groups ? groups->size() : 0}};
    return {200, "application/json", out.dump() + "\n"};
  }
  return {404, "text/plain", "this cbqsd does not serve that stream\n"};
}

// GET  /v1/groups/dead-letters?stream=<hex>&group=<id>[&after=<seq>][&limit=<1..1000>]
// POST /v1/groups/redrive?stream=<hex>&group=<id>
net::HttpReply dead_letter_route(cbqs::broker::Broker& broker, std::string_view path,
                                 const std::map<std::string, std::string>& q, const std::string& method) {
  auto stream = stream_param(q);
  auto group = number(q, "group");
  if (!stream || !group) return bad_request("stream (64 hex digits) and group are required");
  const Bytes32& stream_id = *stream;
  if (path == "/v1/groups/redrive") {
    if (method != "POST") return {405, "text/plain", "use POST\n"};
    auto n = broker.redrive(stream_id, cbqs::GroupId{*group});
    if (!n) return {404, "text/plain", "no such group\n"};
    return {200, "application/json", "{\"redriven\":" + std::to_string(*n) + "}\n"};
  }
  if (method != "GET") return {405, "text/plain", "use GET\n"};
  std::uint64_t limit = q.contains("limit") ? number(q, "limit").value_or(0) : 100;
  if (limit == 0 || limit > 1'000) return bad_request("limit must be 1..1000");
  auto letters = broker.dead_letters(stream_id, cbqs::GroupId{*group}, cbqs::Sequence{number(q, "after").value_or(0)},
                                     limit + 1);
  if (!letters) return {404, "text/plain", "no such group\n"};
  bool more = letters->size() > limit;
  if (more) letters->pop_back();
  std::ostringstream out;
  out << "{\"dead_letters\":[";
  for (std::size_t k = 0; k < letters->size(); ++k) {
    const auto& d = (*letters)[k];
    out << (k ? "," : "") << "{\"sequence\":" << d.sequence << ",\"attempts\":" << d.attempts << ",\"reason\":\""
        << cbqs::broker::to_string(d.reason) << "\",\"expired_at_ms\":" << d.expired_at_ms
        << ",\"committed_at_ms\":" << d.committed_at_ms << "}";
  }
  out << "],\"next_after\":";
  if (more) out << letters->back().sequence;
  else out << "null";
  out << "}\n";
  return {200, "application/json", out.str()};
}

}  // namespace

net::HttpHandler admin_handler(cbqs::broker::Broker& broker) {
  return [&broker](const net::HttpRequest& req) -> net::HttpReply {
    std::string_view target = req.target;
    auto question = target.find('?');
    std::string_view path = target.substr(0, question);
    auto q = query_params(question == std::string_view::npos ? "" : target.substr(question + 1));
    if (path == "/v1/streams") return req.method == "GET" ? stream_route(broker, q) : net::HttpReply{405, "text/plain", "use GET\n"};
    if (path == "/v1/groups") return req.method == "GET" ? groups_route(broker, q) : net::HttpReply{405, "text/plain", "use GET\n"};
    if (path.starts_with("/v1/groups/")) return dead_letter_route(broker, path, q, req.method);
    if (req.method != "GET") return {405, "text/plain", "method not allowed\n"};
    if (req.target == "/healthz") return {200, "text/plain", "ok\n"};
    if (req.target == "/readyz") {
      std::string why;
      bool ready = broker.ready(&why);
      return {ready ? 200 : 503, "text/plain", ready ? "ready\n" : why + "\n"};
    }
    if (req.target == "/metrics")
      return {200, "text/plain; version=0.0.4", prometheus_text(broker.metrics(), broker.snapshot_height(), broker.snapshot_age_seconds(), broker.ready())};
    return {404, "text/plain", "not found\n"};
  };
}

}  // namespace cowboy::cbqsd
