#include "cbqs/broker/core.h"

#include <boost/asio/post.hpp>

#include "cbqs/broker/auth.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "cbqs/wire/limits.h"
#include "common/log.h"

namespace cowboy::cbqs::broker {

Core::Core(boost::asio::io_context& io, CoreConfig config, store::Store& store, SnapshotSource& snapshots,
           const Clock& clock, Entropy& entropy)
    : io_(io), config_(std::move(config)), store_(store), snapshots_(snapshots), clock_(clock), entropy_(entropy),
      admission_(std::move(*admission::FairQueue<HandshakeJob>::create(config_.admission))),
      housekeeping_timer_(io) {
  boost::asio::post(committer_, [] { pthread_setname_np(pthread_self(), "cbqs-commit"); });
  housekeeping();
}

Core::~Core() { committer_.join(); }

Core::ConnectionId Core::on_open(Peer& peer) {
  ConnectionId id = next_connection_++;
  Connection& c = connections_[id];
  c.peer = &peer;
  c.sessionless_since_ms = std::max<std::uint64_t>(clock_.now_ms(), 1);
  return id;
}

void Core::on_close(ConnectionId id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  std::vector<Bytes32> sessions;
  for (const auto& [sid, s] : it->second.sessions) sessions.push_back(sid);
  for (const auto& sid : sessions) end_session(id, sid);  // pairs and sessions die with the socket
  admission_.drop_source(id);
  connections_.erase(it);
}

CoreMetrics Core::metrics() const {
  CoreMetrics m = metrics_;
  m.sessions = 0;
  m.subscriptions = 0;
  for (const auto& [id, c] : connections_) {
    m.sessions += c.sessions.size();
    m.sessionless_connections += c.sessions.empty();
  }
  for (const auto& [id, slot] : streams_) {
    m.subscriptions += slot.subscriptions.size();
    StreamMetrics sm{id, slot.state.durable_head(), slot.state.floor(), slot.state.retained_bytes(), {}, {}, {}};
    for (const auto& [lane, head] : slot.state.lane_heads()) {
      if (sm.lane_heads.size() == 256) break;
      sm.lane_heads.emplace_back(lane, head);
    }
    for (const auto& sub : slot.subscriptions)
      if (!sub.group)
        sm.subscription_lags.emplace_back(sub.id, sm.head + 1 > sub.next_sequence ? sm.head + 1 - sub.next_sequence : 0);
    std::uint64_t now = clock_.now_ms();
    for (const auto& [group_id, g] : slot.groups) {
      const GroupConfigV2* config = slot.state.group(group_id);
      if (!config) continue;
      GroupMetrics gm{group_id, slot.state.count_in_lane(config->lane_id, g.frontier()) + g.waiting(), g.in_flight(),
                      g.dead_letters().size(), g.counters(), 0};
      // The oldest unacked record: the oldest live cycle, else the first never delivered.
      std::optional<std::uint64_t> oldest = g.oldest_live();
      if (!oldest) oldest = slot.state.next_in_lane(config->lane_id, g.frontier());
      if (auto at = oldest ? slot.state.committed_at(*oldest) : std::nullopt) gm.oldest_unacked_age_ms = now > *at ? now - *at : 0;
      sm.groups.push_back(gm);
    }
    m.streams.push_back(std::move(sm));
  }
  m.admission_turns = admission_turns_;
  m.admission_pending = admission_.pending();
  m.admission_max_wait_turns = admission_max_wait_turns_;
  return m;
}

Bytes32 Core::random32() {
  Bytes32 b;
  entropy_.fill(b);
  return b;
}

void Core::send(ConnectionId id, const CbqsServerFrameV2& frame) {
  auto it = connections_.find(id);
  if (it != connections_.end()) it->second.peer->send(encode(frame));
}

ErrorFrame Core::error_frame(std::optional<Bytes32> request_id, ErrorCode code, std::string_view detail, Bytes details) {
  std::string message(error_name(code));
  message += ": ";
  message += detail.empty() ? error_description(code) : detail;
  if (message.size() > limits::kMaxErrorMessageBytes) message.resize(limits::kMaxErrorMessageBytes);
  ++metrics_.errors_sent;
  return ErrorFrame{request_id, static_cast<std::uint16_t>(code), Bytes(message.begin(), message.end()), std::move(details)};
}

void Core::send_error(ConnectionId id, std::optional<Bytes32> request_id, ErrorCode code, std::string_view detail,
                      Bytes details) {
  send(id, error_frame(request_id, code, detail, std::move(details)));
}

void Core::on_frame(ConnectionId id, ByteView bytes) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  auto frame = decode<CbqsClientFrameV2>(bytes);
  if (!frame) {
    ErrorCode code = frame.error() == DecodeError::kBadVersion ? ErrorCode::kUnsupportedVersion : ErrorCode::kMalformed;
    // The connection and its sessions carry on: the frame is refused, nothing else (§D).
    send_error(id, client_frame_request_id(bytes), code, codec::to_string(frame.error()));
    return;
  }
  Connection& c = it->second;
  std::visit(
      [&](auto& f) {
        using T = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<T, OpenSession>) open_session(id, c, f);
        else if constexpr (std::is_same_v<T, CompleteSession>) complete_session(id, c, f);
        else handle_request(id, c, f);
      },
      *frame);
}

