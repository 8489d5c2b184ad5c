// The CLI's data-plane commands, each a thin use of the SDK (include/cbqs/):
// lanes, append/produce, tail, groups, consume, checkpoints, bench, status.
// Each returns the JSON the command prints (or streams records through
// `emit` as they arrive), or an error message naming the failing check.
#pragma once

#include <filesystem>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cbqs/client.h"
#include "common/result.h"
#include "common/strong_id.h"

namespace cowboy {
/// Lanes, groups and sequences go into JSON as their wire numbers.
template <typename Tag, typename Rep>
void to_json(nlohmann::json& j, const StrongId<Tag, Rep>& id) {
  j = id.value;
}
}  // namespace cowboy

namespace cowboy::cbqs_cli {

using nlohmann::json;
template <typename T>
using Answer = Result<T, std::string>;
/// Where streamed records go: `record` writes one (it may stay buffered),
/// `flush` pushes every written record out. Commands flush before they wait
/// and before they ack, so a record is always shown before it is acked.
struct Sink {
  std::function<void(const json&)> record;
  std::function<void()> flush;
};
/// Whether the user asked the command to stop (SIGINT, SIGTERM, or stdout closed):
/// a streaming command finishes the record in hand and returns.
using Stopped = std::function<bool()>;

struct SessionOptions {
  std::string endpoint = "wss://127.0.0.1:7447/";
  std::filesystem::path ca_file;       // a CA file; empty = system roots
  std::filesystem::path grant_file;    // hex of a canonical StreamGrantV2
  std::filesystem::path holder_key;    // the grant's holder Ed25519 seed
  std::filesystem::path dev_dir;       // cbqsd --dev data dir: grant, key, pinned certificate
  std::string chain_url = "http://127.0.0.1:7545";
  bool allow_private = false;          // §11.4 development opt-in
};

/// A connected SDK client for these options.
Answer<std::unique_ptr<cbqs::sdk::Client>> connect(const SessionOptions& o);
/// Where a cbqsd --dev instance listens ({endpoint, admin, chain}, from
/// DIR/dev-endpoints.json); an empty object when unknown.
json dev_endpoints(const std::filesystem::path& dir);
/// The stream id (hex) of the grant a cbqsd --dev data dir holds; empty if unreadable.
std::string dev_stream_hex(const std::filesystem::path& dir);

// ---- lanes -----------------------------------------------------------------
/// A plain lane, or the room lane of `room_id` (hex) [and `seat_id`].
Answer<json> lane_create(const SessionOptions& o, const std::string& room_id, const std::string& seat_id);
Answer<json> lane_close(const SessionOptions& o, cbqs::LaneId lane);
Answer<json> lane_list(const SessionOptions& o);

// ---- producing and reading ---------------------------------------------------
/// Appends each message to `lane` (when 0: the stream's first open lane, created
/// if there is none); {sequence, lane} per message.
Answer<json> append(const SessionOptions& o, cbqs::LaneId lane, const std::vector<std::string>& messages);
/// Appends every line of `in` (pipelined); `total` lines, when known, gives
/// the progress bar its ETA. A summary: records, first/last sequence, rate.
Answer<json> produce(const SessionOptions& o, cbqs::LaneId lane, std::istream& in, std::optional<std::uint64_t> total,
                     bool progress);
struct TailOptions {
  std::uint64_t from = 1;   // 0: only records appended from now on
  std::uint64_t count = 0;  // stop after this many (0: at the head, or never with follow)
  bool follow = false;
  bool hex = false;         // payloads as hex (payload_hex) instead of text
  std::uint64_t lane = 0;   // only this lane's records (0: every lane the grant shows)
};
/// Streams {sequence, lane, payload | payload_base64 | payload_hex} to `out`
/// (payload when the bytes are UTF-8, else base64); the number emitted.
Answer<std::uint64_t> tail(const SessionOptions& o, const TailOptions& t, const Sink& out, const Stopped& stopped);

// ---- consumer groups --------------------------------------------------------------
/// The group fields a command may set; unset ones keep their default (create)
/// or stored value (update).
struct GroupFields {
  std::optional<std::uint64_t> start_at;  // create only; unset = Head
  std::optional<std::uint64_t> visibility_timeout_ms, max_visibility_ms, record_deadline_ms;
  std::optional<std::uint32_t> max_in_flight, max_in_flight_per_holder;
  std::optional<std::uint16_t> max_attempts;
};
Answer<json> group_create(const SessionOptions& o, cbqs::LaneId lane, const GroupFields& f);
Answer<json> group_get(const SessionOptions& o, cbqs::GroupId group);
Answer<json> group_update(const SessionOptions& o, cbqs::GroupId group, const GroupFields& f);
Answer<json> group_delete(const SessionOptions& o, cbqs::GroupId group);

struct ConsumeOptions {
  std::uint64_t group = 0;
  std::uint64_t count = 0;         // stop after this many handled (0: when idle)
  std::uint64_t idle_ms = 2'000;   // stop when nothing arrives for this long (0: never)
  std::string exec;                // run per record, payload on stdin: exit 0 acks, else nacks
  bool auto_extend = true;         // keep leases alive while --exec runs
};
/// A competing consumer: {sequence, lane, payload | payload_base64, action} per
/// record to `out`, flushed before its ack or nack is sent. The records on
/// hand are taken in a batch and their acks pipelined (one at a time with --exec).
Answer<std::uint64_t> consume(const SessionOptions& o, const ConsumeOptions& c, const Sink& out, const Stopped& stopped);

// ---- checkpoints --------------------------------------------------------------------
/// The receipt covering `sequence` (none: the latest) and its verdict against the
/// provider record read from the chain.
Answer<json> checkpoint_get(const SessionOptions& o, std::optional<cbqs::Sequence> sequence);
/// The whole chain from sequence 1, records included (sdk::verify_chain).
Answer<json> checkpoint_verify(const SessionOptions& o, bool progress);

// ---- load and health ------------------------------------------------------------------
struct BenchOptions {
  int producers = 4;
  int consumers = 0;        // competing consumers of one group on the bench lane
  std::size_t payload = 256;
  double seconds = 5;
  int window = 256;         // appends outstanding per producer
};
Answer<json> bench(const SessionOptions& o, const BenchOptions& b);
/// /healthz, /readyz and the main series of /metrics of a cbqsd admin listener.
Answer<json> status(const std::string& admin_url);

}  // namespace cowboy::cbqs_cli
