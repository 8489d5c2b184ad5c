// Loopback ports for child processes that must be told theirs in advance.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
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

/// `n` distinct loopback ports of socket `type` (SOCK_STREAM, SOCK_DGRAM) the
/// kernel just handed out, all held open until the last is chosen: one at a
/// time, a port closed and chosen again could come back twice (seen: two
/// validators of one test given the same UDP port).
inline std::vector<std::uint16_t> free_ports(int type, std::size_t n) {
  std::vector<int> fds;
  std::vector<std::uint16_t> ports;
  for (std::size_t i = 0; i < n; ++i) {
    int fd = ::socket(AF_INET, type, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    if (fd >= 0) fds.push_back(fd);
    ports.push_back(ok ? ntohs(a.sin_port) : 0);
  }
  for (int fd : fds) ::close(fd);
  return ports;
}

/// A loopback port the kernel just handed out (free, unless someone races for it).
inline std::uint16_t free_port() { return free_ports(SOCK_STREAM, 1)[0]; }

/// A loopback UDP port the kernel just handed out, for a QUIC listener told its port in advance
/// (free_port() asks TCP, whose free ports a UDP listener may still find taken).
inline std::uint16_t free_udp_port() { return free_ports(SOCK_DGRAM, 1)[0]; }

}  // namespace cowboy::testing
