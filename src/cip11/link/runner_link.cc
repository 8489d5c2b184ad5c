#include "cip11/link/runner_link.h"

namespace cowboy::cip11 {

Result<std::unique_ptr<RunnerEndpoint>, std::string> RunnerEndpoint::open(boost::asio::io_context& io,
                                                                          SignatureWorker& worker,
                                                                          net::ReadBudget& budget,
                                                                          quic::EndpointConfig config) {
  std::unique_ptr<RunnerEndpoint> ep(new RunnerEndpoint(io, worker, budget));
  RunnerEndpoint* self = ep.get();
  auto route = [self](quic::Connection& c) -> RunnerLink* {
    auto it = self->routes_.find(&c);
    return it == self->routes_.end() ? nullptr : it->second;
  };
  quic::Events events;
  events.on_established = [route](quic::Connection& c) {
    if (RunnerLink* link = route(c)) link->on_established(c);
  };
  events.on_stream_data = [route](quic::Connection& c, std::int64_t stream, ByteView data) {
    if (RunnerLink* link = route(c)) link->on_stream_data(stream, data);
  };
  events.on_stream_end = [route](quic::Connection& c, std::int64_t stream) {
    if (RunnerLink* link = route(c)) link->on_stream_end(stream);
  };
  events.on_stream_closed = [route](quic::Connection& c, std::int64_t stream) {
    if (RunnerLink* link = route(c)) link->on_stream_closed(stream);
  };
  events.on_closed = [self, route](quic::Connection& c, const std::string& why) {
    RunnerLink* link = route(c);
    self->routes_.erase(&c);
    if (link) link->on_closed(why);
  };
  auto endpoint = quic::Endpoint::open(io, std::move(config), std::move(events));
  if (!endpoint) return Err{endpoint.error()};
  ep->endpoint_ = std::move(*endpoint);
  return ep;
}

RunnerLink::RunnerLink(RunnerEndpoint& endpoint, const Signer& me, Admission& admission, Entropy& entropy,
                       RunnerLinkConfig config, Callbacks callbacks)
    : endpoint_(endpoint), me_(me), admission_(admission), entropy_(entropy), config_(std::move(config)),
      callbacks_(std::move(callbacks)), backoff_(entropy), retry_(endpoint.io_) {}

RunnerLink::~RunnerLink() {
  retry_.cancel();
  channel_.reset();
  if (connection_) {
    endpoint_.routes_.erase(connection_);
    connection_->close(0);
  }
}

void RunnerLink::start() {
  if (leaving_) return;
  ++stats_.connects;
  auto c = endpoint_.quic().connect(config_.host, config_.port);
  if (!c) return reconnect_later();
  connection_ = *c;
  endpoint_.routes_[connection_] = this;
}

void RunnerLink::on_established(quic::Connection& c) {
  Channel::Callbacks cb;
  cb.on_admitted = [this](Channel&) {
    backoff_.reset();
    nonces_ = HeartbeatNonces{};  // per connection, from 0 (§6.3)
    accepting_ = true;
    retry_after_blocks_.reset();
    ++stats_.admissions;
    if (callbacks_.on_admitted) callbacks_.on_admitted();
    ping();  // present from the first block, not the next
  };
  cb.on_frame = [this](Channel&, std::int64_t stream, const Frame& f, const Res<Unit>& seal) { on_frame(stream, f, seal); };
  cb.on_goodbye = [this](Channel&, const Goodbye& bye, bool by_peer) {
    if (by_peer) {
      retry_after_blocks_ = bye.retry_after_blocks;
      peer_goodbye_ = bye.reason;
      peer_goodbye_detail_ = bye.detail.value_or("");
      // §5.3 point 4: never back under the pair whose window ended.
      if (bye.reason == GoodbyeReason::kOverlapExpired) leaving_ = true;
    }
  };
  LocalOffer offer = config_.offer;
  offer.block_height = height_;
  channel_ = std::make_unique<Channel>(c,
                                       Channel::Setup{me_, offer, admission_, entropy_, endpoint_.worker_,
                                                      &endpoint_.budget_, config_.admission_deadline,
                                                      config_.check_peer_seals},
                                       std::move(cb));
  if (!channel_->open()) channel_->goodbye(GoodbyeReason::kProtocolError, "no control stream");
}

void RunnerLink::on_frame(std::int64_t stream, const Frame& frame, const Res<Unit>& seal) {
  if (stream != kControlStream) {
    if (callbacks_.on_job_frame) callbacks_.on_job_frame(stream, frame, seal);
    return;
  }
  if (const auto* pong = std::get_if<HeartbeatPong>(&frame)) {
    if (!seal || !nonces_.pong_matches(pong->nonce_echo)) {
      ++stats_.rejected_pongs;
      return;
    }
    ++stats_.pongs;
    accepting_ = pong->accepting_new;
    if (callbacks_.on_pong) callbacks_.on_pong(*pong);
  } else if (const auto* receipt = std::get_if<PresenceReceipt>(&frame)) {
    // Its seal checked its keys, epoch and set against this connection and
    // its signature with the chain's id (§8.3); it answers this link's own Ping.
    if (!seal || !nonces_.pong_matches(receipt->nonce_echo)) {
      ++stats_.rejected_receipts;
      return;
    }
    ++stats_.receipts;
    if (callbacks_.on_receipt) callbacks_.on_receipt(*receipt);
  }
}

void RunnerLink::on_block(Height height) {
  if (height <= height_) return;
  height_ = height;
  ping();
}

void RunnerLink::ping() {
  if (!admitted()) return;
  if (channel_->send(kControlStream, HeartbeatPing{height_, nonces_.next_ping(), {}})) ++stats_.pings;
}

bool RunnerLink::send(std::int64_t stream, Frame frame) { return channel_ && channel_->send(stream, std::move(frame)); }

void RunnerLink::end_job_stream(std::int64_t stream) {
  if (channel_) channel_->end_job_stream(stream);
}

void RunnerLink::goodbye(GoodbyeReason reason) {
  leaving_ = true;
  if (channel_) channel_->goodbye(reason);
}

void RunnerLink::retire() {
  leaving_ = true;
  retry_.cancel();
}

void RunnerLink::on_closed(const std::string& why) {
  const bool was_admitted = admitted();
  connection_ = nullptr;
  channel_.reset();
  if (was_admitted) {
    ++stats_.losses;
    if (callbacks_.on_lost)
      callbacks_.on_lost(peer_goodbye_ ? "Goodbye " + std::string(goodbye_reason_name(*peer_goodbye_)) +
                                             (peer_goodbye_detail_.empty() ? "" : ": " + peer_goodbye_detail_)
                                       : why);
  }
  peer_goodbye_.reset();
  reconnect_later();
}

void RunnerLink::reconnect_later() {
  if (leaving_) return;  // this end said Goodbye: it is going away, not coming back
  std::optional<std::chrono::milliseconds> floor;
  if (retry_after_blocks_) floor = config_.block_time * static_cast<std::int64_t>(*retry_after_blocks_);
  retry_.expires_after(backoff_.next(floor));
  retry_.async_wait([this](boost::system::error_code ec) {
    if (!ec) start();
  });
}

}  // namespace cowboy::cip11
