// The devchain HTTP JSON API (docs/devchain.md lists the routes) over any
// ChainApi, and the CIP-11 routes over a Cip11Api when one is given, served by
// net::HttpServer (its limits apply).
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "devchain/api.h"
#include "devchain/blocks_api.h"
#include "devchain/cip11_api.h"

namespace cowboy::net {
class HttpServer;
}

namespace cowboy::devchain {

class HttpServer {
 public:
  /// Binds address:port (port 0 picks a free one); throws std::runtime_error if it cannot.
  /// With `blocks`, a validator's: it also serves the routes validators use
  /// between them, and with `views` the presence gossip's (§8.2).
  HttpServer(ChainApi& api, Cip11Api* cip11, const std::string& address, std::uint16_t port,
             BlocksApi* blocks = nullptr, PresenceViewsApi* views = nullptr);
  HttpServer(ChainApi& api, const std::string& address, std::uint16_t port) : HttpServer(api, nullptr, address, port) {}
  ~HttpServer();
  std::uint16_t port() const;
  /// Serves on a background thread until stop().
  void start();
  void stop();

 private:
  std::unique_ptr<net::HttpServer> server_;
};

}  // namespace cowboy::devchain
