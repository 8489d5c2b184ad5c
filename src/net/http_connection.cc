#include "net/http_connection.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "net/deadline_socket.h"
#include "net/timed_io.h"

namespace cowboy::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct HttpConnection::Impl {
  std::string host;
  std::uint16_t port;
  std::chrono::milliseconds timeout;
  std::size_t max_body_bytes;
  asio::io_context io;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;

  Impl(std::string h, std::uint16_t p, std::chrono::milliseconds t, std::size_t max)
      : host(std::move(h)), port(p), timeout(t), max_body_bytes(max) {}

  void connect() {
    stream.emplace(io);
    tcp::resolver resolver(io);
    auto endpoints = resolver.resolve(host, std::to_string(port));
    if (auto ec = run_timed(io, *stream, timeout, [&](auto done) { stream->async_connect(endpoints, done); }))
      throw boost::system::system_error(ec);
    stream->socket().set_option(tcp::no_delay(true));
    buffer.clear();
  }
};

HttpConnection::HttpConnection(std::string host, std::uint16_t port, std::chrono::milliseconds timeout,
                               std::size_t max_body_bytes)
    : impl_(std::make_unique<Impl>(std::move(host), port, timeout, max_body_bytes)) {}
HttpConnection::~HttpConnection() = default;
HttpConnection::HttpConnection(HttpConnection&&) noexcept = default;

Result<HttpAnswer, std::string> HttpConnection::post(const std::string& target, const std::string& body,
                                                     const std::vector<std::pair<std::string, std::string>>& headers) {
  return exchange(true, target, body, headers);
}

Result<HttpAnswer, std::string> HttpConnection::get(const std::string& target, const BodyProgress& progress) {
  return exchange(false, target, {}, {}, progress);
}

Result<HttpAnswer, std::string> HttpConnection::exchange(bool post, const std::string& target, const std::string& body,
                                                         const std::vector<std::pair<std::string, std::string>>& headers,
                                                         const BodyProgress& progress) {
  try {
    if (!impl_->stream) impl_->connect();
    http::request<http::string_body> req{post ? http::verb::post : http::verb::get, target, 11};
    req.set(http::field::host, impl_->host);
    if (post) req.set(http::field::content_type, "application/json");
    for (const auto& [name, value] : headers) req.insert(name, value);
    req.keep_alive(true);
    if (post) {
      req.body() = body;
      req.prepare_payload();
    }
    // Reads and writes poll (net/deadline_socket.h): the reactor's async path
    // costs the benches' load generator about 15 us more per exchange.
    DeadlineSocket socket(impl_->stream->socket(), std::chrono::steady_clock::now() + impl_->timeout);
    http::write(socket, req);
    http::response_parser<http::string_body> parser;
    parser.body_limit(impl_->max_body_bytes);  // a larger Content-Length fails at the header
    if (progress) {
      http::read_header(socket, impl_->buffer, parser);
      const auto total = parser.content_length();
      while (!parser.is_done()) {
        http::read_some(socket, impl_->buffer, parser);
        if (total) progress(parser.get().body().size(), static_cast<std::size_t>(*total));
      }
    } else {
      http::read(socket, impl_->buffer, parser);
    }
    auto& res = parser.get();
    HttpAnswer answer{static_cast<int>(res.result_int()), std::move(res.body())};
    if (!res.keep_alive()) impl_->stream.reset();
    return answer;
  } catch (const boost::system::system_error& e) {  // its what() carries Boost's source location: not for users
    impl_->stream.reset();  // the next exchange opens a fresh connection
    return Err{e.code().message()};
  } catch (const std::exception& e) {
    impl_->stream.reset();
    return Err{std::string(e.what())};
  }
}

}  // namespace cowboy::net
