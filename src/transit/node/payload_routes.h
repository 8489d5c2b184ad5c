// The payload listener (docs/transit.md, decisions 87-90): PUT, GET and DELETE
// /v1/payloads/{id}, apart from the command listener and with a transport
// budget of its own. Bytes never pass through the 256-byte message path, a
// signed envelope or a journal record: a body is moved in kPayloadChunkBytes
// chunks between the socket and the payload store, whatever its length.
//
// Each request carries X-Transit-Query, a signed `payload` query for the id
// in its path. The header is decoded, authenticated and answered by the
// sequencer exactly as POST /v1/query would answer it (current read
// authorization at the payload's PID, the final authority fence); what the
// route then does is judged on that answer: PUT and DELETE by the publisher
// only, PUT of a declared payload, GET of a ready one, DELETE of a retired one.
//
// Budget: one request per connection; at most max_transfers bodies moving at
// once (beyond: transfers_full) and a few connections more for refusals
// (beyond: closed at accept), of which one peer address holds at most
// max_connections_per_address (beyond: closed at accept), so that idle
// connections from one host cannot keep an uploader out; a header within 5 s,
// and every chunk within io_timeout. Each connection has a thread and an
// io_context of its own.
#pragma once

#include <atomic>
#include <list>
#include <mutex>
#include <thread>

#include "net/connection_slots.h"
#include "transit/node/payload_store.h"
#include "transit/node/sequencer.h"

namespace cowboy::transit::node {

struct PayloadListenerOptions {
  std::size_t max_transfers = 4;
  std::size_t max_connections_per_address = 2;  // of the max_transfers + 4 connections held at once
  std::chrono::milliseconds io_timeout{30000};
};

class PayloadListener {
 public:
  /// Binds address:port (0: any free port); throws std::runtime_error if it cannot.
  PayloadListener(Sequencer& sequencer, PayloadStore& store, const std::string& address, std::uint16_t port,
                  PayloadListenerOptions options = {});
  ~PayloadListener();  // stop()
  std::uint16_t port() const { return port_; }
  void start();
  /// Stops accepting, cuts the connections under way (an upload cut short leaves nothing) and joins them.
  void stop();
  /// Transfers refused transfers_full since start (the admin listener's /metrics could read it).
  std::uint64_t transfers_refused() const { return refused_.load(); }

 private:
  struct Connection;
  void accept_loop();
  void serve(Connection& connection);
  void reap();  // joins the finished connections' threads

  Sequencer& sequencer_;
  PayloadStore& store_;
  const PayloadListenerOptions options_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> transfers_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::thread acceptor_;
  net::ConnectionSlots slots_;  // taken at accept, given back as a connection is reaped
  std::mutex mutex_;
  std::list<std::unique_ptr<Connection>> connections_;  // under mutex_
};

}  // namespace cowboy::transit::node
