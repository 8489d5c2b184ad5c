// cbqsd's broker: a wss:// listener (TLS 1.2+, one frame per binary message)
// in front of the Core, a committer thread for synced batch writes, and a
// snapshot refresher reading the chain every cbqs.snapshot_refresh_ms.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "cbqs/broker/core.h"
#include "cbqs/chain/snapshot.h"
#include "cbqs/store/store.h"

namespace cowboy::cbqs::broker {

struct BrokerConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7447;  // 0 picks a free port
  std::filesystem::path tls_certificate;
  std::filesystem::path tls_private_key;
  ProviderIdentity provider;
  std::uint64_t chain_block_ms = 1000;  // the chain's block interval, for the snapshot's age
  std::size_t max_connections = 1'024;
  /// One peer address holds at most this many connections, so one host
  /// flooding the listener leaves the rest of the slots to others.
  std::size_t max_connections_per_address = 128;
  /// Read memory for large frames beyond each connection's 64 KiB
  /// (net/read_budget.h); a frame it cannot hold gets Unavailable and 1013.
  std::size_t read_budget_bytes = 256 * 1024 * 1024;
  /// Per-connection write queue: above the high-water mark the broker stops
  /// reading that connection's frames until the queue drains below the low one,
  /// so a client that sends without reading cannot grow the broker's memory.
  std::size_t write_high_water = 8 * 1024 * 1024;
  std::size_t write_low_water = 1024 * 1024;
  /// Threads the stream owners run on (CoreConfig::io_threads): 1 keeps them on
  /// the io thread with the connections.
  std::size_t io_threads = 1;
};

class Broker {
 public:
  Broker(BrokerConfig config, store::Store& store, SnapshotProvider& chain, const Clock& clock, Entropy& entropy);
  ~Broker();

  /// Binds, reads the first snapshot (a failure is not fatal: the broker then
  /// refuses sessions with ChainStateStale until a read succeeds) and serves.
  Result<Unit, std::string> start();
  /// Commits open batches, closes connections, stops every thread.
  void stop();
  std::uint16_t port() const;
  /// §17 readiness: the store is healthy, the listener bound, the snapshot fresh.
  bool ready(std::string* why = nullptr) const;
  CoreMetrics metrics() const;
  /// The dead-letter view of a group (docs/protocol.md §O); nullopt for an unknown group.
  std::optional<std::vector<DeadLetter>> dead_letters(const Bytes32& stream_id, GroupId group_id,
                                                      Sequence after, std::size_t limit);
  /// Redelivers every dead letter of a group; how many, or nullopt for an unknown group.
  std::optional<std::size_t> redrive(const Bytes32& stream_id, GroupId group_id);
  /// Every group of a stream with its state now; nullopt if the stream cannot be loaded.
  std::optional<std::vector<GroupReport>> group_reports(const Bytes32& stream_id);
  /// Height of the snapshot in force (0 before the first).
  std::uint64_t snapshot_height() const;
  /// Seconds since the snapshot in force was fetched from the chain (-1 before the first).
  double snapshot_age_seconds() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cowboy::cbqs::broker
