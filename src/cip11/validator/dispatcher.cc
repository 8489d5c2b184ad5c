#include "cip11/validator/dispatcher.h"

#include <limits>

#include "cip11/capabilities.h"
#include "cip11/chain/codec.h"
#include "common/log.h"

namespace cowboy::cip11 {
namespace {

CancelReason cancel_reason(chain::EndReason r) {
  switch (r) {
    case chain::EndReason::kReassigned: return CancelReason::kReassigned;
    case chain::EndReason::kFailed: return CancelReason::kFailed;
    default: return CancelReason::kExpired;
  }
}

std::string short_hex(const JobId& id) { return to_hex(ByteView(id.value).first(8)); }

// §10.3 checks 1-3 on a result frame's tx_bytes: the chain's own decoder, the
// runner that sent the frame as signer, the instruction the frame names and
// its job_id. Check 4 (size, signature, nonce) is the chain's admission.
std::optional<std::string> check_result_tx(const chain::TxFormat& format, const Bytes& tx_bytes, const Address& runner,
                                           const JobId& job_id, bool reveal) {
  auto tx = format.open(tx_bytes);
  if (!tx) return "tx_bytes do not decode as a transaction of this chain";
  if (tx->sender != runner) return "the transaction is not signed by the runner";
  if (!tx->cip11_payload) return "the transaction is not a CIP-11 call";
  auto instruction = chain::decode_instruction(*tx->cip11_payload);
  if (!instruction) return "the CIP-11 payload does not decode";
  const JobId* id = nullptr;
  if (reveal) {
    if (const auto* r = std::get_if<chain::JobResultSubmit>(&*instruction)) id = &r->job_id;
  } else if (const auto* c = std::get_if<chain::JobResultCommit>(&*instruction)) {
    id = &c->job_id;
  }
  if (!id) return reveal ? "a JobResult must carry JobResultSubmit" : "a JobResultCommit must carry JobResultCommit";
  if (*id != job_id) return "the instruction names another job_id";
  return std::nullopt;
}

}  // namespace

void Dispatcher::on_block(const CommittedAssignments& block) {
  // Ends first: a re-selection ends one committee and draws the next in one block.
  for (const auto& e : block.ended) {
    auto it = pushes_.find({e.job_id, e.runner});
    if (it == pushes_.end()) continue;
    if (e.reason != chain::EndReason::kCompleted &&
        links_.send(it->second.link, it->second.stream,
                    JobCancel{e.job_id, it->second.assignment_hash, cancel_reason(e.reason), {}}))
      ++stats_.cancels;
    end(it);
  }
  for (const auto& [notice, job] : block.assigned) {
    if (!links_.presence().present(notice.runner)) {
      ++stats_.not_present;
      continue;
    }
    // §6.5: a kind the runner says it cannot serve now is not pushed (advisory:
    // the chain's assignment stands, and its deadline re-selects).
    if (const auto* caps = links_.capabilities(notice.runner);
        caps && caps->removed.contains(job_kind_capability(job.kind))) {
      ++stats_.withheld;
      continue;
    }
    JobAssignment a;
    a.job_id = notice.job_id;
    a.job_spec = chain::job_spec_bytes(job);
    a.assignment_height = notice.assignment_height;
    a.deadline_block = notice.deadline_block;
    auto pushed = links_.push(notice.runner, std::move(a));
    if (!pushed) {
      ++stats_.not_present;
      continue;
    }
    ++stats_.pushes;
    Key key{notice.job_id, notice.runner};
    if (auto old = pushes_.find(key); old != pushes_.end()) end(old);
    pushes_.emplace(key, Push{pushed->link, pushed->stream, pushed->assignment_hash, block.height, block.durable_at,
                              Phase::kAwaitingAck, std::nullopt});
    by_stream_[{pushed->link, pushed->stream}] = key;
  }
  // §10.6 HardFailure: no framed response within ACK_TIMEOUT_BLOCKS (§11.1).
  for (auto it = pushes_.begin(); it != pushes_.end();) {
    auto next = std::next(it);
    if (it->second.phase == Phase::kAwaitingAck && block.height >= it->second.pushed_at + ack_timeout_) {
      ++stats_.hard_failures;
      log::warn("hard_failure", log::field("job_id", short_hex(it->first.first)),
                log::field("runner", to_hex0x(it->first.second)));
      links_.hard_failure(it->first.second);
      end(it);
    }
    it = next;
  }
}

void Dispatcher::on_job_frame(const Address& runner, ValidatorLinks::LinkId link, std::int64_t stream,
                              const Frame& frame) {
  auto route = by_stream_.find({link, stream});
  if (route == by_stream_.end()) return;  // a stream this dispatcher has already ended
  auto it = pushes_.find(route->second);
  if (it->first.second != runner) return;  // a connection is one runner's: never reached
  const JobId& job_id = it->first.first;
  std::visit(
      [&](const auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, JobAck>) {
          on_ack(it, f);
        } else if constexpr (std::is_same_v<F, JobProgress>) {
          if (f.job_id != job_id) return void(++stats_.bad_frames);
          ++stats_.progress;
          it->second.progress = f;
          log::info("job_progress", log::field("job_id", short_hex(job_id)), log::field("fraction", f.fraction),
                    log::field("detail", f.detail.value_or("")));
        } else if constexpr (std::is_same_v<F, JobResultCommit> || std::is_same_v<F, JobResult>) {
          if (f.job_id != job_id) return void(++stats_.bad_frames);
          on_result(it, f.tx_bytes, std::is_same_v<F, JobResult>);
        }
      },
      frame);
}

