// The client dialing policy (§11.4, docs/protocol.md §M): which destinations a
// client refuses, checked for an address literal and for every address a name
// resolves to; a client then connects only to an address it checked.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace cowboy::cbqs::client {

struct Endpoint {
  std::string host;  // a name, an IPv4 literal, or an IPv6 literal without brackets
  std::uint16_t port = 443;
  std::string path = "/";
};

/// Parses a provider endpoint: "wss://host[:port][/path]", "[v6]" allowed.
std::optional<Endpoint> parse_endpoint(std::string_view uri);

/// The refused range an address literal falls in (e.g. "127.0.0.0/8"), or
/// nullopt when the policy allows it. Not a literal: nullopt.
std::optional<std::string> refused_range(std::string_view address_literal);

/// Every address `host` resolves to (a literal resolves to itself); refused
/// as a whole if any one is in a refused range, unless `allow_private` (the
/// explicit development opt-in).
Result<std::vector<std::string>, std::string> resolve_checked(const std::string& host, bool allow_private);

}  // namespace cowboy::cbqs::client
