// A small HTTP/1.1 server (Boost.Beast) for loopback APIs: the devchain's JSON
// API, cbqsd's admin endpoints and transitd. Bodies over the configured limit
// are refused (413, 128 KiB by default), from a declared Content-Length before
// any of the body is read; a header over 8 KiB is refused 431; at most 256
// connections, 32 from one peer address, by default; a request's header must
// arrive within 5 s of the connection or of the previous answer (its body, and
// then the answer's write, within 30 s), else the connection closes; accept(2)
// failures (EMFILE...) back off 10 ms doubling to 1 s instead of spinning; a
// handler that throws answers 500 instead of crashing the server. A connection
// serves its requests one after another; an asynchronous handler may answer
// later from any thread while the server goes on serving other connections.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cowboy::net {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // as received, in order

  /// How many times `name` (case-insensitive) appears, and its first value.
  std::size_t header_count(std::string_view name) const;
  std::string_view header(std::string_view name) const;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using HttpHandler = std::function<HttpReply(const HttpRequest&)>;
/// Call exactly once, from any thread.
using HttpResponder = std::function<void(HttpReply)>;
using AsyncHttpHandler = std::function<void(HttpRequest, HttpResponder)>;

struct HttpServerOptions {
  std::size_t max_body_bytes = 128 * 1024;
  HttpReply too_large{413, "application/json", R"({"error":{"code":"TxTooLarge","message":"body over 128 KiB"}})"};
  std::size_t max_header_bytes = 8 * 1024;  // the request line and every field
  HttpReply header_too_large{431, "text/plain", "request header over 8 KiB\n"};
  int threads = 1;  // io threads; each connection stays on one at a time
  std::size_t max_connections = 256;
  std::size_t max_connections_per_address = 32;
};

class HttpServer {
 public:
  /// Binds address:port (port 0 picks a free one); throws std::runtime_error if it cannot.
  HttpServer(HttpHandler handler, const std::string& address, std::uint16_t port);
  HttpServer(AsyncHttpHandler handler, const std::string& address, std::uint16_t port, HttpServerOptions options);
  ~HttpServer();
  std::uint16_t port() const;
  /// Connections held now, and those refused at accept (a full slot table) since start.
  std::size_t open_connections() const;
  std::uint64_t refused_connections() const;
  /// accept(2) failures since start (EMFILE, ENFILE...), each followed by a back-off.
  std::uint64_t accept_errors() const;
  /// Serves on background threads until stop().
  void start();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cowboy::net
