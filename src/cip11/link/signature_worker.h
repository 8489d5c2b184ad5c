// Keeps signature work (secp256k1 recovery, Ed25519) off the packet path:
// `work` runs on one of the worker's threads, then `done` on the io_context
// that owns the connections. A Channel runs at most one job at a time, so
// per connection the order of frames is kept while connections use every
// worker thread in parallel.
//
// Two queues: this end's own frames (seals: a push, a Pong, a Goodbye) go
// before checks of what peers sent. A burst of runner Pings at a block's
// start then never delays the block's pushes, and a peer flooding frames
// cannot slow what this end says.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <deque>
#include <functional>
#include <mutex>

namespace cowboy::cip11 {

class SignatureWorker {
 public:
  SignatureWorker(boost::asio::io_context& io, unsigned threads) : io_(io), pool_(threads) {}
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
      (own ? own_ : peers_).push_back(Task{std::move(work), std::move(done)});
    }
    // One pool turn per task; each turn takes the most urgent task waiting.
    boost::asio::post(pool_, [this] {
      Task task;
      {
        std::lock_guard lock(mu_);
        auto& queue = own_.empty() ? peers_ : own_;
        task = std::move(queue.front());
        queue.pop_front();
      }
      task.work();
      boost::asio::post(io_, std::move(task.done));
    });
  }

 private:
  struct Task {
    std::function<void()> work, done;
  };
  boost::asio::io_context& io_;
  boost::asio::thread_pool pool_;
  mutable std::mutex mu_;
  std::deque<Task> own_, peers_;
};

}  // namespace cowboy::cip11
