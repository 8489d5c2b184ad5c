// transitd as a library: the journal opened (or created from a genesis), the
// published state recovered, the sequencer started and the HTTP routes served;
// beside them, on a listener of its own, the admin routes (admin.cc).
#pragma once

#include "transit/node/http_routes.h"
#include "transit/node/payload_routes.h"

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
  std::size_t max_pending = 8192;                  // requests in the node at once; beyond: `overloaded`
  std::chrono::milliseconds request_deadline{5000};  // unanswered by then: ServiceUncertain (0: no deadline)
  std::size_t resident_processes = Authority::kResidentProcesses;  // process records kept in memory (decisions 130, 158)
  Authority::DependencyBudgets budgets;  // reported in capabilities, enforced at create, spawn, create_resource (decision 156)
  /// GET /healthz, /readyz, /metrics on their own listener (host, port; port 0: any free one). None: no listener.
  std::optional<std::pair<std::string, std::uint16_t>> admin;
  /// The payload listener (decision 87): PUT/GET/DELETE /v1/payloads/{id}, on
  /// its own port (0: any free one). Its bytes are kept in <data_dir>/payloads.
  std::pair<std::string, std::uint16_t> payload_listen{"127.0.0.1", 0};
  PayloadListenerOptions payload_transfers;
};

class Node {
 public:
  static Result<std::unique_ptr<Node>, std::string> open(const NodeConfig& config, const Clock& clock);
  ~Node();
  std::uint16_t port() const { return server_->port(); }
  /// The admin listener's port (0: none).
  std::uint16_t admin_port() const { return admin_ ? admin_->port() : 0; }
  std::uint16_t payload_port() const { return payload_listener_->port(); }
  PayloadStore& payload_store() { return *payload_store_; }
  Sequencer& sequencer() { return *sequencer_; }

  /// /readyz (admin.cc): nullopt when ready, else why not.
  std::optional<std::string> not_ready() const;
  /// /metrics (admin.cc): the Prometheus text format, transitd_* then process_*.
  std::string metrics_text() const;
  /// The admin routes: GET /healthz, /readyz, /metrics.
  net::HttpReply admin(const net::HttpRequest& request) const;

 private:
  Node() = default;
  std::unique_ptr<SystemEntropy> system_entropy_;  // when the config injects none
  std::filesystem::path data_dir_;
  std::unique_ptr<LocalPayloadStore> payload_store_;  // outlives the sequencer, which asks it
  std::unique_ptr<Sequencer> sequencer_;
  std::unique_ptr<PayloadListener> payload_listener_;
  std::unique_ptr<Routes> routes_;
  std::unique_ptr<net::HttpServer> server_;
  std::unique_ptr<net::HttpServer> admin_;
};

}  // namespace cowboy::transit::node
