// Handshakes (§7): OpenSession and CompleteSession, and the admission queue
// their signature checks wait in (docs/admission.md, "Use in cbqsd").
#include <boost/asio/post.hpp>

#include "cbqs/broker/auth.h"
#include "cbqs/broker/core.h"
#include "cbqs/wire/ids.h"
#include "common/log.h"

namespace cowboy::cbqs::broker {

// OpenSession and CompleteSession do their cheap checks here, then queue the
// signature verification in the admission queue, one source per connection
// (docs/admission.md), so that a connection flooding handshakes cannot starve
// the others; finish_open / finish_complete resume after the verification.
void Core::open_session(ConnectionId id, Connection& c, const OpenSession& f) {
  std::uint64_t now = clock_.now_ms();
  std::erase_if(c.pending, [&](const auto& p) { return now > p.second.expires_at_ms; });
  ChainViewPtr view = snapshots_.current();
  std::uint64_t limit = view ? view->params.max_sessions_per_connection : Params{}.max_sessions_per_connection;
  if (c.pending.size() + c.sessions.size() >= limit) return refuse_handshake(id, f.request_id, f.grant.stream_id, ErrorCode::kSessionLimit);
  if (!view || !snapshots_.fresh()) return refuse_handshake(id, f.request_id, f.grant.stream_id, ErrorCode::kChainStateStale);
  if (auto e = check_grant_before_signature(f.grant, *view)) return refuse_handshake(id, f.request_id, f.grant.stream_id, *e);
  admit(id, f.request_id, OpenJob{f.request_id, f.grant, admission_turns_});
}

void Core::complete_session(ConnectionId id, Connection& c, const CompleteSession& f) {
  auto it = c.pending.find(f.proof.session_id);
  if (it == c.pending.end() || it->second.challenge != f.proof.challenge)
    return refuse_handshake(id, f.request_id, f.proof.stream_id, ErrorCode::kChallengeUnknown);
  PendingHandshake p = std::move(it->second);
  c.pending.erase(it);  // single use, whatever the outcome
  if (clock_.now_ms() > p.expires_at_ms) return refuse_handshake(id, f.request_id, f.proof.stream_id, ErrorCode::kChallengeExpired);
  if (!proof_fields_match(f.proof, p.grant, p.grant_id)) return refuse_handshake(id, f.request_id, f.proof.stream_id, ErrorCode::kProofMismatch);
  admit(id, f.request_id, CompleteJob{f.request_id, f.proof, std::move(p), admission_turns_});
}

// Refused handshakes are what an operator looks for when a client cannot
// connect (a bad signature, an expired or revoked grant): logged with the peer.
void Core::refuse_handshake(ConnectionId id, const Bytes32& request_id, const Bytes32& stream_id, ErrorCode code) {
  auto c = connections_.find(id);
  log::warn("handshake_refused", log::field("conn", id),
            log::field("peer", c != connections_.end() ? c->second.remote : std::string("?")),
            log::field("stream", to_hex(ByteView(stream_id).first(8))), log::field("code", error_name(code)));
  send_error(id, request_id, code);
}

std::uint64_t Core::steady_ms() const {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_).count());
}

void Core::admit(ConnectionId id, const Bytes32& request_id, HandshakeJob job) {
  auto queued = admission_.enqueue(id, steady_ms(), [&] { return std::move(job); });
  if (!queued) {
    if (queued.error() == admission::QueueError::kSourceFull)  // this connection's handshakes are queued to the limit
      return send_error(id, request_id, ErrorCode::kSessionLimit, "too many handshakes of this connection await verification");
    return send_error(id, request_id, ErrorCode::kUnavailable, "the admission queue is full; retry");
  }
  schedule_admission();
}

void Core::schedule_admission() {
  if (admission_posted_) return;
  admission_posted_ = true;
  boost::asio::post(io_, [this] { admission_turn(); });
}

// One turn: round-robin over connections, a fixed credit budget, then yield
// to the other work on this thread; expired handshakes are answered Unavailable.
void Core::admission_turn() {
  admission_posted_ = false;
  ++admission_turns_;
  std::vector<admission::FairQueue<HandshakeJob>::Entry> served;
  (void)admission_.turn(steady_ms(), config_.admission_credits_per_turn,
                        [&](auto&& entry) { served.push_back(std::move(entry)); });
  for (auto& e : admission_.take_expired()) {
    const Bytes32& rid = std::visit([](const auto& j) -> const Bytes32& { return j.request_id; }, e.job);
    send_error(e.source, rid, ErrorCode::kUnavailable, "the handshake expired in the admission queue");
  }
  for (auto& e : served) {
    std::uint64_t queued = std::visit([](const auto& j) { return j.queued_at_turn; }, e.job);
    admission_max_wait_turns_ = std::max(admission_max_wait_turns_, admission_turns_ - queued);
    if (!connections_.contains(e.source)) continue;
    std::visit(
        [&](auto& job) {
          if constexpr (std::is_same_v<std::decay_t<decltype(job)>, OpenJob>) finish_open(e.source, job);
          else finish_complete(e.source, job);
        },
        e.job);
  }
  if (admission_.pending() > 0) schedule_admission();
}

