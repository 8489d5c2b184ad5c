// The per-request deadline (docs/transit.md, "Operating transitd"): a request
// the sequencer has not answered within the bound of its submission is
// answered by the watch thread instead, with a ServiceUncertain refusal, and
// the sequencer's own answer, when it comes, is dropped. The request is not
// withdrawn: a command may still commit, and an exact retry then gets its
// receipt. Each request is answered exactly once, whichever comes first.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "transit/node/authority.h"  // Refusal

namespace cowboy::transit::node {

class DeadlineWatch {
 public:
  /// `bound` 0: no deadline (guard() returns `done` unchanged, no thread runs).
  explicit DeadlineWatch(std::chrono::milliseconds bound);
  ~DeadlineWatch();  // expires nothing more; answers still in flight are the sequencer's
  DeadlineWatch(const DeadlineWatch&) = delete;
  DeadlineWatch& operator=(const DeadlineWatch&) = delete;

  /// `done`, answered once: by its caller, or with `on_expiry` once the bound passes.
  template <typename T>
  std::function<void(Result<T, Refusal>)> guard(std::function<void(Result<T, Refusal>)> done, Refusal on_expiry) {
    if (bound_.count() == 0) return done;
    auto pending = std::make_shared<Answer<T>>(std::move(done), std::move(on_expiry));
    watch(pending);
    return [pending](Result<T, Refusal> r) { pending->answer(std::move(r)); };
  }
  std::chrono::milliseconds bound() const { return bound_; }
  /// Requests answered by the deadline (their late answers dropped).
  std::uint64_t expired() const { return expired_.load(); }

 private:
  struct Pending {
    virtual ~Pending() = default;
    /// Answers with the refusal unless already answered; counts it in
    /// `expired` first, so that whoever reads the answer sees the count.
    virtual void expire(std::atomic<std::uint64_t>& expired) = 0;
    /// True for the one caller that may answer.
    bool claim() { return !answered.exchange(true); }
    std::atomic<bool> answered{false};
  };
  template <typename T> struct Answer final : Pending {
    Answer(std::function<void(Result<T, Refusal>)> d, Refusal r) : done(std::move(d)), on_expiry(std::move(r)) {}
    bool answer(Result<T, Refusal> r, std::atomic<std::uint64_t>* counted = nullptr) {
      if (!claim()) return false;
      if (counted) ++*counted;
      auto d = std::move(done);  // released with its captures once answered
      d(std::move(r));
      return true;
    }
    void expire(std::atomic<std::uint64_t>& expired) override { answer(Err{on_expiry}, &expired); }
    std::function<void(Result<T, Refusal>)> done;
    Refusal on_expiry;
  };
  struct Entry {
    std::chrono::steady_clock::time_point at;
    std::shared_ptr<Pending> pending;
  };

  void watch(std::shared_ptr<Pending> pending);
  void loop();

  const std::chrono::milliseconds bound_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Entry> entries_;  // in deadline order: one bound, taken under the lock
  bool stop_ = false;
  bool idle_ = false;  // the thread waits with no entry: the next one must wake it
  std::atomic<std::uint64_t> expired_{0};
  std::thread thread_;
};

}  // namespace cowboy::transit::node
