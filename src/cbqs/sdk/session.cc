// The connection's life on the io thread: dial (§11.4 checked addresses only),
// TLS, WebSocket, OpenSession/CompleteSession, then requests and deliveries;
// on a drop, backoff and do it all again, resubscribing and resending appends.

#include "cbqs/client/request_ids.h"
#include "cbqs/sdk/impl.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "cbqs/wire/limits.h"
#include "cbqs/wire/sizes.h"

namespace cowboy::cbqs::sdk {

using tcp = asio::ip::tcp;
using client::request_id;
using client::request_number;

namespace {

// A refusal no retry can cure: the grant, the proof or the stream itself.
bool permanent_refusal(std::uint16_t code) {
  return (code >= 300 && code < 400) || code == static_cast<std::uint16_t>(ErrorCode::kProofMismatch) ||
         code == static_cast<std::uint16_t>(ErrorCode::kBadProofSignature);
}

}  // namespace

void Client::Impl::dial() {
  state = State::kDialing;
  ++epoch;
  auto addresses = client::resolve_checked(endpoint.host, options.allow_private_destinations);
  if (!addresses) return fail_permanently(client_error(Error::Kind::kRefusedDestination, addresses.error()));
  std::vector<tcp::endpoint> targets;
  for (const auto& a : *addresses) {
    boost::system::error_code ec;
    auto address = asio::ip::make_address(a, ec);
    if (!ec) targets.emplace_back(address, endpoint.port);
  }
  std::uint64_t e = epoch;
  // One bound for the whole attempt; a peer that upgrades but never opens the
  // session must not hold the client forever.
  open_timer.expires_after(options.connect_timeout);
  open_timer.async_wait([this, e](boost::system::error_code ec) {
    if (!ec && e == epoch && (state == State::kDialing || state == State::kOpening))
      lost(client_error(Error::Kind::kTimeout, "no session within the connect timeout"));
  });
  dialing = std::make_shared<tcp::socket>(io);
  // Only addresses resolve_checked() approved are dialed: no second lookup.
  asio::async_connect(*dialing, targets, [this, socket = dialing, e](boost::system::error_code ec, const tcp::endpoint&) {
    if (e != epoch) return;
    dialing.reset();
    if (ec) return lost(client_error(Error::Kind::kDisconnected, "cannot connect to " + options.endpoint + ": " + ec.message()));
    ws = std::make_shared<Channel>(std::move(*socket), tls.native_handle(), *this, e,
                                   net::WssChannel::Options{limits::kMaxFrameBytes, options.connect_timeout});
    // A pinned certificate replaces the name check; either way TLS verifies.
    ws->set_server_name(options.server_name.empty() ? endpoint.host : options.server_name,
                        options.pinned_certificate.empty());
    // Any answer but 101 fails the upgrade: redirects are never followed (§11.4).
    ws->connect(endpoint.host + ":" + std::to_string(endpoint.port), endpoint.path);
  });
}

void Channel::on_open() { owner_.on_upgraded(epoch_); }
void Channel::on_message(ByteView message) { owner_.on_message(epoch_, message); }
void Channel::on_closed(const std::string& why) {
  if (epoch_ == owner_.epoch) owner_.lost(client_error(Error::Kind::kDisconnected, why));
}

void Client::Impl::on_upgraded(std::uint64_t e) {
  if (e != epoch) return;
  state = State::kOpening;
  open_number = next_number++;
  send_frame(encode(CbqsClientFrameV2{OpenSession{request_id(open_number), options.grant}}));
}

void Client::Impl::on_message(std::uint64_t e, ByteView message) {
  if (e != epoch) return;
  auto frame = decode<CbqsServerFrameV2>(message);
  if (!frame) return lost(client_error(Error::Kind::kProtocol, "undecodable server frame"));
  on_frame(*frame);
}

void Client::Impl::send_frame(ByteView frame) {
  if (ws) ws->send(frame);
}

void Client::Impl::on_frame(const CbqsServerFrameV2& f) {
  if (const auto* ch = std::get_if<SessionChallenge>(&f)) {
    if (state != State::kOpening || request_number(ch->request_id) != open_number)
      return lost(client_error(Error::Kind::kProtocol, "an unexpected SessionChallenge"));
    const auto& g = options.grant;
    SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), ch->session_id, ch->challenge, {}};
    sign_proof(proof, options.holder);
    session_id = ch->session_id;
    return send_frame(encode(CbqsClientFrameV2{CompleteSession{request_id(open_number), proof}}));
  }
  if (std::holds_alternative<SessionOpened>(f)) {
    if (state != State::kOpening) return lost(client_error(Error::Kind::kProtocol, "an unexpected SessionOpened"));
    return on_session_opened();
  }
  if (const auto* d = std::get_if<Delivery>(&f)) return deliver(*d);
  if (const auto* ds = std::get_if<DeliveryState>(&f)) {
    // CreditShort: the next record needs more than the window left. Grant it
    // when the user holds no record back (a caught-up marker weighs nothing),
    // so a record larger than the window still flows.
    auto s = subscription_for(ds->subscription_id);
    if (!s) return;
    std::uint64_t needed = std::get<CreditShort>(ds->state).needed_bytes;
    std::lock_guard lock(s->m);
    if (s->buffered_bytes == 0) request(req::AddCredit{ds->subscription_id, needed}, false, nullptr);
    return;
  }
  if (const auto* r = std::get_if<Response>(&f)) {
    std::uint64_t n = request_number(r->request_id);
    if (auto it = pending.find(n); it != pending.end()) {
      auto reply = it->second.take_reply();
      pending.erase(it);
      answer(std::move(reply), r->body);
      return;
    }
    // A later CursorProgress: the replay caught up with the head.
    if (const auto* p = std::get_if<resp::CursorProgress>(&r->body)) {
      if (auto s = subscription_for(p->subscription_id)) {
        std::lock_guard lock(s->m);
        Subscription::Item marker;
        marker.caught_up_marker = true;
        s->buffered.push_back(std::move(marker));
        s->cv.notify_all();
      }
    }
    return;
  }
  const auto& e = std::get<ErrorFrame>(f);
  Error error = broker_error(e);
  if (state == State::kOpening) {  // OpenSession or CompleteSession refused
    if (permanent_refusal(e.code)) return fail_permanently(error);
    return lost(error);
  }
  if (!e.request_id) {  // the session ended (its grant expired)
    return fail_permanently(error);
  }
  std::uint64_t n = request_number(*e.request_id);
  if (auto it = pending.find(n); it != pending.end()) {
    auto reply = it->second.take_reply();
    pending.erase(it);
    answer(std::move(reply), Err{error});
    if (permanent_refusal(e.code)) return fail_permanently(error);  // "the session ended" on a standing check
  }
  auto it = subscriptions.find(n);
  if (it == subscriptions.end() || e.code == static_cast<std::uint16_t>(ErrorCode::kBackpressure))
    return;  // Backpressure clears as holders drain
  auto s = it->second;
  subscriptions.erase(it);
  s->active = false;
  if (e.code == static_cast<std::uint16_t>(ErrorCode::kSlowConsumer)) return resubscribe(s);
  std::lock_guard lock(s->m);
  s->ended = error;
  s->cv.notify_all();
}

