#include <boost/asio/post.hpp>
#include "common/log.h"

#include "cbqs/broker/auth.h"
#include "cbqs/broker/core.h"
#include "cbqs/wire/sizes.h"

namespace cowboy::cbqs::broker {

namespace {
constexpr std::size_t kRecentRecords = 8'192;
constexpr std::size_t kSyncSamples = 4'096;

GroupCeilingsV2 ceilings(const Params& p) {
  return GroupCeilingsV2{p.visibility_ms, static_cast<std::uint16_t>(p.max_attempts),
                         static_cast<std::uint32_t>(p.max_in_flight_per_group)};
}

Bytes be64_bytes(std::uint64_t v) {
  Bytes b(8);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
  return b;
}
}  // namespace

Core::StreamSlot* Core::slot(const Bytes32& stream_id) {
  if (auto it = streams_.find(stream_id); it != streams_.end()) return &it->second;
  auto state = StreamState::load(store_, stream_id);
  if (!state) return nullptr;
  std::uint64_t now = clock_.now_ms();
  auto [it, inserted] = streams_.emplace(
      stream_id, StreamSlot{std::move(*state), false, {}, {}, {}, TokenBucket(0, now), TokenBucket(0, now), {}, {},
                            std::make_unique<boost::asio::steady_timer>(io_), {}, {},
                            std::make_unique<boost::asio::steady_timer>(io_), UINT64_MAX, {}, {}, false, false});
  return &it->second;
}

void Core::dispatch(ConnectionId id, Session& s, const Bytes32& session_id, const ChainView& view,
                    const StreamRecordV2& stream, const Bytes32& request_id, CbqsRequestBodyV2& body) {
  StreamSlot* sl = slot(stream.stream_id);
  if (!sl) return send_error(id, request_id, ErrorCode::kUnavailable, "the stream's state cannot be read");
  StreamState& state = sl->state;
  auto reply = [&](CbqsResponseBodyV2 b) { send(id, Response{request_id, std::move(b)}); };
  auto fail = [&](ErrorCode e) { send_error(id, request_id, e); };
  const StreamGrantV2& g = s.grant;
  const Params& p = view.params;

  std::visit(
      [&](auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, req::Append>) {
          append(id, s, view, stream, request_id, r);
        } else if constexpr (std::is_same_v<T, req::CreateLane>) {
          if (!is_any(g.lane_scope)) return fail(ErrorCode::kLaneScopeTooNarrow);
          if (!stream_solvent(view, stream)) return fail(ErrorCode::kAccountInsolvent);
          auto lane = state.create_lane(store_, r.room, p);
          if (!lane) return fail(lane.error());
          reply(resp::LaneCreated{*lane});
        } else if constexpr (std::is_same_v<T, req::CloseLane>) {
          if (!lane_in_scope(g.lane_scope, r.lane_id)) return fail(ErrorCode::kLaneNotInScope);
          auto ok = state.close_lane(store_, r.lane_id);
          if (!ok) return fail(ok.error());
          reply(resp::Ok{});
        } else if constexpr (std::is_same_v<T, req::ListLanes>) {
          if (r.limit == 0 || r.limit > p.max_lane_list_page) return fail(ErrorCode::kInvalidPageLimit);
          reply(state.list_lanes(r.after_lane_id, r.limit, g.lane_scope));
        } else if constexpr (std::is_same_v<T, req::GetSettings>) {
          reply(resp::Settings{state.effective_settings(p), ceilings(p)});
        } else if constexpr (std::is_same_v<T, req::UpdateSettings>) {
          if (!is_any(g.lane_scope)) return fail(ErrorCode::kLaneScopeTooNarrow);
          if (!is_any(g.group_scope)) return fail(ErrorCode::kGroupScopeTooNarrow);
          if (!stream_solvent(view, stream)) return fail(ErrorCode::kAccountInsolvent);
          auto stored = state.update_settings(store_, r.settings, p);
          if (!stored) return fail(stored.error());
          reply(resp::Settings{*stored, ceilings(p)});
        } else if constexpr (std::is_same_v<T, req::GetCheckpoint>) {
          auto receipt = state.checkpoint(store_, r.covering_sequence);
          if (!receipt) return fail(receipt.error());
          reply(resp::Checkpoint{*receipt});
        } else if constexpr (std::is_same_v<T, req::Subscribe>) {
          if (const auto* group = std::get_if<SourceGroup>(&r.source))
            return subscribe_group(id, s, session_id, *sl, request_id, r, *group);
          // The requested scope's shape before its intersection with the grant (§L).
          if (auto e = check_requested_scope(std::get<SourceCursor>(r.source).lane_scope, p)) return fail(*e);
          subscribe(id, s, session_id, *sl, request_id, r);
        } else if constexpr (std::is_same_v<T, req::AddCredit>) {
          add_credit(id, s, *sl, request_id, r);
        } else if constexpr (std::is_same_v<T, req::Unsubscribe>) {
          unsubscribe(id, s, *sl, request_id, r);
        } else if constexpr (std::is_same_v<T, req::Ack>) {
          lease_action(id, s, *sl, request_id, r.subscription_id, r.lease, LeaseVerb::kAck, 0);
        } else if constexpr (std::is_same_v<T, req::Nack>) {
          lease_action(id, s, *sl, request_id, r.subscription_id, r.lease, LeaseVerb::kNack, 0);
        } else if constexpr (std::is_same_v<T, req::Extend>) {
          lease_action(id, s, *sl, request_id, r.subscription_id, r.lease, LeaseVerb::kExtend, r.extend_ms);
        } else if constexpr (std::is_same_v<T, req::Reject>) {
          lease_action(id, s, *sl, request_id, r.subscription_id, r.lease, LeaseVerb::kReject, 0);
        } else if constexpr (std::is_same_v<T, req::CloseSession>) {
          reply(resp::Ok{});
          end_session(id, session_id);
        } else if constexpr (std::is_same_v<T, req::CreateGroup>) {
          if (!lane_in_scope(g.lane_scope, r.config.lane_id)) return fail(ErrorCode::kLaneNotInScope);
          if (!is_any(g.group_scope)) return fail(ErrorCode::kGroupScopeTooNarrow);
          if (!stream_solvent(view, stream)) return fail(ErrorCode::kAccountInsolvent);
          auto group_id = state.create_group(store_, r.config, p);
          if (!group_id) return fail(group_id.error());
          reply(resp::GroupCreated{*group_id});
        } else {  // UpdateGroup, GetGroup, DeleteGroup name an existing group
          std::uint64_t group_id;
          if constexpr (std::is_same_v<T, req::UpdateGroup>) group_id = r.config.group_id;
          else group_id = r.group_id;
          if (!group_in_scope(g.group_scope, group_id)) return fail(ErrorCode::kGroupNotInScope);
          const GroupConfigV2* existing = state.group(group_id);
          if (!existing) return fail(ErrorCode::kUnknownGroup);
          if (!lane_in_scope(g.lane_scope, existing->lane_id)) return fail(ErrorCode::kLaneNotInScope);
          if constexpr (std::is_same_v<T, req::GetGroup>) {
            reply(resp::Group{*existing});
          } else if constexpr (std::is_same_v<T, req::UpdateGroup>) {
            if (!stream_solvent(view, stream)) return fail(ErrorCode::kAccountInsolvent);
            auto updated = state.update_group(store_, r.config, p);
            if (!updated) return fail(updated.error());
            reply(resp::Group{*updated});
          } else {
            auto deleted = state.delete_group(store_, group_id);
            if (!deleted) return fail(deleted.error());
            reply(resp::Ok{});
            group_deleted(*sl, group_id);
          }
        }
      },
      body);
}

