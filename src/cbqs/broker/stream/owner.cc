// The owner's entry points: one request of a session, in one visit; the
// session's end; the clock's and housekeeping's turns; the operator's views.
#include "cbqs/broker/stream/owner.h"

#include "cbqs/broker/auth.h"
#include "cbqs/broker/error_frame.h"
#include "common/log.h"

namespace cowboy::cbqs::broker {

namespace {
GroupCeilingsV2 ceilings(const Params& p) {
  return GroupCeilingsV2{p.visibility_ms, static_cast<std::uint16_t>(p.max_attempts),
                         static_cast<std::uint32_t>(p.max_in_flight_per_group)};
}

template <typename T, typename... Ts>
constexpr bool is_one_of = (std::is_same_v<T, Ts> || ...);
}  // namespace

void StoreHealth::fail(std::string_view why) {
  failures_ += 1;
  if (!failed_.exchange(true))
    log::error("store_failed", log::field("why", why), log::field("effect", "appends refused until restart"));
}

std::unique_ptr<StreamOwner> StreamOwner::load(const Bytes32& stream_id, OwnerContext context) {
  auto state = StreamState::load(context.store, stream_id);
  if (!state) return nullptr;
  return std::unique_ptr<StreamOwner>(new StreamOwner(std::move(*state), std::move(context)));
}

StreamOwner::StreamOwner(StreamState state, OwnerContext context)
    : context_(std::move(context)), state_(std::move(state)), append_rate_(0, context_.clock.now_ms()),
      delivered_rate_(0, context_.clock.now_ms()), pump_timer_(context_.home), timeline_timer_(context_.home) {}

StreamOwner::~StreamOwner() = default;

void StreamOwner::send_error(ConnectionId id, std::optional<RequestId> request_id, ErrorCode code,
                             std::string_view detail, Bytes details) {
  std::optional<Bytes32> wire_id;
  if (request_id) wire_id = request_id->value;
  send(id, error_frame(wire_id, code, detail, std::move(details)));
}

void StreamOwner::request(const Caller& caller, const ChainView& view, const StreamRecordV2& stream,
                          const RequestId& request_id, CbqsRequestBodyV2& body) {
  if (context_.health.failed()) state_.mark_failed();  // another stream's write failed: this one refuses too
  const ConnectionId id = caller.connection;
  const StreamGrantV2& g = caller.grant;
  const Params& p = view.params;
  auto reply = [&](CbqsResponseBodyV2 b) { release(id, Response{request_id.value, std::move(b)}); };
  auto fail = [&](ErrorCode e) { send_error(id, request_id, e); };
  auto refuse_group = [&](ErrorCode e, const GroupConfigV2& config) {  // names the field out of bounds
    send_error(id, request_id, e, e == ErrorCode::kInvalidGroupConfig ? *state_.group_config_problem(config, p) : "");
  };

  std::visit(
      [&](auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, req::Append>) {
          append(caller, view, stream, request_id, r);
        } else if constexpr (std::is_same_v<T, req::Subscribe>) {
          if (const auto* group = std::get_if<SourceGroup>(&r.source))
            return subscribe_group(caller, request_id, r, *group);
          // The requested scope's shape before its intersection with the grant (§L).
          if (auto e = check_requested_scope(std::get<SourceCursor>(r.source).lane_scope, p)) return fail(*e);
          subscribe(caller, request_id, r);
        } else if constexpr (std::is_same_v<T, req::AddCredit>) {
          add_credit(caller, request_id, r);
        } else if constexpr (std::is_same_v<T, req::Unsubscribe>) {
          unsubscribe(caller, request_id, r);
        } else if constexpr (is_one_of<T, req::Ack, req::Nack, req::Extend, req::Reject>) {
          lease_action(caller, request_id, r);
        } else if constexpr (std::is_same_v<T, req::CreateLane>) {
          if (!is_any(g.lane_scope)) return fail(ErrorCode::kLaneScopeTooNarrow);
          if (!stream_solvent(view, stream)) return fail(ErrorCode::kAccountInsolvent);
          auto lane = state_.create_lane(r.room, p, changes_);
          if (!lane) return fail(lane.error());
          reply(resp::LaneCreated{*lane});
        } else if constexpr (std::is_same_v<T, req::CloseLane>) {
          if (!lane_in_scope(g.lane_scope, r.lane_id)) return fail(ErrorCode::kLaneNotInScope);
          auto ok = state_.close_lane(r.lane_id, changes_);
          if (!ok) return fail(ok.error());
          reply(resp::Ok{});
        } else if constexpr (std::is_same_v<T, req::ListLanes>) {
          if (r.limit == 0 || r.limit > p.max_lane_list_page) return fail(ErrorCode::kInvalidPageLimit);
          reply(state_.list_lanes(r.after_lane_id, r.limit, g.lane_scope));
        } else if constexpr (std::is_same_v<T, req::GetSettings>) {
          reply(resp::Settings{state_.effective_settings(p), ceilings(p)});
        } else if constexpr (std::is_same_v<T, req::UpdateSettings>) {
          if (!is_any(g.lane_scope)) return fail(ErrorCode::kLaneScopeTooNarrow);
          if (!is_any(g.group_scope)) return fail(ErrorCode::kGroupScopeTooNarrow);
          if (!stream_solvent(view, stream)) return fail(ErrorCode::kAccountInsolvent);
          auto stored = state_.update_settings(r.settings, p, changes_);
          if (!stored) return fail(stored.error());
          reply(resp::Settings{*stored, ceilings(p)});
        } else if constexpr (std::is_same_v<T, req::GetCheckpoint>) {
          auto receipt = state_.checkpoint(context_.store, r.covering_sequence);
          if (!receipt) return fail(receipt.error());
          reply(resp::Checkpoint{*receipt});
        } else if constexpr (std::is_same_v<T, req::CreateGroup>) {
          if (!lane_in_scope(g.lane_scope, r.config.lane_id)) return fail(ErrorCode::kLaneNotInScope);
          if (!is_any(g.group_scope)) return fail(ErrorCode::kGroupScopeTooNarrow);
          if (!stream_solvent(view, stream)) return fail(ErrorCode::kAccountInsolvent);
          auto group_id = state_.create_group(r.config, p, changes_);
          if (!group_id) return refuse_group(group_id.error(), r.config);
          reply(resp::GroupCreated{*group_id});
        } else if constexpr (is_one_of<T, req::UpdateGroup, req::GetGroup, req::DeleteGroup>) {
          GroupId group_id;
          if constexpr (std::is_same_v<T, req::UpdateGroup>) group_id = r.config.group_id;
          else group_id = r.group_id;
          if (!group_in_scope(g.group_scope, group_id)) return fail(ErrorCode::kGroupNotInScope);
          const GroupConfigV2* existing = state_.group(group_id);
          if (!existing) return fail(ErrorCode::kUnknownGroup);
          if (!lane_in_scope(g.lane_scope, existing->lane_id)) return fail(ErrorCode::kLaneNotInScope);
          if constexpr (std::is_same_v<T, req::GetGroup>) {
            reply(resp::Group{*existing});
          } else if constexpr (std::is_same_v<T, req::UpdateGroup>) {
            if (!stream_solvent(view, stream)) return fail(ErrorCode::kAccountInsolvent);
            auto updated = state_.update_group(r.config, p, changes_);
            if (!updated) return refuse_group(updated.error(), r.config);
            reply(resp::Group{*updated});
          } else {
            auto deleted = state_.delete_group(group_id, changes_);
            if (!deleted) return fail(deleted.error());
            reply(resp::Ok{});
            group_deleted(group_id);
          }
        } else {
          static_assert(std::is_same_v<T, req::CloseSession>, "a request the owner does not serve");
          // Core answers CloseSession: the session is its own.
        }
      },
      body);
  if (!pump_posted_) commit();  // else the pump after this burst commits
}

