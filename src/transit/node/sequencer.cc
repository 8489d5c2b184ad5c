#include "transit/node/sequencer.h"

#include <pthread.h>

#include "transit/contract/codec.h"
#include "transit/contract/operations.h"
#include "transit/contract/signing.h"

namespace cowboy::transit::node {
namespace {

const Refusal& storage_failed() {
  static const Refusal r = Refusal{Reason::kStorageFailed, "the synced write failed; resubmit the same bytes after a restart"};
  return r;
}

std::uint64_t micros_since(std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point now) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now - start).count());
}

Refusal past_deadline(std::chrono::milliseconds bound, const char* what) {
  return Refusal{Reason::kOverloaded, "no answer within the " + std::to_string(bound.count()) + " ms deadline: " + what};
}

}  // namespace

Sequencer::Sequencer(std::unique_ptr<Journal> journal, Authority authority, const Clock& clock, Entropy& entropy,
                     const PayloadFacts& payloads, SnapshotLimits snapshots, SequencerOptions options)
    : genesis_(authority.genesis()),
      clock_(clock),
      payloads_(payloads),
      options_(options),
      deadlines_(options.deadline),
      journal_(std::move(journal)),
      authority_(std::move(authority)),
      snapshots_(entropy, TrustedMs{clock.now_ms()}, snapshots) {
  for (const auto& [id, p] : authority_.principals())
    if (!p.revoked) keys_[id] = p.public_key;
  durable_position_ = authority_.head().position;
  stats_.position = durable_position_.value;
  sync_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "transit-sync");
    sync_loop();
    std::lock_guard lock(mutex_);
    sync_running_ = false;
  });
  decide_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "transit-seq");
    decide_loop();
  });
}

Sequencer::~Sequencer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  decide_thread_.join();
  sync_thread_.join();
}

std::optional<PublicKey> Sequencer::key_of(PrincipalId principal) const {
  std::shared_lock lock(keys_mutex_);
  auto it = keys_.find(principal);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

SequencerStats Sequencer::stats() const {
  std::lock_guard lock(mutex_);
  SequencerStats out = stats_;
  out.reclaimed_below = journal_->reclaimed_below();
  out.relocated_through = journal_->relocated_through();
  out.pending = pending_;
  out.deadline_expired = deadlines_.expired();
  return out;
}

SequencerHealth Sequencer::health() const {
  std::lock_guard lock(mutex_);
  SequencerHealth h;
  h.journal_failed = journal_->failed();
  h.stopping = stopping_;
  h.sync_thread_running = sync_running_;
  if (sync_started_)
    h.sync_running_ms = micros_since(*sync_started_, std::chrono::steady_clock::now()) / 1000;
  return h;
}

bool Sequencer::enqueue(Work work, std::size_t reserve) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    if (pending_ >= options_.max_pending + reserve) {
      ++stats_.overloaded;
      return false;
    }
    ++pending_;
    queue_.push_back(std::move(work));
  }
  wake_.notify_one();
  return true;
}

void Sequencer::submit(CommandBody command, Digest digest, PublicKey verified_with, CommandDone done) {
  done = deadlines_.guard(std::move(done),
                          past_deadline(options_.deadline, "the command may still commit; the outcome is uncertain - "
                                                           "resubmit the same bytes for its receipt"));
  auto keep = done;
  if (!enqueue(CommandWork{std::move(command), digest, verified_with, std::move(done), std::chrono::steady_clock::now()}))
    keep(Err{Refusal{Reason::kOverloaded, "the decision queue is full or the node is stopping; resubmit the same bytes"}});
}

void Sequencer::query(SignedQuery query, Digest digest, PublicKey verified_with, QueryDone done, bool control) {
  done = deadlines_.guard(std::move(done), past_deadline(options_.deadline, "retry"));
  auto keep = done;
  if (!enqueue(QueryWork{std::move(query), digest, verified_with, std::move(done)}, control ? kControlReserve : 0))
    keep(Err{Refusal{Reason::kOverloaded, "the decision queue is full or the node is stopping; retry"}});
}