void Core::on_frame_refused(ConnectionId id, bool too_large) {
  if (too_large) return send_error(id, std::nullopt, ErrorCode::kFrameTooLarge, "closing with 1009");
  send_error(id, std::nullopt, ErrorCode::kUnavailable, "the broker's read budget cannot hold this frame now; closing with 1013");
}

// ---- sessions (§7) ------------------------------------------------------------

// OpenSession and CompleteSession do their cheap checks here, then queue the
// signature verification in the admission queue, one source per connection
// (docs/admission.md), so that a connection flooding handshakes cannot starve
// the others; finish_open / finish_complete resume after the verification.
void Core::open_session(ConnectionId id, Connection& c, const OpenSession& f) {
  std::uint64_t now = clock_.now_ms();
  std::erase_if(c.pending, [&](const auto& p) { return now > p.second.expires_at_ms; });
  ChainViewPtr view = snapshots_.current();
  std::uint64_t limit = view ? view->params.max_sessions_per_connection : Params{}.max_sessions_per_connection;
  if (c.pending.size() + c.sessions.size() >= limit) return send_error(id, f.request_id, ErrorCode::kSessionLimit);
  if (!view || !snapshots_.fresh()) return send_error(id, f.request_id, ErrorCode::kChainStateStale);
  if (auto e = check_grant_before_signature(f.grant, *view)) return send_error(id, f.request_id, *e);
  admit(id, f.request_id, OpenJob{f.request_id, f.grant, admission_turns_});
}

void Core::complete_session(ConnectionId id, Connection& c, const CompleteSession& f) {
  auto it = c.pending.find(f.proof.session_id);
  if (it == c.pending.end() || it->second.challenge != f.proof.challenge)
    return send_error(id, f.request_id, ErrorCode::kChallengeUnknown);
  PendingHandshake p = std::move(it->second);
  c.pending.erase(it);  // single use, whatever the outcome
  if (clock_.now_ms() > p.expires_at_ms) return send_error(id, f.request_id, ErrorCode::kChallengeExpired);
  if (!proof_fields_match(f.proof, p.grant, p.grant_id)) return send_error(id, f.request_id, ErrorCode::kProofMismatch);
  admit(id, f.request_id, CompleteJob{f.request_id, f.proof, std::move(p), admission_turns_});
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
  if (auto e = check_grant_before_signature(job.grant, *view)) return send_error(id, job.request_id, *e);
  if (!grant_signature_valid(job.grant, view->stream(job.grant.stream_id)->admin_key))
    return send_error(id, job.request_id, ErrorCode::kBadGrantSignature);
  if (auto e = check_grant_after_signature(job.grant, *view, now)) return send_error(id, job.request_id, *e);
  if (c.pending.size() + c.sessions.size() >= view->params.max_sessions_per_connection)
    return send_error(id, job.request_id, ErrorCode::kSessionLimit);

  PendingHandshake p{random32(), now + view->params.session_handshake_timeout_ms, job.grant, grant_id(job.grant)};
  Bytes32 session_id = random32();
  SessionChallenge challenge{job.request_id, session_id, p.challenge, p.expires_at_ms};
  c.pending.emplace(session_id, std::move(p));
  send(id, challenge);
}

