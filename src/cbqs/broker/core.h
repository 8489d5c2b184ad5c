// The broker's request logic, independent of the transport. Every method runs
// on one executor (the io_context thread), so no state here is locked; the
// only work done elsewhere is the synced store write of a closed batch, on the
// committer thread, whose completion is posted back.
//
// Request flow (docs/architecture.md): a Peer hands a binary message to
// on_frame -> strict decode -> session lookup -> the session's standing under
// the current snapshot -> verbs -> scope -> solvency -> the request itself
// (stream state) -> the answer. Appends are answered only from
// commit_finished(), after their batch is durable.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <atomic>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <set>

#include "admission/fair_queue.h"
#include "cbqs/broker/group.h"
#include "cbqs/broker/rate.h"
#include "cbqs/broker/snapshot.h"
#include "cbqs/broker/stream.h"
#include "cbqs/wire/frames.h"
#include "common/clock.h"

namespace cowboy::cbqs::broker {

/// One client connection as the core sees it.
class Peer {
 public:
  virtual ~Peer() = default;
  /// Queues one frame; frames go out in the order queued.
  virtual void send(Bytes frame) = 0;
  /// Ends a connection that opened no session in time (WebSocket close 1008).
  virtual void close() = 0;
  virtual std::size_t queued_bytes() const = 0;
  /// A session is open: frames up to cbqs.max_frame_bytes from now on (before
  /// one is, the cap is limits::kMaxPreSessionFrameBytes).
  virtual void lift_frame_cap() = 0;
};

struct CoreConfig {
  ProviderIdentity provider;
  /// Session-admission signature checks (docs/admission.md, "Use in cbqsd"):
  /// one source per connection, ages in milliseconds.
  admission::QueueConfig admission{64, 16, 1'024, 3'000};
  std::uint64_t admission_credits_per_turn = 64;  // 16 verifications per turn
  std::uint64_t credit_cap = 1ULL << 30;              // docs/protocol.md §K
  std::size_t peer_queue_limit = 16 * 1024 * 1024;     // pause deliveries to a peer above this
};

struct GroupMetrics {
  std::uint64_t group_id = 0;
  std::uint64_t pending = 0;      // records not yet delivered, or waiting for redelivery
  std::uint64_t in_flight = 0;
  std::uint64_t dead_letters = 0;
  GroupCounters counters;
  std::uint64_t oldest_unacked_age_ms = 0;  // 0 when nothing is unacked
};

struct StreamMetrics {
  Bytes32 stream_id{};
  std::uint64_t head = 0;  // highest durable sequence
  std::uint64_t floor = 0;
  std::uint64_t retained_bytes = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> lane_heads;    // (lane, head), at most 256 lanes
  std::vector<std::pair<Bytes32, std::uint64_t>> subscription_lags;  // (subscription, records behind)
  std::vector<GroupMetrics> groups;                                   // groups loaded since start
};

struct CoreMetrics {
  std::uint64_t appends = 0;
  std::uint64_t appended_bytes = 0;
  std::uint64_t batches = 0;
  std::uint64_t batch_records = 0;
  std::uint64_t deliveries = 0;
  std::uint64_t delivered_bytes = 0;
  std::uint64_t sessions = 0;
  std::uint64_t subscriptions = 0;
  std::uint64_t connections = 0;              // accepted sockets held, before the upgrade too
  std::uint64_t connection_limit = 0;         // the broker's max_connections
  std::uint64_t connections_refused = 0;      // closed at accept: the total or a per-address cap was reached
  std::uint64_t accept_errors = 0;            // accept(2) failures (EMFILE, ENFILE, ...), each then backed off
  std::uint64_t sessionless_connections = 0;  // upgraded, no session open
  std::uint64_t sessionless_closed = 0;       // closed for opening no session within the handshake timeout
  std::uint64_t read_budget_bytes = 0, read_budget_in_use = 0;
  std::uint64_t errors_sent = 0;
  std::uint64_t sync_failures = 0;
  std::uint64_t journal_writes = 0;  // synced group-journal batches
  std::uint64_t journal_ops = 0;     // puts and deletes in them
  std::deque<std::uint64_t> sync_latency_us;  // the most recent samples, for the histogram
  std::vector<StreamMetrics> streams;
  std::uint64_t admission_turns = 0;
  std::uint64_t admission_pending = 0;
  std::uint64_t admission_max_wait_turns = 0;  // the most turns a served handshake job waited
  std::uint64_t read_pauses = 0;               // times a connection's reads paused for its write queue
};

class Core {
 public:
  using ConnectionId = std::uint64_t;

  Core(boost::asio::io_context& io, CoreConfig config, store::Store& store, SnapshotSource& snapshots,
       const Clock& clock, Entropy& entropy);
  ~Core();

