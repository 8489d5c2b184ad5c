// A Prometheus histogram of durations: fixed upper bounds and counts over the
// process's life, so rate() and histogram_quantile() read it as they expect.
#pragma once

#include <array>
#include <cstdint>

namespace cowboy {

class LatencyHistogram {
 public:
  /// Upper bounds in seconds; an observation above the last counts only in +Inf.
  static constexpr std::array<double, 10> kBoundsSeconds{0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                         0.005,  0.01,    0.025,  0.1,   1.0};

  void observe_us(std::uint64_t us) {
    const double seconds = static_cast<double>(us) / 1e6;
    for (std::size_t i = 0; i < kBoundsSeconds.size(); ++i)
      if (seconds <= kBoundsSeconds[i]) {
        ++in_bucket_[i];
        break;
      }
    ++count_;
    sum_us_ += us;
  }
  void add(const LatencyHistogram& other) {
    for (std::size_t i = 0; i < in_bucket_.size(); ++i) in_bucket_[i] += other.in_bucket_[i];
    count_ += other.count_;
    sum_us_ += other.sum_us_;
  }
  /// Observations at or below kBoundsSeconds[i] (Prometheus buckets are cumulative).
  std::uint64_t cumulative(std::size_t i) const {
    std::uint64_t n = 0;
    for (std::size_t k = 0; k <= i; ++k) n += in_bucket_[k];
    return n;
  }
  std::uint64_t count() const { return count_; }
  double sum_seconds() const { return static_cast<double>(sum_us_) / 1e6; }

 private:
  std::array<std::uint64_t, kBoundsSeconds.size()> in_bucket_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_us_ = 0;
};

}  // namespace cowboy
