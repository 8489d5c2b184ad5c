// Clean shutdown for the daemons: block SIGINT and SIGTERM before any thread
// starts (so every thread inherits the mask), then wait for one on the main thread.
#pragma once

#include <csignal>
#include <pthread.h>

namespace cowboy {

inline sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

/// Blocks until SIGINT or SIGTERM arrives; returns the signal.
inline int wait_for_stop_signal(const sigset_t& signals) {
  int sig = 0;
  sigwait(&signals, &sig);
  return sig;
}

}  // namespace cowboy
