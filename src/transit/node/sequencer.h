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
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#include "common/clock.h"
#include "transit/contract/envelope.h"
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
};

class Sequencer {
 public:
  static constexpr std::size_t kMaxQueued = 8192;
  static constexpr std::size_t kControlReserve = 256;  // control-hinted releases beyond kMaxQueued

  /// `entropy` draws snapshot tokens; `snapshots` bounds how many may be open.
  Sequencer(std::unique_ptr<Journal> journal, Authority authority, const Clock& clock, Entropy& entropy,
            SnapshotLimits snapshots = {});
  ~Sequencer();  // answers what is queued with ServiceUncertain, publishes what is decided, then stops

  /// Thread-safe. `verified_with` is the key the signature was checked against.
  void submit(CommandBody command, Digest digest, PublicKey verified_with, CommandDone done);
  /// `control`: the query carried X-Transit-Control: snapshot and may release a
  /// snapshot (takes_control_hint); it is queued within kControlReserve beyond
  /// kMaxQueued, so a full queue still admits releases (decision 76).
  void query(SignedQuery query, Digest digest, PublicKey verified_with, QueryDone done, bool control = false);

  /// The current key of a live principal (thread-safe).
  std::optional<PublicKey> key_of(Id principal) const;
  const Genesis& genesis() const { return genesis_; }
  SequencerStats stats() const;

 private:
  struct CommandWork {
    CommandBody command;  // the request, its block bodies (checked) and its canonical text
    Digest digest;
    PublicKey verified_with;
    CommandDone done;
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
    Id position = 0;
    SequencerStats counts;
    bool empty() const { return answers.empty(); }
  };

  void decide_loop();
  void sync_loop();
  void decide_group(std::deque<Work>& group);
  Result<Receipt, Refusal> decide(CommandWork& work, Source& source);
  Result<Response, Refusal> answer(const QueryWork& work);
  std::optional<Refusal> check_key(Id principal, const PublicKey& verified_with, const Digest& digest,
                                   const Signature& signature) const;
  void publish_key(Id principal);
  bool enqueue(Work work, std::size_t limit = kMaxQueued);

  const Genesis genesis_;
  const Clock& clock_;
  std::unique_ptr<Journal> journal_;  // staged by the decide thread, committed by the sync thread
  Authority authority_;               // decide thread only
  SnapshotRegistry snapshots_;        // decide thread only; volatile (decisions 70-77)
  Flight building_;                   // decide thread only
  /// Receipts of decisions not yet known durable, for exact retries (decide thread only).
  std::map<std::pair<Id, Id>, Receipt> undurable_receipts_;

  mutable std::shared_mutex keys_mutex_;
  std::unordered_map<Id, PublicKey> keys_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;  // the decide thread: work queued, or the sync thread idle
  std::condition_variable sync_wake_;
  std::deque<Work> queue_;
  std::optional<Flight> in_sync_;  // handed to the sync thread
  bool syncing_ = false;
  bool stopping_ = false;
  bool sync_exit_ = false;
  Id durable_position_ = 0;
  SequencerStats stats_;
  std::thread sync_thread_;
  std::thread decide_thread_;
};

}  // namespace cowboy::transit::node
