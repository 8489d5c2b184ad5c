// An efficient load generator: all producers run on one io_context thread
// with async TLS WebSocket I/O (handshake, session, then windowed appends), so
// the generator costs far less CPU than one blocking thread per producer and
// the broker keeps most of this 2-core machine.
#pragma once

#include <filesystem>
#include <vector>

#include "cbqs/wire/frames.h"
#include "common/crypto.h"

namespace cowboy::bench {

/// Where a producer appends: a stream (its grant) and a lane of it.
struct LoadTarget {
  cbqs::StreamGrantV2 grant;
  cbqs::LaneId lane;
};

struct AsyncLoadOptions {
  std::uint16_t port = 0;
  std::filesystem::path ca_file;
  std::vector<LoadTarget> targets;  // producer p appends to targets[p % size]
  crypto::Ed25519Seed holder{};
  int producers = 1;
  std::size_t payload = 256;
  int window = 64;
  double seconds = 5;
  double rate = 0;  // total appends/s; 0 = as fast as the windows allow
};

struct AsyncLoadResult {
  std::uint64_t acknowledged = 0;
  std::vector<double> latencies_ms;  // append -> Appended
  double elapsed_seconds = 0;
  bool failed = false;
};

AsyncLoadResult run_async_load(const AsyncLoadOptions& options);

}  // namespace cowboy::bench
