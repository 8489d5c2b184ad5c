// Consumer groups in the owner (§9.2; docs/protocol.md §O): Group
// subscriptions, lease actions and the stream's timeline.
//
// Every group change (a lease issued, an Ack, a Nack, a Reject, an expiry that
// terminates, a redrive) goes into the next write (a first lease as the
// frontier's move and an Ack as an entry of the write's ack list, cycles.h); the frames that reveal
// those changes (Delivery, the Ok of a lease action) are released with it
// (commit.cc). So a lease a client saw has its attempt counted on disk, and an
// Ok'd Ack survives a crash.
#include <boost/asio/post.hpp>

#include "cbqs/broker/auth.h"
#include "cbqs/broker/error_frame.h"
#include "cbqs/broker/stream/owner.h"
#include "cbqs/wire/sizes.h"

namespace cowboy::cbqs::broker {

namespace {
constexpr int kMaxExpiriesPerVisit = 1'024;  // cycles found EXPIRED while looking for one to lease
}

GroupCycles* StreamOwner::group_runtime(GroupId group_id) {
  if (auto it = groups_.find(group_id); it != groups_.end()) return &it->second;
  const GroupConfigV2* config = state_.group(group_id);
  if (!config) return nullptr;
  store::WriteBatch repair;
  const LaneId lane = config->lane_id;
  auto lane_records = [&](std::uint64_t from)
      -> Result<std::optional<std::pair<std::uint64_t, std::uint64_t>>, store::StoreError> {
    std::optional<Sequence> next = state_.next_in_lane(lane, Sequence{from});
    if (!next) return std::optional<std::pair<std::uint64_t, std::uint64_t>>{};
    std::optional<std::uint64_t> at = state_.committed_at(next->value);
    if (!at) return Err{store::StoreError::kCorrupt};
    return std::optional{std::pair{next->value, *at}};
  };
  auto loaded = GroupCycles::load(context_.store, stream_id(), *config, state_.floor(), context_.clock.now_ms(),
                                  timeline_, lane_records, repair);
  if (!loaded) return nullptr;
  changes_.append(std::move(repair));
  return &groups_.emplace(group_id, std::move(*loaded)).first->second;
}

void StreamOwner::subscribe_group(const Caller& caller, const RequestId& request_id, const req::Subscribe& r,
                                  const SourceGroup& source) {
  const ConnectionId id = caller.connection;
  const SubscriptionId sub_id{request_id.value};  // a subscription is named by its Subscribe's request id
  if (!lane_in_scope(caller.grant.lane_scope, source.lane_id))
    return send_error(id, request_id, ErrorCode::kLaneNotInScope);
  if (!group_in_scope(caller.grant.group_scope, source.group_id))
    return send_error(id, request_id, ErrorCode::kGroupNotInScope);
  const GroupConfigV2* config = state_.group(source.group_id);
  if (!config || config->lane_id != source.lane_id) return send_error(id, request_id, ErrorCode::kUnknownGroup);
  if (find_subscription(caller, sub_id)) return send_error(id, request_id, ErrorCode::kSubscriptionExists);
  if (r.initial_credit_bytes > context_.credit_cap) return send_error(id, request_id, ErrorCode::kCreditOverflow);
  if (!group_runtime(source.group_id))
    return send_error(id, request_id, ErrorCode::kUnavailable, "the group's state cannot be read");

  subscriptions_.push_back(Subscription{id, caller.session_id, sub_id, LaneScopeExact{source.lane_id}, 0,
                                        r.initial_credit_bytes, false, false, 0, source.group_id, next_holder_++,
                                        false});
  release(id, Response{request_id.value, resp::Ok{}});
  pump();
}

void StreamOwner::lease_action(const Caller& caller, const RequestId& request_id, const LeaseAction& action) {
  const ConnectionId id = caller.connection;
  const auto& [subscription_id, lease] = std::visit(
      [](const auto& a) { return std::pair{SubscriptionId{a.subscription_id}, LeaseId{a.lease}}; }, action);
  Subscription* sub = find_subscription(caller, subscription_id);
  if (!sub) return send_error(id, request_id, ErrorCode::kUnknownSubscription);
  const GroupConfigV2* config = sub->group ? state_.group(*sub->group) : nullptr;
  if (!config) return send_error(id, request_id, ErrorCode::kLeaseStale);  // a Cursor subscription has no leases
  // Scope by intersection on lease actions too: the lease's lane, then its group.
  if (!lane_in_scope(caller.grant.lane_scope, config->lane_id))
    return send_error(id, request_id, ErrorCode::kLaneNotInScope);
  if (!group_in_scope(caller.grant.group_scope, config->group_id))
    return send_error(id, request_id, ErrorCode::kGroupNotInScope);
  GroupCycles* g = group_runtime(config->group_id);
  if (!g) return send_error(id, request_id, ErrorCode::kUnavailable, "the group's state cannot be read");
  std::uint64_t now = context_.clock.now_ms();
  run_timeline(now);  // expiries that came due are applied before the action is judged
  pump_soon();        // after this burst of requests: deliver into freed slots, commit
  if (auto e = g->check_lease(lease, sub->holder, now)) return send_error(id, request_id, *e);
  if (failed()) return send_error(id, request_id, ErrorCode::kUnavailable, "storage failed");

  std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, req::Ack>) g->ack(lease, *config, now, timeline_, changes_);
        else if constexpr (std::is_same_v<T, req::Nack>) g->nack(lease, *config, now, timeline_, changes_);
        else if constexpr (std::is_same_v<T, req::Reject>) g->reject(lease, *config, now, timeline_, changes_);
        else g->extend(lease, a.extend_ms, *config, now, timeline_);  // nothing to write: no lease outlives the process (§O)
      },
      action);
  release(id, Response{request_id.value, resp::Ok{}});
}

