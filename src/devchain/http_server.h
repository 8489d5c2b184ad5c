// The devchain HTTP JSON API (docs/devchain.md lists the routes). Serves any
// ChainApi; binds loopback by default. Bodies over 128 KiB, more than 256
// concurrent connections and idle connections (30 s) are refused or closed.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "devchain/api.h"

namespace cowboy::devchain {

class HttpServer {
 public:
  /// Binds address:port (port 0 picks a free one); throws std::runtime_error if it cannot.
  HttpServer(ChainApi& api, const std::string& address, std::uint16_t port);
  ~HttpServer();
  std::uint16_t port() const;
  /// Serves on a background thread until stop().
  void start();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cowboy::devchain
