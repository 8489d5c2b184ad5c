// Cursor subscriptions (§11.2, §11.3; docs/protocol.md §K, §L): byte credit,
// CreditShort, CursorProgress, and a round-robin pump that gives every ready
// subscription at most one Delivery per round (the starvation bound).
#include "cbqs/broker/auth.h"
#include "cbqs/broker/core.h"
#include "cbqs/wire/sizes.h"

namespace cowboy::cbqs::broker {

namespace {
constexpr int kMaxRounds = 4'096;           // per pump call; the rest is rescheduled
constexpr int kMaxSkipsPerVisit = 1'024;    // out-of-scope records passed over per visit
constexpr std::uint64_t kRetryMs = 5;
constexpr std::size_t kReadAheadRecords = 512;       // a backlog is read this many records per store scan
constexpr std::size_t kReadAheadBytes = 1 << 20;     // or this many payload bytes
constexpr std::uint64_t kMaxDeliveryFrame = 1 << 16;  // a pacing wait long enough for a large Delivery
constexpr auto kHousekeeping = std::chrono::seconds(1);

std::uint64_t progress_lane(const LaneScope& scope) {
  if (const auto* e = std::get_if<LaneScopeExact>(&scope)) return e->lane_id;
  return 0;
}
}  // namespace

void Core::subscribe(ConnectionId id, Session& s, const Bytes32& session_id, StreamSlot& sl,
                     const Bytes32& request_id, const req::Subscribe& r) {
  const auto& cursor = std::get<SourceCursor>(r.source);
  auto scope = intersect(cursor.lane_scope, s.grant.lane_scope);
  if (!scope) return send_error(id, request_id, ErrorCode::kLaneNotInScope);
  if (s.subscriptions.contains(request_id)) return send_error(id, request_id, ErrorCode::kSubscriptionExists);
  if (r.initial_credit_bytes > config_.credit_cap) return send_error(id, request_id, ErrorCode::kCreditOverflow);

  std::uint64_t head = sl.state.durable_head();
  std::uint64_t start = head + 1;
  if (const auto* at = std::get_if<StartAt>(&cursor.start))
    start = std::max({at->sequence, std::uint64_t{1}, sl.state.floor()});
  Subscription sub{id, session_id, request_id, *scope, start, r.initial_credit_bytes, false, start <= head, 0, {}, 0, false};
  sl.subscriptions.push_back(sub);
  s.subscriptions.insert(request_id);
  send(id, Response{request_id, resp::CursorProgress{request_id, progress_lane(*scope), start - 1}});
  if (!sub.replaying)  // nothing to replay: caught up at once, never going backwards (docs/protocol.md §L)
    send(id, Response{request_id, resp::CursorProgress{request_id, progress_lane(*scope), std::max(head, start - 1)}});
  pump(sl.state.stream_id());
}

Core::Subscription* Core::find_subscription(StreamSlot& sl, ConnectionId id, const Session& s,
                                            const Bytes32& subscription_id) {
  if (!s.subscriptions.contains(subscription_id)) return nullptr;  // another session's is not revealed
  for (auto& sub : sl.subscriptions)
    if (sub.connection == id && sub.id == subscription_id) return &sub;
  return nullptr;
}

void Core::remove_subscription(StreamSlot& sl, std::list<Subscription>::iterator it) {
  if (it->group) {
    auto g = sl.groups.find(*it->group);
    const GroupConfigV2* config = sl.state.group(*it->group);
    if (g != sl.groups.end() && config)
      g->second.release_holder(it->holder, *config, clock_.now_ms(), sl.timeline, sl.journal);
  }
  if (auto conn = connections_.find(it->connection); conn != connections_.end())
    if (auto s = conn->second.sessions.find(it->session_id); s != conn->second.sessions.end())
      s->second.subscriptions.erase(it->id);
  sl.subscriptions.erase(it);
}

void Core::add_credit(ConnectionId id, Session& s, StreamSlot& sl, const Bytes32& request_id,
                      const req::AddCredit& r) {
  Subscription* sub = find_subscription(sl, id, s, r.subscription_id);
  if (!sub) return send_error(id, request_id, ErrorCode::kUnknownSubscription);
  if (r.credit_bytes > config_.credit_cap - sub->credit) return send_error(id, request_id, ErrorCode::kCreditOverflow);
  sub->credit += r.credit_bytes;
  sub->short_sent = false;  // if still short after this, say so once more
  send(id, Response{request_id, resp::Ok{}});
  pump(sl.state.stream_id());
}

void Core::unsubscribe(ConnectionId id, Session& s, StreamSlot& sl, const Bytes32& request_id,
                       const req::Unsubscribe& r) {
  Subscription* sub = find_subscription(sl, id, s, r.subscription_id);
  if (!sub) return send_error(id, request_id, ErrorCode::kUnknownSubscription);
  auto it = std::find_if(sl.subscriptions.begin(), sl.subscriptions.end(), [&](const auto& x) { return &x == sub; });
  remove_subscription(sl, it);
  send(id, Response{request_id, resp::Ok{}});
  pump(sl.state.stream_id());
}

void Core::drop_subscriptions(ConnectionId id, const Bytes32& session_id) {
  for (auto& [stream_id, sl] : streams_) {
    bool removed = false;
    for (auto it = sl.subscriptions.begin(); it != sl.subscriptions.end();) {
      auto next = std::next(it);
      if (it->connection == id && it->session_id == session_id) {
        remove_subscription(sl, it);
        removed = true;
      }
      it = next;
    }
    if (removed) pump(stream_id);
  }
}

void Core::advance_retention(StreamSlot& sl, const Params& params) {
  if (sl.committing || store_failed_) return;
  auto drop = sl.state.advance_floor(params, clock_.now_ms());
  if (drop.empty()) return;
  // Cycles and dead letters die with their records, in the same unsynced write:
  // one lost in a crash is below the floor at the next load, which deletes it.
  for (auto& [group_id, g] : sl.groups) g.drop_below(sl.state.floor(), drop);
  if (!store_.write(drop, store::Sync::kNo)) fail_store("a retention write failed");
  while (!sl.recent.empty() && sl.recent.front().sequence < sl.state.floor()) sl.recent.pop_front();
  if (!sl.read_ahead.empty() && sl.read_ahead.front().sequence < sl.state.floor()) sl.read_ahead.clear();
}

std::optional<Record> Core::record_at(StreamSlot& sl, std::uint64_t sequence) {
  auto within = [&](const auto& records) {
    return !records.empty() && sequence >= records.front().sequence && sequence <= records.back().sequence;
  };
  // Both hold consecutive sequences.
  if (within(sl.recent)) return sl.recent[sequence - sl.recent.front().sequence];
  if (!within(sl.read_ahead)) {
    auto read = sl.state.read_range(store_, sequence, kReadAheadRecords, kReadAheadBytes);
    if (!read || read->empty()) return std::nullopt;
    sl.read_ahead = std::move(*read);
  }
  return sl.read_ahead[sequence - sl.read_ahead.front().sequence];
}

void Core::pump(const Bytes32& stream_id) {
  StreamSlot& sl = streams_.at(stream_id);
  ChainViewPtr view = snapshots_.current();
  const std::uint64_t head = sl.state.durable_head(), floor = sl.state.floor(), now = clock_.now_ms();
  run_timeline(sl, now);
  if (view && !sl.subscriptions.empty()) deliver(stream_id, sl, *view, head, floor, now);
  flush_journal(stream_id);
  arm_timeline(stream_id);
}

void Core::deliver(const Bytes32& stream_id, StreamSlot& sl, const ChainView& view, std::uint64_t head,
                   std::uint64_t floor, std::uint64_t now) {
  sl.delivered_rate.set_rate(sl.state.effective_settings(view.params).max_delivered_bytes_per_sec);
  const StreamRecordV2* stream = view.stream(stream_id);
  const bool solvent = stream && stream_solvent(view, *stream);
  bool retry = false;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool progress = false;
    for (auto& sub : sl.subscriptions) {
      if (!sub.group) {
        if (sub.next_sequence < floor) sub.next_sequence = floor;  // retention passed a slow reader
        if (sub.next_sequence > head) continue;
      }
      auto conn = connections_.find(sub.connection);
      if (conn == connections_.end()) continue;
      if (conn->second.peer->queued_bytes() > config_.peer_queue_limit) {
        retry = true;
        continue;
      }
      if (sub.group) {
        Visit v = deliver_group(sl, sub, solvent, now);
        if (v == Visit::kPaced) {
          schedule_pump(stream_id, std::max<std::uint64_t>(1, sl.delivered_rate.wait_ms(kMaxDeliveryFrame, now)));
          return;
        }
        progress |= v == Visit::kProgress;
        continue;
      }
      std::optional<Record> record;
      for (int skips = 0; sub.next_sequence <= head && skips < kMaxSkipsPerVisit; ++skips) {
        record = record_at(sl, sub.next_sequence);
        if (record && lane_in_scope(sub.scope, record->lane_id)) break;
        record.reset();
        ++sub.next_sequence;
        progress = true;
      }
      if (!record) continue;
      std::uint64_t frame_bytes = sizes::delivery_frame_bytes(record->payload.size(), false);
      if (frame_bytes > sub.credit) {
        if (!sub.short_sent) {
          send(sub.connection, DeliveryState{sub.session_id, sub.id, CreditShort{static_cast<std::uint32_t>(frame_bytes)}});
          sub.short_sent = true;
        }
        if (sub.stalled_since_ms == 0) sub.stalled_since_ms = std::max<std::uint64_t>(now, 1);
        continue;
      }
      if (!sl.delivered_rate.take(frame_bytes, now)) {
        schedule_pump(stream_id, std::max<std::uint64_t>(1, sl.delivered_rate.wait_ms(frame_bytes, now)));
        return;
      }
      send(sub.connection, Delivery{sub.session_id, sub.id, std::nullopt, RecordHeaderV2{stream_id, record->lane_id},
                                    record->sequence, std::move(record->payload)});
      sub.credit -= frame_bytes;
      sub.stalled_since_ms = 0;
      ++sub.next_sequence;
      ++metrics_.deliveries;
      metrics_.delivered_bytes += frame_bytes;
      progress = true;
    }
    if (!progress) break;
    if (round + 1 == kMaxRounds) retry = true;
  }
  for (auto& sub : sl.subscriptions) {
    if (sub.replaying && sub.next_sequence > head) {  // replay caught up with the committed head
      sub.replaying = false;
      send(sub.connection, Response{sub.id, resp::CursorProgress{sub.id, progress_lane(sub.scope), head}});
    }
  }
  if (retry) schedule_pump(stream_id, kRetryMs);
}

