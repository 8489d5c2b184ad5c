#include "cbqs/broker/core.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <future>
#include <latch>

#include "cbqs/broker/auth.h"
#include "cbqs/broker/error_frame.h"
#include "cbqs/wire/codec.h"
#include "common/log.h"

namespace cowboy::cbqs::broker {

namespace {
constexpr auto kHousekeeping = std::chrono::seconds(1);
std::size_t committer_count(const CoreConfig& c) { return std::max<std::size_t>(c.io_threads, 1); }
}  // namespace

template <typename F>
void Core::at_owner(StreamOwner& o, F&& f) {
  if (!streams_) return f(o);
  boost::asio::post(o.home(), [&o, f = std::forward<F>(f)]() mutable { f(o); });
}

template <typename F>
auto Core::ask(StreamOwner& o, F&& f) const {
  if (!streams_) return f(o);
  using R = decltype(f(o));
  std::packaged_task<R()> task([&] { return f(o); });
  auto answer = task.get_future();
  boost::asio::post(o.home(), std::ref(task));
  return answer.get();  // owners never wait on the io thread, so this cannot deadlock
}

Core::Core(boost::asio::io_context& io, CoreConfig config, store::Store& store, ViewSource& snapshots,
           const Clock& clock, Entropy& entropy)
    : io_(io), config_(std::move(config)), store_(store), snapshots_(snapshots), clock_(clock), entropy_(entropy),
      committer_(committer_count(config_)),
      admission_(std::move(*admission::FairQueue<HandshakeJob>::create(config_.admission))),
      housekeeping_timer_(io) {
  // One name per committer thread: each naming task holds its thread until all are named.
  const std::size_t committers = committer_count(config_);
  auto named = std::make_shared<std::latch>(static_cast<std::ptrdiff_t>(committers));
  for (std::size_t i = 0; i < committers; ++i)
    boost::asio::post(committer_, [named] {
      pthread_setname_np(pthread_self(), "cbqs-commit");
      named->arrive_and_wait();
    });
  if (config_.io_threads > 1) {
    streams_ = std::make_unique<boost::asio::io_context>(static_cast<int>(config_.io_threads));
    for (std::size_t i = 0; i < config_.io_threads; ++i)
      stream_threads_.emplace_back([io = streams_.get()] {
        pthread_setname_np(pthread_self(), "cbqs-stream");
        auto work = boost::asio::make_work_guard(*io);
        io->run();
      });
    outbox_ = std::make_unique<Outbox>(io_.get_executor(), config_.peer_queue_limit,
                                       [this](ConnectionId id, Bytes frame, bool is_error) {
                                         return send_bytes(id, std::move(frame), is_error);
                                       });
  }
  auto loaders = std::make_shared<std::latch>(static_cast<std::ptrdiff_t>(kLoaders));
  for (std::size_t i = 0; i < kLoaders; ++i)
    boost::asio::post(loader_, [loaders] {
      pthread_setname_np(pthread_self(), "cbqs-load");
      loaders->arrive_and_wait();
    });
  housekeeping();
}

// Loads under way finish (and are dropped), the owners' work stops, then their
// writes finish; the owners go last.
Core::~Core() {
  loader_.join();
  for (auto& [id, l] : loading_) l.owner->reset();  // its timers use the stream threads, which go next
  if (streams_) {
    streams_->stop();
    for (auto& t : stream_threads_) t.join();
  }
  committer_.join();
}

Core::ConnectionId Core::on_open(Peer& peer) {
  ConnectionId id = next_connection_++;
  Connection& c = connections_[id];
  c.peer = &peer;
  c.remote = peer.remote_address();
  log::debug("connection_opened", log::field("conn", id), log::field("peer", c.remote));
  c.sessionless_since_ms = std::max<std::uint64_t>(clock_.now_ms(), 1);
  if (outbox_) c.gauge = outbox_->opened(id);
  return id;
}

void Core::on_written(ConnectionId id) {
  if (!outbox_) return;  // owners on this thread read the queue itself
  auto it = connections_.find(id);
  if (it != connections_.end() && it->second.gauge) it->second.gauge->peer_queued = it->second.peer->queued_bytes();
}

void Core::on_close(ConnectionId id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  std::vector<Bytes32> sessions;
  for (const auto& [sid, s] : it->second.sessions) sessions.push_back(sid);
  log::info("connection_closed", log::field("conn", id), log::field("peer", it->second.remote),
            log::field("sessions", sessions.size()));
  for (const auto& sid : sessions) end_session(id, sid);  // pairs and sessions die with the socket
  admission_.drop_source(id);
  if (outbox_) outbox_->closed(id);
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
  for (const auto& [id, owner] : owners_) {
    auto [n, stream] = ask(*owner, [](StreamOwner& o) { return std::pair{o.counters(), o.metrics()}; });
    m.appends += n.appends;
    m.appended_bytes += n.appended_bytes;
    m.batches += n.batches;
    m.batch_records += n.batch_records;
    m.deliveries += n.deliveries;
    m.delivered_bytes += n.delivered_bytes;
    m.journal_writes += n.journal_writes;
    m.journal_ops += n.journal_ops;
    m.writes += n.writes;
    m.write_busy_us += n.write_busy_us;
    m.sync_latency_us.insert(m.sync_latency_us.end(), n.sync_latency_us.begin(), n.sync_latency_us.end());
    m.sync_latency.add(n.sync_latency);
    m.streams.push_back(std::move(stream));
    m.subscriptions += m.streams.back().subscriptions;
  }
  while (m.sync_latency_us.size() > OwnerCounters::kSyncSamples) m.sync_latency_us.pop_front();
  m.sync_failures = health_.failures();
  m.admission_turns = admission_turns_;
  m.admission_pending = admission_.pending();
  m.admission_max_wait_turns = admission_max_wait_turns_;
  return m;
}

void Core::send(ConnectionId id, const CbqsServerFrameV2& frame) {
  send_bytes(id, encode(frame), std::holds_alternative<ErrorFrame>(frame));
}

std::size_t Core::send_bytes(ConnectionId id, Bytes frame, bool is_error) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return 0;
  if (is_error) ++metrics_.errors_sent;
  it->second.peer->send(std::move(frame));
  return it->second.peer->queued_bytes();
}

