// Polls a condition until it holds or a deadline passes; never a bare sleep.
#pragma once

#include <chrono>
#include <thread>

namespace cowboy::testing {

template <typename Condition>
bool eventually(Condition&& condition, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace cowboy::testing
