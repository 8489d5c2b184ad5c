// A hostile or minimal wss:// client for abuse tests: TLS and the WebSocket
// upgrade from a chosen loopback source address (127.0.0.0/8 is all local, so
// one test can be several peers), then raw bytes, nothing else.
#pragma once

#include <poll.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "common/bytes.h"

namespace cowboy::testing {

class RawWss {
 public:
  /// TLS (no verification: the peer is ours) and the upgrade; nullptr when
  /// the server refused or closed the connection instead.
  static std::unique_ptr<RawWss> open(std::uint16_t port, const std::string& source = "127.0.0.1",
                                      bool upgrade = true) {
    auto c = std::unique_ptr<RawWss>(new RawWss());
    try {
      auto& sock = c->stream_.lowest_layer();
      sock.open(boost::asio::ip::tcp::v4());
      sock.bind({boost::asio::ip::make_address(source), 0});
      sock.connect({boost::asio::ip::make_address("127.0.0.1"), port});
      if (!upgrade) return c;
      c->stream_.handshake(boost::asio::ssl::stream_base::client);
      std::string request =
          "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
      boost::asio::write(c->stream_, boost::asio::buffer(request));
      boost::asio::streambuf answer;
      boost::asio::read_until(c->stream_, answer, "\r\n\r\n");
      std::string text(boost::asio::buffers_begin(answer.data()), boost::asio::buffers_end(answer.data()));
      if (text.rfind("HTTP/1.1 101", 0) != 0) return nullptr;
      return c;
    } catch (const std::exception&) {
      return nullptr;
    }
  }

  bool write(const Bytes& bytes) {
    boost::system::error_code ec;
    boost::asio::write(stream_, boost::asio::buffer(bytes), ec);
    return !ec;
  }
  /// A masked binary frame header (client to server) declaring `length` bytes.
  static Bytes frame_header(std::uint64_t length, bool fin = true) {
    Bytes h{static_cast<std::uint8_t>(fin ? 0x82 : 0x02)};
    int width = length < 126 ? 0 : length <= 0xFFFF ? 2 : 8;  // the minimal length encoding (RFC 6455 §5.2)
    h.push_back(static_cast<std::uint8_t>(0x80 | (width == 0 ? length : width == 2 ? 126 : 127)));
    for (int i = width - 1; i >= 0; --i) h.push_back(static_cast<std::uint8_t>(length >> (8 * i)));
    for (std::uint8_t m : {1, 2, 3, 4}) h.push_back(m);
    return h;
  }
  /// A whole masked binary frame carrying `payload`.
  static Bytes frame(const Bytes& payload) {
    Bytes f = frame_header(payload.size());
    for (std::size_t i = 0; i < payload.size(); ++i) f.push_back(payload[i] ^ static_cast<std::uint8_t>(1 + i % 4));
    return f;
  }
  /// Whatever arrives first within `timeout` (empty: nothing, or closed).
  Bytes read_some(std::chrono::milliseconds timeout) {
    pollfd p{stream_.lowest_layer().native_handle(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return {};
    std::uint8_t buf[4096];
    boost::system::error_code ec;
    std::size_t n = stream_.read_some(boost::asio::buffer(buf), ec);
    return Bytes(buf, buf + n);
  }
  /// Bytes the server sent within `timeout` until it closed; nullopt if it is still open then.
  std::optional<Bytes> read_until_closed(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    Bytes got;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{stream_.lowest_layer().native_handle(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      std::uint8_t buf[4096];
      boost::system::error_code ec;
      std::size_t n = stream_.read_some(boost::asio::buffer(buf), ec);
      got.insert(got.end(), buf, buf + n);
      if (ec) return got;
    }
  }

 private:
  RawWss() : tls_(boost::asio::ssl::context::tls_client), stream_(io_, tls_) {
    tls_.set_verify_mode(boost::asio::ssl::verify_none);
  }
  boost::asio::io_context io_;
  boost::asio::ssl::context tls_;
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream_;
};

}  // namespace cowboy::testing
