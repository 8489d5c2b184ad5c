#include "cip11/runner.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "cip11/capabilities.h"
#include "cip11/chain/codec.h"
#include "cip11/chain/port.h"
#include "cip11/link/runner_link.h"
#include "cip11/runner/epoch_spread.h"
#include "cip11/runner/heartbeat.h"
#include "cip11/runner/job_book.h"
#include "cip11/runner/job_cycle.h"
#include "cip11/runner/journal.h"
#include "cip11/runner/ledger.h"
#include "cip11/runner/task.h"
#include "cip11/subset.h"
#include "common/clock.h"
#include "net/host_port.h"

namespace cowboy::cip11 {

namespace asio = boost::asio;
using Kind = RunnerEvent::Kind;

std::string_view runner_event_name(Kind kind) {
  switch (kind) {
    case Kind::kConnected: return "connected";
    case Kind::kDisconnected: return "disconnected";
    case Kind::kAssigned: return "assigned";
    case Kind::kAccepted: return "accepted";
    case Kind::kDuplicate: return "duplicate";
    case Kind::kRejected: return "rejected";
    case Kind::kCancelled: return "cancelled";
    case Kind::kResultSent: return "result_sent";
    case Kind::kRebroadcast: return "rebroadcast";
    case Kind::kIncluded: return "included";
    case Kind::kHeartbeat: return "heartbeat";
    case Kind::kResumed: return "resumed";
    case Kind::kSuperseded: return "superseded";
    case Kind::kStorageFailed: return "storage_failed";
    case Kind::kCertificate: return "certificate";
    case Kind::kValidatorSet: return "validator_set";
  }
  return "unknown";
}

namespace {

/// §6.2 on the runner's side: the validator's key is in ValidatorSetSnapshot(0).
// §6.2 at the runner, epoch-paired (§5.3): each link dials one validator
// of one snapshot's Sub(R), so the validator's key must be that one (which
// resolves in the snapshot the link's pair names, never the other epoch's).
class PeerAdmission final : public Admission {
 public:
  explicit PeerAdmission(const crypto::Ed25519Public& validator) : validator_(validator) {}
  std::optional<GoodbyeReason> admit(const Hello& peer) override {
    const auto raw = peer.party_pubkey.raw();
    if (raw.size() == validator_.size() && std::equal(validator_.begin(), validator_.end(), raw.begin()))
      return std::nullopt;
    return GoodbyeReason::kAuthFailed;
  }

 private:
  const crypto::Ed25519Public validator_;
};

}  // namespace

struct Runner::Impl {
  // The I/O side of one job the cycle holds (its state and transitions are
  // JobCycle's, job_cycle.h): made when the cycle takes the job, erased
  // where the cycle lets it go.
  struct Job {
    JobAssignment assignment;   // what was accepted (built from the record for a polled job)
    Bytes spec;                 // the chain record's job spec, what the task runs
    RunnerLink* link = nullptr;  // the Accepted stream's connection; none for a polled job
    std::int64_t stream = -1;
    std::uint64_t admission = 0;  // which of the link's connections holds the stream (its stats().admissions)
    bool stream_ended = false;    // this end's FIN is sent (docs/cip11.md: after its last frame)
    std::string via;
    CancelFlag cancel = std::make_shared<std::atomic<bool>>(false);  // the task's view of a cancel
  };

  RunnerOptions o;
  std::unique_ptr<chain::ChainPort> port;  // called from the reads and writes pools and start()
  Signer signer;
  Address me{};
  crypto::Secp256k1Compressed my_key{};
  chain::ChainSetup setup;

  asio::io_context io{1};
  SystemEntropy entropy;
  SignatureWorker worker{io, 1};
  net::ReadBudget budget{16 << 20};
  std::unique_ptr<RunnerEndpoint> endpoint;
  // One link per (validator, epoch pair) this runner has dialled; a link
  // retired by a reconfiguration stays here, never reconnecting, while a job
  // may still name it (§5.3, §11.5). Index i of each vector is one link.
  std::vector<std::unique_ptr<PeerAdmission>> link_admissions;  // before links: each link holds one
  std::vector<std::unique_ptr<RunnerLink>> links;
  std::vector<chain::EpochLink> link_targets;
  std::vector<bool> link_retired;
  // With `connect` only: epoch 0 and the chain's changes, re-read with each
  // new height (a set scheduled by transaction, docs/devchain.md D10). On the io thread.
  std::optional<chain::ValidatorSnapshots> snapshots;
  Height changes_read_at{};  // on `reads`, one height read at a time (height_read_busy)
  std::size_t validators_read_for = 0;  // on `reads`: the count of changes when validators() was last read
  // Where each validator named so far listens: the genesis entries, then each
  // one a change named first (ChainPort::validators, docs/cip11.md choice 130). On the io thread.
  std::map<crypto::Ed25519Public, std::string> endpoints;
  asio::thread_pool reads{2};   // chain reads: heights, jobs, receipts, polls
  asio::thread_pool writes{1};  // chain submissions, in nonce order
  asio::thread_pool durable{1}; // the journal's synced writes, in signing order (never on the io thread)
  std::unique_ptr<TxJournal> journal;  // used on `durable` only, after start()
  asio::thread_pool exec;
  asio::steady_timer height_timer{io}, poll_timer{io}, ping_timer{io};
  std::chrono::milliseconds ping_phase{0};
  std::thread io_thread;

