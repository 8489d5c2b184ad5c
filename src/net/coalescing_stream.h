// A write-behind layer under TLS: writes are copied into a buffer and
// complete at once; the buffer goes to the next layer in one write once the
// burst that filled it is over. A broker answering many requests in one turn
// (a commit batch's Appended answers, a pump's Deliveries) then makes one
// sendmsg per burst instead of one per TLS record.
//
// Every byte passes through in order (TLS records, WebSocket control frames),
// so nothing above it changes. Bounded: above kMaxBuffered bytes a write
// completes only once the buffer has drained below it. Not thread-safe: one
// executor (the connection's) calls everything, as with any asio stream.
//
//   websocket::stream<ssl::stream<CoalescingStream<beast::tcp_stream>>>
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

namespace cowboy::net {

template <typename NextLayer>
class CoalescingStream {
 public:
  using executor_type = typename NextLayer::executor_type;
  using next_layer_type = NextLayer;
  // asio's ssl::stream asks for these; the next layer is a beast::basic_stream.
  using lowest_layer_type = std::remove_reference_t<decltype(std::declval<NextLayer&>().socket())>;

  static constexpr std::size_t kMaxBuffered = 4 * 1024 * 1024;
  static constexpr std::size_t kFlushBytes = 256 * 1024;  // flush at once above this
  static constexpr int kMaxWaitTurns = 8;                 // turns a burst may delay a flush

  template <typename... Args>
  explicit CoalescingStream(Args&&... args)
      : state_(std::make_shared<State>(std::forward<Args>(args)...)) {}
  CoalescingStream(CoalescingStream&&) = default;
  CoalescingStream& operator=(CoalescingStream&&) = default;

  executor_type get_executor() noexcept { return state_->next.get_executor(); }
  NextLayer& next_layer() noexcept { return state_->next; }
  const NextLayer& next_layer() const noexcept { return state_->next; }
  lowest_layer_type& lowest_layer() noexcept { return state_->next.socket(); }

  template <typename MutableBuffers, typename ReadHandler>
  auto async_read_some(const MutableBuffers& buffers, ReadHandler&& handler) {
    return state_->next.async_read_some(buffers, std::forward<ReadHandler>(handler));
  }

  template <typename ConstBuffers, typename WriteHandler>
  auto async_write_some(const ConstBuffers& buffers, WriteHandler&& handler) {
    return boost::asio::async_initiate<WriteHandler, void(boost::beast::error_code, std::size_t)>(
        [state = state_](auto h, const ConstBuffers& b) { state->write(b, std::move(h)); }, handler, buffers);
  }

  /// Calls `done` once everything written so far has reached the next layer
  /// (or failed); used before tearing the connection down.
  void async_drain(std::function<void(boost::beast::error_code)> done) { state_->drain(std::move(done)); }
  /// Writes made to the next layer so far.
  std::uint64_t flushes() const noexcept { return state_->flushes; }

 private:
  struct State : std::enable_shared_from_this<State> {
    template <typename... Args>
    explicit State(Args&&... args) : next(std::forward<Args>(args)...) {}

    NextLayer next;
    std::vector<char> pending, in_flight;
    bool writing = false, flush_posted = false, grew = false;
    int wait_turns = 0;
    std::uint64_t flushes = 0;
    boost::beast::error_code error;
    std::deque<std::function<void(boost::beast::error_code)>> blocked;  // writes made above the bound
    std::vector<std::function<void(boost::beast::error_code)>> drains;  // waiting for an empty buffer

    std::size_t buffered() const { return pending.size() + in_flight.size(); }

    template <typename ConstBuffers, typename Handler>
    void write(const ConstBuffers& b, Handler&& h) {
      auto ex = next.get_executor();
      std::size_t n = boost::asio::buffer_size(b);
      if (error) return boost::asio::post(ex, boost::beast::bind_front_handler(std::move(h), error, 0));
      std::size_t old = pending.size();
      pending.resize(old + n);
      boost::asio::buffer_copy(boost::asio::buffer(pending.data() + old, n), b);
      // The completion is queued before the flush, so the writer's next write
      // (the rest of the burst) lands in the buffer before it goes out.
      if (buffered() <= kMaxBuffered) {
        boost::asio::post(ex, boost::beast::bind_front_handler(std::move(h), boost::beast::error_code{}, n));
      } else {
        auto shared = std::make_shared<std::decay_t<Handler>>(std::move(h));
        blocked.push_back([shared, n](boost::beast::error_code ec) { (*shared)(ec, ec ? 0 : n); });
      }
      schedule_flush();
    }

    void drain(std::function<void(boost::beast::error_code)> done) {
      if (error || buffered() == 0) return boost::asio::post(next.get_executor(), [done, ec = error] { done(ec); });
      drains.push_back(std::move(done));
    }

    void schedule_flush() {
      grew = true;
      if (writing || flush_posted) return;
      flush_posted = true;
      wait_turns = 0;
      boost::asio::post(next.get_executor(), [self = this->shared_from_this()] { self->flush_turn(); });
    }

    // Lets the burst that is still writing finish first: while the buffer grew
    // since the last look, wait one more turn (a few at most, or until it is large).
    void flush_turn() {
      if (grew && wait_turns < kMaxWaitTurns && pending.size() < kFlushBytes) {
        grew = false;
        ++wait_turns;
        boost::asio::post(next.get_executor(), [self = this->shared_from_this()] { self->flush_turn(); });
        return;
      }
      flush_posted = false;
      start_write();
    }

    void start_write() {
      if (writing || pending.empty() || error) return;
      writing = true;
      ++flushes;
      in_flight.swap(pending);
      boost::asio::async_write(next, boost::asio::buffer(in_flight),
                               [self = this->shared_from_this()](boost::beast::error_code ec, std::size_t) {
                                 self->written(ec);
                               });
    }

    void written(boost::beast::error_code ec) {
      writing = false;
      in_flight.clear();
      if (ec) error = ec;
      if (!pending.empty() && !error) schedule_flush();  // gather the rest of the burst first
      while (!blocked.empty() && (error || buffered() <= kMaxBuffered)) {
        auto waiter = std::move(blocked.front());
        blocked.pop_front();
        waiter(error);
      }
      if (error || buffered() == 0) {
        auto waiting = std::move(drains);
        drains.clear();
        for (auto& d : waiting) d(error);
      }
    }
  };

  std::shared_ptr<State> state_;
};

/// Beast's teardown customization: drain the buffer, then tear the next layer down.
template <typename NextLayer>
void teardown(boost::beast::role_type role, CoalescingStream<NextLayer>& stream, boost::beast::error_code& ec) {
  using boost::beast::websocket::teardown;
  teardown(role, stream.next_layer(), ec);
}

template <typename NextLayer, typename TeardownHandler>
void async_teardown(boost::beast::role_type role, CoalescingStream<NextLayer>& stream, TeardownHandler&& handler) {
  auto shared = std::make_shared<std::decay_t<TeardownHandler>>(std::forward<TeardownHandler>(handler));
  stream.async_drain([role, &stream, shared](boost::beast::error_code) {
    using boost::beast::websocket::async_teardown;
    async_teardown(role, stream.next_layer(), std::move(*shared));
  });
}

}  // namespace cowboy::net
