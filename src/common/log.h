// Structured logs in logfmt: one line per event, `key=value` pairs after a
// fixed prefix (`ts=... level=... event=...`), so they can be grepped and
// parsed alike. Never pass a secret to these functions.
#pragma once

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>
#include <utility>

namespace cowboy::log {

/// Sets the process-wide format ("ts=<ISO-8601> level=<level> ...") once.
void init(std::string_view program);

/// `key=value` with the value quoted when it holds a space, '=' or '"'.
std::string field(std::string_view key, std::string_view value);
inline std::string field(std::string_view key, std::uint64_t value) { return field(key, std::to_string(value)); }

template <typename... Fields>
std::string line(std::string_view event, Fields&&... fields) {
  std::string out = "event=" + std::string(event);
  ((out += ' ', out += std::forward<Fields>(fields)), ...);
  return out;
}

/// "trace", "debug", "info", "warn" or "error": events below it are dropped. False for another name.
bool set_level(std::string_view level);

template <typename... Fields>
void debug(std::string_view event, Fields&&... fields) {
  if (spdlog::should_log(spdlog::level::debug)) spdlog::debug(line(event, std::forward<Fields>(fields)...));
}
template <typename... Fields>
void info(std::string_view event, Fields&&... fields) {
  spdlog::info(line(event, std::forward<Fields>(fields)...));
}
template <typename... Fields>
void warn(std::string_view event, Fields&&... fields) {
  spdlog::warn(line(event, std::forward<Fields>(fields)...));
}
template <typename... Fields>
void error(std::string_view event, Fields&&... fields) {
  spdlog::error(line(event, std::forward<Fields>(fields)...));
}

}  // namespace cowboy::log