Outbound::Room Core::room(ConnectionId id) const {
  auto it = connections_.find(id);
  if (it == connections_.end()) return Room::kGone;
  return it->second.peer->queued_bytes() > config_.peer_queue_limit ? Room::kBusy : Room::kOpen;
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

OwnerContext Core::owner_context() {
  boost::asio::any_io_executor home = io_.get_executor();
  if (streams_) home = boost::asio::make_strand(*streams_);
  Outbound& out = outbox_ ? static_cast<Outbound&>(*outbox_) : *this;
  return OwnerContext{home,    committer_.get_executor(), store_, snapshots_,        clock_,
                      entropy_, out,                      health_, config_.provider, config_.credit_cap,
                      &writes_at_committer_};
}

template <typename F>
void Core::with_owner(const Bytes32& stream_id, F&& then) {
  if (auto it = owners_.find(stream_id); it != owners_.end()) return then(it->second.get());
  auto [slot, first] = loading_.try_emplace(stream_id);
  slot->second.waiting.emplace_back(
      [f = std::make_shared<std::decay_t<F>>(std::forward<F>(then))](StreamOwner* o) { (*f)(o); });
  if (!first) return;
  // Reading a stream's state may take a while: it must not stall the other streams' requests.
  boost::asio::post(loader_, [this, stream_id, context = owner_context(), owner = slot->second.owner,
                              alive = std::weak_ptr<bool>(alive_)] {
    if (config_.before_load) config_.before_load(stream_id);
    *owner = StreamOwner::load(stream_id, context);
    boost::asio::post(io_, [this, stream_id, owner, alive] {
      if (alive.lock()) loaded(stream_id, std::move(*owner));
    });
  });
}

void Core::loaded(const Bytes32& stream_id, std::unique_ptr<StreamOwner> owner) {
  auto waiting = std::move(loading_[stream_id].waiting);
  loading_.erase(stream_id);
  StreamOwner* o = nullptr;
  if (owner) o = owners_.emplace(stream_id, std::move(owner)).first->second.get();
  else log::error("stream_load_failed", log::field("stream", to_hex(ByteView(stream_id).first(8))));
  for (auto& then : waiting) then(o);
}

void Core::load(const Bytes32& stream_id, std::function<void()> done) {
  with_owner(stream_id, [done = std::move(done)](StreamOwner*) { done(); });
}

StreamOwner* Core::owner_now(const Bytes32& stream_id) {
  if (auto it = owners_.find(stream_id); it != owners_.end()) return it->second.get();
  if (loading_.contains(stream_id)) return nullptr;
  auto loaded = StreamOwner::load(stream_id, owner_context());
  if (!loaded) return nullptr;
  return owners_.emplace(stream_id, std::move(loaded)).first->second.get();
}

void Core::end_session(ConnectionId id, const Bytes32& session_id) {
  auto conn = connections_.find(id);
  if (conn == connections_.end()) return;
  auto session = conn->second.sessions.find(session_id);
  if (session == conn->second.sessions.end()) return;
  const Bytes32& stream_id = session->second.grant->stream_id;
  auto ended = [this, id, session = SessionId{session_id}](StreamOwner* o) {
    if (o) at_owner(*o, [id, session](StreamOwner& owner) { owner.session_ended(id, session); });
  };
  if (owners_.contains(stream_id) || loading_.contains(stream_id)) with_owner(stream_id, std::move(ended));
  conn->second.sessions.erase(session);
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
  if (auto e = check_standing(*s.grant, s.admin_key_at_open, *view, now)) {
    send_error(id, f.request_id, *e, "the session ended");
    log::info("session_ended", log::field("conn", id), log::field("reason", error_name(*e)));
    return end_session(id, f.session_id);
  }
  std::uint16_t needed = required_verbs(f.body);
  if (needed != 0 && (s.grant->verbs & needed) == 0) return send_error(id, f.request_id, ErrorCode::kVerbNotGranted);
  if (std::holds_alternative<req::CloseSession>(f.body)) {
    send(id, Response{f.request_id, resp::Ok{}});
    return end_session(id, f.session_id);
  }
  with_owner(s.grant->stream_id, [this, id, session_id = SessionId{f.session_id}, grant = s.grant, view = std::move(view),
                                   request_id = RequestId{f.request_id},
                                   body = std::move(f.body)](StreamOwner* o) mutable {
    if (!o) return send_error(id, request_id.value, ErrorCode::kUnavailable, "the stream's state cannot be read");
    at_owner(*o, [id, session_id, grant, view = std::move(view), request_id,
                  body = std::move(body)](StreamOwner& owner) mutable {
      owner.request(Caller{id, session_id, *grant}, *view, *view->stream(grant->stream_id), request_id, body);
    });
  });
}

// Once a second: close connections that hold no session (close_sessionless),
// and give every owner its turn (slow consumers, retention by time, groups).
void Core::housekeeping() {
  ChainViewPtr view = snapshots_.current();
  close_sessionless(clock_.now_ms(), (view ? view->params : Params{}).session_handshake_timeout_ms);
  if (view)
    for (auto& [stream_id, o] : owners_)
      at_owner(*o, [params = view->params](StreamOwner& owner) { owner.housekeeping(params); });
  housekeeping_timer_.expires_after(kHousekeeping);
  housekeeping_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) housekeeping();
  });
}

