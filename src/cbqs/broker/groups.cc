// Consumer groups in the broker (§9.2; docs/protocol.md §O): Group
// subscriptions, lease actions, the stream's timeline and the group journal.
//
// Every group change (a lease issued, an Ack, a Nack, a Reject, an expiry that
// terminates, a redrive) goes into the stream's journal batch; the frames that
// reveal those changes (Delivery, the Ok of a lease action) wait in `deferred`
// until the batch is durable (Sync::kYes on the committer thread). So a lease
// a client saw has its attempt counted on disk, and an Ok'd Ack survives a crash.
#include <boost/asio/post.hpp>

#include "cbqs/broker/auth.h"
#include "cbqs/broker/core.h"
#include "cbqs/wire/sizes.h"

namespace cowboy::cbqs::broker {

namespace {
constexpr int kMaxExpiriesPerVisit = 1'024;  // cycles found EXPIRED while looking for one to lease
}

GroupCycles* Core::group_runtime(StreamSlot& sl, std::uint64_t group_id) {
  if (auto it = sl.groups.find(group_id); it != sl.groups.end()) return &it->second;
  const GroupConfigV2* config = sl.state.group(group_id);
  if (!config) return nullptr;
  store::WriteBatch repair;
  auto loaded = GroupCycles::load(store_, sl.state.stream_id(), *config, sl.state.floor(), clock_.now_ms(),
                                  sl.timeline, repair);
  if (!loaded) return nullptr;
  sl.journal.append(repair);
  return &sl.groups.emplace(group_id, std::move(*loaded)).first->second;
}

void Core::subscribe_group(ConnectionId id, Session& s, const Bytes32& session_id, StreamSlot& sl,
                           const Bytes32& request_id, const req::Subscribe& r, const SourceGroup& source) {
  if (!lane_in_scope(s.grant.lane_scope, source.lane_id)) return send_error(id, request_id, ErrorCode::kLaneNotInScope);
  if (!group_in_scope(s.grant.group_scope, source.group_id))
    return send_error(id, request_id, ErrorCode::kGroupNotInScope);
  const GroupConfigV2* config = sl.state.group(source.group_id);
  if (!config || config->lane_id != source.lane_id) return send_error(id, request_id, ErrorCode::kUnknownGroup);
  if (s.subscriptions.contains(request_id)) return send_error(id, request_id, ErrorCode::kSubscriptionExists);
  if (r.initial_credit_bytes > config_.credit_cap) return send_error(id, request_id, ErrorCode::kCreditOverflow);
  if (!group_runtime(sl, source.group_id))
    return send_error(id, request_id, ErrorCode::kUnavailable, "the group's state cannot be read");

  Subscription sub{id, session_id, request_id, LaneScopeExact{source.lane_id}, 0, r.initial_credit_bytes, false, false,
                   0, source.group_id, next_holder_++, false};
  sl.subscriptions.push_back(sub);
  s.subscriptions.insert(request_id);
  send(id, Response{request_id, resp::Ok{}});
  pump(sl.state.stream_id());
}

void Core::lease_action(ConnectionId id, Session& s, StreamSlot& sl, const Bytes32& request_id,
                        const Bytes32& subscription_id, const Bytes32& lease, LeaseVerb verb, std::uint64_t extend_ms) {
  Subscription* sub = find_subscription(sl, id, s, subscription_id);
  if (!sub) return send_error(id, request_id, ErrorCode::kUnknownSubscription);
  const GroupConfigV2* config = sub->group ? sl.state.group(*sub->group) : nullptr;
  if (!config) return send_error(id, request_id, ErrorCode::kLeaseStale);  // a Cursor subscription has no leases
  // Scope by intersection on lease actions too: the lease's lane, then its group.
  if (!lane_in_scope(s.grant.lane_scope, config->lane_id)) return send_error(id, request_id, ErrorCode::kLaneNotInScope);
  if (!group_in_scope(s.grant.group_scope, config->group_id))
    return send_error(id, request_id, ErrorCode::kGroupNotInScope);
  GroupCycles* g = group_runtime(sl, config->group_id);
  if (!g) return send_error(id, request_id, ErrorCode::kUnavailable, "the group's state cannot be read");
  std::uint64_t now = clock_.now_ms();
  run_timeline(sl, now);  // expiries that came due are applied before the action is judged
  pump_soon(sl);          // after this burst of requests: deliver into freed slots, write the journal
  if (auto e = g->check_lease(lease, sub->holder, now)) return send_error(id, request_id, *e);
  if (store_failed_) return send_error(id, request_id, ErrorCode::kUnavailable, "storage failed");

  switch (verb) {
    case LeaseVerb::kAck: g->ack(lease, *config, now, sl.timeline, sl.journal); break;
    case LeaseVerb::kNack: g->nack(lease, *config, now, sl.timeline, sl.journal); break;
    case LeaseVerb::kReject: g->reject(lease, *config, now, sl.timeline, sl.journal); break;
    case LeaseVerb::kExtend:  // nothing to write: no lease outlives the process (§O)
      g->extend(lease, extend_ms, *config, now, sl.timeline);
      return send(id, Response{request_id, resp::Ok{}});
  }
  sl.deferred.push_back({id, Response{request_id, resp::Ok{}}});
}

// Lease actions arrive in bursts (one read can carry many Acks): one pump after
// the burst fills the freed slots in one pass and one journal write.
void Core::pump_soon(StreamSlot& sl) {
  if (sl.pump_posted) return;
  sl.pump_posted = true;
  boost::asio::post(io_, [this, stream_id = sl.state.stream_id()] {
    streams_.at(stream_id).pump_posted = false;
    pump(stream_id);
  });
}

void Core::group_deleted(StreamSlot& sl, std::uint64_t group_id) {
  for (auto it = sl.subscriptions.begin(); it != sl.subscriptions.end();) {
    if (it->group != group_id) {
      ++it;
      continue;
    }
    // After any Delivery of it still waiting for the journal.
    send_in_order(sl, it->connection, error_frame(it->id, ErrorCode::kUnknownGroup, "the group was deleted"));
    if (auto conn = connections_.find(it->connection); conn != connections_.end())
      if (auto s = conn->second.sessions.find(it->session_id); s != conn->second.sessions.end())
        s->second.subscriptions.erase(it->id);
    it = sl.subscriptions.erase(it);
  }
  sl.groups.erase(group_id);
  // A journal write already on its way may still put keys of the group; delete them again after it.
  const Bytes32& sid = sl.state.stream_id();
  sl.journal.del(stream_key(sid, 'f', group_id));
  for (char kind : {'y', 'x'}) {
    auto [begin, end] = stream_key_range(sid, kind, group_id);
    sl.journal.delete_range(std::move(begin), std::move(end));
  }
  flush_journal(sid);
}

Core::Visit Core::deliver_group(StreamSlot& sl, Subscription& sub, bool solvent, std::uint64_t now) {
  const GroupConfigV2* config = sl.state.group(*sub.group);
  GroupCycles* g = group_runtime(sl, *sub.group);
  if (!config || !g || !solvent || store_failed_) return Visit::kNothing;  // §6.2: no new lease while insolvent
  Visit visit = Visit::kNothing;
  for (int expiries = 0; expiries < kMaxExpiriesPerVisit; ++expiries) {
    std::optional<std::uint64_t> seq = g->next_ready();
    if (!seq) seq = sl.state.next_in_lane(config->lane_id, g->frontier());
    if (!seq) return visit;
    if (!g->has_room(*config, sub.holder)) {
      if (!sub.backpressure_sent) {  // once per stall; deliveries resume as holders drain
        send_in_order(sl, sub.connection, error_frame(sub.id, ErrorCode::kBackpressure));
        sub.backpressure_sent = true;
      }
      return visit;
    }
    std::optional<Record> record = record_at(sl, *seq);
    if (!record) return visit;
    std::uint64_t frame_bytes = sizes::delivery_frame_bytes(record->payload.size(), true);
    if (frame_bytes > sub.credit) {
      if (!sub.short_sent) {
        send_in_order(sl, sub.connection,
                      DeliveryState{sub.session_id, sub.id, CreditShort{static_cast<std::uint32_t>(frame_bytes)}});
        sub.short_sent = true;
      }
      if (sub.stalled_since_ms == 0) sub.stalled_since_ms = std::max<std::uint64_t>(now, 1);
      return visit;
    }
    if (!sl.delivered_rate.take(frame_bytes, now)) return Visit::kPaced;
    auto issued = g->issue(*seq, record->committed_at_ms, sub.holder, *config, now, random32(), sl.timeline, sl.journal);
    if (!issued) {  // EXPIRED instead (deadline); look at the next one
      visit = Visit::kProgress;
      continue;
    }
    sl.deferred.push_back({sub.connection, Delivery{sub.session_id, sub.id, issued->lease,
                                                    RecordHeaderV2{sl.state.stream_id(), record->lane_id},
                                                    record->sequence, std::move(record->payload)}});
    sub.credit -= frame_bytes;
    sub.stalled_since_ms = 0;
    // One Backpressure per episode: the next only after in-flight counts fell to half their limits.
    if (g->in_flight() <= config->max_in_flight / 2 && g->in_flight_of(sub.holder) <= config->max_in_flight_per_holder / 2)
      sub.backpressure_sent = false;
    ++metrics_.deliveries;
    metrics_.delivered_bytes += frame_bytes;
    return Visit::kProgress;
  }
  return visit;
}

void Core::send_in_order(StreamSlot& sl, ConnectionId id, CbqsServerFrameV2 frame) {
  if (sl.journal_writing || !sl.deferred.empty()) sl.deferred.push_back({id, std::move(frame)});
  else send(id, frame);
}

void Core::run_timeline(StreamSlot& sl, std::uint64_t now) {
  for (const auto& entry : sl.timeline.take_due(now)) {
    auto g = sl.groups.find(entry.group_id);
    const GroupConfigV2* config = sl.state.group(entry.group_id);
    if (g != sl.groups.end() && config) g->second.on_due(entry, *config, now, sl.timeline, sl.journal);
  }
}

void Core::arm_timeline(const Bytes32& stream_id) {
  StreamSlot& sl = streams_.at(stream_id);
  std::optional<std::uint64_t> due = sl.timeline.next_due();
  if (!due || *due >= sl.timeline_armed_ms) return;
  sl.timeline_armed_ms = *due;
  std::uint64_t now = clock_.now_ms();
  sl.timeline_timer->expires_after(std::chrono::milliseconds(*due > now ? *due - now : 0));
  sl.timeline_timer->async_wait([this, stream_id](const boost::system::error_code& ec) {
    if (ec) return;  // re-armed earlier, or shutting down
    streams_.at(stream_id).timeline_armed_ms = UINT64_MAX;
    pump(stream_id);
  });
}

void Core::flush_journal(const Bytes32& stream_id) {
  StreamSlot& sl = streams_.at(stream_id);
  if (sl.journal_writing) return;
  for (auto& [group_id, g] : sl.groups) g.write_frontier(sl.journal);
  if (sl.journal.empty()) {
    for (auto& d : sl.deferred) send(d.connection, d.frame);
    sl.deferred.clear();
    return;
  }
  sl.journal_writing = true;
  ++metrics_.journal_writes;
  metrics_.journal_ops += sl.journal.size();
  auto batch = std::make_shared<store::WriteBatch>(std::move(sl.journal));
  sl.journal = store::WriteBatch{};
  auto frames = std::make_shared<std::vector<Deferred>>(std::move(sl.deferred));
  sl.deferred.clear();
  boost::asio::post(committer_, [this, stream_id, batch, frames] {
    bool ok = store_.write(*batch, store::Sync::kYes).ok();
    boost::asio::post(io_, [this, stream_id, frames, ok] { journal_finished(stream_id, std::move(*frames), ok); });
  });
}

void Core::journal_finished(const Bytes32& stream_id, std::vector<Deferred> frames, bool ok) {
  StreamSlot& sl = streams_.at(stream_id);
  sl.journal_writing = false;
  if (!ok) {  // fail closed: no lease is shown, no action is confirmed
    fail_store("a group state write failed");
    for (auto* list : {&frames, &sl.deferred})
      for (auto& d : *list)
        if (const auto* r = std::get_if<Response>(&d.frame))
          send_error(d.connection, r->request_id, ErrorCode::kUnavailable, "storage failed; the action is not applied");
    sl.deferred.clear();
    sl.journal = store::WriteBatch{};
    return;
  }
  for (auto& d : frames) send(d.connection, d.frame);
  flush_journal(stream_id);
}

std::optional<std::vector<DeadLetter>> Core::dead_letters(const Bytes32& stream_id, std::uint64_t group_id,
                                                          std::uint64_t after, std::size_t limit) {
  StreamSlot* sl = slot(stream_id);
  GroupCycles* g = sl ? group_runtime(*sl, group_id) : nullptr;
  if (!g) return std::nullopt;
  std::vector<DeadLetter> out;
  for (auto it = g->dead_letters().upper_bound(after); it != g->dead_letters().end() && out.size() < limit; ++it)
    out.push_back(it->second);
  return out;
}

std::optional<std::size_t> Core::redrive(const Bytes32& stream_id, std::uint64_t group_id) {
  StreamSlot* sl = slot(stream_id);
  GroupCycles* g = sl ? group_runtime(*sl, group_id) : nullptr;
  const GroupConfigV2* config = sl ? sl->state.group(group_id) : nullptr;
  if (!g || !config) return std::nullopt;
  std::size_t n = g->redrive(*config, clock_.now_ms(), sl->timeline, sl->journal);
  pump(stream_id);
  return n;
}

}  // namespace cowboy::cbqs::broker
