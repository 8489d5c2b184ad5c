// The bytes that every connection of a process may buffer for reading beyond
// a small allowance of its own (a large message, whole or in fragments).
// A channel takes from it as bytes arrive, never for what a header declares,
// and gives back when the message is done. A channel that cannot take refuses
// the message and closes (1013, try again later) instead of waiting, so no
// two half-read messages can wait on each other. The process's read memory is
// bounded by connections x allowance + the budget.
#pragma once

#include <cstddef>
#include <mutex>

namespace cowboy::net {

class ReadBudget {
 public:
  explicit ReadBudget(std::size_t limit) : limit_(limit) {}
  ReadBudget(const ReadBudget&) = delete;
  ReadBudget& operator=(const ReadBudget&) = delete;

  /// All of `bytes`, or nothing.
  bool try_take(std::size_t bytes) {
    std::lock_guard lock(m_);
    if (bytes > limit_ - used_) return false;
    used_ += bytes;
    return true;
  }
  void give_back(std::size_t bytes) {
    std::lock_guard lock(m_);
    used_ -= bytes;
  }
  std::size_t in_use() const {
    std::lock_guard lock(m_);
    return used_;
  }
  std::size_t limit() const { return limit_; }

 private:
  const std::size_t limit_;
  mutable std::mutex m_;
  std::size_t used_ = 0;
};

}  // namespace cowboy::net
