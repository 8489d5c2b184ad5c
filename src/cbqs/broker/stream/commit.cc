// Appends and the stream's one commit pipeline (owner.h): staged appends and
// every other change gather into the next write; one write is in flight; its
// completion publishes the records, answers Appended, releases the frames that
// waited for it, then starts the next.
#include <boost/asio/post.hpp>
#include <utility>

#include "cbqs/broker/auth.h"
#include "cbqs/broker/stream/owner.h"
#include "cbqs/wire/sizes.h"

namespace cowboy::cbqs::broker {

namespace {
constexpr std::size_t kRecentRecords = 8'192;

Bytes be64_bytes(std::uint64_t v) {
  Bytes b(8);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
  return b;
}
}  // namespace

void StreamOwner::append(const Caller& caller, const ChainView& view, const StreamRecordV2& stream,
                         const RequestId& request_id, req::Append& r) {
  auto& a = r.append;
  const ConnectionId id = caller.connection;
  const StreamGrantV2& grant = caller.grant;
  if (!lane_in_scope(grant.lane_scope, a.lane_id)) return send_error(id, request_id, ErrorCode::kLaneNotInScope);
  if (!stream_solvent(view, stream)) return send_error(id, request_id, ErrorCode::kAccountInsolvent);
  StreamSettingsV2 settings = state_.effective_settings(view.params);
  if (a.payload.size() > std::min<std::uint64_t>(grant.max_message_bytes, settings.max_message_bytes))
    return send_error(id, request_id, ErrorCode::kMessageTooLarge);
  auto lane = state_.lane_status(a.lane_id);
  if (!lane) return send_error(id, request_id, ErrorCode::kUnknownLane);
  if (*lane == LaneStatusV2::kClosed) return send_error(id, request_id, ErrorCode::kLaneClosed);
  if (failed()) return send_error(id, request_id, ErrorCode::kUnavailable, "storage failed; appends are refused");

  // §7 check 7: the effective rate is the lower of grant and settings.
  std::uint64_t now = context_.clock.now_ms();
  std::uint64_t cost = sizes::append_request_bytes(a.payload.size());
  TokenBucket& session_rate =
      session_rates_.try_emplace(caller.session_id, grant.max_append_bytes_per_sec, now).first->second;
  append_rate_.set_rate(settings.max_append_bytes_per_sec);
  session_rate.set_rate(std::min(grant.max_append_bytes_per_sec, settings.max_append_bytes_per_sec));
  std::uint64_t wait = std::max(append_rate_.wait_ms(cost, now), session_rate.wait_ms(cost, now));
  if (wait > 0 || !append_rate_.take(cost, now) || !session_rate.take(cost, now))
    return send_error(id, request_id, ErrorCode::kRateLimited, {}, be64_bytes(std::max<std::uint64_t>(wait, 1)));

  std::size_t payload_bytes = a.payload.size();
  auto seq = state_.stage_append(a.lane_id, std::move(a.payload));
  if (!seq) return send_error(id, request_id, seq.error());
  waiting_.push_back(Waiter{id, request_id, *seq});
  ++counters_.appends;
  counters_.appended_bytes += payload_bytes;
}

void StreamOwner::release(ConnectionId id, CbqsServerFrameV2 frame) {
  // A first lease or a listed Ack is not in changes_ until commit() asks the
  // group (write_frontier): its Delivery or Ok waits for that write too.
  if (!changes_.empty() || !gathered_.empty() || groups_unwritten()) gathered_.push_back({id, std::move(frame)});
  else if (writing_) in_flight_frames_.push_back({id, std::move(frame)});
  else send(id, frame);
}

bool StreamOwner::groups_unwritten() const {
  for (const auto& [group_id, g] : groups_)
    if (g.unwritten()) return true;
  return false;
}

void StreamOwner::commit() {
  if (writing_) return;
  if (failed()) return fail_closed("storage failed");
  for (auto& [group_id, g] : groups_) g.write_frontier(changes_);
  auto write = std::make_shared<Write>();
  ChainViewPtr view = context_.views.current();
  if (view && !waiting_.empty())
    write->records = state_.close_batch(*view, context_.provider, context_.clock.now_ms(),
                                        view->params.commit_batch_max_records);
  if (write->records.empty() && changes_.empty()) {  // nothing to make durable: what waited may go
    for (auto& o : gathered_) send(o.connection, o.frame);
    gathered_.clear();
    return;
  }
  // Waiters are staged in sequence order, so the batch's are the oldest ones.
  auto split = waiting_.begin() + static_cast<std::ptrdiff_t>(write->records.records.size());
  in_flight_.assign(waiting_.begin(), split);
  waiting_.erase(waiting_.begin(), split);
  // Swapped, not moved: gathered_ keeps the buffer the last write's frames
  // used (in_flight_frames_ is empty here), so the next thousands of frames do
  // not regrow it from nothing (reallocations and fresh pages, each write).
  std::swap(in_flight_frames_, gathered_);
  if (!changes_.empty()) {
    ++counters_.journal_writes;
    counters_.journal_ops += changes_.size();
  }
  write->changes = std::move(changes_);
  changes_ = store::WriteBatch{};
  writing_ = true;
  std::atomic<std::size_t>* at_committer = context_.writes_at_committer;
  // A lone append while no write is at the committer (low rate): sealed and
  // written here, sparing its two thread hand-offs, to the committer and back
  // (each a wake-up of a sleeping thread; docs/performance.md, issue 46). This
  // executor then waits for that one sync. committed() still runs only after
  // the synced write returned, posted like the committer's answer, so nothing
  // is answered earlier. A batch of more, or any write while another is at the
  // committer, goes there.
  if (at_committer && write->records.records.size() == 1 && at_committer->load(std::memory_order_acquire) == 0) {
    Written written = seal_and_write(*write, context_.store, context_.provider);
    boost::asio::post(context_.home, [this, write, alive = std::weak_ptr<bool>(alive_), written] {
      if (alive.lock()) committed(write, written);
    });
    return;
  }
  if (at_committer) at_committer->fetch_add(1, std::memory_order_acq_rel);
  boost::asio::post(context_.committer, [this, write, alive = std::weak_ptr<bool>(alive_), at_committer,
                                         &store = context_.store, &provider = context_.provider,
                                         home = context_.home] {
    // Hashing and signing stay off the owner's executor, like the sync.
    Written written = seal_and_write(*write, store, provider);
    if (at_committer) at_committer->fetch_sub(1, std::memory_order_acq_rel);
    boost::asio::post(home, [this, write, alive, written] {
      if (alive.lock()) committed(write, written);
    });
  });
}

// Seals the records (record digests, batch digest, the signed receipt) and
// writes them with the gathered changes in one synced write; returns whether
// it was written and how long the synced write and the whole took.
StreamOwner::Written StreamOwner::seal_and_write(Write& write, store::Store& store, const ProviderIdentity& provider) {
  using std::chrono::steady_clock;
  auto us_since = [](steady_clock::time_point t) {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(steady_clock::now() - t).count());
  };
  auto begin = steady_clock::now();
  if (!write.records.empty()) write.records.seal(provider);
  store::WriteBatch& batch = write.records.write;
  batch.append(std::move(write.changes));
  auto start = steady_clock::now();
  bool ok = store.write(batch, store::Sync::kYes).ok();
  return {ok, us_since(start), us_since(begin)};
}