  // Everything below lives on the io thread.
  JobBook book;
  JobCycle cycle;                // every held job's state (pure)
  std::map<JobId, Job> jobs;   // and its I/O side: the same job ids
  std::optional<TxLedger> ledger;
  std::optional<HeartbeatSchedule> schedule;
  std::optional<Bytes32> heartbeat_tx;
  Height last_heartbeat{};
  // Mode A (§8.3): the newest receipt of each validator (by its raw key), the
  // certificate in flight and the anchor it would set, the anchor the chain holds.
  std::map<crypto::Ed25519Public, PresenceReceipt> receipts;
  std::optional<Bytes32> certificate_tx;
  Height certificate_anchor{}, anchor{};
  std::uint32_t paused_kinds = o.paused_job_kinds;  // JobKind bits not served now, said in CapabilityDeltas (§6.5)
  bool backpressured = false, height_read_busy = false, receipts_read_busy = false, polling = false;
  bool polling_allowed = true;  // false once the chain retired the poll endpoint (CIP11_POLL_DISABLED, §14)
  RunnerStatus stats;
  mutable std::mutex status_mu;
  RunnerStatus published;  // a copy for status(), refreshed on the io thread

  Impl(RunnerOptions options, std::unique_ptr<chain::ChainPort> chain, Signer s)
      : o(std::move(options)), port(std::move(chain)), signer(std::move(s)), exec(std::max(1u, o.max_concurrent)) {}

  void emit(Kind kind, const JobId& job_id = {}, std::string via = {}, std::string detail = {}) {
    if (o.on_event) o.on_event(RunnerEvent{kind, job_id, std::move(via), std::move(detail), stats.height, unix_micros()});
  }
  void publish() {
    stats.running = cycle.running();
    stats.admitted = 0;
    stats.reconnects = 0;
    for (const auto& l : links) {
      stats.admitted += l->admitted() ? 1 : 0;
      stats.reconnects += std::max<std::uint64_t>(l->stats().connects, 1) - 1;
    }
    std::lock_guard lock(status_mu);
    published = stats;
  }
  template <typename Read, typename Then>
  void read(Read r, Then then) {
    asio::post(reads, [this, r = std::move(r), then = std::move(then)]() mutable {
      auto answer = r();
      asio::post(io, [then = std::move(then), answer = std::move(answer)]() mutable { then(std::move(answer)); });
    });
  }
  void submit(Bytes tx) {
    asio::post(writes, [this, tx = std::move(tx)] { (void)port->submit(tx); });  // refusals are retried on schedule
  }

