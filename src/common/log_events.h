// The event names the services share (cbqsd, transitd, cip11d, cip11-runner):
// the same happening has the same name in each, so one query finds it in all
// (docs/operations.md, "Logs"). Events only one subsystem has (session_opened,
// runner_admitted, transit_maintain_refused...) are named where they are
// logged and listed in the docs beside these.
#pragma once

#include <string_view>

namespace cowboy::log::event {

/// The process began: `version`, `pid`. The first line of every service.
inline constexpr std::string_view kStarting = "starting";
/// A config file was read (--config): `path`.
inline constexpr std::string_view kConfigLoaded = "config_loaded";
/// RLIMIT_NOFILE raised at start: `soft`, `hard`.
inline constexpr std::string_view kDescriptorLimit = "descriptor_limit";
/// The durable store is open: `store` (journal, broker, chain, runner_state), `path`, and where it stands.
inline constexpr std::string_view kStoreOpened = "store_opened";
/// A listener is bound: `listener` (http, admin, payloads, quic, wss, chain), `address` (host:port actually bound).
inline constexpr std::string_view kListening = "listening";
/// Start-up finished, work is taken: once, after every `listening`.
inline constexpr std::string_view kReady = "ready";
/// A stop signal arrived and the service is stopping: `signal`.
inline constexpr std::string_view kShutdown = "shutdown";
/// The service stopped cleanly; the last line before exit 0.
inline constexpr std::string_view kStopped = "stopped";

}  // namespace cowboy::log::event
