// One stream's owner: the only code that touches the stream's state, its
// groups' cycles and timeline, its subscriptions, its record cache and its
// commit pipeline. Its methods are the stream's operations; it reaches
// connections only through Outbound, and knows nothing of connections or
// sessions beyond the ids Core hands it. All of it runs on one executor (its
// home); the synced store writes run on the committer, except a lone append's
// while no write is at the committer (commit.cc).
//
// The commit pipeline (commit.cc): every durable change - staged appends, lane,
// group and settings changes, leases and lease actions, retention - gathers
// into the next write; one write is in flight at a time. A frame that reveals
// a change (an Appended, a LaneCreated, a Delivery with its lease, the Ok of an
// Ack) is released only once the write holding that change returned ok, and a
// frame queued after it waits for it too, so each connection sees them in
// order. A failed write fails the stream closed: its frames become Unavailable
// errors and nothing more is acknowledged.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <atomic>
#include <deque>
#include <list>
#include <map>
#include <memory>

#include "cbqs/broker/rate.h"
#include "cbqs/broker/stream/cycles.h"
#include "cbqs/broker/stream/ids.h"
#include "cbqs/broker/stream/state.h"
#include "cbqs/wire/frames.h"
#include "common/clock.h"
#include "common/histogram.h"

namespace cowboy::cbqs::broker {

using ConnectionId = std::uint64_t;

/// Who a request comes from. Core vouched for it: the session stands under the
/// request's snapshot and its verbs allow the request.
struct Caller {
  ConnectionId connection = 0;
  SessionId session_id;
  const StreamGrantV2& grant;
};

/// What an owner reaches outside its stream (Core implements it).
class Outbound {
 public:
  enum class Room { kGone, kBusy, kOpen };
  virtual ~Outbound() = default;
  /// Queues a frame for a connection; nothing if it is gone.
  virtual void send(ConnectionId connection, const CbqsServerFrameV2& frame) = 0;
  /// Whether the connection takes more deliveries now (kBusy: its write queue is full).
  virtual Room room(ConnectionId connection) const = 0;
};

/// Shared by every owner of a process: after one failed write, no owner
/// acknowledges anything more until a restart (fail closed).
class StoreHealth {
 public:
  bool failed() const { return failed_.load(); }
  /// Logs the first failure.
  void fail(std::string_view why);
  std::uint64_t failures() const { return failures_.load(); }

 private:
  std::atomic<bool> failed_{false};  // also read by /readyz on the admin thread
  std::atomic<std::uint64_t> failures_{0};
};

/// What an owner works with; all outlive it.
struct OwnerContext {
  boost::asio::any_io_executor home;       // where the owner runs: its timers and posted work
  boost::asio::any_io_executor committer;  // where synced writes run
  store::Store& store;
  ViewSource& views;
  const Clock& clock;
  Entropy& entropy;
  Outbound& out;
  StoreHealth& health;
  const ProviderIdentity& provider;
  std::uint64_t credit_cap = 1ULL << 30;  // docs/protocol.md §K
  /// Writes posted to the committer and not yet written, over every owner of
  /// the process. Given (Core gives it), a lone append's batch is written on
  /// `home` while it is zero (commit.cc); null, every write goes to the committer.
  std::atomic<std::size_t>* writes_at_committer = nullptr;
};

struct GroupMetrics {
  GroupId group_id{};
  std::uint64_t pending = 0;      // records not yet delivered, or waiting for redelivery
  std::uint64_t in_flight = 0;
  std::uint64_t dead_letters = 0;
  GroupCounters counters;
  std::uint64_t oldest_unacked_age_ms = 0;  // 0 when nothing is unacked
  std::uint64_t ack_floor = 0;  // every record of the lane up to it is resolved (acked or dead-lettered)
  std::uint64_t consumers = 0;  // group subscriptions attached now
};

/// A group as `cbqs groups info` shows it: its config and its state now.
struct GroupReport {
  GroupConfigV2 config;
  GroupMetrics metrics;
};

struct StreamMetrics {
  Bytes32 stream_id{};
  std::uint64_t head = 0;  // highest durable sequence
  std::uint64_t floor = 0;
  std::uint64_t retained_bytes = 0;
  std::uint64_t lanes_with_records = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> lane_heads;    // (lane, head), the 256 lowest lane ids
  std::vector<std::pair<Bytes32, std::uint64_t>> subscription_lags;  // (subscription, records behind)
  std::vector<GroupMetrics> groups;                                   // groups loaded since start
  std::uint64_t subscriptions = 0;
};

/// An owner's running totals.
struct OwnerCounters {
  std::uint64_t appends = 0;
  std::uint64_t appended_bytes = 0;
  std::uint64_t batches = 0;  // writes that carried records
  std::uint64_t batch_records = 0;
  std::uint64_t deliveries = 0;
  std::uint64_t delivered_bytes = 0;
  std::uint64_t journal_writes = 0;  // writes that carried other changes
  std::uint64_t journal_ops = 0;     // their puts and deletes
  std::uint64_t writes = 0;          // synced writes returned ok
  std::uint64_t write_busy_us = 0;   // time they held their thread: sealing and the synced write
  static constexpr std::size_t kSyncSamples = 4'096;
  std::deque<std::uint64_t> sync_latency_us;  // the most recent kSyncSamples write durations (for percentiles)
  LatencyHistogram sync_latency;             // every write since start (cbqs_sync_latency_seconds)
};

class StreamOwner {
 public:
  /// Loads the stream; nullptr when its state cannot be read.
  static std::unique_ptr<StreamOwner> load(const Bytes32& stream_id, OwnerContext context);
  ~StreamOwner();
  StreamOwner(const StreamOwner&) = delete;
  StreamOwner& operator=(const StreamOwner&) = delete;

