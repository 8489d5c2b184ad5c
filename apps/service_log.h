// The logging surface every service shares: --log-format (kv or json) and
// --log-level, and the first line, `starting` (src/common/log.h,
// docs/operations.md "Logs"). Header-only: each service links CLI11 already.
#pragma once

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <csignal>
#include <string>

#include "common/log.h"
#include "common/log_events.h"

namespace cowboy::service_log {

struct Flags {
  std::string format = "kv";
  std::string level = "info";
};

/// --log-format; with `level`, --log-level too (cbqsd declares its own, with its own help).
inline void add_flags(CLI::App& app, Flags& flags, bool level = true) {
  app.add_option("--log-format", flags.format, "log lines on stderr: kv (logfmt) or json (one object per line)")
      ->check(CLI::IsMember({"kv", "json"}))
      ->capture_default_str();
  if (level)
    app.add_option("--log-level", flags.level, "trace, debug, info, warn or error")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
        ->capture_default_str();
}

/// Sets the process's log service, format and level (both checked by add_flags) and writes `starting`.
inline void start(std::string_view service, const Flags& flags, std::string_view version) {
  log::init(service, log::parse_format(flags.format).value_or(log::Format::kKv));
  log::set_level(flags.level);
  log::info(log::event::kStarting, log::field("version", version), log::field("pid", static_cast<std::int64_t>(::getpid())));
}

/// `config_loaded` naming the --config file, if one was read (apps/config_file.h).
inline void config_loaded(const CLI::App& app) {
  if (const auto* config = app.get_config_ptr(); config && config->count() > 0)
    log::info(log::event::kConfigLoaded, log::field("path", config->as<std::string>()));
}

/// `listening` for one listener.
inline void listening(std::string_view listener, const std::string& host, std::uint16_t port) {
  log::info(log::event::kListening, log::field("listener", listener), log::field("address", host + ":" + std::to_string(port)));
}

/// `shutdown` naming the stop signal.
inline void shutdown(int signal) {
  log::info(log::event::kShutdown, log::field("signal", signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "other"));
}

}  // namespace cowboy::service_log
