// admission::VerificationQueue: seed 003's bounded preverification queue for
// signed claim envelopes and conflict pairs (docs/admission.md). Enqueue checks
// time, shape and capacity before copying; a turn verifies jobs round-robin at
// 4 credits each. The outcomes are not admission receipts.
#pragma once

#include "admission/envelope.h"
#include "admission/fair_queue.h"

namespace cowboy::admission {

struct Outcome {
  JobId job = 0;
  SourceId source = 0;
  JobKind kind = JobKind::kClaim;
  Verdict verdict = Verdict::kValid;
};

class VerificationQueue {
 public:
  static Result<VerificationQueue, ConfigError> create(const QueueConfig& config);

  Result<JobId, QueueError> enqueue(SourceId source, ByteView payload, std::uint64_t now);
  /// Expires, then verifies while `credits` allow; returns the outcomes of this
  /// turn, expired jobs first (as Verdict::kExpired, free of credits).
  Result<std::vector<Outcome>, QueueError> turn(std::uint64_t now, std::uint64_t credits);
  void drop_source(SourceId source) {
    for (const auto& e : queue_.drop_source(source)) pending_bytes_ -= e.job.payload.size();
  }
  std::size_t pending() const { return queue_.pending(); }
  std::size_t pending_bytes() const { return pending_bytes_; }

 private:
  struct Job {
    JobKind kind;
    Bytes payload;
  };
  explicit VerificationQueue(FairQueue<Job> q) : queue_(std::move(q)) {}
  FairQueue<Job> queue_;
  std::size_t pending_bytes_ = 0;
};

}  // namespace cowboy::admission