  const Bytes32& stream_id() const { return state_.stream_id(); }
  /// The executor every method must be called on.
  const boost::asio::any_io_executor& home() const { return context_.home; }

  /// One request of a session of this stream, judged against `view` (in which
  /// `stream` is this stream's record); every answer goes out through Outbound.
  /// Takes the body by reference: an Append's payload moves into the batch.
  void request(const Caller& caller, const ChainView& view, const StreamRecordV2& stream, const RequestId& request_id,
               CbqsRequestBodyV2& body);
  /// The session ended: its subscriptions end (their leases as if expired).
  void session_ended(ConnectionId connection, const SessionId& session_id);
  /// Applies what came due on the clock and delivers what subscriptions can take.
  void tick();
  /// Once a second: closes stalled subscriptions, advances retention by time,
  /// and gives groups a turn (a snapshot refresh may have made the account solvent).
  void housekeeping(const Params& params);
  /// Starts committing what is staged (clean shutdown).
  void drain();
  /// No write in flight and nothing staged.
  bool idle() const;

  // The dead-letter view (docs/protocol.md §O), for the operator's admin endpoint.
  /// EXPIRED records of a group, ascending after `after`, at most `limit`; nullopt for an unknown group.
  std::optional<std::vector<DeadLetter>> dead_letters(GroupId group, Sequence after, std::size_t limit);
  /// Makes every dead letter of the group deliverable again (attempts reset); how many, or nullopt.
  std::optional<std::size_t> redrive(GroupId group);

  StreamMetrics metrics() const;
  /// Every group of the stream (each loaded if it was not), by id.
  std::vector<GroupReport> group_reports();
  const OwnerCounters& counters() const { return counters_; }

 private:
  struct Waiter {  // an append waiting for its batch
    ConnectionId connection;
    RequestId request_id;
    Sequence sequence{};
  };
  struct Outgoing {  // a frame waiting for a write
    ConnectionId connection;
    CbqsServerFrameV2 frame;
  };
  struct Subscription {
    ConnectionId connection;
    SessionId session_id;
    SubscriptionId id;
    LaneScope scope;
    std::uint64_t next_sequence = 1;
    std::uint64_t credit = 0;
    bool short_sent = false;
    bool replaying = false;
    std::uint64_t stalled_since_ms = 0;  // 0 = not stalled
    std::optional<GroupId> group;        // a Group source; nullopt for a Cursor
    HolderId holder = 0;                 // who its leases are issued to
    bool backpressure_sent = false;
  };
  /// One synced store write: the sealed records and every other change.
  struct Write {
    PreparedBatch records;
    store::WriteBatch changes;
  };
  /// What a write's thread reports back.
  struct Written {
    bool ok = false;
    std::uint64_t sync_us = 0;  // the synced write
    std::uint64_t busy_us = 0;  // sealing and the synced write
  };
  enum class Visit { kNothing, kProgress, kPaced };
  using LeaseAction = std::variant<req::Ack, req::Nack, req::Extend, req::Reject>;