void Sequencer::decide_loop() {
  std::deque<Work> group;
  for (;;) {
    bool stop = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty() || (!syncing_ && !building_.empty()); });
      group.swap(queue_);  // everything that arrived during the last write shares the next one
      stop = stopping_;
      // Receipts at or below the durable position are in the journal now.
      std::erase_if(undurable_receipts_, [&](const auto& kv) { return kv.second.position <= durable_position_; });
    }
    if (stop) {
      for (auto& work : group)
        std::visit([](auto& w) { w.done(Err{Refusal{Reason::kStopping, "the node is shutting down"}}); }, work);
      std::lock_guard lock(mutex_);
      pending_ -= group.size();
      group.clear();
    }
    decide_group(group);
    group.clear();
    std::unique_lock lock(mutex_);
    stats_.collection_keys_visited = authority_.collection_keys_visited();  // before any answer of the group is released
    if (!syncing_ && !building_.empty()) {
      building_.batch = journal_->take_staged(authority_.head());
      building_.position = authority_.head().position;
      in_sync_ = std::move(building_);
      building_ = Flight{};
      syncing_ = true;
      sync_wake_.notify_one();
    }
    if (stop) {
      wake_.wait(lock, [&] { return !syncing_; });
      if (!building_.empty()) continue;  // one more flight to publish
      sync_exit_ = true;
      sync_wake_.notify_one();
      return;
    }
  }
}

void Sequencer::sync_loop() {
  for (;;) {
    Flight flight;
    {
      std::unique_lock lock(mutex_);
      sync_wake_.wait(lock, [&] { return in_sync_.has_value() || sync_exit_; });
      if (!in_sync_) return;
      flight = std::move(*in_sync_);
      in_sync_.reset();
      if (flight.batch) sync_started_ = std::chrono::steady_clock::now();
    }
    const auto start = std::chrono::steady_clock::now();
    // Without a batch the flight still waits for the one before it, whose outcome failed() tells.
    const bool durable = flight.batch ? journal_->commit(*flight.batch) : !journal_->failed();
    const auto end = std::chrono::steady_clock::now();
    if (flight.batch) {
      const auto us = micros_since(start, end);
      flight.counts.sync_us_total = us;
      flight.counts.sync_us_max = us;
      flight.counts.slow_syncs = us > 5000 ? 1 : 0;
    }
    {
      std::lock_guard lock(mutex_);  // counted before anyone hears of it
      if (durable) durable_position_ = std::max(durable_position_, flight.position);
      stats_.accepted += durable ? flight.counts.accepted : 0;
      stats_.replayed += durable ? flight.counts.replayed : 0;
      stats_.refused += flight.counts.refused;
      stats_.queries += flight.counts.queries;
      stats_.synced_writes = journal_->synced_writes();
      stats_.sync_us_total += flight.counts.sync_us_total;
      stats_.sync_us_max = std::max(stats_.sync_us_max, flight.counts.sync_us_max);
      stats_.slow_syncs += flight.counts.slow_syncs;
      stats_.position = durable_position_.value;
      if (flight.batch) stats_.sync_latency.observe_us(flight.counts.sync_us_total);
      for (const auto submitted : flight.commands_submitted) stats_.decision_latency.observe_us(micros_since(submitted, end));
      pending_ -= flight.answers.size();
      sync_started_.reset();
      syncing_ = false;  // the next flight may start; its answers still follow these, from this thread
    }
    wake_.notify_one();
    for (auto& release : flight.answers) release(durable);
  }
}

void Sequencer::decide_group(std::deque<Work>& group) {
  for (auto& work : group) {
    if (auto* command = std::get_if<CommandWork>(&work)) {
      Source source = Source::kRefused;
      auto result = journal_->failed() ? Result<Receipt, Refusal>(Err{storage_failed()}) : decide(*command, source);
      if (!result.ok()) ++building_.counts.refused;
      else if (source == Source::kDecided) ++building_.counts.accepted;
      else ++building_.counts.replayed;
      building_.commands_submitted.push_back(command->submitted);
      // A failed write makes every answer of its flight uncertain: they were decided on top of it.
      building_.answers.push_back([done = std::move(command->done), result = std::move(result)](bool durable) mutable {
        done(durable ? std::move(result) : Result<Receipt, Refusal>(Err{storage_failed()}));
      });
    } else {
      auto& q = std::get<QueryWork>(work);
      ++building_.counts.queries;
      auto result = journal_->failed() ? Result<Response, Refusal>(Err{storage_failed()}) : answer(q);
      building_.answers.push_back([done = std::move(q.done), result = std::move(result)](bool durable) mutable {
        done(durable ? std::move(result) : Result<Response, Refusal>(Err{storage_failed()}));
      });
    }
  }
}

