// What the transit CLI's command files share: the global options, how an
// answer and an error are printed, and the exit statuses (0 done, 1 rejected
// or malformed, 2 usage, 3 outcome uncertain).
#pragma once

#include <CLI/CLI.hpp>

#include "transit/client.h"

namespace cowboy::transit::cli {

struct Global {
  std::string dev_dir, endpoint, realm, key_file;
  Id principal = 0;
  bool json = false;
};

int report(const Global& g, const ClientError& e);
void print_receipt(const Global& g, const Receipt& r);
int usage(const std::string& message);

/// Options hold ids as the numbers typed; a command takes each as its type (values.h).
template <typename T> std::optional<T> id_of(const std::optional<Id>& v) {
  return v ? std::optional<T>(T{*v}) : std::nullopt;
}

/// The state commands: resources, processes, sends, turns and reads (state.cc).
class StateCommands {
 public:
  explicit StateCommands(CLI::App& app);
  /// The exit status when one of these commands was parsed.
  std::optional<int> run(const Global& g, Client& client);

 private:
  struct Options;
  std::shared_ptr<Options> o_;
};

/// The effect commands: transit effect show/list/attempt/observe/close/cancel (effects.cc).
class EffectCommands {
 public:
  explicit EffectCommands(CLI::App& app);
  std::optional<int> run(const Global& g, Client& client);

 private:
  struct Options;
  std::shared_ptr<Options> o_;
};

/// Checkpoints and history trimming (history.cc).
class HistoryCommands {
 public:
  explicit HistoryCommands(CLI::App& app);
  std::optional<int> run(const Global& g, Client& client);

 private:
  struct Options;
  std::shared_ptr<Options> o_;
};

/// Leased snapshots: transit snapshot open/entries/read/close (snapshots.cc).
class SnapshotCommands {
 public:
  explicit SnapshotCommands(CLI::App& app);
  std::optional<int> run(const Global& g, Client& client);

 private:
  struct Options;
  std::shared_ptr<Options> o_;
};

/// Payloads: transit payload declare/put/ready/get/show/retire/delete-bytes/deleted (payloads.cc).
class PayloadCommands {
 public:
  explicit PayloadCommands(CLI::App& app);
  std::optional<int> run(const Global& g, Client& client);

 private:
  struct Options;
  std::shared_ptr<Options> o_;
};

/// Runtime binding: transit runtime intent/observe/upgrade/activate/show (runtime.cc).
class RuntimeCommands {
 public:
  explicit RuntimeCommands(CLI::App& app);
  std::optional<int> run(const Global& g, Client& client);

 private:
  struct Options;
  std::shared_ptr<Options> o_;
};

/// Collection: transit collect --pid --kind [--record] (collection.cc).
class CollectCommands {
 public:
  explicit CollectCommands(CLI::App& app);
  std::optional<int> run(const Global& g, Client& client);

 private:
  struct Options;
  std::shared_ptr<Options> o_;
};

/// Block records: transit blocks show/retire/delete (blocks.cc).
class BlockCommands {
 public:
  explicit BlockCommands(CLI::App& app);
  std::optional<int> run(const Global& g, Client& client);

 private:
  struct Options;
  std::shared_ptr<Options> o_;
};
void print_block(const BlockInfo& b);

/// Storage maintenance: transit storage [fence|compact] (storage.cc).
class StorageCommands {
 public:
  explicit StorageCommands(CLI::App& app);
  std::optional<int> run(const Global& g, Client& client);

 private:
  struct Options;
  std::shared_ptr<Options> o_;
};

/// transit status: a transitd's admin listener (host:port) for a person, or --json (status.cc).
/// 0 ready, 1 not ready, 3 unreachable.
int status(const std::string& admin, bool json);

/// Text, or hex:... for any bytes (the state and effect commands' spelling).
std::optional<std::vector<std::uint8_t>> parse_bytes(const std::string& text);
std::string show_bytes(const std::vector<std::uint8_t>& bytes);

}  // namespace cowboy::transit::cli