  StreamOwner(StreamState state, OwnerContext context);
  GroupMetrics group_metrics(GroupId group_id, const GroupCycles& g, const GroupConfigV2& config,
                             std::uint64_t now_ms) const;
  void send(ConnectionId id, const CbqsServerFrameV2& frame) { context_.out.send(id, frame); }
  void send_error(ConnectionId id, std::optional<RequestId> request_id, ErrorCode code, std::string_view detail = {},
                  Bytes details = {});
  bool failed() const { return state_.failed() || context_.health.failed(); }

  // commit.cc: appends, the commit pipeline and retention
  void append(const Caller& caller, const ChainView& view, const StreamRecordV2& stream, const RequestId& request_id,
              req::Append& r);
  /// Sends `frame` once every change made so far is durable (at once if none is pending).
  void release(ConnectionId id, CbqsServerFrameV2 frame);
  /// Some group holds a change that only commit() puts into changes_.
  bool groups_unwritten() const;
  /// Starts the next write if none is in flight and something gathered.
  void commit();
  void committed(std::shared_ptr<Write> write, Written written);
  static Written seal_and_write(Write& write, store::Store& store, const ProviderIdentity& provider);
  void fail_closed(std::string_view why);
  void advance_retention(const Params& params);

  // cursors.cc: cursor subscriptions and the delivery pump
  void subscribe(const Caller& caller, const RequestId& request_id, const req::Subscribe& r);
  void add_credit(const Caller& caller, const RequestId& request_id, const req::AddCredit& r);
  void unsubscribe(const Caller& caller, const RequestId& request_id, const req::Unsubscribe& r);
  Subscription* find_subscription(const Caller& caller, const SubscriptionId& subscription_id);
  /// Removes a subscription (its leases end as if expired); the caller pumps.
  void remove_subscription(std::list<Subscription>::iterator it);
  /// Applies due timeline entries, delivers what subscriptions can take, commits.
  void pump();
  void deliver(const ChainView& view, std::uint64_t head, std::uint64_t floor, std::uint64_t now_ms);
  void schedule_pump(std::uint64_t delay_ms);
  std::optional<Record> record_at(std::uint64_t sequence);

  // groups.cc: group subscriptions, lease actions and the timeline
  GroupCycles* group_runtime(GroupId group_id);
  void subscribe_group(const Caller& caller, const RequestId& request_id, const req::Subscribe& r,
                       const SourceGroup& source);
  void lease_action(const Caller& caller, const RequestId& request_id, const LeaseAction& action);
  void group_deleted(GroupId group_id);
  Visit deliver_group(Subscription& sub, bool solvent, std::uint64_t now_ms);
  void run_timeline(std::uint64_t now_ms);
  /// One pump after this burst of requests.
  void pump_soon();
  void arm_timeline();

  OwnerContext context_;
  StreamState state_;
  OwnerCounters counters_;

  // The commit pipeline: staged appends and gathered changes, and the write in flight.
  std::vector<Waiter> waiting_;          // staged, not yet in a write
  store::WriteBatch changes_;            // gathered for the next write
  std::vector<Outgoing> gathered_;       // frames released by the next write
  bool writing_ = false;
  std::vector<Waiter> in_flight_;        // appends in the write in flight
  std::vector<Outgoing> in_flight_frames_;  // frames released by it

  std::list<Subscription> subscriptions_;
  HolderId next_holder_ = 1;
  TokenBucket append_rate_;
  std::map<SessionId, TokenBucket> session_rates_;  // per session: a grant's own append rate
  TokenBucket delivered_rate_;
  std::deque<Record> recent_;       // the newest durable records, to deliver without a store read
  std::vector<Record> read_ahead_;  // consecutive older records from one store scan (a backlog being read)
  boost::asio::steady_timer pump_timer_;
  bool pump_posted_ = false;

  std::map<GroupId, GroupCycles> groups_;  // loaded on first use
  Timeline timeline_;
  boost::asio::steady_timer timeline_timer_;
  std::uint64_t timeline_armed_ms_ = UINT64_MAX;  // when the timer fires; UINT64_MAX = not armed

  // Set while the owner lives; posted work checks it (the owner may go first in tests).
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace cowboy::cbqs::broker
