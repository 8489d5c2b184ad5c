// The broker's connection side, independent of the transport: connections,
// handshakes and their admission, sessions and their standing, verbs. Each
// request of a session that stands goes to its stream's owner in one call
// (stream/owner.h), which answers it. Every method runs on one executor (the
// io_context thread), so no state here is locked. The owners run there too,
// or, with io_threads > 1, each on a strand of a pool of stream threads: then
// a call into an owner is posted to its strand (at_owner, or ask when Core
// needs the answer) and owners reach connections through the Outbox.
//
// Request flow (docs/architecture.md): a Peer hands a binary message to
// on_frame -> strict decode -> session lookup -> the session's standing under
// the current snapshot -> verbs -> StreamOwner::request.
//
// A stream's owner is loaded on first use on a loader thread ("cbqs-load"),
// never here: requests to the stream wait in order until it is in, and every
// other stream is served (and loaded) meanwhile.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "admission/fair_queue.h"
#include "cbqs/broker/outbox.h"
#include "cbqs/broker/snapshot.h"
#include "cbqs/broker/stream/owner.h"
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
  /// The remote address, for logs.
  virtual std::string remote_address() const { return "unknown"; }
};

struct CoreConfig {
  ProviderIdentity provider;
  /// Session-admission signature checks (docs/admission.md, "Use in cbqsd"):
  /// one source per connection, ages in milliseconds.
  admission::QueueConfig admission{64, 16, 1'024, 3'000};
  std::uint64_t admission_credits_per_turn = 64;  // 16 verifications per turn
  std::uint64_t credit_cap = 1ULL << 30;              // docs/protocol.md §K
  std::size_t peer_queue_limit = 16 * 1024 * 1024;     // pause deliveries to a peer above this
  /// 1: the owners run on the io thread with the connections. N > 1: they run
  /// on N stream threads ("cbqs-stream"), one strand each, and N committers
  /// write for them; the connections stay on the io thread.
  std::size_t io_threads = 1;
  /// Tests only: runs on the loader thread before a stream's state is read.
  std::function<void(const Bytes32& stream_id)> before_load = {};
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
  std::uint64_t journal_writes = 0;  // synced writes carrying changes other than records (leases, acks, lanes, groups, settings, retention)
  std::uint64_t journal_ops = 0;     // puts and deletes in them
  std::uint64_t writes = 0;          // synced writes returned ok
  std::uint64_t write_busy_us = 0;   // time they held their thread: sealing and the synced write
  std::deque<std::uint64_t> sync_latency_us;  // the most recent samples, for percentiles
  LatencyHistogram sync_latency;             // every synced write since start
  std::vector<StreamMetrics> streams;
  std::uint64_t admission_turns = 0;
  std::uint64_t admission_pending = 0;
  std::uint64_t admission_max_wait_turns = 0;  // the most turns a served handshake job waited
  std::uint64_t read_pauses = 0;               // times a connection's reads paused for its write queue
};

class Core final : private Outbound {
 public:
  using ConnectionId = broker::ConnectionId;

  Core(boost::asio::io_context& io, CoreConfig config, store::Store& store, ViewSource& snapshots,
       const Clock& clock, Entropy& entropy);
  ~Core();

  ConnectionId on_open(Peer& peer);
  void on_frame(ConnectionId id, ByteView frame);
  /// The channel refused a frame and closes next: one above the connection's
  /// frame cap, from its header (`too_large`: Error FrameTooLarge, then 1009),
  /// or one the process's read budget cannot hold now (Unavailable, then 1013).
  void on_frame_refused(ConnectionId id, bool too_large);
  void on_close(ConnectionId id);
  /// The connection's write queue shrank (a write completed).
  void on_written(ConnectionId id);
  /// Starts committing every staged append (clean shutdown).
  void drain();
  /// No batch is being written and nothing is staged.
  bool idle() const;
  CoreMetrics metrics() const;
  bool store_failed() const { return health_.failed(); }

  // The dead-letter view (docs/protocol.md §O), for the operator's admin endpoint.
  /// EXPIRED records of a group, ascending after `after`, at most `limit`; nullopt for an unknown group.
  std::optional<std::vector<DeadLetter>> dead_letters(const Bytes32& stream_id, GroupId group_id,
                                                      Sequence after, std::size_t limit);
  /// Makes every dead letter of the group deliverable again (attempts reset); how many, or nullopt.
  std::optional<std::size_t> redrive(const Bytes32& stream_id, GroupId group_id);
  /// Every group of a stream with its state (cbqs groups list / info); nullopt if the stream cannot be loaded.
  std::optional<std::vector<GroupReport>> group_reports(const Bytes32& stream_id);
  /// Loads the stream on the loader thread if it is not in yet; `done` runs here once it is
  /// (or its load failed). The operator's views call this first, so they do not load here.
  void load(const Bytes32& stream_id, std::function<void()> done);