void StreamOwner::committed(std::shared_ptr<Write> write, Written written) {
  writing_ = false;
  if (!written.ok) {
    state_.mark_failed();
    context_.health.fail("a synced write failed");
    return fail_closed("storage failed");
  }
  PreparedBatch& batch = write->records;
  if (!batch.empty()) {
    ++counters_.batches;
    counters_.batch_records += batch.records.size();
  }
  ++counters_.writes;
  counters_.write_busy_us += written.busy_us;
  if (counters_.sync_latency_us.size() >= OwnerCounters::kSyncSamples) counters_.sync_latency_us.pop_front();
  counters_.sync_latency_us.push_back(written.sync_us);
  counters_.sync_latency.observe_us(written.sync_us);
  state_.batch_durable(batch);
  for (auto& r : batch.records) recent_.push_back(std::move(r));  // the batch is done with them
  while (recent_.size() > kRecentRecords) recent_.pop_front();
  for (const auto& w : in_flight_) send(w.connection, Response{w.request_id.value, resp::Appended{w.sequence}});
  in_flight_.clear();
  for (const auto& o : in_flight_frames_) send(o.connection, o.frame);
  in_flight_frames_.clear();

  // Retention moves with new records (and with housekeeping's clock), as before the pipeline.
  if (ChainViewPtr view = context_.views.current(); view && !batch.empty()) advance_retention(view->params);
  pump();  // delivers the new records, then commits what gathered meanwhile
}

// Nothing pending is acknowledged: the appends and the answers that waited
// for a write get Unavailable; deliveries that waited are dropped.
void StreamOwner::fail_closed(std::string_view why) {
  std::string appends(why), changes(why);
  appends += "; the append is not acknowledged";
  changes += "; the action is not applied";
  for (auto* waiters : {&in_flight_, &waiting_})
    for (const auto& w : *waiters) send_error(w.connection, w.request_id, ErrorCode::kUnavailable, appends);
  for (auto* frames : {&in_flight_frames_, &gathered_})
    for (const auto& o : *frames)
      if (const auto* r = std::get_if<Response>(&o.frame))
        send_error(o.connection, RequestId{r->request_id}, ErrorCode::kUnavailable, changes);
  in_flight_.clear();
  waiting_.clear();
  in_flight_frames_.clear();
  gathered_.clear();
  changes_ = store::WriteBatch{};
}

void StreamOwner::advance_retention(const Params& params) {
  if (writing_ || failed()) return;
  if (!state_.advance_floor(params, context_.clock.now_ms(), changes_)) return;
  // Cycles and dead letters die with their records, in the same write.
  for (auto& [group_id, g] : groups_) g.drop_below(state_.floor(), changes_);
  while (!recent_.empty() && recent_.front().sequence < state_.floor()) recent_.pop_front();
  if (!read_ahead_.empty() && read_ahead_.front().sequence < state_.floor()) read_ahead_.clear();
}

}  // namespace cowboy::cbqs::broker
