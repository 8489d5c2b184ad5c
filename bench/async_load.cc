#include "async_load.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <cstring>
#include <deque>

#include "cbqs/client/request_ids.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"

namespace cowboy::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = asio::ssl;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using namespace cowboy::cbqs;

namespace {

using client::request_number;
Bytes32 rid(std::uint64_t n) { return client::request_id(n); }

class Producer : public std::enable_shared_from_this<Producer> {
 public:
  Producer(asio::io_context& io, ssl::context& tls, const AsyncLoadOptions& o, SteadyClock::time_point end,
           double per_producer_rate, AsyncLoadResult& result)
      : ws_(io, tls), timer_(io), o_(o), end_(end), rate_(per_producer_rate), result_(result),
        payload_(o.payload, 0x5a) {}

  void start() {
    auto self = shared_from_this();
    beast::get_lowest_layer(ws_).async_connect(tcp::endpoint{asio::ip::make_address("127.0.0.1"), o_.port},
                                               [self](beast::error_code ec) {
      if (ec) return self->fail();
      beast::get_lowest_layer(self->ws_).socket().set_option(tcp::no_delay(true));
      self->ws_.next_layer().set_verify_callback(ssl::host_name_verification("localhost"));
      SSL_set_tlsext_host_name(self->ws_.next_layer().native_handle(), "localhost");
      self->ws_.next_layer().async_handshake(ssl::stream_base::client, [self](beast::error_code ec) {
        if (ec) return self->fail();
        self->ws_.binary(true);
        self->ws_.async_handshake("localhost", "/", [self](beast::error_code ec) {
          if (ec) return self->fail();
          self->send(encode(CbqsClientFrameV2{OpenSession{rid(0), self->o_.grant}}));
          self->read();
        });
      });
    });
  }

 private:
  void fail() {
    result_.failed = true;
    done_ = true;
  }

  void read() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->done_ ? void() : self->fail();
      auto data = self->buffer_.data();
      auto frame = decode<CbqsServerFrameV2>(ByteView(static_cast<const std::uint8_t*>(data.data()), data.size()));
      self->buffer_.consume(self->buffer_.size());
      if (!frame) return self->fail();
      self->on_frame(*frame);
      if (!self->done_) self->read();
    });
  }

  void on_frame(const CbqsServerFrameV2& f) {
    if (const auto* ch = std::get_if<SessionChallenge>(&f)) {
      SessionProofV2 proof{o_.grant.chain_instance_id, o_.grant.stream_id, grant_id(o_.grant), ch->session_id,
                           ch->challenge, {}};
      sign_proof(proof, o_.holder);
      session_ = ch->session_id;
      return send(encode(CbqsClientFrameV2{CompleteSession{rid(0), proof}}));
    }
    if (std::holds_alternative<SessionOpened>(f)) {
      start_ = SteadyClock::now();
      return fill();
    }
    const auto* r = std::get_if<Response>(&f);
    if (!r || !std::holds_alternative<resp::Appended>(r->body)) return fail();
    auto n = request_number(r->request_id);
    result_.latencies_ms.push_back(std::chrono::duration<double, std::milli>(SteadyClock::now() - sent_at_[n - 1]).count());
    ++result_.acknowledged;
    --in_flight_;
    fill();
  }

  // Sends appends while the window (and the pacing) allows; closes when the run is over and drained.
  void fill() {
    auto now = SteadyClock::now();
    while (in_flight_ < o_.window && now < end_) {
      if (rate_ > 0) {
        auto due = start_ + std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(next_ / rate_));
        if (now < due) {
          if (!timer_armed_) {
            timer_armed_ = true;
            timer_.expires_at(due);
            timer_.async_wait([self = shared_from_this()](beast::error_code) {
              self->timer_armed_ = false;
              self->fill();
            });
          }
          break;
        }
      }
      sent_at_.push_back(now);
      ++next_;
      ++in_flight_;
      if (payload_.size() >= 8) {  // the send time, for a subscriber's append->delivery latency
        auto ns = static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch()).count());
        std::memcpy(payload_.data(), &ns, 8);
      }
      send(encode(CbqsClientFrameV2{Request{rid(next_), session_, req::Append{{o_.lane, payload_}}}}));
    }
    if (now >= end_ && in_flight_ == 0 && !done_) {
      done_ = true;
      beast::error_code ignored;
      beast::get_lowest_layer(ws_).socket().close(ignored);
    }
  }

  void send(Bytes frame) {
    queue_.push_back(std::move(frame));
    if (!writing_) write();
  }
  void write() {
    writing_ = true;
    ws_.async_write(asio::buffer(queue_.front()), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->queue_.pop_front();
      self->writing_ = false;
      if (ec) return self->done_ ? void() : self->fail();
      if (!self->queue_.empty()) self->write();
    });
  }

  websocket::stream<ssl::stream<beast::tcp_stream>> ws_;
  asio::steady_timer timer_;
  const AsyncLoadOptions& o_;
  SteadyClock::time_point end_, start_;
  double rate_;
  AsyncLoadResult& result_;
  Bytes payload_;
  beast::flat_buffer buffer_;
  std::deque<Bytes> queue_;
  bool writing_ = false, timer_armed_ = false, done_ = false;
  Bytes32 session_{};
  std::uint64_t next_ = 0;
  int in_flight_ = 0;
  std::vector<SteadyClock::time_point> sent_at_;
};

}  // namespace

AsyncLoadResult run_async_load(const AsyncLoadOptions& o) {
  asio::io_context io{1};
  ssl::context tls{ssl::context::tls_client};
  tls.set_verify_mode(ssl::verify_peer);
  tls.load_verify_file(o.ca_file.string());
  AsyncLoadResult result;
  auto begin = SteadyClock::now();
  auto end = begin + std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(o.seconds));
  double per_producer = o.rate > 0 ? o.rate / o.producers : 0;
  for (int p = 0; p < o.producers; ++p) std::make_shared<Producer>(io, tls, o, end, per_producer, result)->start();
  io.run();
  result.elapsed_seconds = std::chrono::duration<double>(SteadyClock::now() - begin).count();
  return result;
}

}  // namespace cowboy::bench