void Core::append(ConnectionId id, Session& s, const ChainView& view, const StreamRecordV2& stream,
                  const Bytes32& request_id, req::Append& r) {
  auto& a = r.append;
  if (!lane_in_scope(s.grant.lane_scope, a.lane_id)) return send_error(id, request_id, ErrorCode::kLaneNotInScope);
  if (!stream_solvent(view, stream)) return send_error(id, request_id, ErrorCode::kAccountInsolvent);
  StreamSlot& sl = *slot(stream.stream_id);
  StreamSettingsV2 settings = sl.state.effective_settings(view.params);
  if (a.payload.size() > std::min<std::uint64_t>(s.grant.max_message_bytes, settings.max_message_bytes))
    return send_error(id, request_id, ErrorCode::kMessageTooLarge);
  auto lane = sl.state.lane_status(a.lane_id);
  if (!lane) return send_error(id, request_id, ErrorCode::kUnknownLane);
  if (*lane == LaneStatusV2::kClosed) return send_error(id, request_id, ErrorCode::kLaneClosed);
  if (store_failed_ || sl.state.failed())
    return send_error(id, request_id, ErrorCode::kUnavailable, "storage failed; appends are refused");

  // §7 check 7: the effective rate is the lower of grant and settings.
  std::uint64_t now = clock_.now_ms();
  std::uint64_t cost = sizes::append_request_bytes(a.payload.size());
  sl.append_rate.set_rate(settings.max_append_bytes_per_sec);
  s.append_rate.set_rate(std::min(s.grant.max_append_bytes_per_sec, settings.max_append_bytes_per_sec));
  std::uint64_t wait = std::max(sl.append_rate.wait_ms(cost, now), s.append_rate.wait_ms(cost, now));
  if (wait > 0 || !sl.append_rate.take(cost, now) || !s.append_rate.take(cost, now))
    return send_error(id, request_id, ErrorCode::kRateLimited, {}, be64_bytes(std::max<std::uint64_t>(wait, 1)));

  std::size_t payload_bytes = a.payload.size();
  auto seq = sl.state.stage_append(a.lane_id, std::move(a.payload));
  if (!seq) return send_error(id, request_id, seq.error());
  sl.waiting.push_back(Waiter{id, request_id, *seq});
  ++metrics_.appends;
  metrics_.appended_bytes += payload_bytes;
  if (!sl.committing) start_commit(stream.stream_id);
}

