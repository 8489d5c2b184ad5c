// Keeps signature work (secp256k1 recovery, Ed25519) off the packet path:
// `work` runs on one of the worker's threads, then `done` on the io_context
// that owns the connections. A Channel runs at most one job at a time, so
// per connection the order of frames is kept while connections use every
// worker thread in parallel.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>

namespace cowboy::cip11 {

class SignatureWorker {
 public:
  SignatureWorker(boost::asio::io_context& io, unsigned threads) : io_(io), pool_(threads) {}
  ~SignatureWorker() { pool_.join(); }

  boost::asio::io_context& io() { return io_; }

  void run(std::function<void()> work, std::function<void()> done) {
    boost::asio::post(pool_, [this, work = std::move(work), done = std::move(done)]() mutable {
      work();
      boost::asio::post(io_, std::move(done));
    });
  }

 private:
  boost::asio::io_context& io_;
  boost::asio::thread_pool pool_;
};

}  // namespace cowboy::cip11
