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
  g->in_transit += bytes.size();
  std::lock_guard lock(g->mu);
  g->frames.emplace_back(std::move(bytes), std::holds_alternative<ErrorFrame>(frame));
  if (std::exchange(g->posted, true)) return;
  boost::asio::post(io_, [this, connection, g = std::move(g)] { hand_over(connection, *g); });
}

void Outbox::hand_over(ConnectionId connection, Gauge& g) {
  std::vector<std::pair<Bytes, bool>> frames;
  {
    std::lock_guard lock(g.mu);
    frames.swap(g.frames);
    g.posted = false;
  }
  for (auto& [bytes, is_error] : frames) {
    const std::size_t size = bytes.size();
    g.peer_queued = deliver_(connection, std::move(bytes), is_error);
    g.in_transit -= size;
  }
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
