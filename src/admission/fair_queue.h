// The scheduling half of the preverification queue (docs/admission.md): per
// source FIFOs, source/per-source/total caps, expiry by age, and round-robin
// service that charges a fixed number of credits per job. Generic over the
// job, so any signature-checking stage can reuse it. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "common/result.h"

namespace cowboy::admission {

using SourceId = std::uint64_t;
using JobId = std::uint64_t;

struct QueueConfig {
  std::uint32_t max_sources = 16;             // 1..=64 active sources
  std::uint32_t max_pending_per_source = 16;  // 1..=64
  std::uint32_t max_pending_total = 256;      // 1..=1,024
  std::uint64_t max_age = 60;                 // 1..=3,600 caller clock units
  bool operator==(const QueueConfig&) const = default;
};

enum class ConfigError : std::uint8_t { kSources, kPerSource, kTotal, kAge };
std::optional<ConfigError> validate(const QueueConfig& c);

enum class QueueError : std::uint8_t {
  kTimeWentBackwards,  // `now` below the last time seen
  kMalformed,          // the payload's shape is not an accepted job (verification queue)
  kSourceLimit,        // a new source while every source slot is active
  kSourceFull,         // this source has its per-source limit pending
  kQueueFull,          // the total limit (pending + unreported expiries) is reached
};

inline constexpr std::uint32_t kCreditsPerJob = 4;

template <typename Job>
class FairQueue {
 public:
  struct Entry {
    JobId id;
    SourceId source;
    std::uint64_t enqueued_at;
    Job job;
  };

  static Result<FairQueue, ConfigError> create(const QueueConfig& config) {
    if (auto e = validate(config)) return Err{*e};
    return FairQueue(config);
  }

  /// Checks time and capacity; `make_job` runs (and copies bytes) only after both pass.
  Result<JobId, QueueError> enqueue(SourceId source, std::uint64_t now, const std::function<Job()>& make_job) {
    if (auto e = advance(now)) return Err{*e};
    auto it = sources_.find(source);
    if (it == sources_.end() && sources_.size() >= config_.max_sources) return Err{QueueError::kSourceLimit};
    if (it != sources_.end() && it->second.size() >= config_.max_pending_per_source) return Err{QueueError::kSourceFull};
    if (pending_ + expired_.size() >= config_.max_pending_total) return Err{QueueError::kQueueFull};
    if (it == sources_.end()) {
      it = sources_.emplace(source, std::deque<Entry>{}).first;
      rotation_.push_back(source);
    }
    JobId id = next_id_++;
    it->second.push_back(Entry{id, source, now, make_job()});
    ++pending_;
    return id;
  }

  /// One scheduling turn: expire, then serve sources round-robin while at
  /// least kCreditsPerJob credits remain. `serve` receives each job in order.
  Result<Unit, QueueError> turn(std::uint64_t now, std::uint64_t credits, const std::function<void(Entry&&)>& serve) {
    if (auto e = advance(now)) return Err{*e};
    while (credits >= kCreditsPerJob && !rotation_.empty()) {
      SourceId source = rotation_.front();
      rotation_.pop_front();
      auto& fifo = sources_.at(source);
      Entry entry = std::move(fifo.front());
      fifo.pop_front();
      --pending_;
      credits -= kCreditsPerJob;
      if (fifo.empty())
        sources_.erase(source);  // the slot frees; no memory of this source remains
      else
        rotation_.push_back(source);
      serve(std::move(entry));
    }
    return Unit{};
  }

  /// Jobs removed by expiry since the last call (no credits were spent on them).
  std::vector<Entry> take_expired() { return std::exchange(expired_, {}); }

  /// Drops a source's pending jobs (its transport session ended) and returns them.
  std::vector<Entry> drop_source(SourceId source) {
    std::vector<Entry> dropped;
    auto it = sources_.find(source);
    if (it == sources_.end()) return dropped;
    pending_ -= it->second.size();
    dropped.assign(std::make_move_iterator(it->second.begin()), std::make_move_iterator(it->second.end()));
    sources_.erase(it);
    std::erase(rotation_, source);
    return dropped;
  }

  /// Records the time (refusing a backward one) and expires what is due.
  Result<Unit, QueueError> observe(std::uint64_t now) {
    if (auto e = advance(now)) return Err{*e};
    return Unit{};
  }

  std::size_t pending() const { return pending_; }
  std::size_t active_sources() const { return sources_.size(); }
  const QueueConfig& config() const { return config_; }

 private:
  explicit FairQueue(const QueueConfig& c) : config_(c) {}

  // Rejects backward time, then expires: the oldest job of a source is at its
  // front, so this visits each active source once plus each expired job.
  std::optional<QueueError> advance(std::uint64_t now) {
    if (now < last_now_) return QueueError::kTimeWentBackwards;
    last_now_ = now;
    for (auto it = sources_.begin(); it != sources_.end();) {
      auto& fifo = it->second;
      while (!fifo.empty() && now - fifo.front().enqueued_at >= config_.max_age) {
        expired_.push_back(std::move(fifo.front()));
        fifo.pop_front();
        --pending_;
      }
      if (fifo.empty()) {
        std::erase(rotation_, it->first);
        it = sources_.erase(it);
      } else {
        ++it;
      }
    }
    return std::nullopt;
  }

  QueueConfig config_;
  std::map<SourceId, std::deque<Entry>> sources_;
  std::deque<SourceId> rotation_;  // active sources in service order
  std::vector<Entry> expired_;
  std::size_t pending_ = 0;
  std::uint64_t last_now_ = 0;
  JobId next_id_ = 1;
};

}  // namespace cowboy::admission
