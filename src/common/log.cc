#include "common/log.h"

#include <errno.h>  // program_invocation_short_name
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <ctime>
#include <nlohmann/json.hpp>

namespace cowboy::log {
namespace {

struct Process {
  std::string service = program_invocation_short_name;
  Format format = Format::kKv;
};

// Set once by init() on the main thread before other threads start, read after.
Process& process() {
  static Process p = [] {
    spdlog::set_pattern("%v");  // the line is whole already; pre-init lines too
    return Process{};
  }();
  return p;
}

constexpr std::array<spdlog::level::level_enum, 5> kSpdLevels{spdlog::level::trace, spdlog::level::debug,
                                                                spdlog::level::info, spdlog::level::warn,
                                                                spdlog::level::err};
constexpr std::array<std::string_view, 5> kLevelNames{"trace", "debug", "info", "warn", "error"};

spdlog::level::level_enum spd(Level level) { return kSpdLevels[static_cast<std::size_t>(level)]; }

bool needs_quotes(std::string_view v) {
  if (v.empty()) return true;
  for (unsigned char c : v)
    if (c <= ' ' || c == '=' || c == '"' || c == '\\' || c == 0x7f) return true;
  return false;
}

void append_kv_text(std::string& out, std::string_view v) {
  if (!needs_quotes(v)) {
    out += v;
    return;
  }
  out += '"';
  for (unsigned char c : v) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\u%04x", c);
          out += hex;
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through as it is
        }
    }
  }
  out += '"';
}

// JSON text by the JSON library: control characters escaped, UTF-8 kept, an
// invalid byte replaced by U+FFFD (a log line must not throw).
void append_json_text(std::string& out, std::string_view v) {
  out += nlohmann::json(std::string(v)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void append_value(std::string& out, Format format, const Field& f) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          format == Format::kJson ? append_json_text(out, v) : append_kv_text(out, v);
        } else if constexpr (std::is_same_v<T, bool>) {
          out += v ? "true" : "false";
        } else {
          out += std::to_string(v);
        }
      },
      f.value);
}

}  // namespace

std::optional<Format> parse_format(std::string_view name) {
  if (name == "kv") return Format::kKv;
  if (name == "json") return Format::kJson;
  return std::nullopt;
}

std::string_view level_name(Level level) { return kLevelNames[static_cast<std::size_t>(level)]; }

std::string timestamp(std::chrono::system_clock::time_point at) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char buf[80];  // room for any int the compiler imagines
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

std::string render(Format format, std::string_view ts, Level level, std::string_view service, std::string_view event,
                   std::span<const Field> fields) {
  std::string out;
  out.reserve(128);
  if (format == Format::kJson) {
    out += "{\"ts\":";
    append_json_text(out, ts);
    out += ",\"level\":";
    append_json_text(out, level_name(level));
    out += ",\"service\":";
    append_json_text(out, service);
    out += ",\"event\":";
    append_json_text(out, event);
    for (const auto& f : fields) {
      out += ',';
      append_json_text(out, f.key);
      out += ':';
      append_value(out, format, f);
    }
    out += '}';
    return out;
  }
  out += "ts=";
  append_kv_text(out, ts);
  out += " level=";
  out += level_name(level);
  out += " service=";
  append_kv_text(out, service);
  out += " event=";
  append_kv_text(out, event);
  for (const auto& f : fields) {
    out += ' ';
    out += f.key;
    out += '=';
    append_value(out, format, f);
  }
  return out;
}

void init(std::string_view service, Format format) {
  // Logs go to stderr, uncoloured: stdout carries the human start-up banner.
  spdlog::set_default_logger(spdlog::stderr_logger_mt(std::string(service)));
  spdlog::set_pattern("%v");
  auto& p = process();
  p.service = std::string(service);
  p.format = format;
}

bool set_level(std::string_view level) {
  for (std::size_t i = 0; i < kLevelNames.size(); ++i)
    if (kLevelNames[i] == level) {
      spdlog::set_level(kSpdLevels[i]);
      return true;
    }
  return false;
}

bool enabled(Level level) { return spdlog::should_log(spd(level)); }

std::string line(Level level, std::string_view event, std::span<const Field> fields) {
  const auto& p = process();
  return render(p.format, timestamp(std::chrono::system_clock::now()), level, p.service, event, fields);
}

void emit(Level level, std::string_view event, std::span<const Field> fields) {
  if (!enabled(level)) return;
  const auto text = line(level, event, fields);
  spdlog::default_logger_raw()->log(spd(level), spdlog::string_view_t(text.data(), text.size()));
}

}  // namespace cowboy::log