Result<Response, Refusal> Sequencer::answer(const QueryWork& q) {
  const Query& query = q.query.query;
  if (auto refusal = authority_.check_signer(query.principal)) return Err{*refusal};
  if (auto refusal = check_key(query.principal, q.verified_with, q.digest, q.query.signature)) return Err{*refusal};
  const bool snapshot = std::visit([](const auto& op) { return kSnapshotQuery<std::decay_t<decltype(op)>>; }, query.op);
  const Position checked_at = authority_.head().position;
  auto result = snapshot ? answer_snapshot(authority_, snapshots_, query, trusted_now(), journal_->catalog())
                         : authority_.answer(query, trusted_now(), journal_->catalog());
  if (auto corrupt = authority_.take_corrupt())  // decision 157: a snapshot's reads too
    return Err{Refusal{Reason::kStorageCorrupt, corrupt->message()}};
  if (!result.ok()) return Err{result.error()};
  if (auto moved = authority_.fence(checked_at)) return Err{*moved};
  if (auto* caps = std::get_if<Capabilities>(&*result)) {  // the registry's limits are the node's, not the realm's
    caps->snapshots_per_principal = snapshots_.limits().per_principal;
    caps->snapshots_per_node = snapshots_.limits().per_node;
  }
  // Released with this flight: the position is durable by the time anyone reads it.
  return Response{Version{}, Definition{definition()}, genesis_.realm, authority_.head().position, std::move(*result)};
}

std::optional<Refusal> Sequencer::check_key(PrincipalId principal, const PublicKey& verified_with, const Digest& digest,
                                            const Signature& signature) const {
  const auto* p = authority_.principal(principal);
  if (p->public_key == verified_with) return std::nullopt;
  // The key changed after the io thread looked it up: verify again against the current one.
  if (verify_digest(digest, signature, p->public_key)) return std::nullopt;
  return Refusal{Reason::kBadSignature, "the signature does not verify with the principal's key"};
}

Result<Receipt, Refusal> Sequencer::decide(CommandWork& work, Source& source) {
  const Request& request = work.command.request.request;
  if (auto refusal = authority_.check_signer(request.principal)) return Err{*refusal};
  if (auto refusal = check_key(request.principal, work.verified_with, work.digest, work.command.request.signature))
    return Err{*refusal};

  const Id last = authority_.principal(request.principal)->sequence;
  if (request.sequence <= last) {
    // An exact retry returns the original receipt; another body at a used sequence is a conflict.
    std::optional<Receipt> original;
    if (auto it = undurable_receipts_.find({request.principal, request.sequence}); it != undurable_receipts_.end()) {
      original = it->second;
      source = Source::kReplayedUndurable;
    } else {
      original = journal_->receipt(request.principal, request.sequence);
      source = Source::kReplayedFromJournal;
    }
    if (!original) return source = Source::kRefused, Err{Refusal{Reason::kReceiptUnreadable, "the original receipt could not be read"}};
    if (original->request_digest != work.digest)
      return source = Source::kRefused, Err{Refusal{Reason::kSequenceReused,
                                                    "sequence " + std::to_string(request.sequence) + " was accepted with another body"}};
    if (auto refusal = authority_.recheck_retry(request)) return source = Source::kRefused, Err{*refusal};
    return *original;
  }
  if (request.sequence != last + 1)
    return Err{Refusal{Reason::kSequenceGap, "expected sequence " + std::to_string(last + 1)}};

  Touched touched;
  auto receipt =
      authority_.decide(request, work.digest, trusted_now(), work.command.blocks, journal_->catalog(), payloads_,
                        touched);
  if (!receipt.ok()) return receipt;
  journal_->stage(authority_, touched, work.command.envelope, *receipt);
  for (PrincipalId id : touched.principals) publish_key(id);
  undurable_receipts_[{request.principal, request.sequence}] = *receipt;
  source = Source::kDecided;
  return receipt;
}

void Sequencer::publish_key(PrincipalId principal) {
  const auto* p = authority_.principal(principal);
  std::unique_lock lock(keys_mutex_);
  if (p && !p->revoked) keys_[principal] = p->public_key;
  else keys_.erase(principal);
}

}  // namespace cowboy::transit::node
