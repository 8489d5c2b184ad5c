// The CLI's data-plane commands: a session on a provider endpoint, then
// append, tail and checkpoint verification.
#pragma once

#include <filesystem>
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
/// Fetches the receipt covering `sequence` (0 = latest) and verifies it
/// against the provider record read from the chain: valid / invalid / unverifiable.
Result<nlohmann::json, std::string> checkpoint(const SessionOptions& o, std::uint64_t sequence);

}  // namespace cowboy::cbqs_cli
