// The CLI's data-plane commands: a session on a provider endpoint, then
// append, tail and checkpoint verification.
#pragma once

#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/result.h"

namespace cowboy::cbqs_cli {

struct SessionOptions {
  std::string endpoint = "wss://127.0.0.1:7447/";
  std::filesystem::path ca_file;       // pinned certificate; empty = system roots
  std::filesystem::path grant_file;    // hex of a canonical StreamGrantV2
  std::filesystem::path holder_key;    // the grant's holder Ed25519 seed
  std::string chain_url = "http://127.0.0.1:7545";
  bool allow_private = false;          // §11.4 development opt-in
  /// `--dev DIR`: take the grant, holder key and certificate cbqsd --dev wrote.
  void use_dev_dir(const std::filesystem::path& dir);
};

/// Appends each message to `lane` (creating a lane first when lane == 0);
/// the result lists {sequence, lane} per message.
Result<nlohmann::json, std::string> append(const SessionOptions& o, std::uint64_t lane,
                                           const std::vector<std::string>& messages);
/// Replays records from `from` (0 = only new ones) until `count` arrived or
/// the replay reaches the head (when `follow` is false).
Result<nlohmann::json, std::string> tail(const SessionOptions& o, std::uint64_t from, std::uint64_t count, bool follow);
/// The stream id (hex) of the grant a cbqsd --dev data dir holds; empty if unreadable.
std::string dev_stream_hex(const std::filesystem::path& dir);

/// The group fields a command may set; unset ones keep their default (create)
/// or stored value (update).
struct GroupFields {
  std::optional<std::uint64_t> start_at;  // create only; unset = Head
  std::optional<std::uint64_t> visibility_timeout_ms, max_visibility_ms, record_deadline_ms;
  std::optional<std::uint32_t> max_in_flight, max_in_flight_per_holder;
  std::optional<std::uint16_t> max_attempts;
};
/// CreateGroup on `lane`; the result is the stored config.
Result<nlohmann::json, std::string> group_create(const SessionOptions& o, std::uint64_t lane, const GroupFields& f);
Result<nlohmann::json, std::string> group_get(const SessionOptions& o, std::uint64_t group);
Result<nlohmann::json, std::string> group_update(const SessionOptions& o, std::uint64_t group, const GroupFields& f);
Result<nlohmann::json, std::string> group_delete(const SessionOptions& o, std::uint64_t group);

struct ConsumeOptions {
  std::uint64_t group = 0;
  std::uint64_t count = 0;         // stop after this many acked (0: when idle)
  std::uint64_t idle_ms = 2'000;   // stop when nothing arrives for this long (0: never)
  std::string exec;                // run per record, payload on stdin: exit 0 acks, else nacks
};
/// A competing consumer of a group: each record is printed (acked) or handed
/// to `exec`; the result lists {sequence, lane, payload, action}.
Result<nlohmann::json, std::string> consume(const SessionOptions& o, const ConsumeOptions& c);

/// Fetches the receipt covering `sequence` (0 = latest) and verifies it
/// against the provider record read from the chain: valid / invalid / unverifiable.
Result<nlohmann::json, std::string> checkpoint(const SessionOptions& o, std::uint64_t sequence);

}  // namespace cowboy::cbqs_cli