void Core::start_commit(const Bytes32& stream_id) {
  StreamSlot& sl = streams_.at(stream_id);
  ChainViewPtr view = snapshots_.current();
  if (sl.committing || !view) return;
  auto batch = std::make_shared<PreparedBatch>(
      sl.state.close_batch(*view, config_.provider, clock_.now_ms(), view->params.commit_batch_max_records));
  if (batch->empty()) return;
  sl.committing = true;
  // Waiters are staged in sequence order, so the batch's are the oldest ones.
  auto split = sl.waiting.begin() + static_cast<std::ptrdiff_t>(batch->records.size());
  sl.in_flight.assign(sl.waiting.begin(), split);
  sl.waiting.erase(sl.waiting.begin(), split);
  boost::asio::post(committer_, [this, stream_id, batch] {
    batch->seal(config_.provider);  // hashing and signing stay off the io thread
    auto start = std::chrono::steady_clock::now();
    bool ok = store_.write(batch->write, store::Sync::kYes).ok();
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    boost::asio::post(io_, [this, stream_id, batch, ok, us] {
      commit_finished(stream_id, std::move(*batch), ok, static_cast<std::uint64_t>(us));
    });
  });
}

void Core::commit_finished(const Bytes32& stream_id, PreparedBatch batch, bool ok, std::uint64_t sync_us) {
  StreamSlot& sl = streams_.at(stream_id);
  sl.committing = false;
  if (!ok) {  // fail closed: nothing of this batch, or any later one, is acknowledged
    sl.state.mark_failed();
    fail_store("a synced batch write failed");
    for (auto* waiters : {&sl.in_flight, &sl.waiting})
      for (const auto& w : *waiters)
        send_error(w.connection, w.request_id, ErrorCode::kUnavailable, "storage failed; the append is not acknowledged");
    sl.in_flight.clear();
    sl.waiting.clear();
    return;
  }
  ++metrics_.batches;
  metrics_.batch_records += batch.records.size();
  if (metrics_.sync_latency_us.size() >= kSyncSamples) metrics_.sync_latency_us.pop_front();
  metrics_.sync_latency_us.push_back(sync_us);
  sl.state.batch_durable(batch);
  for (auto& r : batch.records) sl.recent.push_back(std::move(r));  // the batch is done with them
  while (sl.recent.size() > kRecentRecords) sl.recent.pop_front();
  for (const auto& w : sl.in_flight) send(w.connection, Response{w.request_id, resp::Appended{w.sequence}});
  sl.in_flight.clear();

  if (ChainViewPtr view = snapshots_.current()) advance_retention(sl, view->params);
  pump(stream_id);
  if (!sl.waiting.empty()) start_commit(stream_id);
}

void Core::fail_store(std::string_view why) {
  if (!store_failed_) log::error("store_failed", log::field("why", why), log::field("effect", "appends refused until restart"));
  store_failed_ = true;
  ++metrics_.sync_failures;
}

void Core::drain() {
  // Runs on the io thread: commit what is staged, then let the committer finish.
  for (auto& [id, sl] : streams_)
    if (!sl.committing && !sl.waiting.empty()) start_commit(id);
}

bool Core::idle() const {
  for (const auto& [id, sl] : streams_)
    if (sl.committing || !sl.waiting.empty()) return false;
  return true;
}

}  // namespace cowboy::cbqs::broker