void Core::finish_complete(ConnectionId id, CompleteJob& job) {
  Connection& c = connections_.at(id);
  const PendingHandshake& p = job.pending;
  if (!proof_signature_valid(job.proof, p.grant)) return send_error(id, job.request_id, ErrorCode::kBadProofSignature);
  std::uint64_t now = clock_.now_ms();
  ChainViewPtr view = snapshots_.current();
  const StreamRecordV2* stream = view ? view->stream(p.grant.stream_id) : nullptr;
  if (!stream) return send_error(id, job.request_id, ErrorCode::kUnknownStream);
  if (auto e = check_standing(p.grant, stream->admin_key, *view, now)) return send_error(id, job.request_id, *e);

  Session session;
  session.grant = p.grant;
  session.grant_id = p.grant_id;
  session.admin_key_at_open = stream->admin_key;
  session.append_rate = TokenBucket(p.grant.max_append_bytes_per_sec, now);
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
    log::info("session_ended", log::field("conn", id), log::field("reason", "GrantExpired"));
    end_session(id, session_id);
  });
  c.sessions.emplace(session_id, std::move(session));
  c.sessionless_since_ms = 0;
  c.peer->lift_frame_cap();  // before SessionOpened: the client may send large frames at once
  send(id, SessionOpened{job.request_id, session_id, view->height});
  log::info("session_opened", log::field("conn", id), log::field("stream", to_hex(ByteView(p.grant.stream_id).first(8))),
            log::field("snapshot_height", view->height));
}

void Core::end_session(ConnectionId id, const Bytes32& session_id) {
  drop_subscriptions(id, session_id);
  auto conn = connections_.find(id);
  if (conn == connections_.end()) return;
  conn->second.sessions.erase(session_id);
  if (conn->second.sessions.empty()) conn->second.sessionless_since_ms = std::max<std::uint64_t>(clock_.now_ms(), 1);
}

// A connection must hold a session: without one for cbqs.session_handshake_timeout_ms
// (from its upgrade, or since its last session ended) it only takes a slot.
void Core::close_sessionless(std::uint64_t now, std::uint64_t timeout_ms) {
  std::vector<Peer*> expired;  // closed after the walk: a close may end the connection at once
  for (auto& [id, c] : connections_) {
    if (c.sessionless_since_ms == 0 || now - c.sessionless_since_ms < timeout_ms) continue;
    c.sessionless_since_ms = 0;  // once: the close takes a turn or two
    ++metrics_.sessionless_closed;
    expired.push_back(c.peer);
  }
  if (!expired.empty()) log::info("connections_closed", log::field("count", expired.size()),
                                  log::field("reason", "no session within cbqs.session_handshake_timeout_ms"));
  for (Peer* p : expired) p->close();
}

void Core::handle_request(ConnectionId id, Connection& c, Request& f) {
  auto it = c.sessions.find(f.session_id);
  if (it == c.sessions.end()) return send_error(id, f.request_id, ErrorCode::kUnknownSession);
  Session& s = it->second;
  ChainViewPtr view = snapshots_.current();  // one snapshot for the whole request
  std::uint64_t now = clock_.now_ms();
  if (auto e = check_standing(s.grant, s.admin_key_at_open, *view, now)) {
    send_error(id, f.request_id, *e, "the session ended");
    log::info("session_ended", log::field("conn", id), log::field("reason", error_name(*e)));
    return end_session(id, f.session_id);
  }
  std::uint16_t needed = required_verbs(f.body);
  if (needed != 0 && (s.grant.verbs & needed) == 0) return send_error(id, f.request_id, ErrorCode::kVerbNotGranted);
  const StreamRecordV2& stream = *view->stream(s.grant.stream_id);
  dispatch(id, s, f.session_id, *view, stream, f.request_id, f.body);
}

}  // namespace cowboy::cbqs::broker