void StreamOwner::session_ended(ConnectionId connection, const SessionId& session_id) {
  session_rates_.erase(session_id);
  bool removed = false;
  for (auto it = subscriptions_.begin(); it != subscriptions_.end();) {
    auto next = std::next(it);
    if (it->connection == connection && it->session_id == session_id) {
      remove_subscription(it);
      removed = true;
    }
    it = next;
  }
  if (removed) pump();
}

void StreamOwner::tick() { pump(); }

void StreamOwner::housekeeping(const Params& params) {
  std::uint64_t now = context_.clock.now_ms();
  for (auto it = subscriptions_.begin(); it != subscriptions_.end();) {
    auto next = std::next(it);
    if (it->stalled_since_ms != 0 && now - it->stalled_since_ms >= params.slow_consumer_timeout_ms) {
      send_error(it->connection, RequestId{it->id.value}, ErrorCode::kSlowConsumer);  // a subscription is named by its Subscribe's id
      remove_subscription(it);
    }
    it = next;
  }
  advance_retention(params);
  // Also resumes lease issuing for an account that became solvent again (§C).
  if (!groups_.empty()) pump();
  else commit();
}

void StreamOwner::drain() { commit(); }

bool StreamOwner::idle() const { return !writing_ && waiting_.empty() && changes_.empty(); }

