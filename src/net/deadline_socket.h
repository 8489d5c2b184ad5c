// A connected TCP socket's reads and writes, each bounded by one deadline, for
// blocking clients on a hot path. Beast's own deadlines (tcp_stream's
// expires_after) apply only to asynchronous operations, whose reactor and
// timer cost about 15 us of CPU per exchange more than a synchronous call; here
// the socket is non-blocking and a call that would block polls for the time
// left. Models Beast's SyncReadStream and SyncWriteStream.
#pragma once

#include <poll.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/system/system_error.hpp>
#include <cerrno>
#include <chrono>

namespace cowboy::net {

class DeadlineSocket {
 public:
  using Clock = std::chrono::steady_clock;

  /// Sets `socket` non-blocking (it stays so).
  DeadlineSocket(boost::asio::ip::tcp::socket& socket, Clock::time_point deadline)
      : socket_(socket), deadline_(deadline) {
    socket_.non_blocking(true);
  }

  template <typename Buffers>
  std::size_t read_some(const Buffers& buffers, boost::system::error_code& ec) {
    // An answer is rarely there already: poll first, saving a failed read.
    if (!wait(POLLIN, ec)) return 0;
    return retry(POLLIN, ec, [&] { return socket_.read_some(buffers, ec); });
  }
  template <typename Buffers>
  std::size_t write_some(const Buffers& buffers, boost::system::error_code& ec) {
    return retry(POLLOUT, ec, [&] { return socket_.write_some(buffers, ec); });
  }
  template <typename Buffers>
  std::size_t read_some(const Buffers& buffers) {
    return or_throw([&](auto& ec) { return read_some(buffers, ec); });
  }
  template <typename Buffers>
  std::size_t write_some(const Buffers& buffers) {
    return or_throw([&](auto& ec) { return write_some(buffers, ec); });
  }

 private:
  template <typename Op>
  std::size_t retry(short events, boost::system::error_code& ec, Op op) {
    for (;;) {
      std::size_t n = op();
      if (ec != boost::asio::error::would_block) return n;
      if (!wait(events, ec)) return 0;
    }
  }

  // Until the socket is ready for `events` or the deadline passes (timed_out).
  bool wait(short events, boost::system::error_code& ec) {
    for (;;) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
      if (left <= 0) {
        ec = boost::asio::error::timed_out;
        return false;
      }
      pollfd p{socket_.native_handle(), events, 0};
      int r = ::poll(&p, 1, static_cast<int>(left));
      if (r > 0) {
        ec = {};
        return true;
      }
      if (r < 0 && errno != EINTR) {
        ec = boost::system::error_code(errno, boost::system::system_category());
        return false;
      }
    }
  }

  template <typename Call>
  static std::size_t or_throw(Call call) {
    boost::system::error_code ec;
    std::size_t n = call(ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  boost::asio::ip::tcp::socket& socket_;
  Clock::time_point deadline_;
};

}  // namespace cowboy::net
