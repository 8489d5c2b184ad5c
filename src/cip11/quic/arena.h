// The servers' MemoryHooks for QUIC connection state: a jemalloc arena of its
// own. Separate from cip11_quic because only server binaries link jemalloc
// (cmake/dependencies.cmake); a library user keeps the default malloc.
#pragma once

#include "cip11/quic/endpoint.h"

namespace cowboy::cip11::quic {

/// One arena per process, created at the first call. Its freed pages go back
/// to the kernel at once (decay 0): ngtcp2 frees rarely (a handshake's packet
/// number spaces, a closed connection), and a page that returns untouched
/// costs no RSS when the next connection's sparse pools land on it.
const MemoryHooks& dedicated_arena();

}  // namespace cowboy::cip11::quic
