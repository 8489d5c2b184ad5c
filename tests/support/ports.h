// Loopback ports for child processes that must be told theirs in advance.
//
// Chosen below the kernel's ephemeral range (net.ipv4.ip_local_port_range):
// a port the kernel handed out for bind(0) is also a port it hands out as the
// source of any outgoing connection, so between choosing it and the child
// binding it, another test's client could take it (seen in CI: a broker's
// admin port, 32912, taken a second after it was chosen). Ports outside that
// range are only ever taken by someone binding them by number.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <vector>

namespace cowboy::testing {

/// Whether 127.0.0.1:`port` can be bound now (0 binds any free port).
inline bool bindable(std::uint16_t port, std::uint16_t* bound = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  socklen_t len = sizeof a;
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  ::close(fd);
  if (ok && bound) *bound = ntohs(a.sin_port);
  return ok;
}

/// The ports tests choose from: [10000, the ephemeral range's first port).
inline std::pair<std::uint16_t, std::uint16_t> chosen_port_range() {
  unsigned low = 32768, high = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
  if (low <= 11000) return {static_cast<std::uint16_t>(high + 1), 65535};  // ephemeral range starts low: use above it
  return {10000, static_cast<std::uint16_t>(low - 1)};
}

/// `n` distinct free loopback ports of socket `type` (SOCK_STREAM, SOCK_DGRAM),
/// all held open until the last is chosen, so no port is handed out twice.
/// A port is 0 when none could be found.
inline std::vector<std::uint16_t> free_ports(int type, std::size_t n) {
  static thread_local std::mt19937 random{std::random_device{}()};
  const auto [first, last] = chosen_port_range();
  std::uniform_int_distribution<unsigned> pick(first, last);
  std::vector<int> fds;
  std::vector<std::uint16_t> ports;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint16_t port = 0;
    for (int attempt = 0; attempt < 200 && port == 0; ++attempt) {
      int fd = ::socket(AF_INET, type, 0);
      if (fd < 0) break;
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<std::uint16_t>(pick(random)));
      if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        fds.push_back(fd);
        port = ntohs(a.sin_port);
      } else {
        ::close(fd);
      }
    }
    ports.push_back(port);
  }
  for (int fd : fds) ::close(fd);
  return ports;
}

/// A free loopback port (free, unless someone races for it by number).
inline std::uint16_t free_port() { return free_ports(SOCK_STREAM, 1)[0]; }

/// A free loopback UDP port, for a QUIC listener told its port in advance
/// (a free TCP port may still be taken for UDP).
inline std::uint16_t free_udp_port() { return free_ports(SOCK_DGRAM, 1)[0]; }

}  // namespace cowboy::testing
