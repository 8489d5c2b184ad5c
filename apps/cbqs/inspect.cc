#include "inspect.h"

#include "cbqs/client.h"
#include "devchain/http_client.h"

namespace cowboy::cbqs_cli {

using namespace cowboy::cbqs;

namespace {

Answer<std::string> stream_of(const SessionOptions& o, const AdminTarget& a) {
  if (!a.stream_hex.empty()) return a.stream_hex;
  auto options = o.dev_dir.empty() ? sdk::ClientOptions::from_files(o.endpoint, o.grant_file, o.holder_key)
                                   : sdk::ClientOptions::from_dev_dir(o.dev_dir, o.endpoint);
  if (!options) return Err{"which stream? give --stream, or --grant/--dev to take the grant's: " + options.error().describe()};
  return to_hex(options->grant.stream_id);
}

// GET `path` + "?stream=<hex>" + `more` from the admin listener.
Answer<json> admin_get(const SessionOptions& o, const AdminTarget& a, const std::string& path, const std::string& more = {}) {
  auto stream = stream_of(o, a);
  if (!stream) return Err{stream.error()};
  auto http = devchain::HttpClient::from_url(a.url);
  if (!http) return Err{"--admin must be http://host:port, not " + a.url};
  auto r = http->get_text(path + "?stream=" + *stream + more);
  if (!r) return Err{"cbqsd's admin listener is unreachable at " + a.url + " (is cbqsd running? give --admin or --dev): " +
                     r.error().message};
  std::string body = r->body;
  while (!body.empty() && body.back() == '\n') body.pop_back();
  if (r->status != 200) return Err{"cbqsd's admin listener answered " + std::to_string(r->status) + ": " + body};
  auto j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return Err{std::string("cbqsd's admin listener sent something other than JSON")};
  return j;
}

json settings_json(const resp::Settings& s) {
  const auto& v = s.settings;
  const auto& c = s.group_ceilings;
  return {{"retention_ms", v.retention_ms},
          {"retained_bytes_limit", v.retained_bytes_limit},
          {"max_message_bytes", v.max_message_bytes},
          {"max_append_bytes_per_sec", v.max_append_bytes_per_sec},
          {"max_delivered_bytes_per_sec", v.max_delivered_bytes_per_sec},
          {"group_ceilings",
           {{"max_visibility_ms", c.max_visibility_ms}, {"max_attempts", c.max_attempts}, {"max_in_flight", c.max_in_flight}}}};
}

}  // namespace

Answer<json> groups_list(const SessionOptions& o, const AdminTarget& a) { return admin_get(o, a, "/v1/groups"); }

Answer<json> group_info(const SessionOptions& o, const AdminTarget& a, std::uint64_t group) {
  auto listed = admin_get(o, a, "/v1/groups", "&group=" + std::to_string(group));
  if (!listed) return Err{listed.error().find("answered 404") != std::string::npos
                              ? "no group " + std::to_string(group) + " on this stream (cbqs groups list shows them)"
                              : listed.error()};
  return (*listed)["groups"].at(0);
}

Answer<json> stream_info(const SessionOptions& o, const AdminTarget& a) {
  auto c = connect(o);  // first: a session is what makes cbqsd load the stream
  if (!c) return Err{c.error()};
  auto settings = (*c)->settings();
  if (!settings) return Err{"GetSettings refused: " + settings.error().describe()};
  auto lanes = (*c)->list_lanes();
  if (!lanes) return Err{"ListLanes refused: " + lanes.error().describe()};
  std::uint64_t active = 0;
  for (const auto& l : *lanes) active += l.status == LaneStatusV2::kActive;
  auto stats = admin_get(o, a, "/v1/streams");
  if (!stats) return Err{stats.error()};
  json out = *stats;
  out["lanes"] = {{"active", active}, {"closed", lanes->size() - active}};
  out["settings"] = settings_json(*settings);
  return out;
}

Answer<json> settings_get(const SessionOptions& o) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  auto s = (*c)->settings();
  if (!s) return Err{"GetSettings refused: " + s.error().describe()};
  return settings_json(*s);
}

Answer<json> settings_set(const SessionOptions& o, const SettingsFields& f) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  auto s = (*c)->settings();
  if (!s) return Err{"GetSettings refused: " + s.error().describe()};
  StreamSettingsV2 v = s->settings;
  if (f.retention_ms) v.retention_ms = *f.retention_ms;
  if (f.retained_bytes_limit) v.retained_bytes_limit = *f.retained_bytes_limit;
  if (f.max_message_bytes) v.max_message_bytes = *f.max_message_bytes;
  if (f.max_append_bytes_per_sec) v.max_append_bytes_per_sec = *f.max_append_bytes_per_sec;
  if (f.max_delivered_bytes_per_sec) v.max_delivered_bytes_per_sec = *f.max_delivered_bytes_per_sec;
  auto updated = (*c)->update_settings(v);
  if (!updated) return Err{"UpdateSettings refused: " + updated.error().describe()};
  return settings_json(*updated);
}

}  // namespace cowboy::cbqs_cli