void Core::schedule_pump(const Bytes32& stream_id, std::uint64_t delay_ms) {
  StreamSlot& sl = streams_.at(stream_id);
  sl.pump_timer->expires_after(std::chrono::milliseconds(delay_ms));
  sl.pump_timer->async_wait([this, stream_id](const boost::system::error_code& ec) {
    if (!ec) pump(stream_id);
  });
}

// Once a second: close connections that hold no session (close_sessionless),
// close subscriptions stalled past cbqs.slow_consumer_timeout_ms,
// advance retention floors by time on streams nobody is appending to, and give
// groups a turn (a snapshot refresh may have made an account solvent).
void Core::housekeeping() {
  ChainViewPtr current = snapshots_.current();
  close_sessionless(clock_.now_ms(), (current ? current->params : Params{}).session_handshake_timeout_ms);
  if (ChainViewPtr view = current) {
    std::uint64_t now = clock_.now_ms();
    for (auto& [stream_id, sl] : streams_) {
      for (auto it = sl.subscriptions.begin(); it != sl.subscriptions.end();) {
        auto next = std::next(it);
        if (it->stalled_since_ms != 0 && now - it->stalled_since_ms >= view->params.slow_consumer_timeout_ms) {
          send_error(it->connection, it->id, ErrorCode::kSlowConsumer);
          remove_subscription(sl, it);
        }
        it = next;
      }
      advance_retention(sl, view->params);
      // Also resumes lease issuing for an account that became solvent again (§C).
      if (!sl.groups.empty()) pump(stream_id);
    }
  }
  housekeeping_timer_.expires_after(kHousekeeping);
  housekeeping_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) housekeeping();
  });
}

}  // namespace cowboy::cbqs::broker
