#include "common/log.h"

#include <spdlog/sinks/stdout_sinks.h>

namespace cowboy::log {

void init(std::string_view program) {
  // Logs go to stderr, uncoloured: stdout carries the human start-up banner.
  spdlog::set_default_logger(spdlog::stderr_logger_mt(std::string(program)));
  spdlog::set_pattern("ts=%Y-%m-%dT%H:%M:%S.%eZ level=%l prog=" + std::string(program) + " %v", spdlog::pattern_time_type::utc);
}

bool set_level(std::string_view level) {
  for (auto l : {spdlog::level::trace, spdlog::level::debug, spdlog::level::info, spdlog::level::warn, spdlog::level::err}) {
    auto name = spdlog::level::to_string_view(l);
    if (std::string_view(name.data(), name.size()) == level || (l == spdlog::level::warn && level == "warn") ||
        (l == spdlog::level::err && level == "error")) {
      spdlog::set_level(l);
      return true;
    }
  }
  return false;
}

std::string field(std::string_view key, std::string_view value) {
  bool quote = value.empty() || value.find_first_of(" =\"") != std::string_view::npos;
  std::string out(key);
  out += '=';
  if (!quote) return out += value;
  out += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out += '"';
}

}  // namespace cowboy::log
