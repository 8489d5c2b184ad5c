#include "async_load.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <cstring>

#include "cbqs/client/request_ids.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "cbqs/wire/limits.h"
#include "net/wss_channel.h"

namespace cowboy::bench {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using namespace cowboy::cbqs;

namespace {

using client::request_number;
Bytes32 rid(std::uint64_t n) { return client::request_id(n); }

// One producer session on the same framing as cbqsd and the SDK (net/wss_channel.h).
class Producer final : public net::WssChannel {
 public:
  Producer(tcp::socket socket, ssl::context& tls, const AsyncLoadOptions& o, const LoadTarget& target,
           SteadyClock::time_point end, double per_producer_rate, AsyncLoadResult& result)
      : net::WssChannel(std::move(socket), tls.native_handle(), Role::kClient, {.max_message_bytes = limits::kMaxFrameBytes}),
        timer_(this->socket().get_executor()), o_(o), target_(target), end_(end), rate_(per_producer_rate), result_(result),
        payload_(o.payload, 0x5a) {
    set_server_name("localhost", true);
  }

 private:
  void on_open() override {
    send(encode(CbqsClientFrameV2{OpenSession{rid(0), target_.grant}}));
  }
  void on_message(ByteView message) override {
    auto frame = decode<CbqsServerFrameV2>(message);
    if (!frame) return fail();
    on_frame(*frame);
  }
  void on_closed(const std::string&) override {
    if (!done_) fail();
    timer_.cancel();
  }

  void fail() {
    result_.failed = true;
    done_ = true;
    close();
  }

  void on_frame(const CbqsServerFrameV2& f) {
    if (const auto* ch = std::get_if<SessionChallenge>(&f)) {
      const StreamGrantV2& g = target_.grant;
      SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), ch->session_id,
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
            // Paced in ticks of at least 1 ms: what is due by then leaves together,
            // as a client batching its sends would; a timer per append would cost
            // this shared machine more than the broker's work.
            timer_.expires_at(std::max(due, now + std::chrono::milliseconds(1)));
            timer_.async_wait([self = shared_from_this(), this](boost::system::error_code ec) {
              timer_armed_ = false;
              if (!ec) fill();
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
      send(encode(CbqsClientFrameV2{Request{rid(next_), session_, req::Append{{target_.lane, payload_}}}}));
    }
    if (now >= end_ && in_flight_ == 0 && !done_) {
      done_ = true;
      close();
    }
  }

  asio::steady_timer timer_;
  const AsyncLoadOptions& o_;
  const LoadTarget& target_;
  SteadyClock::time_point end_, start_;
  double rate_;
  AsyncLoadResult& result_;
  Bytes payload_;
  bool timer_armed_ = false, done_ = false;
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
  for (int p = 0; p < o.producers && !o.targets.empty(); ++p) {
    const LoadTarget& target = o.targets[static_cast<std::size_t>(p) % o.targets.size()];
    auto socket = std::make_shared<tcp::socket>(io);
    socket->async_connect(tcp::endpoint{asio::ip::make_address("127.0.0.1"), o.port},
                         [&, socket, &target = target](boost::system::error_code ec) {
                           if (ec) {
                             result.failed = true;
                             return;
                           }
                           std::make_shared<Producer>(std::move(*socket), tls, o, target, end, per_producer, result)
                               ->connect("localhost", "/");
                         });
  }
  io.run();
  result.elapsed_seconds = std::chrono::duration<double>(SteadyClock::now() - begin).count();
  return result;
}

}  // namespace cowboy::bench