  ConnectionId on_open(Peer& peer);
  void on_frame(ConnectionId id, ByteView frame);
  /// The channel refused a frame and closes next: one above the connection's
  /// frame cap, from its header (`too_large`: Error FrameTooLarge, then 1009),
  /// or one the process's read budget cannot hold now (Unavailable, then 1013).
  void on_frame_refused(ConnectionId id, bool too_large);
  void on_close(ConnectionId id);
  /// Starts committing every staged append (clean shutdown).
  void drain();
  /// No batch is being written and nothing is staged.
  bool idle() const;
  CoreMetrics metrics() const;
  bool store_failed() const { return store_failed_; }

  // The dead-letter view (docs/protocol.md §O), for the operator's admin endpoint.
  /// EXPIRED records of a group, ascending after `after`, at most `limit`; nullopt for an unknown group.
  std::optional<std::vector<DeadLetter>> dead_letters(const Bytes32& stream_id, std::uint64_t group_id,
                                                      std::uint64_t after, std::size_t limit);
  /// Makes every dead letter of the group deliverable again (attempts reset); how many, or nullopt.
  std::optional<std::size_t> redrive(const Bytes32& stream_id, std::uint64_t group_id);

 private:
  struct PendingHandshake {
    Bytes32 challenge{};
    std::uint64_t expires_at_ms = 0;
    StreamGrantV2 grant;
    Bytes32 grant_id{};
  };
  struct Session {
    StreamGrantV2 grant;
    Bytes32 grant_id{};
    SigningPublicKey admin_key_at_open;
    TokenBucket append_rate;
    std::set<Bytes32> subscriptions;
    std::unique_ptr<boost::asio::steady_timer> expiry;
  };
  struct Connection {
    Peer* peer = nullptr;
    std::uint64_t sessionless_since_ms = 0;  // 0 while a session is open
    std::map<Bytes32, PendingHandshake> pending;
    std::map<Bytes32, Session> sessions;
  };
  // Handshake work waiting in the admission queue for its signature check.
  struct OpenJob {
    Bytes32 request_id;
    StreamGrantV2 grant;
    std::uint64_t queued_at_turn = 0;
  };
  struct CompleteJob {
    Bytes32 request_id;
    SessionProofV2 proof;
    PendingHandshake pending;
    std::uint64_t queued_at_turn = 0;
  };
  using HandshakeJob = std::variant<OpenJob, CompleteJob>;
  struct Waiter {  // an append waiting for its batch
    ConnectionId connection;
    Bytes32 request_id;
    std::uint64_t sequence;
  };
  struct Subscription {
    ConnectionId connection;
    Bytes32 session_id;
    Bytes32 id;
    LaneScope scope;
    std::uint64_t next_sequence = 1;
    std::uint64_t credit = 0;
    bool short_sent = false;
    bool replaying = false;
    std::uint64_t stalled_since_ms = 0;  // 0 = not stalled
    std::optional<std::uint64_t> group;  // a Group source; nullopt for a Cursor
    HolderId holder = 0;                 // who its leases are issued to
    bool backpressure_sent = false;
  };
  struct Deferred {  // a frame to send once the group journal write holding its change is durable
    ConnectionId connection;
    CbqsServerFrameV2 frame;
  };
  struct StreamSlot {
    StreamState state;
    bool committing = false;
    std::vector<Waiter> waiting;    // staged, not yet in a closed batch
    std::vector<Waiter> in_flight;  // in the batch being written
    std::list<Subscription> subscriptions;
    TokenBucket append_rate;
    TokenBucket delivered_rate;
    std::deque<Record> recent;      // the newest durable records, to deliver without a store read
    std::vector<Record> read_ahead;  // consecutive older records from one store scan (a backlog being read)
    std::unique_ptr<boost::asio::steady_timer> pump_timer;
    // Consumer groups (groups.cc).
    std::map<std::uint64_t, GroupCycles> groups;  // loaded on first use
    Timeline timeline;
    std::unique_ptr<boost::asio::steady_timer> timeline_timer;
    std::uint64_t timeline_armed_ms = UINT64_MAX;  // when the timer fires; UINT64_MAX = not armed
    store::WriteBatch journal;                     // group changes not yet written
    std::vector<Deferred> deferred;                // their frames
    bool journal_writing = false;
    bool pump_posted = false;
  };
  enum class Visit { kNothing, kProgress, kPaced };
  enum class LeaseVerb { kAck, kNack, kExtend, kReject };