// Lease actions arrive in bursts (one read can carry many Acks): one pump after
// the burst fills the freed slots in one pass and one write.
void StreamOwner::pump_soon() {
  if (pump_posted_) return;
  pump_posted_ = true;
  boost::asio::post(context_.home, [this, alive = std::weak_ptr<bool>(alive_)] {
    if (!alive.lock()) return;
    pump_posted_ = false;
    pump();
  });
}

void StreamOwner::group_deleted(GroupId group_id) {
  for (auto it = subscriptions_.begin(); it != subscriptions_.end();) {
    if (it->group != group_id) {
      ++it;
      continue;
    }
    // After any Delivery of it still waiting for its write.
    release(it->connection, error_frame(it->id.value, ErrorCode::kUnknownGroup, "the group was deleted"));
    it = subscriptions_.erase(it);
  }
  groups_.erase(group_id);
}

StreamOwner::Visit StreamOwner::deliver_group(Subscription& sub, bool solvent, std::uint64_t now) {
  const GroupConfigV2* config = state_.group(*sub.group);
  GroupCycles* g = group_runtime(*sub.group);
  if (!config || !g || !solvent || failed()) return Visit::kNothing;  // §6.2: no new lease while insolvent
  Visit visit = Visit::kNothing;
  for (int expiries = 0; expiries < kMaxExpiriesPerVisit; ++expiries) {
    std::optional<Sequence> seq = g->next_ready();
    if (!seq) seq = state_.next_in_lane(config->lane_id, g->frontier());
    if (!seq) return visit;
    if (!g->has_room(*config, sub.holder)) {
      if (!sub.backpressure_sent) {  // once per stall; deliveries resume as holders drain
        release(sub.connection, error_frame(sub.id.value, ErrorCode::kBackpressure));
        sub.backpressure_sent = true;
      }
      return visit;
    }
    std::optional<Record> record = record_at(seq->value);
    if (!record) return visit;
    std::uint64_t frame_bytes = sizes::delivery_frame_bytes(record->payload.size(), true);
    if (frame_bytes > sub.credit) {
      if (!sub.short_sent) {
        release(sub.connection,
                DeliveryState{sub.session_id.value, sub.id.value, CreditShort{static_cast<std::uint32_t>(frame_bytes)}});
        sub.short_sent = true;
      }
      if (sub.stalled_since_ms == 0) sub.stalled_since_ms = std::max<std::uint64_t>(now, 1);
      return visit;
    }
    if (!delivered_rate_.take(frame_bytes, now)) return Visit::kPaced;
    LeaseId lease;
    context_.entropy.fill(lease.value);
    auto issued = g->issue(*seq, record->committed_at_ms, sub.holder, *config, now, lease, timeline_, changes_);
    if (!issued) {  // EXPIRED instead (deadline); look at the next one
      visit = Visit::kProgress;
      continue;
    }
    release(sub.connection, Delivery{sub.session_id.value, sub.id.value, issued->lease.value, RecordHeaderV2{stream_id(), LaneId{record->lane_id}},
                                     Sequence{record->sequence}, std::move(record->payload)});
    sub.credit -= frame_bytes;
    sub.stalled_since_ms = 0;
    // One Backpressure per episode: the next only after in-flight counts fell to half their limits.
    if (g->in_flight() <= config->max_in_flight / 2 && g->in_flight_of(sub.holder) <= config->max_in_flight_per_holder / 2)
      sub.backpressure_sent = false;
    ++counters_.deliveries;
    counters_.delivered_bytes += frame_bytes;
    return Visit::kProgress;
  }
  return visit;
}

void StreamOwner::run_timeline(std::uint64_t now) {
  for (const auto& entry : timeline_.take_due(now)) {
    auto g = groups_.find(entry.group_id);
    const GroupConfigV2* config = state_.group(entry.group_id);
    if (g != groups_.end() && config) g->second.on_due(entry, *config, now, timeline_, changes_);
  }
}

void StreamOwner::arm_timeline() {
  std::optional<std::uint64_t> due = timeline_.next_due();
  if (!due || *due >= timeline_armed_ms_) return;
  timeline_armed_ms_ = *due;
  std::uint64_t now = context_.clock.now_ms();
  timeline_timer_.expires_after(std::chrono::milliseconds(*due > now ? *due - now : 0));
  timeline_timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](const boost::system::error_code& ec) {
    if (ec || !alive.lock()) return;  // re-armed earlier, or shutting down
    timeline_armed_ms_ = UINT64_MAX;
    pump();
  });
}

}  // namespace cowboy::cbqs::broker
