#include "transit/node/deadline.h"

#include <pthread.h>

namespace cowboy::transit::node {

DeadlineWatch::DeadlineWatch(std::chrono::milliseconds bound) : bound_(bound) {
  if (bound_.count() == 0) return;
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "transit-deadln");
    loop();
  });
}

DeadlineWatch::~DeadlineWatch() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void DeadlineWatch::watch(std::shared_ptr<Pending> pending) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    // Answers mostly come in order: what is answered at the front need not wait for its deadline to go.
    while (!entries_.empty() && entries_.front().pending->answered.load()) entries_.pop_front();
    entries_.push_back(Entry{std::chrono::steady_clock::now() + bound_, std::move(pending)});
    // A thread waiting for an earlier deadline wakes in time for this later one by itself:
    // only one waiting for any entry at all needs waking (a wake per request costs a switch).
    wake = idle_;
    idle_ = false;
  }
  if (wake) wake_.notify_one();
}

void DeadlineWatch::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (entries_.empty()) {
      idle_ = true;
      wake_.wait(lock);
      continue;
    }
    if (entries_.front().pending->answered.load()) {
      entries_.pop_front();
      continue;
    }
    // A copy: watch() may pop the front while this thread waits.
    const auto at = entries_.front().at;
    if (std::chrono::steady_clock::now() < at) {
      wake_.wait_until(lock, at);
      continue;
    }
    auto due = std::move(entries_.front().pending);
    entries_.pop_front();
    lock.unlock();  // the answer goes out through the HTTP server, never under this lock
    due->expire(expired_);
    lock.lock();
  }
}

}  // namespace cowboy::transit::node
