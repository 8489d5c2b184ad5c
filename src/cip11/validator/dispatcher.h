// The validator's push dispatcher (§10, §11.1, §11.3). After each committed
// block it pushes the block's new assignments to the runners in local
// presence, matches their JobAcks to what it sent on that connection, checks
// their result transactions and hands them on, sends JobCancel for what the
// chain ended, and declares a HardFailure when a push gets no framed
// response within ACK_TIMEOUT_BLOCKS.
//
// Runs on the links' io thread and never calls the chain: each block comes
// with the job records its assignments need, and checked result
// transactions go to a ResultSink.
#pragma once

#include <chrono>
#include <map>

#include "cip11/chain/port.h"
#include "common/histogram.h"
#include "cip11/link/validator_links.h"

namespace cowboy::cip11 {

constexpr std::uint64_t kAckTimeoutBlocks = 15;  // §13 ACK_TIMEOUT_BLOCKS

/// One committed block, as the dispatcher needs it.
struct CommittedAssignments {
  Height height{};
  std::chrono::steady_clock::time_point durable_at;  // when its write returned (push latency starts here)
  struct Assigned {
    chain::AssignmentNotice notice;
    chain::JobRecord job;  // read after the block: its spec is what the push carries
  };
  std::vector<Assigned> assigned;
  std::vector<chain::AssignmentEnd> ended;
};

/// Where checked result transactions go (the chain's admission path).
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  /// `reveal`: a JobResultSubmit (which may have to wait for its window), else a JobResultCommit.
  virtual void forward(Bytes tx, const Address& runner, const JobId& job_id, bool reveal) = 0;
};

struct DispatcherStats {
  std::uint64_t pushes = 0;
  std::uint64_t not_present = 0;  // assignments to runners outside local presence: not pushed here
  std::uint64_t withheld = 0;     // assignments of a job kind the runner's CapabilityDelta removed (§6.5)
  std::uint64_t acks_accepted = 0, acks_duplicate = 0, acks_rejected = 0;
  std::uint64_t bad_frames = 0;   // an ack for another assignment, a result on a stream not Accepted
  std::uint64_t hard_failures = 0;
  std::uint64_t cancels = 0;
  std::uint64_t results_forwarded = 0, commits_forwarded = 0;
  std::uint64_t results_refused = 0;  // tx_bytes that failed the §10.3 checks
  std::uint64_t progress = 0;
};

class Dispatcher {
 public:
  /// `tx_format`: the chain's, to check result transactions (§10.3).
  Dispatcher(ValidatorLinks& links, ResultSink& sink, const chain::TxFormat& tx_format,
             std::uint64_t ack_timeout_blocks = kAckTimeoutBlocks)
      : links_(links), sink_(sink), tx_format_(tx_format), ack_timeout_(ack_timeout_blocks) {}

  void on_block(const CommittedAssignments& block);
  /// A sealed runner frame on one of its job streams (ValidatorLinks::Callbacks::on_job_frame).
  void on_job_frame(const Address& runner, ValidatorLinks::LinkId link, std::int64_t stream, const Frame& frame);
  /// Connection `link` carries no more job streams (§11.3; ValidatorLinks::Callbacks::on_link_ended):
  /// what was pushed on it is forgotten. A push on another connection of the
  /// runner, one draining across a §5.3 overlap included, is kept (§11.5).
  void on_link_ended(ValidatorLinks::LinkId link);

  const DispatcherStats& stats() const { return stats_; }
  /// Block durable -> JobAck back at the validator.
  /// Block durable to the runner's JobAck back here.
  const LatencyHistogram& ack_latency() const { return ack_latency_; }
  std::size_t in_flight() const { return pushes_.size(); }
  /// The latest JobProgress of a job in flight here (§10.4: for RPC clients).
  std::optional<JobProgress> progress(const JobId& job_id) const;

 private:
  enum class Phase : std::uint8_t { kAwaitingAck, kAccepted };
  struct Push {
    ValidatorLinks::LinkId link = 0;  // the connection it was pushed on: its ack, results and cancel go there
    std::int64_t stream = 0;
    Bytes32 assignment_hash{};
    Height pushed_at{};  // block height
    std::chrono::steady_clock::time_point durable_at;
    Phase phase = Phase::kAwaitingAck;
    std::optional<JobProgress> progress;  // the latest the runner sent (§10.4)
  };
  using Key = std::pair<JobId, Address>;  // (job_id, runner)

  void end(std::map<Key, Push>::iterator it);
  void on_ack(std::map<Key, Push>::iterator it, const JobAck& ack);
  void on_result(std::map<Key, Push>::iterator it, const Bytes& tx_bytes, bool reveal);

  ValidatorLinks& links_;
  ResultSink& sink_;
  const chain::TxFormat& tx_format_;
  const std::uint64_t ack_timeout_;
  std::map<Key, Push> pushes_;
  std::map<std::pair<ValidatorLinks::LinkId, std::int64_t>, Key> by_stream_;
  DispatcherStats stats_;
  LatencyHistogram ack_latency_;
};

}  // namespace cowboy::cip11
