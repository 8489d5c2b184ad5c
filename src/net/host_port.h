// "host:port" as the command-line flags spell a listen address.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <utility>

namespace cowboy::net {

/// Splits at the last ':'; nullopt for an empty host or a port outside 0..65535.
inline std::optional<std::pair<std::string, std::uint16_t>> parse_host_port(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  unsigned port = 0;
  const char* first = text.data() + colon + 1;
  const char* last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, port);
  if (ec != std::errc() || end != last || first == last || port > 65535) return std::nullopt;
  return std::pair{text.substr(0, colon), static_cast<std::uint16_t>(port)};
}

}  // namespace cowboy::net
