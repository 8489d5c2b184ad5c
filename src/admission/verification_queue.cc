#include "admission/verification_queue.h"

namespace cowboy::admission {

std::optional<ConfigError> validate(const QueueConfig& c) {
  if (c.max_sources < 1 || c.max_sources > 64) return ConfigError::kSources;
  if (c.max_pending_per_source < 1 || c.max_pending_per_source > 64) return ConfigError::kPerSource;
  if (c.max_pending_total < 1 || c.max_pending_total > 1'024) return ConfigError::kTotal;
  if (c.max_age < 1 || c.max_age > 3'600) return ConfigError::kAge;
  return std::nullopt;
}

Result<VerificationQueue, ConfigError> VerificationQueue::create(const QueueConfig& config) {
  auto q = FairQueue<Job>::create(config);
  if (!q) return Err{q.error()};
  return VerificationQueue(std::move(*q));
}

Result<JobId, QueueError> VerificationQueue::enqueue(SourceId source, ByteView payload, std::uint64_t now) {
  auto kind = classify(payload);
  // Backward time is reported before shape, so a refused call changes nothing either way.
  if (!kind) {
    if (auto observed = queue_.observe(now); !observed) return Err{observed.error()};
    return Err{QueueError::kMalformed};
  }
  auto id = queue_.enqueue(source, now, [&] { return Job{*kind, Bytes(payload.begin(), payload.end())}; });
  if (id) pending_bytes_ += payload.size();
  return id;
}

Result<std::vector<Outcome>, QueueError> VerificationQueue::turn(std::uint64_t now, std::uint64_t credits) {
  std::vector<Outcome> out;
  auto served = queue_.turn(now, credits, [&](FairQueue<Job>::Entry&& e) {
    pending_bytes_ -= e.job.payload.size();
    out.push_back(Outcome{e.id, e.source, e.job.kind, verify(e.job.kind, e.job.payload)});
  });
  if (!served) return Err{served.error()};
  std::vector<Outcome> all;
  for (auto& e : queue_.take_expired()) {
    pending_bytes_ -= e.job.payload.size();
    all.push_back(Outcome{e.id, e.source, e.job.kind, Verdict::kExpired});
  }
  all.insert(all.end(), out.begin(), out.end());
  return all;
}

}  // namespace cowboy::admission
