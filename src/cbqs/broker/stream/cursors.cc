// Cursor subscriptions (§11.2, §11.3; docs/protocol.md §K, §L): byte credit,
// CreditShort, CursorProgress, and a round-robin pump that gives every ready
// subscription at most one Delivery per round (the starvation bound).
#include "cbqs/broker/auth.h"
#include "cbqs/broker/stream/owner.h"
#include "cbqs/wire/sizes.h"

namespace cowboy::cbqs::broker {

namespace {
constexpr int kMaxRounds = 4'096;           // per pump call; the rest is rescheduled
constexpr int kMaxSkipsPerVisit = 1'024;    // out-of-scope records passed over per visit
constexpr std::uint64_t kRetryMs = 5;
constexpr std::size_t kReadAheadRecords = 512;       // a backlog is read this many records per store scan
constexpr std::size_t kReadAheadBytes = 1 << 20;     // or this many payload bytes
constexpr std::uint64_t kMaxDeliveryFrame = 1 << 16;  // a pacing wait long enough for a large Delivery

LaneId progress_lane(const LaneScope& scope) {
  if (const auto* e = std::get_if<LaneScopeExact>(&scope)) return e->lane_id;
  return LaneId{0};
}
}  // namespace

void StreamOwner::subscribe(const Caller& caller, const RequestId& request_id, const req::Subscribe& r) {
  const ConnectionId id = caller.connection;
  const SubscriptionId sub_id{request_id.value};  // a subscription is named by its Subscribe's request id
  const auto& cursor = std::get<SourceCursor>(r.source);
  auto scope = intersect(cursor.lane_scope, caller.grant.lane_scope);
  if (!scope) return send_error(id, request_id, ErrorCode::kLaneNotInScope);
  if (find_subscription(caller, sub_id)) return send_error(id, request_id, ErrorCode::kSubscriptionExists);
  if (r.initial_credit_bytes > context_.credit_cap) return send_error(id, request_id, ErrorCode::kCreditOverflow);

  std::uint64_t head = state_.durable_head();
  std::uint64_t start = head + 1;
  if (const auto* at = std::get_if<StartAt>(&cursor.start))
    start = std::max({at->sequence.value, std::uint64_t{1}, state_.floor()});
  Subscription sub{id, caller.session_id, sub_id, *scope, start, r.initial_credit_bytes, false, start <= head, 0,
                   {}, 0, false};
  subscriptions_.push_back(sub);
  send(id, Response{request_id.value, resp::CursorProgress{sub_id.value, progress_lane(*scope), Sequence{start - 1}}});
  if (!sub.replaying)  // nothing to replay: caught up at once, never going backwards (docs/protocol.md §L)
    send(id, Response{request_id.value,
                      resp::CursorProgress{sub_id.value, progress_lane(*scope), Sequence{std::max(head, start - 1)}}});
  pump();
}

// Another session's subscription is not revealed: it is as unknown as none.
StreamOwner::Subscription* StreamOwner::find_subscription(const Caller& caller, const SubscriptionId& subscription_id) {
  for (auto& sub : subscriptions_)
    if (sub.connection == caller.connection && sub.session_id == caller.session_id && sub.id == subscription_id)
      return &sub;
  return nullptr;
}

void StreamOwner::remove_subscription(std::list<Subscription>::iterator it) {
  if (it->group) {
    auto g = groups_.find(*it->group);
    const GroupConfigV2* config = state_.group(*it->group);
    if (g != groups_.end() && config)
      g->second.release_holder(it->holder, *config, context_.clock.now_ms(), timeline_, changes_);
  }
  subscriptions_.erase(it);
}

void StreamOwner::add_credit(const Caller& caller, const RequestId& request_id, const req::AddCredit& r) {
  const ConnectionId id = caller.connection;
  Subscription* sub = find_subscription(caller, SubscriptionId{r.subscription_id});
  if (!sub) return send_error(id, request_id, ErrorCode::kUnknownSubscription);
  if (r.credit_bytes > context_.credit_cap - sub->credit) return send_error(id, request_id, ErrorCode::kCreditOverflow);
  sub->credit += r.credit_bytes;
  sub->short_sent = false;  // if still short after this, say so once more
  send(id, Response{request_id.value, resp::Ok{}});
  pump();
}

void StreamOwner::unsubscribe(const Caller& caller, const RequestId& request_id, const req::Unsubscribe& r) {
  const ConnectionId id = caller.connection;
  Subscription* sub = find_subscription(caller, SubscriptionId{r.subscription_id});
  if (!sub) return send_error(id, request_id, ErrorCode::kUnknownSubscription);
  auto it = std::find_if(subscriptions_.begin(), subscriptions_.end(), [&](const auto& x) { return &x == sub; });
  remove_subscription(it);
  send(id, Response{request_id.value, resp::Ok{}});
  pump();
}

std::optional<Record> StreamOwner::record_at(std::uint64_t sequence) {
  auto within = [&](const auto& records) {
    return !records.empty() && sequence >= records.front().sequence && sequence <= records.back().sequence;
  };
  // Both hold consecutive sequences.
  if (within(recent_)) return recent_[sequence - recent_.front().sequence];
  if (!within(read_ahead_)) {
    auto read = state_.read_range(context_.store, sequence, kReadAheadRecords, kReadAheadBytes);
    if (!read || read->empty()) return std::nullopt;
    read_ahead_ = std::move(*read);
  }
  return read_ahead_[sequence - read_ahead_.front().sequence];
}

void StreamOwner::pump() {
  ChainViewPtr view = context_.views.current();
  const std::uint64_t head = state_.durable_head(), floor = state_.floor(), now = context_.clock.now_ms();
  run_timeline(now);
  if (view && !subscriptions_.empty()) deliver(*view, head, floor, now);
  commit();
  arm_timeline();
}

void StreamOwner::deliver(const ChainView& view, std::uint64_t head, std::uint64_t floor, std::uint64_t now) {
  delivered_rate_.set_rate(state_.effective_settings(view.params).max_delivered_bytes_per_sec);
  const StreamRecordV2* stream = view.stream(stream_id());
  const bool solvent = stream && stream_solvent(view, *stream);
  bool retry = false;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool progress = false;
    for (auto& sub : subscriptions_) {
      if (!sub.group) {
        if (sub.next_sequence < floor) sub.next_sequence = floor;  // retention passed a slow reader
        if (sub.next_sequence > head) continue;
      }
      Outbound::Room room = context_.out.room(sub.connection);
      if (room == Outbound::Room::kGone) continue;
      if (room == Outbound::Room::kBusy) {
        retry = true;
        continue;
      }
      if (sub.group) {
        Visit v = deliver_group(sub, solvent, now);
        if (v == Visit::kPaced) {
          schedule_pump(std::max<std::uint64_t>(1, delivered_rate_.wait_ms(kMaxDeliveryFrame, now)));
          return;
        }
        progress |= v == Visit::kProgress;
        continue;
      }
      std::optional<Record> record;
      for (int skips = 0; sub.next_sequence <= head && skips < kMaxSkipsPerVisit; ++skips) {
        record = record_at(sub.next_sequence);
        if (record && lane_in_scope(sub.scope, LaneId{record->lane_id})) break;
        record.reset();
        ++sub.next_sequence;
        progress = true;
      }
      if (!record) continue;
      std::uint64_t frame_bytes = sizes::delivery_frame_bytes(record->payload.size(), false);
      if (frame_bytes > sub.credit) {
        if (!sub.short_sent) {
          send(sub.connection, DeliveryState{sub.session_id.value, sub.id.value, CreditShort{static_cast<std::uint32_t>(frame_bytes)}});
          sub.short_sent = true;
        }
        if (sub.stalled_since_ms == 0) sub.stalled_since_ms = std::max<std::uint64_t>(now, 1);
        continue;
      }
      if (!delivered_rate_.take(frame_bytes, now)) {
        schedule_pump(std::max<std::uint64_t>(1, delivered_rate_.wait_ms(frame_bytes, now)));
        return;
      }
      send(sub.connection, Delivery{sub.session_id.value, sub.id.value, std::nullopt, RecordHeaderV2{stream_id(), LaneId{record->lane_id}},
                                    Sequence{record->sequence}, std::move(record->payload)});
      sub.credit -= frame_bytes;
      sub.stalled_since_ms = 0;
      ++sub.next_sequence;
      ++counters_.deliveries;
      counters_.delivered_bytes += frame_bytes;
      progress = true;
    }
    if (!progress) break;
    if (round + 1 == kMaxRounds) retry = true;
  }
  for (auto& sub : subscriptions_) {
    if (sub.replaying && sub.next_sequence > head) {  // replay caught up with the committed head
      sub.replaying = false;
      send(sub.connection, Response{sub.id.value, resp::CursorProgress{sub.id.value, progress_lane(sub.scope), Sequence{head}}});
    }
  }
  if (retry) schedule_pump(kRetryMs);
}

void StreamOwner::schedule_pump(std::uint64_t delay_ms) {
  pump_timer_.expires_after(std::chrono::milliseconds(delay_ms));
  pump_timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](const boost::system::error_code& ec) {
    if (!ec && alive.lock()) pump();
  });
}

}  // namespace cowboy::cbqs::broker
