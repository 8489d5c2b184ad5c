// `transitd --maintain`: the maintenance process beside a transitd
// (docs/operations.md, "The maintenance process"; docs/transit.md, decision 50).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "service_log.h"

namespace cowboy::transitd {

struct MaintainFlags {
  bool enabled = false;
  std::string endpoint = "127.0.0.1:7550";  // the transitd to maintain
  std::string realm;
  std::uint64_t principal = 0;
  std::string key_file;
  /// Its own /metrics, /healthz, /readyz; the flag is shared with the node's (main.cc), whose default is 7552.
  std::string admin_listen;  // empty: kDefaultAdmin
  static constexpr const char* kDefaultAdmin = "127.0.0.1:7551";
  int idle_ms = 20;
  std::size_t collects_per_pass = 64;  // collect commands per collection pass, at most (decision 155)
  std::uint64_t checkpoint_every = 0;  // positions between checkpoints it publishes; 0: none
  std::uint64_t storage_every_ms = 60'000;  // trusted time between storage runs (decision 181); 0: none
  std::size_t compacts_per_run = 8;         // storage_compact commands per storage run, at most
  service_log::Flags logs;  // --log-format, --log-level: the node's too

  /// Adds --maintain and its options to `app`.
  void add_to(CLI::App& app);
};

/// Runs the maintenance process until SIGINT or SIGTERM; its exit status.
/// `dev_dir`: take the endpoint, realm, principal and key from a transitd --dev directory.
int run_maintain(const MaintainFlags& flags, const std::string* dev_dir);

}  // namespace cowboy::transitd
