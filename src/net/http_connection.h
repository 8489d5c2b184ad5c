// One keep-alive HTTP/1.1 client connection (Boost.Beast), opened on first use
// and again after any failure. Each exchange is bounded by the timeout. Not
// thread-safe: one connection per caller thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace cowboy::net {

struct HttpAnswer {
  int status = 0;
  std::string body;
};

/// Told after each read of an answer's body: the bytes so far and the
/// Content-Length (only for answers that declare one).
using BodyProgress = std::function<void(std::size_t received, std::size_t total)>;

class HttpConnection {
 public:
  HttpConnection(std::string host, std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(10),
                 std::size_t max_body_bytes = 1 << 20);
  ~HttpConnection();
  HttpConnection(HttpConnection&&) noexcept;

  /// A transport failure (connect, write, read, timeout, oversized answer) is
  /// an error string; any HTTP status is an answer.
  Result<HttpAnswer, std::string> post(const std::string& target, const std::string& body,
                                       const std::vector<std::pair<std::string, std::string>>& headers = {});
  Result<HttpAnswer, std::string> get(const std::string& target, const BodyProgress& progress = {});

 private:
  Result<HttpAnswer, std::string> exchange(bool post, const std::string& target, const std::string& body,
                                           const std::vector<std::pair<std::string, std::string>>& headers,
                                           const BodyProgress& progress = {});
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cowboy::net