void Client::Impl::on_session_opened() {
  state = State::kReady;
  open_timer.cancel();
  failures = 0;
  opened_once = true;
  ready_epoch = epoch;
  ++connects;
  if (!first_session_set) {
    first_session_set = true;
    first_session.set_value(Unit{});
  }
  // Subscriptions first, then requests in the order they were made.
  std::vector<std::shared_ptr<Subscription>> subs;
  for (auto& [n, s] : subscriptions) subs.push_back(s);
  subscriptions.clear();
  for (auto& s : subs) resubscribe(s);
  std::vector<std::uint64_t> numbers;
  for (auto& [n, p] : pending)
    if (p.sent_epoch != epoch) numbers.push_back(n);
  for (auto n : numbers) send_pending(n);
}

void Client::Impl::send_pending(std::uint64_t n) {
  auto& p = pending.at(n);
  p.sent_epoch = epoch;
  // The body moves into the frame to be encoded and back (a resend needs it):
  // copying it would cost an append's payload allocation and copy each time.
  CbqsClientFrameV2 frame{Request{request_id(n), session_id, std::move(p.body)}};
  send_frame(encode(frame));
  p.body = std::move(std::get<Request>(frame).body);
}

void Client::Impl::lost(Error why) {
  if (state == State::kFailed || state == State::kClosed) return;
  drop_connection();
  if (!opened_once) return fail_permanently(why);  // the first connect fails fast, with its reason
  state = State::kWaiting;
  // Requests sent on the lost connection: appends go again, others fail.
  for (auto it = pending.begin(); it != pending.end();) {
    if (it->second.sent_epoch != 0 && !it->second.resend) {
      auto reply = it->second.take_reply();
      it = pending.erase(it);
      answer(std::move(reply), Err{client_error(Error::Kind::kDisconnected, why.message)});
      continue;
    }
    if (it->second.sent_epoch != 0) ++resent_appends;
    it->second.sent_epoch = 0;
    ++it;
  }
  // Leases die with the session: their records come back to the group.
  for (auto& [n, s] : subscriptions) {
    s->active = false;
    s->open_leases.clear();
    if (!s->group) continue;
    std::lock_guard lock(s->m);
    std::erase_if(s->buffered, [&](const Subscription::Item& i) {
      if (i.lease) s->buffered_bytes -= i.frame_bytes;
      return i.lease.has_value();
    });
  }
  auto wait = std::min<double>(static_cast<double>(options.reconnect.max.count()),
                               static_cast<double>(options.reconnect.initial.count()) * std::pow(2.0, failures));
  ++failures;
  std::uniform_real_distribution<double> factor(1 - options.reconnect.jitter, 1 + options.reconnect.jitter);
  retry_timer.expires_after(std::chrono::milliseconds(static_cast<std::int64_t>(wait * factor(jitter_random))));
  retry_timer.async_wait([this](boost::system::error_code ec) {
    if (!ec && state == State::kWaiting) dial();
  });
}

