#include "transit/node/node.h"

#include "transit/contract/envelope.h"

namespace cowboy::transit::node {

Result<std::unique_ptr<Node>, std::string> Node::open(const NodeConfig& config, const Clock& clock) {
  auto journal = Journal::open(config.data_dir, config.genesis, config.storage_env);
  if (!journal.ok()) return Err{journal.error()};
  auto authority = (*journal)->load();
  if (!authority.ok()) return Err{authority.error()};
  (*journal)->reclaim(authority->head().floor);
  (*journal)->relocate(authority->head().compaction_cursor);  // finishes a relocation a stop or a crash cut short
  authority->limit_resident(config.resident_processes);  // finishes a reclaim a stop or a crash cut short
  authority->set_budgets(config.budgets);
  std::unique_ptr<Node> node(new Node());
  node->data_dir_ = config.data_dir;
  auto store = LocalPayloadStore::open(config.data_dir / "payloads");
  if (!store.ok()) return Err{store.error()};
  node->payload_store_ = std::move(*store);
  Entropy* entropy = config.entropy;
  if (!entropy) entropy = (node->system_entropy_ = std::make_unique<SystemEntropy>()).get();
  node->sequencer_ = std::make_unique<Sequencer>(std::move(*journal), std::move(*authority), clock, *entropy,
                                                 *node->payload_store_, config.snapshots,
                                                 SequencerOptions{config.max_pending, config.request_deadline});
  node->routes_ = std::make_unique<Routes>(*node->sequencer_);
  net::HttpServerOptions options;
  options.max_body_bytes = kMaxCommandBodyBytes;  // the query route holds its own bodies to kMaxEnvelopeBytes
  options.threads = config.io_threads;
  options.max_connections = config.max_connections;
  options.max_connections_per_address = config.max_connections_per_address;
  const Rejection too_large = make_rejection(node->sequencer_->genesis().realm, Reason::kTooLarge,
                                             "body over " + std::to_string(kMaxCommandBodyBytes) + " bytes");
  options.too_large = net::HttpReply{413, "application/json", to_json(too_large)};
  // A header over the server's 8 KiB (a request needs a few hundred bytes): 431, before any of it is kept.
  const Rejection header_too_large = make_rejection(
      node->sequencer_->genesis().realm, Reason::kTooLarge,
      "request header over " + std::to_string(options.max_header_bytes) + " bytes");
  options.header_too_large = net::HttpReply{431, "application/json", to_json(header_too_large)};
  try {
    node->server_ = std::make_unique<net::HttpServer>(
        [routes = node->routes_.get()](net::HttpRequest request, net::HttpResponder respond) {
          routes->handle(std::move(request), std::move(respond));
        },
        config.listen_address, config.port, options);
    node->payload_listener_ = std::make_unique<PayloadListener>(*node->sequencer_, *node->payload_store_,
                                                                config.payload_listen.first,
                                                                config.payload_listen.second, config.payload_transfers);
    if (config.admin)
      node->admin_ = std::make_unique<net::HttpServer>(
          [n = node.get()](const net::HttpRequest& request) { return n->admin(request); }, config.admin->first,
          config.admin->second);
  } catch (const std::exception& e) {
    return Err{std::string(e.what())};
  }
  node->server_->start();
  node->payload_listener_->start();
  if (node->admin_) node->admin_->start();
  return node;
}

Node::~Node() {
  if (admin_) admin_->stop();
  if (payload_listener_) payload_listener_->stop();  // its transfers ask the sequencer: stopped before it
  if (server_) server_->stop();  // no new work, then the sequencer answers what is queued
  sequencer_.reset();
}

}  // namespace cowboy::transit::node
