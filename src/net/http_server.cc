#include "net/http_server.h"

#include "net/connection_slots.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>

namespace cowboy::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kMaxBodyBytes = 128 * 1024;
constexpr std::size_t kMaxConnections = 256;
constexpr std::size_t kMaxConnectionsPerAddress = 32;
// A request's header must arrive within this of the connection opening or of
// the previous answer, so idle connections cannot hold the slots; its body
// within the longer bound.
constexpr auto kHeaderTimeout = std::chrono::seconds(5);
constexpr auto kBodyTimeout = std::chrono::seconds(30);

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, asio::ip::address peer, const HttpHandler& handler, ConnectionSlots& slots)
      : stream_(std::move(socket)), peer_(std::move(peer)), handler_(handler), slots_(slots) {}
  ~Session() { slots_.give_back(peer_); }
  void start() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(kMaxBodyBytes);
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
    if (ec == http::error::body_limit)
      return respond(HttpReply{413, "application/json", R"({"error":{"code":"TxTooLarge","message":"body over 128 KiB"}})"}, false);
    if (ec) return close();
    auto& req = parser_->get();
    HttpReply reply;
    try {
      reply = handler_(HttpRequest{std::string(req.method_string()), std::string(req.target()), req.body()});
    } catch (const std::exception& e) {  // never crash on a request
      reply = HttpReply{500, "text/plain", e.what()};
    }
    respond(std::move(reply), req.keep_alive());
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
  const HttpHandler& handler_;
  ConnectionSlots& slots_;
};

}  // namespace

struct HttpServer::Impl {
  HttpHandler handler;
  ConnectionSlots slots{kMaxConnections, kMaxConnectionsPerAddress};  // before io: sessions destroyed with it give theirs back
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::thread thread;
  asio::steady_timer accept_pause{io};

  explicit Impl(HttpHandler h) : handler(std::move(h)) {}

  void accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) {  // EMFILE and the like: retry after a pause, not in a spin
        accept_pause.expires_after(std::chrono::milliseconds(100));
        return accept_pause.async_wait([this](beast::error_code e) {
          if (!e) accept();
        });
      }
      beast::error_code no_peer;
      auto peer = socket.remote_endpoint(no_peer).address();
      if (no_peer || !slots.take(peer)) {
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        std::make_shared<Session>(std::move(socket), peer, handler, slots)->start();
      }
      accept();
    });
  }
};

HttpServer::HttpServer(HttpHandler handler, const std::string& address, std::uint16_t port)
    : impl_(std::make_unique<Impl>(std::move(handler))) {
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

void HttpServer::start() {
  impl_->accept();
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

void HttpServer::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->io.stop();
  impl_->thread.join();
}

}  // namespace cowboy::net
