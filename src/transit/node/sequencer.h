// The one owner of the Authority and the Journal. Two threads in a pipeline:
// the decide thread takes verified commands and queries from a bounded queue,
// decides every command in arrival order at the next authority position and
// answers every query, collecting the answers of a group into a flight; the
// sync thread publishes a flight's decisions with one synced write and only
// then releases its answers. While one flight syncs, the next one is being
// decided, so a group is as large as what arrived during the previous write.
// Flights are released in order, so no answer (a query's included) reflects a
// decision that is not yet durable. A read-mostly key directory, updated as
// decisions are made, lets io threads verify signatures before queueing; the
// decide thread rechecks that the verifying key is still current.
//
// At most max_pending requests are in the node at once (queued, being decided
// or awaiting their write): beyond that a request is refused `overloaded` at
// once. A request not answered within the deadline of its submission is
// answered ServiceUncertain by the DeadlineWatch (deadline.h) and stays in the
// pipeline: a command may still commit, and an exact retry gets its receipt.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#include "common/clock.h"
#include "common/histogram.h"
#include "transit/contract/envelope.h"
#include "transit/node/deadline.h"
#include "transit/node/journal.h"
#include "transit/node/snapshots.h"

namespace cowboy::transit::node {

using CommandDone = std::function<void(Result<Receipt, Refusal>)>;
using QueryDone = std::function<void(Result<Response, Refusal>)>;

struct SequencerStats {
  std::uint64_t accepted = 0;  // new decisions
  std::uint64_t replayed = 0;  // exact retries answered with their original receipt
  std::uint64_t refused = 0;
  std::uint64_t queries = 0;
  std::uint64_t synced_writes = 0;
  std::uint64_t sync_us_total = 0;  // time spent in synced writes
  std::uint64_t sync_us_max = 0;
  std::uint64_t slow_syncs = 0;     // synced writes that took over 5 ms
  std::uint64_t position = 0;       // the durable authority position
  std::uint64_t reclaimed_below = 0;  // history: the trimmed requests below it are compacted away (decision 66)
  std::uint64_t relocated_through = 0;  // storage: the compaction cursor whose leaf is rewritten (decision 145)
  std::uint64_t pending = 0;          // requests queued, being decided or awaiting their synced write
  std::uint64_t overloaded = 0;       // requests refused at once: max_pending were pending
  std::uint64_t deadline_expired = 0;  // requests answered ServiceUncertain by the deadline
  std::uint64_t collection_keys_visited = 0;  // stored entry keys collection's scans visited (decision 191)
  LatencyHistogram decision_latency;  // commands decided (accepted, replayed or refused): submission to the answer's release
  LatencyHistogram sync_latency;      // each synced write
};

struct SequencerOptions {
  std::size_t max_pending = 8192;
  std::chrono::milliseconds deadline{5000};  // 0: none (requests wait for the disk however long it takes)
};

/// What /readyz checks (node/admin.cc).
struct SequencerHealth {
  bool journal_failed = false;      // a synced write failed: failed closed until a restart
  bool stopping = false;
  bool sync_thread_running = false;  // the sync thread has not returned
  std::uint64_t sync_running_ms = 0;  // how long the synced write under way has run (0: none)
};

class Sequencer {
 public:
  static constexpr std::size_t kControlReserve = 256;  // control-hinted releases beyond max_pending

  /// `entropy` draws snapshot tokens; `snapshots` bounds how many may be open;
  /// `payloads` is what the payload store holds, as payload_ready and payload_deleted ask it.
  Sequencer(std::unique_ptr<Journal> journal, Authority authority, const Clock& clock, Entropy& entropy,
            const PayloadFacts& payloads, SnapshotLimits snapshots = {}, SequencerOptions options = {});
  ~Sequencer();  // answers what is queued with ServiceUncertain, publishes what is decided, then stops

