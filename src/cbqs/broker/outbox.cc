#include "cbqs/broker/outbox.h"

#include <boost/asio/post.hpp>

#include "cbqs/wire/codec.h"

namespace cowboy::cbqs::broker {

Outbox::Outbox(boost::asio::any_io_executor io, std::size_t queue_limit, Deliver deliver)
    : io_(std::move(io)), queue_limit_(queue_limit), deliver_(std::move(deliver)) {}

void Outbox::send(ConnectionId connection, const CbqsServerFrameV2& frame) {
  auto g = gauge(connection);
  if (!g) return;  // gone
  Bytes bytes = encode(frame);
  const std::size_t size = bytes.size();
  g->in_transit += size;
  boost::asio::post(io_, [this, g = std::move(g), connection, size, bytes = std::move(bytes),
                          is_error = std::holds_alternative<ErrorFrame>(frame)]() mutable {
    g->peer_queued = deliver_(connection, std::move(bytes), is_error);
    g->in_transit -= size;
  });
}

Outbound::Room Outbox::room(ConnectionId connection) const {
  auto g = gauge(connection);
  if (!g) return Room::kGone;
  return g->in_transit + g->peer_queued > queue_limit_ ? Room::kBusy : Room::kOpen;
}

std::shared_ptr<Outbox::Gauge> Outbox::opened(ConnectionId connection) {
  std::lock_guard lock(mu_);
  return gauges_[connection] = std::make_shared<Gauge>();
}

void Outbox::closed(ConnectionId connection) {
  std::lock_guard lock(mu_);
  gauges_.erase(connection);
}

std::shared_ptr<Outbox::Gauge> Outbox::gauge(ConnectionId connection) const {
  std::lock_guard lock(mu_);
  auto it = gauges_.find(connection);
  return it == gauges_.end() ? nullptr : it->second;
}

}  // namespace cowboy::cbqs::broker
