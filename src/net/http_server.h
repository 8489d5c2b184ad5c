// A small HTTP/1.1 server (Boost.Beast) for loopback APIs: the devchain's JSON
// API and cbqsd's admin endpoints. Bodies over 128 KiB are refused (413); at
// most 256 connections, 32 from one peer address; a request's header must
// arrive within 5 s of the connection or of the previous answer (its body
// within 30 s), else the connection closes; a handler that throws answers 500
// instead of crashing the server.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace cowboy::net {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query
  std::string body;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using HttpHandler = std::function<HttpReply(const HttpRequest&)>;

class HttpServer {
 public:
  /// Binds address:port (port 0 picks a free one); throws std::runtime_error if it cannot.
  HttpServer(HttpHandler handler, const std::string& address, std::uint16_t port);
  ~HttpServer();
  std::uint16_t port() const;
  /// Serves on a background thread until stop().
  void start();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cowboy::net