void Core::finish_open(ConnectionId id, OpenJob& job) {
  Connection& c = connections_.at(id);
  std::uint64_t now = clock_.now_ms();
  ChainViewPtr view = snapshots_.current();
  if (auto e = check_grant_before_signature(job.grant, *view)) return refuse_handshake(id, job.request_id, job.grant.stream_id, *e);
  if (!grant_signature_valid(job.grant, view->stream(job.grant.stream_id)->admin_key))
    return refuse_handshake(id, job.request_id, job.grant.stream_id, ErrorCode::kBadGrantSignature);
  if (auto e = check_grant_after_signature(job.grant, *view, now)) return refuse_handshake(id, job.request_id, job.grant.stream_id, *e);
  if (c.pending.size() + c.sessions.size() >= view->params.max_sessions_per_connection)
    return refuse_handshake(id, job.request_id, job.grant.stream_id, ErrorCode::kSessionLimit);

  PendingHandshake p{random32(), now + view->params.session_handshake_timeout_ms, job.grant, grant_id(job.grant)};
  Bytes32 session_id = random32();
  SessionChallenge challenge{job.request_id, session_id, p.challenge, p.expires_at_ms};
  c.pending.emplace(session_id, std::move(p));
  send(id, challenge);
}

void Core::finish_complete(ConnectionId id, CompleteJob& job) {
  Connection& c = connections_.at(id);
  const PendingHandshake& p = job.pending;
  if (!proof_signature_valid(job.proof, p.grant)) return refuse_handshake(id, job.request_id, job.proof.stream_id, ErrorCode::kBadProofSignature);
  std::uint64_t now = clock_.now_ms();
  ChainViewPtr view = snapshots_.current();
  const StreamRecordV2* stream = view ? view->stream(p.grant.stream_id) : nullptr;
  if (!stream) return refuse_handshake(id, job.request_id, job.proof.stream_id, ErrorCode::kUnknownStream);
  if (auto e = check_standing(p.grant, stream->admin_key, *view, now)) return refuse_handshake(id, job.request_id, job.proof.stream_id, *e);

  Session session;
  session.grant = std::make_shared<const StreamGrantV2>(p.grant);
  session.grant_id = p.grant_id;
  session.admin_key_at_open = stream->admin_key;
  // §7: the session ends when the grant expires, without waiting for a refresh.
  session.expiry = std::make_unique<boost::asio::steady_timer>(io_);
  session.expiry->expires_after(std::chrono::milliseconds(p.grant.expires_at_ms - now + 1));
  Bytes32 session_id = job.proof.session_id;
  session.expiry->async_wait([this, id, session_id](const boost::system::error_code& ec) {
    if (ec) return;
    auto conn = connections_.find(id);
    if (conn == connections_.end() || !conn->second.sessions.contains(session_id)) return;
    send_error(id, std::nullopt, ErrorCode::kGrantExpired, "the session's grant expired",
               Bytes(session_id.begin(), session_id.end()));
    log::info("session_ended", log::field("conn", id), log::field("peer", conn->second.remote), log::field("reason", "GrantExpired"),
              log::field("grant_expired_at_ms", conn->second.sessions.at(session_id).grant->expires_at_ms));
    end_session(id, session_id);
  });
  c.sessions.emplace(session_id, std::move(session));
  c.sessionless_since_ms = 0;
  c.peer->lift_frame_cap();  // before SessionOpened: the client may send large frames at once
  send(id, SessionOpened{job.request_id, session_id, view->height});
  log::info("session_opened", log::field("conn", id), log::field("peer", c.remote),
            log::field("stream", to_hex(ByteView(p.grant.stream_id).first(8))), log::field("snapshot_height", view->height),
            log::field("grant_expires_at_ms", p.grant.expires_at_ms));
}

Bytes32 Core::random32() {
  Bytes32 b;
  entropy_.fill(b);
  return b;
}

}  // namespace cowboy::cbqs::broker