void Client::Impl::drop_connection() {
  ++epoch;  // every handler of the old connection is now stale
  ready_epoch = 0;
  boost::system::error_code ignored;
  if (dialing) dialing->close(ignored);
  dialing.reset();
  if (ws) ws->close();  // its late events carry a stale epoch
  ws.reset();
}

void Client::Impl::fail_permanently(Error why) {
  if (state == State::kClosed) return;
  state = why.kind == Error::Kind::kClosed ? State::kClosed : State::kFailed;
  permanent = why;
  drop_connection();
  retry_timer.cancel();
  extend_timer.cancel();
  open_timer.cancel();
  if (!first_session_set) {
    first_session_set = true;
    first_session.set_value(Err{why});
  }
  auto failed = std::move(pending);
  pending.clear();
  for (auto& [n, p] : failed) answer(p.take_reply(), Err{why});
  for (auto& [n, s] : subscriptions) {
    std::lock_guard lock(s->m);
    s->ended = why;
    s->cv.notify_all();
  }
  subscriptions.clear();
}

std::shared_ptr<Subscription> Client::Impl::subscription_for(const Bytes32& id) {
  auto it = subscriptions.find(request_number(id));
  return it == subscriptions.end() ? nullptr : it->second;
}

void Client::Impl::resubscribe(const std::shared_ptr<Subscription>& s) {
  if (state != State::kReady) return;  // on_session_opened() will
  std::uint64_t credit;
  {
    std::lock_guard lock(s->m);
    if (s->ended) return;
    // What the user has not taken yet still counts against the window.
    credit = s->window > s->buffered_bytes ? s->window - s->buffered_bytes : s->window / 4;
    s->taken_bytes = 0;  // the new Subscribe's credit covers what was taken
  }
  if (auto* cursor = std::get_if<SourceCursor>(&s->source); cursor && s->last_received.value > 0)
    cursor->start = StartAt{Sequence{s->last_received.value + 1}};
  s->returned = 0;
  s->id_number = next_number++;
  s->active = true;
  ++subscribes;
  subscriptions.emplace(s->id_number, s);
  pending.emplace(s->id_number, Pending{req::Subscribe{s->source, credit}, false, 0, Reply{std::move(s->on_subscribed), nullptr, 0}});
  s->on_subscribed = nullptr;
  send_pending(s->id_number);
}

void Client::Impl::deliver(const Delivery& d) {
  auto s = subscription_for(d.subscription_id);
  if (!s) return;
  Subscription::Item item{Record{d.sequence, d.header.lane_id, d.payload}, d.lease, d.subscription_id, epoch,
                          sizes::delivery_frame_bytes(d.payload.size(), d.lease.has_value())};
  if (!s->group) s->last_received = std::max(s->last_received, d.sequence);
  if (d.lease && s->auto_extend) s->open_leases[*d.lease] = std::chrono::steady_clock::now();
  std::lock_guard lock(s->m);
  s->buffered_bytes += item.frame_bytes;
  s->buffered.push_back(std::move(item));
  s->cv.notify_all();
}

}  // namespace cowboy::cbqs::sdk