  // core.cc: framing and sessions
  void send(ConnectionId id, const CbqsServerFrameV2& frame);
  void send_error(ConnectionId id, std::optional<Bytes32> request_id, ErrorCode code, std::string_view detail = {},
                  Bytes details = {});
  ErrorFrame error_frame(std::optional<Bytes32> request_id, ErrorCode code, std::string_view detail = {},
                         Bytes details = {});
  void open_session(ConnectionId id, Connection& c, const OpenSession& f);
  void complete_session(ConnectionId id, Connection& c, const CompleteSession& f);
  void end_session(ConnectionId id, const Bytes32& session_id);
  void close_sessionless(std::uint64_t now_ms, std::uint64_t timeout_ms);
  void admit(ConnectionId id, const Bytes32& request_id, HandshakeJob job);
  void schedule_admission();
  void admission_turn();
  void finish_open(ConnectionId id, OpenJob& job);
  void finish_complete(ConnectionId id, CompleteJob& job);
  std::uint64_t steady_ms() const;
  // Requests are taken by mutable reference: an Append's payload moves into the batch.
  void handle_request(ConnectionId id, Connection& c, Request& f);
  Bytes32 random32();

  // requests.cc: lanes, settings, checkpoints, appends and the commit pipeline
  void dispatch(ConnectionId id, Session& s, const Bytes32& session_id, const ChainView& view,
                const StreamRecordV2& stream, const Bytes32& request_id, CbqsRequestBodyV2& body);
  StreamSlot* slot(const Bytes32& stream_id);
  void append(ConnectionId id, Session& s, const ChainView& view, const StreamRecordV2& stream,
              const Bytes32& request_id, req::Append& r);
  void start_commit(const Bytes32& stream_id);
  void commit_finished(const Bytes32& stream_id, PreparedBatch batch, bool ok, std::uint64_t sync_us);
  void fail_store(std::string_view why);

  // delivery.cc: cursor subscriptions and the delivery pump
  void subscribe(ConnectionId id, Session& s, const Bytes32& session_id, StreamSlot& slot,
                 const Bytes32& request_id, const req::Subscribe& r);
  void add_credit(ConnectionId id, Session& s, StreamSlot& slot, const Bytes32& request_id, const req::AddCredit& r);
  void unsubscribe(ConnectionId id, Session& s, StreamSlot& slot, const Bytes32& request_id, const req::Unsubscribe& r);
  void drop_subscriptions(ConnectionId id, const Bytes32& session_id);
  /// Applies due timeline entries, delivers what subscriptions can take, writes the group journal.
  void pump(const Bytes32& stream_id);
  void deliver(const Bytes32& stream_id, StreamSlot& slot, const ChainView& view, std::uint64_t head,
               std::uint64_t floor, std::uint64_t now_ms);
  void schedule_pump(const Bytes32& stream_id, std::uint64_t delay_ms);
  void housekeeping();
  std::optional<Record> record_at(StreamSlot& slot, std::uint64_t sequence);
  Subscription* find_subscription(StreamSlot& slot, ConnectionId id, const Session& s, const Bytes32& subscription_id);
  /// Removes a subscription (its leases end as if expired); the caller pumps.
  void remove_subscription(StreamSlot& slot, std::list<Subscription>::iterator it);
  void advance_retention(StreamSlot& slot, const Params& params);

  // groups.cc: group subscriptions, leases, the timeline and the group journal
  GroupCycles* group_runtime(StreamSlot& slot, std::uint64_t group_id);
  void subscribe_group(ConnectionId id, Session& s, const Bytes32& session_id, StreamSlot& slot,
                       const Bytes32& request_id, const req::Subscribe& r, const SourceGroup& source);
  void lease_action(ConnectionId id, Session& s, StreamSlot& slot, const Bytes32& request_id,
                    const Bytes32& subscription_id, const Bytes32& lease, LeaseVerb verb, std::uint64_t extend_ms);
  void group_deleted(StreamSlot& slot, std::uint64_t group_id);
  Visit deliver_group(StreamSlot& slot, Subscription& sub, bool solvent, std::uint64_t now_ms);
  /// Sends after the deferred frames of this stream (so a subscription's frames keep their order).
  void send_in_order(StreamSlot& slot, ConnectionId id, CbqsServerFrameV2 frame);
  void run_timeline(StreamSlot& slot, std::uint64_t now_ms);
  void pump_soon(StreamSlot& slot);
  void arm_timeline(const Bytes32& stream_id);
  void flush_journal(const Bytes32& stream_id);
  void journal_finished(const Bytes32& stream_id, std::vector<Deferred> frames, bool ok);

  boost::asio::io_context& io_;
  const CoreConfig config_;
  store::Store& store_;
  SnapshotSource& snapshots_;
  const Clock& clock_;
  Entropy& entropy_;
  boost::asio::thread_pool committer_{1};
  admission::FairQueue<HandshakeJob> admission_;
  bool admission_posted_ = false;
  std::uint64_t admission_turns_ = 0;
  std::uint64_t admission_max_wait_turns_ = 0;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  boost::asio::steady_timer housekeeping_timer_;

  ConnectionId next_connection_ = 1;
  HolderId next_holder_ = 1;
  std::map<ConnectionId, Connection> connections_;
  std::map<Bytes32, StreamSlot> streams_;
  std::atomic<bool> store_failed_{false};  // also read by /readyz on the admin thread
  CoreMetrics metrics_;
};

}  // namespace cowboy::cbqs::broker