 private:
  struct PendingHandshake {
    Bytes32 challenge{};
    std::uint64_t expires_at_ms = 0;
    StreamGrantV2 grant;
    Bytes32 grant_id{};
  };
  struct Session {
    std::shared_ptr<const StreamGrantV2> grant;  // shared with the requests posted to the owner
    Bytes32 grant_id{};
    SigningPublicKey admin_key_at_open;
    std::unique_ptr<boost::asio::steady_timer> expiry;
  };
  struct Connection {
    Peer* peer = nullptr;
    std::string remote;  // the peer's address, for logs
    std::uint64_t sessionless_since_ms = 0;  // 0 while a session is open
    std::map<Bytes32, PendingHandshake> pending;
    std::map<Bytes32, Session> sessions;
    std::shared_ptr<Outbox::Gauge> gauge;  // with owners off the io thread: what room() reads
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
  // Outbound, for the owners
  void send(ConnectionId id, const CbqsServerFrameV2& frame) override;
  Room room(ConnectionId id) const override;

  // core.cc: connections, requests and housekeeping
  void refuse_handshake(ConnectionId id, const Bytes32& request_id, const Bytes32& stream_id, ErrorCode code);
  void send_error(ConnectionId id, std::optional<Bytes32> request_id, ErrorCode code, std::string_view detail = {},
                  Bytes details = {});
  // Requests are taken by mutable reference: an Append's payload moves into the batch.
  void handle_request(ConnectionId id, Connection& c, Request& f);
  /// Runs `then(owner)` here once the stream's owner is loaded (at once if it is),
  /// after every call queued for it before; null when its state cannot be read.
  template <typename F>
  void with_owner(const Bytes32& stream_id, F&& then);
  /// The stream's owner for the operator's views: loaded in place if no load is under way.
  StreamOwner* owner_now(const Bytes32& stream_id);
  OwnerContext owner_context();
  void loaded(const Bytes32& stream_id, std::unique_ptr<StreamOwner> owner);
  /// Runs `f(owner)` where the owner lives: here, or posted to its strand.
  template <typename F>
  void at_owner(StreamOwner& o, F&& f);
  /// Runs `f(owner)` where the owner lives and returns its result (waits for it).
  template <typename F>
  auto ask(StreamOwner& o, F&& f) const;
  /// Hands an encoded frame to a connection; its write queue afterwards (0 if gone).
  std::size_t send_bytes(ConnectionId id, Bytes frame, bool is_error);
  void end_session(ConnectionId id, const Bytes32& session_id);
  void close_sessionless(std::uint64_t now_ms, std::uint64_t timeout_ms);
  void housekeeping();

  // sessions.cc: handshakes (§7) and their admission
  void open_session(ConnectionId id, Connection& c, const OpenSession& f);
  void complete_session(ConnectionId id, Connection& c, const CompleteSession& f);
  void admit(ConnectionId id, const Bytes32& request_id, HandshakeJob job);
  void schedule_admission();
  void admission_turn();
  void finish_open(ConnectionId id, OpenJob& job);
  void finish_complete(ConnectionId id, CompleteJob& job);
  std::uint64_t steady_ms() const;
  Bytes32 random32();

  boost::asio::io_context& io_;
  const CoreConfig config_;
  store::Store& store_;
  ViewSource& snapshots_;
  const Clock& clock_;
  Entropy& entropy_;
  boost::asio::thread_pool committer_;
  std::atomic<std::size_t> writes_at_committer_{0};  // OwnerContext::writes_at_committer
  // With io_threads > 1: the stream threads the owners run on, and their Outbox.
  std::unique_ptr<boost::asio::io_context> streams_;
  std::vector<std::thread> stream_threads_;
  std::unique_ptr<Outbox> outbox_;
  admission::FairQueue<HandshakeJob> admission_;
  bool admission_posted_ = false;
  std::uint64_t admission_turns_ = 0;
  std::uint64_t admission_max_wait_turns_ = 0;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  boost::asio::steady_timer housekeeping_timer_;

  ConnectionId next_connection_ = 1;
  std::map<ConnectionId, Connection> connections_;
  StoreHealth health_;
  std::map<Bytes32, std::unique_ptr<StreamOwner>> owners_;
  // Streams being loaded: what waits for each, in arrival order, and where the loader puts the owner.
  struct Loading {
    std::vector<std::function<void(StreamOwner*)>> waiting;
    std::shared_ptr<std::unique_ptr<StreamOwner>> owner = std::make_shared<std::unique_ptr<StreamOwner>>();
  };
  std::map<Bytes32, Loading> loading_;
  CoreMetrics metrics_;
  // "cbqs-load": read streams' state off the io thread; several, so that a slow
  // load (a migration) does not hold up the first requests to other streams.
  static constexpr std::size_t kLoaders = 4;
  boost::asio::thread_pool loader_{kLoaders};
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // loads that finish after the core are dropped
};

}  // namespace cowboy::cbqs::broker
