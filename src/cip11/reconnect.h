// §11.3 runner reconnect policy: 100 ms x 2^attempt, each wait drawn within
// +-25 % of that (so a validator restart does not bring every runner back in
// the same instant) and never above 30 s, the attempt count reset after an
// admission, and a Goodbye's retry_after_blocks honoured as a lower bound.
// Pure: the caller owns the clock and the timer; randomness is injected.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "common/clock.h"

namespace cowboy::cip11 {

class ReconnectBackoff {
 public:
  static constexpr std::chrono::milliseconds kBase{100};
  static constexpr std::chrono::milliseconds kCap{30'000};

  explicit ReconnectBackoff(Entropy& entropy) : entropy_(entropy) {}

  /// The wait before the next attempt, then counts it. `retry_after` is the
  /// last Goodbye's retry_after_blocks converted to time by the caller.
  std::chrono::milliseconds next(std::optional<std::chrono::milliseconds> retry_after = std::nullopt);
  /// An admission succeeded: the next loss starts from 100 ms again.
  void reset() { attempt_ = 0; }
  unsigned attempt() const { return attempt_; }

  /// 100 ms x 2^attempt, at most 30 s: the centre of the jitter window.
  static std::chrono::milliseconds nominal(unsigned attempt);

 private:
  Entropy& entropy_;
  unsigned attempt_ = 0;
};

}  // namespace cowboy::cip11