void Dispatcher::on_ack(std::map<Key, Push>::iterator it, const JobAck& ack) {
  Push& p = it->second;
  // §10.2: the ack must name the assignment sent on this connection.
  if (ack.job_id != it->first.first || ack.assignment_hash != p.assignment_hash || p.phase != Phase::kAwaitingAck) {
    ++stats_.bad_frames;
    return;
  }
  ack_latency_.observe_us(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - p.durable_at).count()));
  switch (ack.status.kind) {
    case AckStatus::Kind::kAccepted:
      ++stats_.acks_accepted;
      p.phase = Phase::kAccepted;
      return;
    case AckStatus::Kind::kDuplicate:  // another validator's push came first: alive, nothing more here
      ++stats_.acks_duplicate;
      break;
    case AckStatus::Kind::kReject:  // SoftFailure: alive but cannot serve
      ++stats_.acks_rejected;
      log::info("job_rejected", log::field("job_id", short_hex(it->first.first)),
                log::field("reason", static_cast<std::uint64_t>(ack.status.reason)),
                log::field("detail", ack.reason.value_or("")));
      break;
  }
  end(it);
}

void Dispatcher::on_result(std::map<Key, Push>::iterator it, const Bytes& tx_bytes, bool reveal) {
  const auto& [job_id, runner] = it->first;
  if (it->second.phase != Phase::kAccepted) {  // results travel on the Accepted stream only (§10.3)
    ++stats_.bad_frames;
    return;
  }
  if (auto refused = check_result_tx(tx_format_, tx_bytes, runner, job_id, reveal)) {
    ++stats_.results_refused;
    log::warn("result_refused", log::field("job_id", short_hex(job_id)), log::field("why", *refused));
    return;
  }
  ++(reveal ? stats_.results_forwarded : stats_.commits_forwarded);
  sink_.forward(tx_bytes, runner, job_id, reveal);  // verbatim (§10.3)
}

void Dispatcher::end(std::map<Key, Push>::iterator it) {
  links_.end_job_stream(it->second.link, it->second.stream);
  by_stream_.erase({it->second.link, it->second.stream});
  pushes_.erase(it);
}

std::optional<JobProgress> Dispatcher::progress(const JobId& job_id) const {
  for (auto it = pushes_.lower_bound({job_id, Address{}}); it != pushes_.end() && it->first.first == job_id; ++it)
    if (it->second.progress) return it->second.progress;
  return std::nullopt;
}

void Dispatcher::on_link_ended(ValidatorLinks::LinkId link) {
  for (auto route = by_stream_.lower_bound({link, std::numeric_limits<std::int64_t>::min()});
       route != by_stream_.end() && route->first.first == link;) {
    pushes_.erase(route->second);
    route = by_stream_.erase(route);
  }
}

}  // namespace cowboy::cip11
