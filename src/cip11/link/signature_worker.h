// Keeps signature work (secp256k1 recovery, Ed25519) off the packet path:
// `work` runs on one of the worker's threads, then `done` on the io_context
// that owns the connections. A Channel runs at most one job at a time, so
// per connection the order of frames is kept while connections use every
// worker thread in parallel.
//
// Three queues: this end's own frames (seals: a push, a Pong, a Goodbye) go
// first, so a burst of runner Pings at a block's start never delays the
// block's pushes and a peer flooding frames cannot slow what this end says.
// Then, taking turns, the checks of admitted peers' frames (FIFO: one job per
// connection at most) and the handshake checks of peers not yet admitted.
// Those go through seed 003's preverification queue (admission::FairQueue)
// with the peer's address as the source: round robin over addresses, at most
// kHandshakeQueue.max_pending_per_source waiting per address and
// max_pending_total in all, each waiting at most max_age ms. A handshake the
// queue refuses or expires is not checked: `refused` runs instead (the
// channel says Goodbye{RateLimited}), so one address's flood of handshakes
// waits behind itself, never in front of another address's.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

#include "admission/fair_queue.h"

namespace cowboy::cip11 {

/// The handshake queue's limits (docs/cip11.md, "Pre-auth limits"); its clock is in ms.
inline constexpr admission::QueueConfig kHandshakeQueue{64, 64, 1'024, 3'000};

/// The fairness source of an address: IPv4 whole; IPv6 by its /64, the unit
/// one host is usually given.
inline admission::SourceId handshake_source(const boost::asio::ip::address& a) {
  if (a.is_v4()) return a.to_v4().to_uint();
  if (a.to_v6().is_v4_mapped())
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, a.to_v6()).to_uint();  // ngtcp2 hands some v4 peers over as mapped v6
  const auto bytes = a.to_v6().to_bytes();
  admission::SourceId prefix = 1;  // above every IPv4 source
  for (int i = 0; i < 8; ++i) prefix = (prefix << 8) | bytes[static_cast<std::size_t>(i)];
  return prefix | (admission::SourceId{1} << 63);
}

struct SignatureWorkerStats {
  std::uint64_t handshakes_checked = 0;
  std::uint64_t handshakes_refused = 0;  // the queue had no room (its address's share, or in all)
  std::uint64_t handshakes_expired = 0;  // waited max_age in the queue
  std::size_t handshakes_waiting = 0;    // now
};

class SignatureWorker {
 public:
  SignatureWorker(boost::asio::io_context& io, unsigned threads)
      : io_(io), pool_(threads), handshakes_(std::move(*admission::FairQueue<Task>::create(kHandshakeQueue))) {}
  ~SignatureWorker() { pool_.join(); }

  boost::asio::io_context& io() { return io_; }

  /// Tasks waiting for a worker thread: this end's own seals, and checks of what peers sent.
  struct Depth {
    std::size_t own = 0, peers = 0;
  };
  Depth depth() const {
    std::lock_guard lock(mu_);
    return {own_.size(), peers_.size()};
  }

  /// `own`: sealing a frame this end sends (served first).
  void run(std::function<void()> work, std::function<void()> done, bool own = false) {
    {
      std::lock_guard lock(mu_);
      (own ? own_ : peers_).push_back(Task{std::move(work), std::move(done), {}});
    }
    post_turn();
  }

  /// A check of a peer's handshake frame, queued fairly under `source`; `refused` (on the
  /// io_context) instead of `work` and `done` when the queue has no room or it waited too long.
  void run_handshake(admission::SourceId source, std::function<void()> work, std::function<void()> done,
                     std::function<void()> refused) {
    bool queued = false;
    {
      std::lock_guard lock(mu_);
      Task task{std::move(work), std::move(done), std::move(refused)};
      auto id = handshakes_.enqueue(source, now_ms(), [&] { return std::move(task); });
      queued = id.ok();
      if (!queued) {
        ++stats_.handshakes_refused;
        boost::asio::post(io_, std::move(task.refused));
      }
      report_expired();
    }
    if (queued) post_turn();
  }

  SignatureWorkerStats stats() {
    std::lock_guard lock(mu_);
    SignatureWorkerStats s = stats_;
    s.handshakes_waiting = handshakes_.pending();
    return s;
  }

 private:
  struct Task {
    std::function<void()> work, done, refused;
  };

  // One pool turn per task queued; each turn takes the most urgent task
  // waiting (a turn whose handshake expired meanwhile finds less to do).
  void post_turn() {
    boost::asio::post(pool_, [this] {
      std::optional<Task> task;
      {
        std::lock_guard lock(mu_);
        task = next();
        report_expired();
      }
      if (!task) return;
      task->work();
      boost::asio::post(io_, std::move(task->done));
    });
  }

  // Lock held.
  std::optional<Task> next() {
    auto pop = [](std::deque<Task>& q) {
      Task t = std::move(q.front());
      q.pop_front();
      return t;
    };
    if (!own_.empty()) return pop(own_);
    std::optional<Task> handshake;
    const bool handshake_turn = handshakes_turn_ || peers_.empty();
    if (handshake_turn) {
      (void)handshakes_.turn(now_ms(), admission::kCreditsPerJob, [&](auto&& entry) { handshake = std::move(entry.job); });
      if (handshake) ++stats_.handshakes_checked;
    }
    handshakes_turn_ = !handshakes_turn_;
    if (handshake) return handshake;
    if (!peers_.empty()) return pop(peers_);
    return std::nullopt;
  }

  // Lock held: handshakes that waited max_age are answered, unchecked.
  void report_expired() {
    for (auto& e : handshakes_.take_expired()) {
      ++stats_.handshakes_expired;
      boost::asio::post(io_, std::move(e.job.refused));
    }
  }

  std::uint64_t now_ms() const {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_).count());
  }

  boost::asio::io_context& io_;
  boost::asio::thread_pool pool_;
  mutable std::mutex mu_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::deque<Task> own_, peers_;
  admission::FairQueue<Task> handshakes_;
  bool handshakes_turn_ = true;  // peers' frames and handshakes alternate
  SignatureWorkerStats stats_;
};

}  // namespace cowboy::cip11
