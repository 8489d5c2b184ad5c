// A hostile or minimal plain-TCP peer for abuse tests of the HTTP listeners:
// a connection from a chosen loopback source address (127.0.0.0/8 is all
// local, so one test can be several peers), raw bytes, one descriptor each
// (no io_context), and what the server sent until it closed.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cowboy::testing {

class RawTcp {
 public:
  /// Connected from `source` to 127.0.0.1:port; nullptr if the connect failed.
  static std::unique_ptr<RawTcp> open(std::uint16_t port, const std::string& source = "127.0.0.1") {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return nullptr;
    auto c = std::unique_ptr<RawTcp>(new RawTcp(fd));
    sockaddr_in from{};
    from.sin_family = AF_INET;
    if (::inet_pton(AF_INET, source.c_str(), &from.sin_addr) != 1 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0)
      return nullptr;
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) return nullptr;
    return c;
  }
  ~RawTcp() { ::close(fd_); }
  RawTcp(const RawTcp&) = delete;
  RawTcp& operator=(const RawTcp&) = delete;

  /// As much of `bytes` as the socket takes now (never blocks); false once the peer is gone.
  bool send(std::string_view bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL) >= 0 || errno == EAGAIN;
  }

  /// Sends `request` while reading what the server sends, until it closes:
  /// its bytes, or nullopt if it is still open after `timeout`. The server may
  /// answer and close before reading all of `request` (a refused header).
  std::optional<std::string> exchange(std::string_view request, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string got;
    std::size_t sent = 0;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return std::nullopt;
      pollfd p{fd_, static_cast<short>(POLLIN | (sent < request.size() ? POLLOUT : 0)), 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[4096];
        const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) got.append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EAGAIN) return got;  // closed (or reset)
      } else if (p.revents & POLLOUT) {
        const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) sent += static_cast<std::size_t>(n);
        else if (errno != EAGAIN) sent = request.size();  // the server is gone: read what it said
      }
    }
  }

  /// Closed by the server within `timeout` (EOF or reset), having sent nothing?
  bool closed_within(std::chrono::milliseconds timeout) {
    auto got = exchange({}, timeout);
    return got && got->empty();
  }

 private:
  explicit RawTcp(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace cowboy::testing
