// The one owner of the Authority and the Journal: a thread that takes verified
// commands and queries from a bounded queue, decides every command in arrival
// order at the next authority position, publishes the group with one synced
// write, and only then answers. Queries are answered after that write, so they
// never see a decision that is not yet durable. A read-mostly key directory,
// updated as decisions are made, lets io threads verify signatures before
// queueing; the sequencer rechecks that the verifying key is still current.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#include "common/clock.h"
#include "transit/node/journal.h"

namespace cowboy::transit::node {

using CommandDone = std::function<void(Result<Receipt, Refusal>)>;
using QueryDone = std::function<void(Result<Response, Refusal>)>;

struct SequencerStats {
  std::uint64_t accepted = 0;      // new decisions
  std::uint64_t replayed = 0;      // exact retries answered with their original receipt
  std::uint64_t refused = 0;
  std::uint64_t queries = 0;
  std::uint64_t synced_writes = 0;
  std::uint64_t position = 0;
};

class Sequencer {
 public:
  static constexpr std::size_t kMaxQueued = 8192;

  Sequencer(std::unique_ptr<Journal> journal, Authority authority, const Clock& clock);
  ~Sequencer();  // answers what is queued with ServiceUncertain, then stops

  /// Thread-safe. `verified_with` is the key the signature was checked against.
  void submit(SignedRequest request, Digest digest, PublicKey verified_with, CommandDone done);
  void query(SignedQuery query, Digest digest, PublicKey verified_with, QueryDone done);

  /// The current key of a live principal (thread-safe).
  std::optional<PublicKey> key_of(Id principal) const;
  const Genesis& genesis() const { return genesis_; }
  SequencerStats stats() const;

 private:
  struct CommandWork {
    SignedRequest request;
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

  void run();
  void process(std::deque<Work>& group);
  /// How an answer came about: only kDecided and kReplayedFromGroup wait on this group's write.
  enum class Source { kRefused, kDecided, kReplayedFromGroup, kReplayedFromJournal };
  Result<Receipt, Refusal> decide(CommandWork& work, std::map<std::pair<Id, Id>, Receipt>& group_receipts,
                                  Source& source);
  std::optional<Refusal> check_key(Id principal, const PublicKey& verified_with, const Digest& digest,
                                   const Signature& signature) const;
  void publish_key(Id principal);
  bool enqueue(Work work);

  const Genesis genesis_;
  const Clock& clock_;
  std::unique_ptr<Journal> journal_;  // sequencer thread only
  Authority authority_;               // sequencer thread only

  mutable std::shared_mutex keys_mutex_;
  std::unordered_map<Id, PublicKey> keys_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Work> queue_;
  bool stopping_ = false;
  SequencerStats stats_;
  std::thread thread_;
};

}  // namespace cowboy::transit::node