  // --- the block clock ---------------------------------------------------
  void tick_height() {
    height_timer.expires_after(o.height_poll);
    height_timer.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      if (!height_read_busy) {
        height_read_busy = true;
        const bool follow_sets = snapshots.has_value();
        read(
            [this, follow_sets] {
              auto h = port->height();
              // At each height other than the last read (a lower one after a
              // rollback too), the validator-set changes as the chain holds them now.
              std::optional<std::vector<chain::ValidatorSetChange>> changes;
              if (h && follow_sets && *h != changes_read_at)
                if (auto c = port->validator_set_changes()) changes = std::move(*c), changes_read_at = *h;
              // And where their validators listen, when the list of changes grew
              // or shrank: a change may name a validator no genesis does.
              std::optional<std::vector<chain::ValidatorEntry>> named;
              if (changes && changes->size() != validators_read_for)
                if (auto v = port->validators()) named = std::move(*v), validators_read_for = changes->size();
              return std::tuple{std::move(h), std::move(changes), std::move(named)};
            },
            [this](auto answer) {
              height_read_busy = false;
              auto& [h, changes, named] = answer;
              if (named)
                for (const auto& v : *named) endpoints.emplace(v.peer_key, v.endpoint);  // a validator keeps its first entry
              if (changes) take_changes(*changes);
              if (h && *h > stats.height) on_block(*h);
            });
      }
      tick_height();
    });
  }

  /// Takes the validator-set changes the chain holds now: first drops the
  /// epochs it no longer holds alike (a change a block un-applied by a
  /// rollback scheduled, docs/devchain.md D11), as cip11d does, then adds the
  /// newer ones (SharedSnapshots' rules): a winning branch's change for the
  /// same epoch is taken, not ignored as a rewritten epoch.
  void take_changes(const std::vector<chain::ValidatorSetChange>& changes) {
    chain::SharedSnapshots shared(*snapshots);
    const bool withdrawn = shared.withdraw(changes);
    if (withdrawn)
      emit(Kind::kValidatorSet, {}, {}, "withdrawn: the chain holds no epoch after " +
                                            std::to_string(shared.get()->epochs().back().epoch.value) + " alike");
    const bool added = shared.update(changes);
    if (withdrawn || added) snapshots = *shared.get();
    if (!added) return;
    const auto& last = snapshots->epochs().back();
    emit(Kind::kValidatorSet, {}, {}, "epoch " + std::to_string(last.epoch.value) + " from block " +
                                          std::to_string(last.activation_height.value));
  }

  void on_block(Height h) {
    stats.height = h;
    if (snapshots) reconcile_links(h);
    // The Ping goes at this runner's own phase of the block, so thousands of
    // runners do not all ping at the same instant.
    ping_timer.expires_after(ping_phase);
    ping_timer.async_wait([this, h](boost::system::error_code ec) {
      if (ec) return;
      for (auto& l : links) l->on_block(h);
    });
    if (ledger && !heartbeat_tx && schedule->due(h, last_heartbeat)) {
      auto tx = sign_heartbeat(h);
      keep(tx, std::nullopt, [this, tx] {
        submit(tx.bytes);
        ++stats.heartbeats;
        emit(Kind::kHeartbeat);
      });
    }
    if (ledger && setup.params.presence_hard_exclude_enabled && !certificate_tx) certify(h);
    if (ledger && !receipts_read_busy && !ledger->retained_hashes().empty()) {
      receipts_read_busy = true;
      read([this, hashes = ledger->retained_hashes()] { return receipts_of(hashes); },
           [this, h](Receipts r) {
             receipts_read_busy = false;
             settle(r, h);
           });
    }
    for (const auto& due : cycle.block(setup.final_height(h))) {
      if (due.what == JobCycle::Due::What::kCheckReveal) check_reveal(due.id);
      if (due.what == JobCycle::Due::What::kVerifyAgain) verify_push(due.id);
    }
    book.forget_ended(h);
    publish();
  }

  /// What the chain says of retained transactions: the account's next nonce,
  /// read first, then each one's receipt.
  struct Receipts {
    chain::PortResult<std::uint64_t> next_nonce;
    std::vector<std::pair<Bytes32, chain::PortResult<std::optional<chain::Inclusion>>>> inclusions;
  };
  Receipts receipts_of(const std::vector<Bytes32>& hashes) {
    Receipts out{port->next_nonce(me), {}};
    for (const auto& hash : hashes) out.inclusions.emplace_back(hash, port->inclusion(hash));
    return out;
  }

  /// A receipt ends retention. No receipt, but a nonce the chain already
  /// counts: another transaction of this account took it (an earlier process
  /// whose journal is gone, the same key elsewhere), so it can never be
  /// included - it is dropped and what it carried is signed again. No receipt
  /// past the grace period at block `h` is a rebroadcast (§10.3).
  void settle(const Receipts& r, std::optional<Height> h) {
    std::vector<Bytes32> unincluded;
    for (const auto& [hash, found] : r.inclusions) {
      if (!found || !ledger->retained(hash)) continue;
      if (*found) {
        on_included(hash, **found);
      } else {
        unincluded.push_back(hash);
      }
    }
    if (r.next_nonce)
      for (const Bytes32& hash : ledger->superseded(*r.next_nonce, unincluded)) superseded(hash);
    if (!h) return;
    for (const Bytes32& hash : unincluded)
      if (auto tx = ledger->due(hash, *h)) {
        ++stats.rebroadcasts;
        emit(Kind::kRebroadcast, {}, {}, to_hex0x(hash));
        submit(std::move(*tx));
      }
  }

  void superseded(const Bytes32& hash) {
    asio::post(durable, [this, hash] { journal->forget_transaction(hash); });
    emit(Kind::kSuperseded, {}, {}, to_hex0x(hash));
    if (heartbeat_tx == hash) return heartbeat_tx.reset();  // the next due heartbeat goes out
    if (certificate_tx == hash) return certificate_tx.reset();  // the next block certifies again
    if (auto again = cycle.superseded(hash)) {
      if (again->what == JobCycle::Superseded::What::kCommitAgain) return commit(again->id);
      return check_reveal(again->id);  // it was never included: one reveal, signed again
    }
  }

  /// Mode A (§8.3): once the proven presence is half through its TTL, a
  /// certificate of every validator's newest accepting receipt that is fresh
  /// against the newest of them, if they reach t_hard and are newer than the
  /// anchor the chain holds. Its cycle limit pays every charge exactly.
  void on_receipt(const PresenceReceipt& r) {
    crypto::Ed25519Public validator;
    std::copy(r.validator_pubkey.raw().begin(), r.validator_pubkey.raw().end(), validator.begin());
    auto& kept = receipts[validator];
    if (r.block_height >= kept.block_height) kept = r;
    stats.receipts = receipts.size();
  }
  void certify(Height h) {
    if (stats.presence_proven_until > h + chain::kPresenceProofTtlBlocks / 2) return;
    Height newest{0};
    for (const auto& [key, r] : receipts)
      if (r.accepting_new) newest = std::max(newest, r.block_height);
    chain::SubmitPresenceCertificate cert{me, newest, chain::kPresenceCertBaseCycles, {}};
    for (const auto& [key, r] : receipts)
      if (r.accepting_new && newest - r.block_height <= chain::kReceiptFreshnessBlocks) {
        cert.receipts.push_back(encode_receipt(r));
        cert.cycle_limit += chain::kPresenceReceiptPrecheckCycles + chain::kPresenceReceiptVerifyCycles;
      }
    if (cert.receipts.size() < setup.params.t_hard || newest <= anchor) return;
    auto tx = ledger->sign(chain::encode_instruction(cert), h);
    certificate_tx = tx.hash;
    certificate_anchor = newest;
    keep(tx, std::nullopt, [this, tx, newest] {
      submit(tx.bytes);
      emit(Kind::kCertificate, {}, {}, std::to_string(newest.value));
    });
  }

  /// Signs a RunnerHeartbeat (§7.1) at `h` and remembers it as the one in flight.
  chain::SignedTx sign_heartbeat(Height h) {
    auto tx = ledger->sign(chain::encode_instruction(chain::RunnerHeartbeat{}), h);
    heartbeat_tx = tx.hash;
    return tx;
  }

  /// Before the io thread runs: records a heartbeat in the journal, sends it
  /// and waits (until `deadline`) for the block that includes it. Not included
  /// by then: the block clock carries on with it (rebroadcast, §10.3), as with
  /// any other.
  Result<Unit, std::string> heartbeat_at_start(std::chrono::steady_clock::time_point deadline) {
    const auto step = std::clamp(o.block_time / 4, std::chrono::milliseconds(5), std::chrono::milliseconds(250));
    const Height before = last_heartbeat;
    while (last_heartbeat == before && std::chrono::steady_clock::now() < deadline) {
      if (!heartbeat_tx) {  // the first, or one the chain refused or superseded
        const chain::SignedTx tx = sign_heartbeat(stats.height);
        if (!journal->record(RetainedTx{tx.hash, tx.nonce, tx.bytes}, tx.nonce + 1, std::nullopt))
          return Err{"journal write failed in " + o.state_dir.string()};
        ledger->durable(tx.hash);
        (void)port->submit(tx.bytes);
        ++stats.heartbeats;
        emit(Kind::kHeartbeat);
      }
      settle(receipts_of({*heartbeat_tx}), std::nullopt);
      if (last_heartbeat == before) std::this_thread::sleep_for(step);
    }
    return Unit{};
  }

  void on_included(const Bytes32& hash, const chain::Inclusion& receipt) {
    ledger->included(hash);
    asio::post(durable, [this, hash] { journal->forget_transaction(hash); });
    if (heartbeat_tx == hash) {
      heartbeat_tx.reset();
      if (!receipt.error) stats.last_heartbeat = last_heartbeat = receipt.height;
      return;
    }
    if (certificate_tx == hash) {
      certificate_tx.reset();
      // Refused or not, these receipts are spent: the next certificate needs a newer one.
      anchor = std::max(anchor, certificate_anchor);
      if (!receipt.error) {
        ++stats.certificates;
        stats.presence_proven_until = certificate_anchor + chain::kPresenceProofTtlBlocks;
      }
      return;
    }
    const auto done = cycle.included(hash);
    if (!done) return;
    if (done->what == JobCycle::Included::What::kCommitment) return check_reveal(done->id);
    ++stats.completed;
    emit(Kind::kIncluded, done->id, jobs.at(done->id).via, receipt.error.value_or("ok"));
    forget(done->id);
  }

  // --- assignments ---------------------------------------------------------
  void on_job_frame(RunnerLink& link, std::int64_t stream, const Frame& frame, const Res<Unit>& seal) {
    if (const auto* a = std::get_if<JobAssignment>(&frame)) return on_push(link, stream, *a, seal);
    if (const auto* c = std::get_if<JobCancel>(&frame)) {
      if (!seal) return;
      auto it = jobs.find(c->job_id);
      // §10.5: only a cancel of the assignment in flight on this connection.
      if (it == jobs.end() || it->second.link != &link || it->second.stream != stream ||
          it->second.assignment.assignment_hash != c->assignment_hash)
        return;
      cancel(c->job_id);
    }
  }

  void ack(RunnerLink& link, std::int64_t stream, const JobAssignment& a, AckStatus status,
           std::optional<std::string> why = std::nullopt) {
    link.send(stream, JobAck{a.job_id, a.assignment_hash, status, why, {}});
    switch (status.kind) {
      case AckStatus::Kind::kAccepted: ++stats.acks_accepted; break;
      case AckStatus::Kind::kDuplicate: ++stats.acks_duplicate; break;
      case AckStatus::Kind::kReject: ++stats.acks_rejected; break;
    }
    if (status.kind != AckStatus::Kind::kAccepted) link.end_job_stream(stream);
  }

  void on_push(RunnerLink& link, std::int64_t stream, const JobAssignment& a, const Res<Unit>& seal) {
    emit(Kind::kAssigned, a.job_id, "push");
    auto reject = [&](RejectReason r, std::string why) {
      ++stats.rejected;
      emit(Kind::kRejected, a.job_id, "push", why);
      ack(link, stream, a, AckStatus::reject(r), std::move(why));
    };
    if (!seal) return reject(RejectReason::kUnverifiableAssignment, "the assignment's seal does not verify");
    switch (book.classify(a)) {
      case PushVerdict::kDuplicate:
        ++stats.duplicates;
        emit(Kind::kDuplicate, a.job_id, "push");
        return ack(link, stream, a, AckStatus::duplicate());
      case PushVerdict::kDiffers:
        return reject(RejectReason::kUnverifiableAssignment, "its fields differ from the assignment already taken");
      case PushVerdict::kNew:
        break;
    }
    switch (cycle.push(a.job_id, a.assignment_height, o.max_concurrent)) {
      case JobCycle::Admit::kAtCapacity: return reject(RejectReason::kAtCapacity, "at max_concurrent");
      case JobCycle::Admit::kAlreadyHeld:  // its book entry ended with its deadline, the job has not
        return reject(RejectReason::kUnverifiableAssignment, "this runner still holds the job from an earlier assignment");
      case JobCycle::Admit::kNotFinal:  // a poll's answer only: a push is held in Verifying instead
      case JobCycle::Admit::kTaken: break;
    }
    book.take(a);
    Job& job = jobs[a.job_id];
    job.assignment = a;
    job.link = &link;
    job.stream = stream;
    job.admission = link.stats().admissions;
    job.via = "push";
    verify_push(a.job_id);
  }

  // §10.1: the assignment height must be finalized and applied in this
  // runner's own view, and the chain must still hold this runner in the job's
  // committee. With several validators a push can come from one that applied
  // (and finalized) the block before the one this runner reads the chain
  // through: what is not final in its view yet is held, not refused, and read
  // again at the first block that makes assignment_height final (docs/cip11.md
  // choices 111, 159). Nothing runs meanwhile, and no ack goes.
  void verify_push(const JobId& id) {
    const Height asked_at = stats.height;
    auto& j = jobs.at(id);
    read([this, id] { return port->job(id); },
         [this, id, asked_at, stream = j.stream, linkp = j.link](chain::PortResult<chain::JobRecord> record) {
           auto it = jobs.find(id);
           if (it == jobs.end()) return;
           Job& job = it->second;
           const std::string why = record ? mismatch(*record, job.assignment) : "the chain has no such job";
           // A backed read proves the chain's head had reached assignment_height.
           const bool backed = why.empty();
           const Height head{std::max(asked_at.value, backed ? job.assignment.assignment_height.value : 0)};
           switch (cycle.verified(id, backed, record ? record->runners : 1, setup.final_height(head))) {
             case JobCycle::Verdict::kStale:
             case JobCycle::Verdict::kHeld: return;
             case JobCycle::Verdict::kRefused:
               ++stats.rejected;
               emit(Kind::kRejected, id, "push", why);
               ack(*linkp, stream, job.assignment, AckStatus::reject(RejectReason::kUnverifiableAssignment), why);
               book.forget(id);
               jobs.erase(it);
               return;
             case JobCycle::Verdict::kRun: break;
           }
           if (on_its_stream(job)) ack(*linkp, stream, job.assignment, AckStatus::accepted());
           job.spec = std::move(record->spec);
           run(id);
         });
  }

  /// Empty when the chain's record backs the assignment (§10.1); else why not.
  std::string mismatch(const chain::JobRecord& record, const JobAssignment& a) const {
    if (record.state != chain::JobState::kAssigned) return "the job is not assigned on the chain";
    if (!record.assignment_of(me)) return "this runner is not in the job's committee";
    if (record.assignment_height != a.assignment_height) return "assignment_height differs from the chain's";
    if (record.deadline_block != a.deadline_block) return "deadline_block differs from the chain's";
    if (chain::job_spec_bytes(record) != a.job_spec) return "job_spec differs from the chain's";
    return {};
  }

  // --- the §14 poll fallback ----------------------------------------------
  void tick_poll() {
    poll_timer.expires_after(o.poll_interval);
    poll_timer.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      bool reachable = false;
      for (const auto& l : links) reachable = reachable || l->admitted();
      if (!reachable) poll();
      tick_poll();
    });
  }

  void poll() {
    if (polling || !polling_allowed) return;
    polling = true;
    ++stats.polls;
    const Height asked_at = stats.height;
    read([this] { return port->runner_jobs(me); },
         [this, asked_at](chain::PortResult<std::vector<chain::JobRecord>> found) {
           polling = false;
           if (!found && found.error().code == chain::PortErrc::kGone) polling_allowed = false;  // 410: for good
           if (!found) return;
           for (auto& record : *found) take_polled(std::move(record), asked_at);
         });
  }

  /// §10.1 as for a push (verify_push): nothing runs from an assignment
  /// height not final in this runner's view; the read proves the head reached
  /// it. Such a job is left to the next poll (docs/cip11.md choice 159).
  void take_polled(chain::JobRecord record, Height asked_at) {
    if (book.holds(record.job_id) || cycle.holds(record.job_id) || !record.assignment_of(me)) return;
    const chain::Assignment* mine = record.assignment_of(me);
    if (mine->commitment || mine->result_hash) return;  // answered before a restart: nothing to redo here
    const Height head{std::max(asked_at.value, record.assignment_height.value)};
    const auto admit = cycle.polled(record.job_id, record.runners, o.max_concurrent, record.assignment_height,
                                    setup.final_height(head));
    if (admit == JobCycle::Admit::kNotFinal) return;  // not run, nothing said: the next poll sees it again
    emit(Kind::kAssigned, record.job_id, "poll");
    if (admit != JobCycle::Admit::kTaken) return;  // the next poll sees it again
    JobAssignment a;
    a.job_id = record.job_id;
    a.job_spec = chain::job_spec_bytes(record);
    a.job_spec_hash = job_spec_hash(a.job_spec);
    a.assignment_height = record.assignment_height;
    a.deadline_block = record.deadline_block;
    a.runner_pubkey = signer.pubkey();
    book.take(a);
    Job& job = jobs[a.job_id];
    const JobId id = a.job_id;
    job.assignment = std::move(a);
    job.spec = std::move(record.spec);
    job.via = "poll";
    run(id);
  }

  // --- execution and results ----------------------------------------------
  /// The cycle has the job Running: its task goes to the execution pool.
  void run(const JobId& id) {
    const Job& job = jobs.at(id);
    ++stats.accepted;
    emit(Kind::kAccepted, id, job.via);
    update_backpressure();
    TaskLimits limits{o.allowed_url_prefixes};
    asio::post(exec, [this, id, spec = job.spec, limits, cancel = job.cancel] {
      auto progress = [this, id](std::uint8_t fraction) {
        asio::post(io, [this, id, fraction] { report_progress(id, fraction); });
      };
      auto result = run_task(spec, limits, cancel, progress);
      asio::post(io, [this, id, result = std::move(result)]() mutable { finished(id, std::move(result)); });
    });
  }

  // §10.4: informational, on the accepted stream only.
  void report_progress(const JobId& id, std::uint8_t fraction) {
    auto it = jobs.find(id);
    if (it == jobs.end() || !on_its_stream(it->second) || it->second.cancel->load()) return;
    it->second.link->send(it->second.stream, JobProgress{id, fraction, std::nullopt});
  }

  void finished(const JobId& id, std::optional<Bytes> result) {
    Bytes32 salt{};
    if (result) entropy.fill(salt);
    const auto next = cycle.finished(id, std::move(result), salt);
    update_backpressure();
    switch (next) {
      case JobCycle::Finish::kStale: return;
      case JobCycle::Finish::kFailed: ++stats.failed; [[fallthrough]];
      case JobCycle::Finish::kDropped:  // §10.5: nothing committed yet, so no result frames after a cancel
        end_stream(jobs.at(id));
        jobs.erase(id);
        return;
      case JobCycle::Finish::kReveal: return reveal(id);
      case JobCycle::Finish::kCommit: return commit(id);
    }
  }

  /// Signs the commitment of a job the cycle has AwaitingCommit.
  void commit(const JobId& id) {
    const JobState& job = *cycle.find(id);
    auto tx = ledger->sign(
        chain::encode_instruction(chain::JobResultCommit{id, chain::result_commitment(id, me, job.result, job.salt)}),
        stats.height);
    cycle.commit_signed(id, tx.hash);
    // The result and salt are on disk before the commitment leaves (§10.3, journal.h).
    keep(tx, owed(id), [this, id, tx] { send_result(id, JobResultCommit{id, tx.bytes}, tx, "commit"); });
  }

  /// Reads the reveal window of a job the cycle has checking it.
  void check_reveal(const JobId& id) {
    read([this, id] { return port->job(id); },
         [this, id](chain::PortResult<chain::JobRecord> record) {
           using Window = JobCycle::Window;
           // §10.3: never a reveal the next block could not include.
           const Window window = !record                                           ? Window::kUnread
                                 : chain::terminal(record->state)                   ? Window::kSettled
                                 : chain::reveal_allowed(*record, me, stats.height + 1) ? Window::kOpen
                                                                                    : Window::kClosed;
           switch (cycle.checked(id, window)) {
             case JobCycle::Check::kStale:
             case JobCycle::Check::kWait: return;
             case JobCycle::Check::kSettled:  // settled without this reveal: nothing left to send
               end_stream(jobs.at(id));
               forget(id);
               return;
             case JobCycle::Check::kReveal: return reveal(id);
           }
         });
  }

  /// Signs the reveal (or direct result) of a job the cycle has AwaitingReveal.
  void reveal(const JobId& id) {
    const JobState& job = *cycle.find(id);
    auto tx = ledger->sign(chain::encode_instruction(chain::JobResultSubmit{id, job.result, job.salt}), stats.height);
    cycle.reveal_signed(id, tx.hash);
    // Recorded with the obligation that names it: after a restart this reveal is resent, never re-signed.
    keep(tx, owed(id), [this, id, tx] { send_result(id, JobResult{id, tx.bytes}, tx, "reveal"); });
  }

  /// What the journal keeps for a job whose commitment or result is signed.
  Obligation owed(const JobId& id) const {
    const JobState& job = *cycle.find(id);
    return Obligation{id, job.runners, job.result, job.salt, job.commit_tx, job.reveal_tx};
  }

  /// Records `tx` (and the job's obligation) with one synced write on the
  /// journal thread, then runs `send` on the io thread. What cannot be kept is
  /// not sent: it stays unsent in the ledger, and the failure is reported.
  template <typename Send>
  void keep(const chain::SignedTx& tx, std::optional<Obligation> obligation, Send send) {
    asio::post(durable, [this, tx, obligation = std::move(obligation), send = std::move(send)]() mutable {
      const bool kept = journal->record(RetainedTx{tx.hash, tx.nonce, tx.bytes}, tx.nonce + 1, obligation);
      asio::post(io, [this, hash = tx.hash, kept, send = std::move(send)]() mutable {
        if (!kept) return emit(Kind::kStorageFailed, {}, {}, "journal write failed for " + to_hex0x(hash));
        ledger->durable(hash);
        send();
      });
    });
  }

  /// The job is settled or gone: nothing of it is kept any more.
  void forget(const JobId& id) {
    asio::post(durable, [this, id] { journal->forget_obligation(id); });
    jobs.erase(id);
  }

  /// On the Accepted stream while its connection lasts; else straight to the
  /// chain. The event names the transaction, which a rebroadcast names too.
  void send_result(const JobId& id, Frame frame, const chain::SignedTx& tx, std::string what) {
    auto it = jobs.find(id);
    const std::string via = it == jobs.end() ? "" : it->second.via;
    const bool last = std::holds_alternative<JobResult>(frame);
    if (it != jobs.end() && on_its_stream(it->second) && it->second.link->send(it->second.stream, std::move(frame))) {
      emit(Kind::kResultSent, id, via, what + " on the accepted stream, tx " + to_hex0x(tx.hash));
      if (last) end_stream(it->second);
      return;
    }
    submit(tx.bytes);
    emit(Kind::kResultSent, id, via, what + " to the chain, tx " + to_hex0x(tx.hash));
  }

  /// A job owed from before a restart (journal.h): where its transactions stood then.
  void resume(const Obligation& o, const std::set<Bytes32>& retained) {
    JobState state{
        .runners = o.runners, .result = o.result, .salt = o.salt, .commit_tx = o.commit_tx, .reveal_tx = o.reveal_tx};
    std::string where;
    switch (cycle.resume(o.job_id, std::move(state), retained)) {
      case JobCycle::Resumed::kNothingOwed:  // its reveal was included
        asio::post(durable, [this, id = o.job_id] { journal->forget_obligation(id); });
        return;
      case JobCycle::Resumed::kAlreadyHeld: return;
      case JobCycle::Resumed::kRevealed: where = "reveal sent, awaiting its receipt"; break;
      case JobCycle::Resumed::kAwaitingCommit: where = "commitment sent, awaiting its receipt"; break;
      case JobCycle::Resumed::kAwaitingReveal: where = "commitment included, reveal owed"; break;
    }
    Job& job = jobs[o.job_id];
    job.via = "resume";
    ++stats.resumed;
    emit(Kind::kResumed, o.job_id, job.via, where);
  }

  /// The stream of a pushed job, while the connection it came on lasts (a
  /// reconnected link's new connection reuses stream ids) and this end has not ended it.
  bool on_its_stream(const Job& job) const {
    return job.link && job.link->admitted() && job.link->stats().admissions == job.admission && !job.stream_ended;
  }
  /// After this end's last frame on it (its JobResult; a JobCancel before any
  /// commitment): the runner's FIN. With the validator's, QUIC closes the
  /// stream and the validator may open another in its place.
  void end_stream(Job& job) {
    if (on_its_stream(job)) job.link->end_job_stream(job.stream);
    job.stream_ended = true;
  }

  void cancel(const JobId& id) {
    Job& job = jobs.at(id);
    ++stats.cancelled;
    emit(Kind::kCancelled, id, job.via);
    job.cancel->store(true);
    switch (cycle.cancel(id)) {
      case JobCycle::Cancel::kDropped:
        end_stream(job);  // nothing more to send
        jobs.erase(id);
        return;
      case JobCycle::Cancel::kStopping: return end_stream(job);  // dropped when its task returns
      case JobCycle::Cancel::kKept:                               // a committed job still reveals (§10.5)
      case JobCycle::Cancel::kUnknown: return;
    }
  }

  /// §5.3 point 1: the links this runner holds at `height`, one per validator
  /// of Sub_E(R) ∪ Sub_{E+1}(R), each under the newest epoch whose subset
  /// holds it. A link no longer wanted is retired: it never reconnects, and
  /// its connection lasts until the validator ends it (a newer connection of
  /// this runner supersedes it, or Goodbye{OverlapExpired} at the cutoff), so
  /// the jobs on it drain (§11.5; a result whose stream is gone goes to the chain).
  /// At an activation the new epoch's links wait for this runner's phase
  /// (link_height, choice 163).
  void reconcile_links(Height height) {
    const auto wanted = held_links(*snapshots, setup.params.chain_id, me, my_key, height, setup.params.subset);
    for (std::size_t i = 0; i < links.size(); ++i) {
      if (link_retired[i]) continue;
      auto w = std::find_if(wanted.begin(), wanted.end(), [&](const HeldLink& h) { return h.link == link_targets[i]; });
      if (w == wanted.end()) {
        link_retired[i] = true;
        links[i]->retire();
        emit(Kind::kDisconnected, {}, {}, "retired: " + describe(link_targets[i]));
      } else {
        links[i]->set_offer(w->offer);
      }
    }
    for (const auto& w : wanted) {
      bool held = false;
      for (std::size_t i = 0; i < links.size(); ++i) held = held || (!link_retired[i] && link_targets[i] == w.link);
      if (held) continue;
      if (auto opened = open_link(w); opened) links.back()->start();
    }
    stats.validators = static_cast<std::size_t>(std::count(link_retired.begin(), link_retired.end(), false));
    publish();
  }

  std::string endpoint_of(const crypto::Ed25519Public& validator) const {
    auto at = endpoints.find(validator);
    return at == endpoints.end() ? std::string() : at->second;
  }
  std::string describe(const chain::EpochLink& t) const {
    return endpoint_of(t.validator) + " epoch " + std::to_string(t.pair.subset_epoch.value);
  }

  /// A link to `t`, not started. False if its endpoint is no host:port.
  Result<Unit, std::string> open_link(const HeldLink& held) {
    const chain::EpochLink& t = held.link;
    const std::string where = endpoint_of(t.validator);
    auto host_port = net::parse_host_port(where);
    if (!host_port) return Err{"validator endpoint is not host:port: " + where};
    RunnerLinkConfig config;
    config.host = host_port->first;
    config.port = host_port->second;
    config.offer = held.offer;  // its own pair; accepts the other current one (held_links)
    config.block_time = o.block_time;
    RunnerLink::Callbacks cb;
    const auto index = links.size();
    const std::string detail = describe(t);
    cb.on_admitted = [this, index, detail] {
      emit(Kind::kConnected, {}, {}, detail);
      // §6.5 after each admission: Mode A's request for a PresenceReceipt with
      // each Pong (§8.3), and the job kinds this runner does not serve now.
      std::vector<std::string> added;
      if (setup.params.presence_hard_exclude_enabled) added.emplace_back(kPresenceReceiptsCapability);
      auto removed = job_kind_capabilities(paused_kinds);
      if (!added.empty() || !removed.empty())
        links[index]->send(kControlStream, CapabilityDelta{stats.height, std::move(added), std::move(removed), {}, {}, {}});
      poll();  // catch up on what was assigned while it was away
      publish();
    };
    cb.on_lost = [this, detail](const std::string& why) {
      emit(Kind::kDisconnected, {}, {}, why + " (" + detail + ")");
      publish();
    };
    cb.on_receipt = [this](const PresenceReceipt& receipt) { on_receipt(receipt); };
    cb.on_job_frame = [this, index](std::int64_t stream, const Frame& f, const Res<Unit>& seal) {
      on_job_frame(*links[index], stream, f, seal);
    };
    link_admissions.push_back(std::make_unique<PeerAdmission>(t.validator));
    links.push_back(std::make_unique<RunnerLink>(*endpoint, signer, *link_admissions.back(), entropy, config, cb));
    link_targets.push_back(t);
    link_retired.push_back(false);
    return Unit{};
  }

  void update_backpressure() {
    const std::uint32_t running = cycle.running();
    const bool full = running >= o.max_concurrent;
    if (full == backpressured) return;
    backpressured = full;
    for (auto& l : links)
      if (l->admitted())
        l->send(kControlStream, BackpressureSignal{stats.height, running, o.max_concurrent, !full,
                                                   full ? std::optional<std::string>("at max_concurrent") : std::nullopt,
                                                   {}});
  }
};

