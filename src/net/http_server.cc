#include "net/http_server.h"

#include "common/log.h"
#include "net/connection_slots.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <thread>

#include <pthread.h>

namespace cowboy::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// A request's header must arrive within this of the connection opening or of
// the previous answer, so idle connections cannot hold the slots; its body
// within the longer bound.
constexpr auto kHeaderTimeout = std::chrono::seconds(5);
constexpr auto kBodyTimeout = std::chrono::seconds(30);

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, asio::ip::address peer, const AsyncHttpHandler& handler,
          const HttpServerOptions& options, ConnectionSlots& slots)
      : stream_(std::move(socket)), peer_(std::move(peer)), handler_(handler), options_(options), slots_(slots) {}
  ~Session() { slots_.give_back(peer_); }
  void start() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(options_.max_body_bytes);    // a declared Content-Length over it fails at the header
    parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(options_.max_header_bytes, UINT32_MAX)));
    stream_.expires_after(kHeaderTimeout);
    http::async_read_header(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->on_read(ec);
      self->stream_.expires_after(kBodyTimeout);
      http::async_read(self->stream_, self->buffer_, *self->parser_,
                       [self](beast::error_code ec, std::size_t) { self->on_read(ec); });
    });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream) return close();
    if (ec == http::error::body_limit) return respond(options_.too_large, false);
    if (ec == http::error::header_limit) return respond(options_.header_too_large, false);
    if (ec) return close();
    auto& req = parser_->get();
    HttpRequest request{std::string(req.method_string()), std::string(req.target()), std::move(req.body()), {}};
    for (const auto& field : req) request.headers.emplace_back(field.name_string(), field.value());
    const bool keep_alive = req.keep_alive();
    // The answer comes back on this connection's strand, whichever thread gives it.
    HttpResponder responder = [self = shared_from_this(), keep_alive](HttpReply reply) {
      asio::post(self->stream_.get_executor(),
                 [self, keep_alive, reply = std::move(reply)]() mutable { self->respond(std::move(reply), keep_alive); });
    };
    try {
      handler_(std::move(request), std::move(responder));
    } catch (const std::exception& e) {  // never crash on a request
      respond(HttpReply{500, "text/plain", e.what()}, keep_alive);
    }
  }

  void respond(HttpReply reply, bool keep_alive) {
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(reply.status), 11);
    res->set(http::field::content_type, reply.content_type);
    res->keep_alive(keep_alive);
    res->body() = std::move(reply.body);
    res->prepare_payload();
    http::async_write(stream_, *res, [self = shared_from_this(), res, keep_alive](beast::error_code ec, std::size_t) {
      if (ec || !keep_alive) return self->close();
      self->read();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  asio::ip::address peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  const AsyncHttpHandler& handler_;
  const HttpServerOptions& options_;
  ConnectionSlots& slots_;
};

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

}  // namespace

std::size_t HttpRequest::header_count(std::string_view name) const {
  return std::count_if(headers.begin(), headers.end(), [&](const auto& h) { return iequals(h.first, name); });
}

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& h : headers)
    if (iequals(h.first, name)) return h.second;
  return {};
}

struct HttpServer::Impl {
  AsyncHttpHandler handler;
  HttpServerOptions options;
  ConnectionSlots slots;  // before io: sessions destroyed with it give theirs back
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::vector<std::thread> threads;
  asio::steady_timer accept_pause{io};
  std::chrono::milliseconds accept_backoff{0};
  std::atomic<std::uint64_t> accept_errors{0};

  Impl(AsyncHttpHandler h, HttpServerOptions o)
      : handler(std::move(h)), options(std::move(o)), slots(options.max_connections, options.max_connections_per_address) {}

  void accept() {
    // Each connection gets a strand, so its handlers never run on two threads at once.
    acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) return pause_accepting(ec);
      accept_backoff = std::chrono::milliseconds(0);
      beast::error_code no_peer;
      auto peer = socket.remote_endpoint(no_peer).address();
      if (no_peer || !slots.take(peer)) {
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        beast::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);  // answers go out whole, at once
        std::make_shared<Session>(std::move(socket), peer, handler, options, slots)->start();
      }
      accept();
    });
  }

  // accept(2) failed (EMFILE, ENFILE, ENOBUFS...): retrying at once would spin
  // a core while the listen queue holds the connection; wait 10 ms doubling
  // to 1 s, logging the first failure of a streak (as cbqsd's listener does).
  void pause_accepting(const beast::error_code& ec) {
    ++accept_errors;
    if (accept_backoff.count() == 0)
      log::warn("accept_failed", log::field("why", ec.message()), log::field("connections", slots.live()));
    accept_backoff = std::clamp(accept_backoff * 2, std::chrono::milliseconds(10), std::chrono::milliseconds(1'000));
    accept_pause.expires_after(accept_backoff);
    accept_pause.async_wait([this](beast::error_code e) {
      if (!e) accept();
    });
  }
};

HttpServer::HttpServer(HttpHandler handler, const std::string& address, std::uint16_t port)
    : HttpServer(
          [handler = std::move(handler)](HttpRequest request, HttpResponder respond) { respond(handler(request)); },
          address, port, HttpServerOptions{}) {}

HttpServer::HttpServer(AsyncHttpHandler handler, const std::string& address, std::uint16_t port,
                       HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(handler), std::move(options))) {
  beast::error_code ec;
  auto ip = asio::ip::make_address(address, ec);
  if (ec) throw std::runtime_error("bad listen address " + address);
  tcp::endpoint endpoint{ip, port};
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(endpoint, ec);
  if (ec) throw std::runtime_error("cannot bind " + address + ":" + std::to_string(port) + ": " + ec.message());
  impl_->acceptor.listen(asio::socket_base::max_listen_connections);
}

HttpServer::~HttpServer() { stop(); }

std::uint16_t HttpServer::port() const { return impl_->acceptor.local_endpoint().port(); }
std::size_t HttpServer::open_connections() const { return impl_->slots.live(); }
std::uint64_t HttpServer::refused_connections() const { return impl_->slots.refused(); }
std::uint64_t HttpServer::accept_errors() const { return impl_->accept_errors.load(); }

void HttpServer::start() {
  impl_->accept();
  for (int i = 0; i < std::max(1, impl_->options.threads); ++i) impl_->threads.emplace_back([this] {
      pthread_setname_np(pthread_self(), "http-io");
      impl_->io.run();
    });
}

void HttpServer::stop() {
  if (!impl_ || impl_->threads.empty()) return;
  impl_->io.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

}  // namespace cowboy::net
