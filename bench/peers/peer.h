// One broker under comparison (cbqsd, Redis Streams, NATS JetStream, RabbitMQ): started
// as a child process on 127.0.0.1 with a private data directory, driven by a
// load generator in C/C++ through its own client library, stopped by its PID.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../../tests/support/poll.h"
#include "../../tests/support/ports.h"

namespace cowboy::bench::peers {

using Clock = std::chrono::steady_clock;

/// What a workload measured: completed operations over `seconds`, and the
/// latency of each (ms) when the workload measures latency.
struct Sample {
  std::uint64_t operations = 0;
  double seconds = 0;
  std::vector<double> latencies_ms;
  /// The delivery workload's appends, append -> acknowledgement, where the peer
  /// measures them: a delivery stall that they share is a commit stall.
  std::vector<double> ack_latencies_ms;
  double per_second() const { return seconds > 0 ? static_cast<double>(operations) / seconds : 0; }
  /// Adds one connection's acknowledged operations (one latency each); the caller serializes.
  void add(const std::vector<double>& ms) {
    operations += ms.size();
    latencies_ms.insert(latencies_ms.end(), ms.begin(), ms.end());
  }
  /// `operations` done since `start`.
  static Sample since(std::chrono::steady_clock::time_point start, std::uint64_t operations) {
    return Sample{operations, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), {}, {}};
  }
};

struct AppendLoad {
  int connections = 4;
  int window = 64;           // appends outstanding per connection
  std::size_t payload = 256;
  double seconds = 5;
  double rate = 0;           // total appends/s, spread over the connections; 0: as fast as the windows allow
};

class Peer {
 public:
  virtual ~Peer() = default;
  virtual std::string name() const = 0;
  /// How an acknowledged append is made durable, for the table.
  virtual std::string durability() const = 0;
  /// How a consumer's acknowledgement is made durable, for the drain rows.
  virtual std::string ack_durability() const = 0;
  /// Starts the server in `dir` (a fresh directory); false if it did not come up.
  virtual bool start(const std::filesystem::path& dir) = 0;
  virtual void stop() = 0;
  /// Durable appends to one stream; latency is append -> acknowledgement.
  virtual Sample append(const AppendLoad& load) = 0;
  /// Fills a fresh stream with `records`, then `workers` competing consumers
  /// drain it, each record acknowledged explicitly; the drain is timed.
  virtual Sample drain(int workers, std::uint64_t records, std::size_t payload) = 0;
  /// A live subscriber's append -> delivery latency at `rate` appends/s.
  virtual Sample delivery(double rate, double seconds, std::size_t payload) = 0;
};

/// `batch`: the unpaced append run hands the SDK batches of this many
/// (Client::append_batch), at most the window in flight; 0: append() per record.
std::unique_ptr<Peer> make_cbqsd(const std::filesystem::path& bin_dir, int batch);
std::unique_ptr<Peer> make_redis();
std::unique_ptr<Peer> make_nats();
/// RabbitMQ's three loopback ports: AMQP, Erlang distribution, the private epmd's. 0: free ones.
struct RabbitPorts {
  std::uint16_t amqp = 0, dist = 0, epmd = 0;
};
std::unique_ptr<Peer> make_rabbitmq(RabbitPorts ports = {});
/// Whether Debian's rabbitmq-server (and Erlang's epmd) is installed.
bool rabbitmq_installed();

/// Nanoseconds on the steady clock, stamped into payloads for delivery latency.
inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}
inline double ms_since(std::uint64_t ns) { return static_cast<double>(now_ns() - ns) / 1e6; }

inline Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

using testing::free_port;   // a loopback port nothing listens on now
using testing::eventually;  // polls a condition up to a deadline (a server coming up)

/// Paces an open-loop sender: the time the n-th of `rate`/s is due.
inline Clock::time_point due(Clock::time_point start, std::uint64_t n, double rate) {
  return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(static_cast<double>(n) / rate));
}

/// The append workload's frame, the same for every peer: one thread per
/// connection runs `connection(start, end)`, which sends until `end` and
/// returns the latencies of its acknowledged appends; the Sample holds them
/// all, over `load.seconds`.
template <typename Connection>
Sample on_each_connection(const AppendLoad& load, Connection connection) {
  Sample total;
  std::mutex m;
  auto start = Clock::now(), end = start + seconds(load.seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < load.connections; ++t)
    threads.emplace_back([&] {
      std::vector<double> mine = connection(start, end);
      std::lock_guard lock(m);
      total.add(mine);
    });
  for (auto& t : threads) t.join();
  total.seconds = load.seconds;
  return total;
}

}  // namespace cowboy::bench::peers
