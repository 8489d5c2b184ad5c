// Time and randomness are injected (architecture principle): production uses
// the system clock and libsodium; tests use the manual versions.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>

#include "common/crypto.h"

namespace cowboy {

class Clock {
 public:
  virtual ~Clock() = default;
  /// Milliseconds since the Unix epoch (wall clock; grants are wall-clock bounded).
  virtual std::uint64_t now_ms() const = 0;
};

class SystemClock final : public Clock {
 public:
  std::uint64_t now_ms() const override {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch()).count());
  }
};

/// Microseconds since the Unix epoch, for log lines and events that two
/// processes on one machine compare.
inline std::uint64_t unix_micros() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now().time_since_epoch()).count());
}

class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::uint64_t start_ms = 0) : now_(start_ms) {}
  std::uint64_t now_ms() const override { return now_.load(); }
  void set(std::uint64_t ms) { now_ = ms; }
  void advance(std::uint64_t ms) { now_ += ms; }

 private:
  std::atomic<std::uint64_t> now_;  // read by the threads under test
};

/// Clocks and entropy may be shared by threads (cbqsd's io and stream threads):
/// every implementation is safe to call from several at once.
class Entropy {
 public:
  virtual ~Entropy() = default;
  virtual void fill(std::span<std::uint8_t> out) = 0;
};

/// The system CSPRNG, drawn 4 KiB at a time into a per-thread pool: a lease
/// handle or a session challenge then costs a copy, not a getrandom(2) call.
class SystemEntropy final : public Entropy {
 public:
  void fill(std::span<std::uint8_t> out) override;
};

/// Deterministic bytes for tests: a counter run through keccak256.
class SeededEntropy final : public Entropy {
 public:
  explicit SeededEntropy(std::uint64_t seed) : counter_(seed) {}
  void fill(std::span<std::uint8_t> out) override;

 private:
  std::atomic<std::uint64_t> counter_;
};

}  // namespace cowboy
