// What a stream holds, as `cbqs groups list|info`, `cbqs stream info` and
// `cbqs settings get|set` show it. Group state and stream size come from
// cbqsd's admin listener (the protocol has no such request); settings and
// lanes from the data plane.
#pragma once

#include "data_plane.h"

namespace cowboy::cbqs_cli {

/// Where the admin listener is and which stream to ask about: `stream_hex`
/// if given, else the stream of the session's grant.
struct AdminTarget {
  std::string url = "http://127.0.0.1:7448";
  std::string stream_hex;
};

/// {"groups": [{group, lane, pending, in_flight, redelivered, dead_letters,
/// ack_floor, oldest_unacked_age_seconds, consumers, ...config}]}.
Answer<json> groups_list(const SessionOptions& o, const AdminTarget& a);
/// One group of that list; an unknown group is an error.
Answer<json> group_info(const SessionOptions& o, const AdminTarget& a, std::uint64_t group);
/// {stream, head, floor, retained_bytes, lanes: {active, closed}, subscriptions, groups, settings}.
Answer<json> stream_info(const SessionOptions& o, const AdminTarget& a);

/// The §13 stream settings; unset fields keep their value.
struct SettingsFields {
  std::optional<std::uint64_t> retention_ms, retained_bytes_limit, max_append_bytes_per_sec, max_delivered_bytes_per_sec;
  std::optional<std::uint32_t> max_message_bytes;
};
/// {retention_ms, retained_bytes_limit, max_message_bytes, max_append_bytes_per_sec,
/// max_delivered_bytes_per_sec, group_ceilings: {...}}.
Answer<json> settings_get(const SessionOptions& o);
/// Reads, changes what `f` sets, writes; the stored settings.
Answer<json> settings_set(const SessionOptions& o, const SettingsFields& f);

}  // namespace cowboy::cbqs_cli