std::optional<std::vector<DeadLetter>> StreamOwner::dead_letters(GroupId group, Sequence after, std::size_t limit) {
  GroupCycles* g = group_runtime(group);
  commit();  // a first load may have found repairs to write
  if (!g) return std::nullopt;
  std::vector<DeadLetter> out;
  for (auto it = g->dead_letters().upper_bound(after.value); it != g->dead_letters().end() && out.size() < limit; ++it)
    out.push_back(it->second);
  return out;
}

std::optional<std::size_t> StreamOwner::redrive(GroupId group) {
  GroupCycles* g = group_runtime(group);
  const GroupConfigV2* config = state_.group(group);
  if (!g || !config) return std::nullopt;
  std::size_t n = g->redrive(*config, context_.clock.now_ms(), timeline_, changes_);
  pump();
  return n;
}

StreamMetrics StreamOwner::metrics() const {
  StreamMetrics sm{stream_id(), state_.durable_head(), state_.floor(), state_.retained_bytes(), state_.lane_heads().size(),
                   {}, {}, {}, subscriptions_.size()};
  for (const auto& [lane, head] : state_.lane_heads()) {
    if (sm.lane_heads.size() == 256) break;
    sm.lane_heads.emplace_back(lane, head);
  }
  for (const auto& sub : subscriptions_)
    if (!sub.group)
      sm.subscription_lags.emplace_back(sub.id.value, sm.head + 1 > sub.next_sequence ? sm.head + 1 - sub.next_sequence : 0);
  std::uint64_t now = context_.clock.now_ms();
  for (const auto& [group_id, g] : groups_)
    if (const GroupConfigV2* config = state_.group(group_id)) sm.groups.push_back(group_metrics(group_id, g, *config, now));
  return sm;
}

GroupMetrics StreamOwner::group_metrics(GroupId group_id, const GroupCycles& g, const GroupConfigV2& config,
                                        std::uint64_t now_ms) const {
  const LaneId lane = config.lane_id;
  GroupMetrics gm{group_id, state_.count_in_lane(lane, g.frontier()) + g.waiting(), g.in_flight(),
                  g.dead_letters().size(), g.counters(), 0, 0, 0};
  // The oldest unacked record: the oldest live cycle, else the first never delivered.
  std::optional<Sequence> oldest = g.oldest_live();
  if (!oldest) oldest = state_.next_in_lane(lane, g.frontier());
  if (auto at = oldest ? state_.committed_at(oldest->value) : std::nullopt) gm.oldest_unacked_age_ms = now_ms > *at ? now_ms - *at : 0;
  // Resolved up to just below the oldest unresolved record, or up to the head when none is left.
  gm.ack_floor = oldest ? oldest->value - 1 : state_.durable_head();
  for (const auto& sub : subscriptions_) gm.consumers += sub.group == group_id;
  return gm;
}

std::vector<GroupReport> StreamOwner::group_reports() {
  std::vector<GroupReport> out;
  std::uint64_t now = context_.clock.now_ms();
  for (const auto& [id, config] : state_.groups())
    if (const GroupCycles* g = group_runtime(GroupId{id})) out.push_back({config, group_metrics(GroupId{id}, *g, config, now)});
  return out;
}

}  // namespace cowboy::cbqs::broker
