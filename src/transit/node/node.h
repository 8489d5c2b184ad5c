// transitd as a library: the journal opened (or created from a genesis), the
// published state recovered, the sequencer started and the HTTP routes served.
#pragma once

#include "transit/node/http_routes.h"

namespace cowboy::transit::node {

struct NodeConfig {
  std::filesystem::path data_dir;
  std::optional<Genesis> genesis;  // required for a new data directory
  std::string listen_address = "127.0.0.1";
  std::uint16_t port = 0;          // 0: any free port
  int io_threads = 2;
  std::size_t max_connections = 1024;
  std::size_t max_connections_per_address = 256;  // many clients may share one host
  rocksdb::Env* storage_env = nullptr;             // the journal's file system (null: the default; tests inject faults)
  Entropy* entropy = nullptr;                      // snapshot tokens (null: the system CSPRNG)
  SnapshotLimits snapshots;                        // open snapshots per principal and per node
};

class Node {
 public:
  static Result<std::unique_ptr<Node>, std::string> open(const NodeConfig& config, const Clock& clock);
  ~Node();
  std::uint16_t port() const { return server_->port(); }
  Sequencer& sequencer() { return *sequencer_; }

 private:
  Node() = default;
  std::unique_ptr<SystemEntropy> system_entropy_;  // when the config injects none
  std::unique_ptr<Sequencer> sequencer_;
  std::unique_ptr<Routes> routes_;
  std::unique_ptr<net::HttpServer> server_;
};

}  // namespace cowboy::transit::node
