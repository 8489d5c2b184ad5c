// Outbound for owners that run off the io thread (CoreConfig::io_threads > 1).
// A frame is encoded on the owner's thread and queued on its connection's
// gauge; the first frame queued posts one hand-over to the io thread, which
// takes every frame queued by then (a committed batch's Appendeds cross in one
// post, not one each) and keeps their order. Whether a connection takes more
// is read from the gauge: the bytes queued and not yet handed over plus the
// connection's write queue, as the io thread last saw it.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cbqs/broker/stream/owner.h"

namespace cowboy::cbqs::broker {

class Outbox final : public Outbound {
 public:
  struct Gauge {
    std::mutex mu;
    std::vector<std::pair<Bytes, bool>> frames;  // (frame, is an Error), waiting for the hand-over
    bool posted = false;                         // a hand-over is on its way to the io thread
    std::atomic<std::size_t> in_transit{0};      // the bytes of `frames`
    std::atomic<std::size_t> peer_queued{0};     // the connection's write queue
  };
  /// Runs on the io thread: hands a frame to a connection (nothing if it is
  /// gone) and says how many bytes the connection then holds queued.
  using Deliver = std::function<std::size_t(ConnectionId, Bytes frame, bool is_error)>;

  Outbox(boost::asio::any_io_executor io, std::size_t queue_limit, Deliver deliver);

  // Any thread
  void send(ConnectionId connection, const CbqsServerFrameV2& frame) override;
  Room room(ConnectionId connection) const override;

  // The io thread: a connection's gauge lives from its open to its close.
  std::shared_ptr<Gauge> opened(ConnectionId connection);
  void closed(ConnectionId connection);

 private:
  std::shared_ptr<Gauge> gauge(ConnectionId connection) const;
  void hand_over(ConnectionId connection, Gauge& g);

  boost::asio::any_io_executor io_;
  const std::size_t queue_limit_;
  Deliver deliver_;
  mutable std::mutex mu_;
  std::map<ConnectionId, std::shared_ptr<Gauge>> gauges_;
};

}  // namespace cowboy::cbqs::broker
