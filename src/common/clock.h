// Time and randomness are injected (architecture principle): production uses
// the system clock and libsodium; tests use the manual versions.
#pragma once

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

class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::uint64_t start_ms = 0) : now_(start_ms) {}
  std::uint64_t now_ms() const override { return now_; }
  void set(std::uint64_t ms) { now_ = ms; }
  void advance(std::uint64_t ms) { now_ += ms; }

 private:
  std::uint64_t now_;
};

class Entropy {
 public:
  virtual ~Entropy() = default;
  virtual void fill(std::span<std::uint8_t> out) = 0;
};

class SystemEntropy final : public Entropy {
 public:
  void fill(std::span<std::uint8_t> out) override { crypto::random_bytes(out); }
};

/// Deterministic bytes for tests: a counter run through keccak256.
class SeededEntropy final : public Entropy {
 public:
  explicit SeededEntropy(std::uint64_t seed) : counter_(seed) {}
  void fill(std::span<std::uint8_t> out) override;

 private:
  std::uint64_t counter_;
};

}  // namespace cowboy
