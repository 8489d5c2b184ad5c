// Structured logs: one line per event on stderr, every line carrying `ts`,
// `level`, `service` and `event` first, then the event's typed fields, in one
// of two renderings chosen by `--log-format`:
//
//   kv    ts=2026-12-06T06:40:54.123Z level=info service=cip11d event=listening listener=quic address=127.0.0.1:7443
//   json  {"ts":"2026-12-06T06:40:54.123Z","level":"info","service":"cip11d","event":"listening","listener":"quic",...}
//
// kv (logfmt) quotes a value only when it must (empty, or holding a space,
// '=', '"', '\\' or a control character) and escapes inside the quotes so a
// value never breaks its line; json is one object per line, numbers and
// booleans unquoted, text escaped by the JSON library. Event names shared by
// the services are in common/log_events.h. Never pass a secret (key material,
// a token, a grant's signature) to these functions.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace cowboy::log {

enum class Format { kKv, kJson };
enum class Level { kTrace, kDebug, kInfo, kWarn, kError };

/// "kv" or "json"; nullopt for another name.
std::optional<Format> parse_format(std::string_view name);
std::string_view level_name(Level level);  // "trace" ... "error"

/// One field of an event: text, an integer or a boolean. Keys are literals.
struct Field {
  std::string_view key;
  std::variant<std::string, std::uint64_t, std::int64_t, bool> value;
};

inline Field field(std::string_view key, std::string_view value) { return {key, std::string(value)}; }
inline Field field(std::string_view key, const char* value) { return {key, std::string(value)}; }
inline Field field(std::string_view key, const std::string& value) { return {key, value}; }
template <std::integral T>
Field field(std::string_view key, T value) {
  if constexpr (std::same_as<T, bool>) return {key, value};
  else if constexpr (std::signed_integral<T>) return {key, static_cast<std::int64_t>(value)};
  else return {key, static_cast<std::uint64_t>(value)};
}

/// `2026-12-06T06:40:54.123Z`: UTC, milliseconds.
std::string timestamp(std::chrono::system_clock::time_point at);

/// One event as one line (no newline), in `format`; pure, so tests pin it byte for byte.
std::string render(Format format, std::string_view ts, Level level, std::string_view service, std::string_view event,
                   std::span<const Field> fields);
inline std::string render(Format format, std::string_view ts, Level level, std::string_view service,
                          std::string_view event, std::initializer_list<Field> fields) {
  return render(format, ts, level, service, event, std::span<const Field>(fields.begin(), fields.size()));
}

/// Sets the service name and rendering for the process (logs go to stderr).
/// Before it, lines carry the program's name and kv.
void init(std::string_view service, Format format = Format::kKv);

/// "trace", "debug", "info", "warn" or "error": events below it are dropped. False for another name.
bool set_level(std::string_view level);
bool enabled(Level level);

/// The event as the process renders it (its service and format, the time now).
std::string line(Level level, std::string_view event, std::span<const Field> fields);

/// line(), written whole to stderr, unless `level` is below the process's.
void emit(Level level, std::string_view event, std::span<const Field> fields);
inline void emit(Level level, std::string_view event, std::initializer_list<Field> fields) {
  emit(level, event, std::span<const Field>(fields.begin(), fields.size()));
}

template <typename... Fields>
void debug(std::string_view event, Fields&&... fields) {
  if (enabled(Level::kDebug)) emit(Level::kDebug, event, {Field(std::forward<Fields>(fields))...});
}
template <typename... Fields>
void info(std::string_view event, Fields&&... fields) {
  if (enabled(Level::kInfo)) emit(Level::kInfo, event, {Field(std::forward<Fields>(fields))...});
}
template <typename... Fields>
void warn(std::string_view event, Fields&&... fields) {
  if (enabled(Level::kWarn)) emit(Level::kWarn, event, {Field(std::forward<Fields>(fields))...});
}
template <typename... Fields>
void error(std::string_view event, Fields&&... fields) {
  if (enabled(Level::kError)) emit(Level::kError, event, {Field(std::forward<Fields>(fields))...});
}

}  // namespace cowboy::log
