#include "transit/node/sequencer.h"

#include "transit/contract/codec.h"
#include "transit/contract/signing.h"

namespace cowboy::transit::node {
namespace {

Refusal uncertain(std::string reason, std::string message) {
  return Refusal{RejectionCode::kServiceUncertain, std::move(reason), std::move(message)};
}

}  // namespace

Sequencer::Sequencer(std::unique_ptr<Journal> journal, Authority authority, const Clock& clock)
    : genesis_(authority.genesis()), clock_(clock), journal_(std::move(journal)), authority_(std::move(authority)) {
  for (const auto& [id, p] : authority_.principals())
    if (!p.revoked) keys_[id] = p.public_key;
  thread_ = std::thread([this] { run(); });
}

Sequencer::~Sequencer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::optional<PublicKey> Sequencer::key_of(Id principal) const {
  std::shared_lock lock(keys_mutex_);
  auto it = keys_.find(principal);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

SequencerStats Sequencer::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

bool Sequencer::enqueue(Work work) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_ && queue_.size() < kMaxQueued) {
      queue_.push_back(std::move(work));
      wake_.notify_one();
      return true;
    }
  }
  return false;
}

void Sequencer::submit(SignedRequest request, Digest digest, PublicKey verified_with, CommandDone done) {
  auto keep = done;
  if (!enqueue(CommandWork{std::move(request), digest, verified_with, std::move(done)}))
    keep(Err{uncertain("overloaded", "the decision queue is full; resubmit the same bytes")});
}

void Sequencer::query(SignedQuery query, Digest digest, PublicKey verified_with, QueryDone done) {
  auto keep = done;
  if (!enqueue(QueryWork{std::move(query), digest, verified_with, std::move(done)}))
    keep(Err{uncertain("overloaded", "the decision queue is full; retry")});
}

void Sequencer::run() {
  std::deque<Work> group;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) {
        group.swap(queue_);
        lock.unlock();
        for (auto& work : group)
          std::visit([](auto& w) { w.done(Err{uncertain("stopping", "the node is shutting down")}); }, work);
        return;
      }
      group.swap(queue_);  // everything that arrived during the last write shares the next one
    }
    process(group);
    group.clear();
  }
}

void Sequencer::process(std::deque<Work>& group) {
  std::map<std::pair<Id, Id>, Receipt> group_receipts;
  std::vector<std::pair<CommandWork*, Result<Receipt, Refusal>>> answers;
  std::vector<Source> sources;
  SequencerStats delta;
  for (auto& work : group) {
    auto* command = std::get_if<CommandWork>(&work);
    if (!command) continue;
    Source source = Source::kRefused;
    auto result = journal_->failed() ? Result<Receipt, Refusal>(Err{uncertain("storage_failed", "the journal failed")})
                                     : decide(*command, group_receipts, source);
    answers.emplace_back(command, std::move(result));
    sources.push_back(source);
  }
  if (journal_->has_staged() && !journal_->commit()) {
    // Published or not is unknown: the client resubmits the same bytes after a restart.
    for (std::size_t i = 0; i < answers.size(); ++i)
      if (sources[i] == Source::kDecided || sources[i] == Source::kReplayedFromGroup)
        answers[i].second = Err{uncertain("storage_failed", "the synced write failed")}, sources[i] = Source::kRefused;
  }
  for (std::size_t i = 0; i < answers.size(); ++i) {
    auto& [work, result] = answers[i];
    if (!result.ok()) ++delta.refused;
    else if (sources[i] == Source::kDecided) ++delta.accepted;
    else ++delta.replayed;
    work->done(std::move(result));
  }
  // Queries read the state just published.
  for (auto& work : group) {
    auto* q = std::get_if<QueryWork>(&work);
    if (!q) continue;
    ++delta.queries;
    if (journal_->failed()) {
      q->done(Err{uncertain("storage_failed", "the journal failed")});
      continue;
    }
    if (auto refusal = authority_.check_signer(q->query.query.principal)) {
      q->done(Err{*refusal});
      continue;
    }
    if (auto refusal = check_key(q->query.query.principal, q->verified_with, q->digest, q->query.signature)) {
      q->done(Err{*refusal});
      continue;
    }
    auto result = authority_.answer(q->query.query);
    if (!result.ok()) {
      q->done(Err{result.error()});
      continue;
    }
    q->done(Response{Version{}, Definition{definition()}, genesis_.realm, authority_.head().position, std::move(*result)});
  }
  std::lock_guard lock(mutex_);
  stats_.accepted += delta.accepted;
  stats_.replayed += delta.replayed;
  stats_.refused += delta.refused;
  stats_.queries += delta.queries;
  stats_.synced_writes = journal_->synced_writes();
  stats_.position = authority_.head().position;
}

std::optional<Refusal> Sequencer::check_key(Id principal, const PublicKey& verified_with, const Digest& digest,
                                            const Signature& signature) const {
  const auto* p = authority_.principal(principal);
  if (p->public_key == verified_with) return std::nullopt;
  // The key changed after the io thread looked it up: verify again against the current one.
  if (verify_digest(digest, signature, p->public_key)) return std::nullopt;
  return Refusal{RejectionCode::kDenied, "bad_signature", "the signature does not verify with the principal's key"};
}

Result<Receipt, Refusal> Sequencer::decide(CommandWork& work, std::map<std::pair<Id, Id>, Receipt>& group_receipts,
                                           Source& source) {
  const Request& request = work.request.request;
  if (auto refusal = authority_.check_signer(request.principal)) return Err{*refusal};
  if (auto refusal = check_key(request.principal, work.verified_with, work.digest, work.request.signature))
    return Err{*refusal};

  const Id last = authority_.principal(request.principal)->sequence;
  if (request.sequence <= last) {
    // An exact retry returns the original receipt; another body at a used sequence is a conflict.
    std::optional<Receipt> original;
    if (auto it = group_receipts.find({request.principal, request.sequence}); it != group_receipts.end()) {
      original = it->second;
      source = Source::kReplayedFromGroup;
    } else {
      original = journal_->receipt(request.principal, request.sequence);
      source = Source::kReplayedFromJournal;
    }
    if (!original) return source = Source::kRefused, Err{uncertain("receipt_unreadable", "the original receipt could not be read")};
    if (original->request_digest != work.digest)
      return source = Source::kRefused, Err{Refusal{RejectionCode::kConflict, "sequence_reused",
                         "sequence " + std::to_string(request.sequence) + " was accepted with another body"}};
    return *original;
  }
  if (request.sequence != last + 1)
    return Err{Refusal{RejectionCode::kConflict, "sequence_gap", "expected sequence " + std::to_string(last + 1)}};

  Touched touched;
  auto receipt = authority_.decide(request, work.digest, clock_.now_ms(), touched);
  if (!receipt.ok()) return receipt;
  journal_->stage(authority_, touched, JournalEntry{work.request, *receipt});
  for (Id id : touched.principals) publish_key(id);
  group_receipts[{request.principal, request.sequence}] = *receipt;
  source = Source::kDecided;
  return receipt;
}

void Sequencer::publish_key(Id principal) {
  const auto* p = authority_.principal(principal);
  std::unique_lock lock(keys_mutex_);
  if (p && !p->revoked) keys_[principal] = p->public_key;
  else keys_.erase(principal);
}

}  // namespace cowboy::transit::node