Result<std::unique_ptr<Runner>, std::string> Runner::start(RunnerOptions options, std::unique_ptr<chain::ChainPort> chain) {
  if (!chain) return Err{std::string("no chain to run against")};
  auto signer = Signer::runner(options.key);
  if (!signer) return Err{std::string("the runner key is not a valid secp256k1 secret")};
  auto impl = std::make_unique<Impl>(std::move(options), std::move(chain), std::move(*signer));
  Impl& r = *impl;
  r.me = *runner_address(r.signer.pubkey());
  std::copy(r.signer.pubkey().raw().begin(), r.signer.pubkey().raw().end(), r.my_key.begin());

  // The chain first: genesis, registration, nonce (waiting while it starts).
  const auto deadline = std::chrono::steady_clock::now() + r.o.startup_timeout;
  chain::PortResult<chain::ChainSetup> setup = Err{chain::PortError{}};
  while (!(setup = r.port->setup()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (!setup) return Err{"cannot read the chain's CIP-11 genesis: " + setup.error().message};
  r.setup = std::move(*setup);
  auto nonce = r.port->next_nonce(r.me);
  auto record = r.port->runner(r.me);
  auto height = r.port->height();
  if (!nonce || !height || (!record && record.error().code != chain::PortErrc::kNotFound))
    return Err{std::string("the chain stopped answering during start")};
  if (!record) return Err{"this key is not a registered runner: " + to_hex0x(r.me)};
  // What it signed before a restart: no nonce signed twice, every retained
  // transaction submitted again, every owed reveal still made (§10.3).
  if (r.o.state_dir.empty()) return Err{std::string("state_dir is required: the runner keeps what it signs there")};
  auto journal = TxJournal::open(r.o.state_dir, r.setup.chain_instance_id, r.me);
  if (!journal) return Err{journal.error()};
  r.journal = std::move(*journal);
  auto kept = r.journal->load();
  if (!kept) return Err{kept.error()};
  r.stats.height = *height;
  r.ledger.emplace(*r.setup.tx_format, r.o.key, std::max(*nonce, kept->next_nonce));
  std::set<Bytes32> retained;
  for (const auto& t : kept->transactions) {
    auto opened = r.setup.tx_format->open(t.bytes);
    if (!opened || opened->sender != r.me || opened->nonce != t.nonce)
      return Err{"the journal in " + r.o.state_dir.string() + " holds a damaged transaction"};
    r.ledger->restore(chain::SignedTx{t.bytes, t.hash, t.nonce}, *height);
    retained.insert(t.hash);
  }
  for (const auto& o : kept->obligations) r.resume(o, retained);
  // What the journal held goes out again at once, in nonce order: a heartbeat
  // signed now would otherwise wait behind a nonce nobody sent.
  std::sort(kept->transactions.begin(), kept->transactions.end(),
            [](const RetainedTx& a, const RetainedTx& b) { return a.nonce < b.nonce; });
  for (const auto& t : kept->transactions) (void)r.port->submit(t.bytes);
  r.schedule.emplace(r.setup.params.chain_id, r.me, r.setup.params.heartbeat_timeout_blocks, r.o.heartbeat_margin_blocks);
  r.stats.last_heartbeat = r.last_heartbeat = record->last_heartbeat;
  r.stats.heartbeat_phase = r.schedule->phase();
  r.stats.heartbeat_cadence = r.schedule->cadence();
  // A heartbeat a whole cadence old (a runner that was away): one now, and
  // started means above the floor again - a job submitted next can draw it.
  if (r.schedule->overdue(*height, r.last_heartbeat))
    if (auto sent = r.heartbeat_at_start(deadline); !sent) return Err{sent.error()};
  const Bytes32 phase_hash = crypto::keccak256({as_bytes("cowboy/cip11-ping-phase/v1"), ByteView(r.me)});
  const auto spread = std::max<std::int64_t>(1, std::min<std::int64_t>(250, r.o.block_time.count() / 2));
  r.ping_phase = std::chrono::milliseconds((phase_hash[0] << 8 | phase_hash[1]) % spread);

  // Then one link per validator of Sub(R) (§5; of the union during a §5.3
  // overlap, reconcile_links), if the chain runs the
  // transport (§14 Phase 1); the poll fallback unless Phase 3 retired it.
  const auto& flags = r.setup.params;
  const bool connect = r.o.push && flags.transport_enabled;
  r.polling_allowed = !flags.poll_disabled;
  if (!connect && !r.polling_allowed)
    return Err{std::string(flags.transport_enabled ? "--poll-only cannot work: this chain has CIP11_POLL_DISABLED set"
                                                   : "no way to receive jobs: this chain has CIP11_TRANSPORT_ENABLED off "
                                                     "and CIP11_POLL_DISABLED set")};
  auto endpoint = RunnerEndpoint::open(r.io, r.worker, r.budget, {});
  if (!endpoint) return Err{"cannot open the QUIC endpoint: " + endpoint.error()};
  r.endpoint = std::move(*endpoint);
  if (connect) {
    for (const auto& v : r.setup.validators) r.endpoints.emplace(v.peer_key, v.endpoint);
    r.snapshots.emplace(r.setup.snapshots());
    for (const auto& held : held_links(*r.snapshots, r.setup.params.chain_id, r.me, r.my_key, *height,
                                       r.setup.params.subset))  // as reconcile_links
      if (auto opened = r.open_link(held); !opened) return Err{opened.error()};
  }
  r.stats.validators = r.links.size();
  r.publish();
  asio::post(r.io, [rp = &r] {
    for (auto& l : rp->links) l->start();
    rp->tick_height();
    rp->tick_poll();
    if (rp->links.empty()) rp->poll();
  });
  r.io_thread = std::thread([rp = &r] {
    auto guard = asio::make_work_guard(rp->io);
    rp->io.run();
  });
  return std::unique_ptr<Runner>(new Runner(std::move(impl)));
}

Runner::Runner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Runner::~Runner() {
  Impl& r = *impl_;
  asio::post(r.io, [rp = &r] {
    for (auto& l : rp->links) l->goodbye(GoodbyeReason::kShutdown);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the signed Goodbyes leave
  std::promise<void> cleared;
  asio::post(r.io, [rp = &r, &cleared] {
    rp->links.clear();  // before a loss could start a reconnect
    cleared.set_value();
  });
  cleared.get_future().wait_for(std::chrono::seconds(1));
  r.io.stop();
  r.io_thread.join();
  for (auto& j : r.jobs) j.second.cancel->store(true);
  r.exec.join();
  r.reads.join();
  r.writes.join();
  r.durable.join();
}

void Runner::pause_job_kinds(std::uint32_t mask) {
  asio::post(impl_->io, [rp = impl_.get(), mask] {
    const std::uint32_t resumed = rp->paused_kinds & ~mask, paused = mask & ~rp->paused_kinds;
    rp->paused_kinds = mask;
    if (resumed == 0 && paused == 0) return;
    for (auto& l : rp->links)  // a link not admitted now says the whole set at its admission
      if (l->admitted())
        l->send(kControlStream, CapabilityDelta{rp->stats.height, job_kind_capabilities(resumed),
                                                job_kind_capabilities(paused), {}, {}, {}});
  });
}

RunnerStatus Runner::status() const {
  std::lock_guard lock(impl_->status_mu);
  return impl_->published;
}

const Address& Runner::address() const { return impl_->me; }

}  // namespace cowboy::cip11
