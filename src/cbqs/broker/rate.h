// A token bucket: `rate` tokens per second, holding at most one second's
// worth. Kept in thousandths of a token so that frequent calls at low rates
// never round a refill away.
#pragma once

#include <algorithm>
#include <cstdint>

namespace cowboy::cbqs::broker {

class TokenBucket {
 public:
  TokenBucket() = default;
  TokenBucket(std::uint64_t rate_per_sec, std::uint64_t now_ms)
      : rate_(rate_per_sec), milli_(capacity()), last_ms_(now_ms) {}

  /// A bucket that had no rate starts full; otherwise the tokens carry over (clamped).
  void set_rate(std::uint64_t rate_per_sec) {
    bool first = rate_ == 0;
    rate_ = rate_per_sec;
    milli_ = first ? capacity() : std::min(milli_, capacity());
  }
  /// Takes `n` tokens if there are that many. A request larger than one
  /// second's worth passes when the bucket is full, so it is never refused forever.
  bool take(std::uint64_t n, std::uint64_t now_ms) {
    refill(now_ms);
    unsigned __int128 need = static_cast<unsigned __int128>(n) * 1000;
    if (milli_ >= need) {
      milli_ -= need;
      return true;
    }
    if (rate_ > 0 && milli_ == capacity()) {
      milli_ = 0;
      return true;
    }
    return false;
  }
  /// Milliseconds until take(n) would succeed.
  std::uint64_t wait_ms(std::uint64_t n, std::uint64_t now_ms) {
    refill(now_ms);
    if (rate_ == 0) return UINT64_MAX;
    unsigned __int128 need = std::min(static_cast<unsigned __int128>(n) * 1000, capacity());
    if (milli_ >= need) return 0;
    return static_cast<std::uint64_t>((need - milli_ + rate_ - 1) / rate_);
  }

 private:
  unsigned __int128 capacity() const { return static_cast<unsigned __int128>(rate_) * 1000; }
  void refill(std::uint64_t now_ms) {
    if (now_ms <= last_ms_) return;
    milli_ = std::min(capacity(), milli_ + static_cast<unsigned __int128>(now_ms - last_ms_) * rate_);
    last_ms_ = now_ms;
  }
  std::uint64_t rate_ = 0;
  unsigned __int128 milli_ = 0;
  std::uint64_t last_ms_ = 0;
};

}  // namespace cowboy::cbqs::broker