  /// Thread-safe. `verified_with` is the key the signature was checked against.
  void submit(CommandBody command, Digest digest, PublicKey verified_with, CommandDone done);
  /// `control`: the query carried X-Transit-Control: snapshot and may release a
  /// snapshot (takes_control_hint); it is admitted within kControlReserve beyond
  /// max_pending, so a full node still admits releases (decision 76).
  void query(SignedQuery query, Digest digest, PublicKey verified_with, QueryDone done, bool control = false);

  /// The current key of a live principal (thread-safe).
  std::optional<PublicKey> key_of(PrincipalId principal) const;
  const Genesis& genesis() const { return genesis_; }
  SequencerStats stats() const;
  SequencerHealth health() const;
  const SequencerOptions& options() const { return options_; }
  /// The live table files holding `leaf` (decision 145; the storage tests look at it).
  std::vector<std::uint64_t> placement(const StorageLeaf& leaf) const { return journal_->files_of(leaf); }

 private:
  struct CommandWork {
    CommandBody command;  // the request, its block bodies (checked) and its canonical text
    Digest digest;
    PublicKey verified_with;
    CommandDone done;
    std::chrono::steady_clock::time_point submitted;
  };
  struct QueryWork {
    SignedQuery query;
    Digest digest;
    PublicKey verified_with;
    QueryDone done;
  };
  using Work = std::variant<CommandWork, QueryWork>;

  /// How an answer came about: a new decision, a receipt not yet durable, or a published one.
  enum class Source { kRefused, kDecided, kReplayedUndurable, kReplayedFromJournal };
  /// One group's decisions and answers; `release(durable)` sends them.
  struct Flight {
    std::shared_ptr<Journal::Batch> batch;
    std::vector<std::function<void(bool durable)>> answers;
    std::vector<std::chrono::steady_clock::time_point> commands_submitted;  // for decision_latency
    Position position{};
    SequencerStats counts;
    bool empty() const { return answers.empty(); }
  };

  void decide_loop();
  void sync_loop();
  void decide_group(std::deque<Work>& group);
  Result<Receipt, Refusal> decide(CommandWork& work, Source& source);
  Result<Response, Refusal> answer(const QueryWork& work);
  std::optional<Refusal> check_key(PrincipalId principal, const PublicKey& verified_with, const Digest& digest,
                                   const Signature& signature) const;
  void publish_key(PrincipalId principal);
  bool enqueue(Work work, std::size_t reserve = 0);  // admitted while pending < max_pending + reserve
  /// The clock read as trusted time: what every decision and query is judged by.
  TrustedMs trusted_now() const { return TrustedMs{clock_.now_ms()}; }

  const Genesis genesis_;
  const Clock& clock_;
  const PayloadFacts& payloads_;  // asked on the decide thread
  const SequencerOptions options_;
  DeadlineWatch deadlines_;  // outlives the threads: it drops their late answers
  std::unique_ptr<Journal> journal_;  // staged by the decide thread, committed by the sync thread
  Authority authority_;               // decide thread only
  SnapshotRegistry snapshots_;        // decide thread only; volatile (decisions 70-77)
  Flight building_;                   // decide thread only
  /// Receipts of decisions not yet known durable, for exact retries (decide thread only).
  std::map<std::pair<PrincipalId, Id>, Receipt> undurable_receipts_;

  mutable std::shared_mutex keys_mutex_;
  std::unordered_map<PrincipalId, PublicKey> keys_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;  // the decide thread: work queued, or the sync thread idle
  std::condition_variable sync_wake_;
  std::deque<Work> queue_;
  std::optional<Flight> in_sync_;  // handed to the sync thread
  bool syncing_ = false;
  bool stopping_ = false;
  bool sync_exit_ = false;
  Position durable_position_{};
  std::size_t pending_ = 0;  // submitted and not yet answered by the pipeline
  std::optional<std::chrono::steady_clock::time_point> sync_started_;  // the synced write under way
  bool sync_running_ = true;
  SequencerStats stats_;
  std::thread sync_thread_;
  std::thread decide_thread_;
};

}  // namespace cowboy::transit::node