void Core::drain() {
  for (auto& [id, o] : owners_) at_owner(*o, [](StreamOwner& owner) { owner.drain(); });
}

bool Core::idle() const {
  if (!loading_.empty()) return false;
  for (const auto& [id, o] : owners_)
    if (!ask(*o, [](StreamOwner& owner) { return owner.idle(); })) return false;
  return true;
}

std::optional<std::vector<DeadLetter>> Core::dead_letters(const Bytes32& stream_id, GroupId group_id,
                                                          Sequence after, std::size_t limit) {
  StreamOwner* o = owner_now(stream_id);
  if (!o) return std::nullopt;
  return ask(*o, [&](StreamOwner& owner) { return owner.dead_letters(group_id, after, limit); });
}

std::optional<std::size_t> Core::redrive(const Bytes32& stream_id, GroupId group_id) {
  StreamOwner* o = owner_now(stream_id);
  if (!o) return std::nullopt;
  return ask(*o, [&](StreamOwner& owner) { return owner.redrive(group_id); });
}

std::optional<std::vector<GroupReport>> Core::group_reports(const Bytes32& stream_id) {
  StreamOwner* o = owner_now(stream_id);
  if (!o) return std::nullopt;
  return ask(*o, [](StreamOwner& owner) { return owner.group_reports(); });
}

}  // namespace cowboy::cbqs::broker
