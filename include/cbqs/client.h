// The CBQS client SDK: one connection to a provider endpoint with one session,
// reopened automatically, and the three things applications do on it:
//
//   auto client = sdk::Client::connect(sdk::ClientOptions::from_dev_dir(".cbqs-dev"));
//   auto seq = (*client)->append(lane, payload).get();            // Producer
//   auto reader = (*client)->read({.start = StartAt{Sequence{1}}}); // Reader
//   auto consumer = (*client)->consume({.lane = l, .group = g});    // Consumer
//
// Lanes, groups and sequences are distinct types (LaneId, GroupId, Sequence;
// cbqs/wire/types.h): a lane passed where a group is expected does not compile.
//
// All I/O runs on one background thread the Client owns; every method may be
// called from any thread. Results are values: Outcome<T> holds a T or an Error
// carrying the §14 code the broker sent (or a client-side kind).
//
// Reconnection: when the connection drops (or the broker restarts) the Client
// dials again with capped exponential backoff and jitter, opens a new session
// with the same grant, resubscribes every Reader from the sequence after the
// last one it received and every Consumer to its group, and sends again every
// append that was not yet answered (at-least-once, docs/protocol.md §J). Other
// requests in flight fail with Error::Kind::kDisconnected; leases handed out
// before the drop are gone with their session and their records come back.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cbqs/wire/errors.h"
#include "cbqs/wire/frames.h"
#include "common/crypto.h"
#include "common/result.h"

namespace cowboy::cbqs::sdk {

struct Error {
  enum class Kind : std::uint8_t {
    kBroker,              // the broker refused: `code` is the §14 code
    kDisconnected,        // the connection dropped before the answer came
    kTimeout,             // no answer (or no connection) within the time allowed
    kRefusedDestination,  // §11.4: the endpoint resolves to a refused address
    kConfiguration,       // unreadable grant, key or certificate; a bad endpoint
    kProtocol,            // the broker sent something the protocol does not allow here
    kClosed,              // the Client, Reader or Consumer was closed
  };
  Kind kind = Kind::kBroker;
  std::uint16_t code = 0;
  std::string message;

  bool is(ErrorCode c) const { return kind == Kind::kBroker && code == static_cast<std::uint16_t>(c); }
  /// "LeaseStale (513): the lease is unknown, ..." or "disconnected: ...".
  std::string describe() const;
};

template <typename T>
using Outcome = Result<T, Error>;

struct Backoff {
  std::chrono::milliseconds initial{50};
  std::chrono::milliseconds max{5'000};
  double jitter = 0.2;  // each wait is scaled by a random factor in [1 - jitter, 1 + jitter]
};

struct ClientOptions {
  std::string endpoint = "wss://127.0.0.1:7447/";
  // Trust: the system roots by default; or a CA file; or one pinned
  // certificate (the server must present exactly it). Verification is never off.
  std::filesystem::path ca_file;
  std::filesystem::path pinned_certificate;
  std::string server_name;  // checked against the certificate; empty: the endpoint's host
  StreamGrantV2 grant;
  crypto::Ed25519Seed holder{};
  /// §11.4 development opt-in: loopback and private destinations allowed.
  bool allow_private_destinations = false;
  Backoff reconnect;
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds request_timeout{10'000};

  /// The files `cbqsd --dev --data-dir DIR` writes: grant, holder key and the
  /// dev certificate (pinned), private destinations allowed. An empty
  /// endpoint is the one that cbqsd listens on (DIR/dev-endpoints.json).
  static Outcome<ClientOptions> from_dev_dir(const std::filesystem::path& dir, std::string endpoint = {});
  /// A grant file (hex of a canonical StreamGrantV2) and a holder key file.
  static Outcome<ClientOptions> from_files(std::string endpoint, const std::filesystem::path& grant_file,
                                           const std::filesystem::path& holder_key_file);
};

struct Record {
  Sequence sequence{};
  LaneId lane_id{};
  Bytes payload;
};

struct ReaderOptions {
  LaneScope lanes = LaneScopeAny{};
  StartPosition start = StartHead{};
  /// Bytes of Delivery frames (§K) the broker may send ahead of what next()
  /// has returned; refilled as records are taken.
  std::uint64_t window_bytes = 1 << 20;
};

/// A cursor subscription. Records come in sequence order; after a reconnect
/// the subscription resumes at the sequence after the last one received.
class Reader {
 public:
  virtual ~Reader() = default;
  /// The next record, or nullopt if none arrived within `timeout`.
  virtual Outcome<std::optional<Record>> next(std::chrono::milliseconds timeout) = 0;
  /// True once the replay has reached the head the broker reported at
  /// subscribe time (CursorProgress) and every record before it was returned.
  virtual bool caught_up() const = 0;
  virtual Sequence last_sequence() const = 0;
  virtual void close() = 0;
};

/// A record leased to this consumer: act on it with Consumer::ack/nack/...
struct Lease {
  Record record;
  Bytes32 handle{};
  Bytes32 subscription{};              // the subscription it was delivered on
  std::uint64_t connection_epoch = 0;  // the session it belongs to
};

struct ConsumerOptions {
  LaneId lane{};
  GroupId group{};
  std::uint64_t window_bytes = 1 << 20;
  /// Extend every lease still unresolved at half its visibility timeout, so
  /// long work keeps it (up to the group's max_visibility_ms).
  bool auto_extend = false;
};

/// A competing consumer of a group.
class Consumer {
 public:
  virtual ~Consumer() = default;
  virtual Outcome<std::optional<Lease>> next(std::chrono::milliseconds timeout) = 0;
  virtual Outcome<Unit> ack(const Lease& lease) = 0;
  virtual Outcome<Unit> nack(const Lease& lease) = 0;
  virtual Outcome<Unit> reject(const Lease& lease) = 0;
  virtual Outcome<Unit> extend(const Lease& lease, std::chrono::milliseconds by) = 0;
  /// Pipelined forms: `done` runs on the client's io thread once the broker
  /// answers (the Ok waits for the group journal, docs/protocol.md §C). Any
  /// number may be outstanding; this is how a consumer keeps up with the broker.
  virtual void ack(const Lease& lease, std::function<void(Outcome<Unit>)> done) = 0;
  virtual void nack(const Lease& lease, std::function<void(Outcome<Unit>)> done) = 0;
  /// Waits until every ack, nack, reject and extend made so far is answered
  /// (their own outcomes went to their callers); a timeout error otherwise.
  virtual Outcome<Unit> flush(std::chrono::milliseconds timeout) = 0;
  virtual void close() = 0;
};

/// The group fields create_group fills when left at 0 (0 is never valid for
/// them): visibility_timeout_ms 30,000; max_visibility_ms 30,000 or the
/// visibility timeout if longer; max_in_flight 1,000; max_in_flight_per_holder
/// 100 or max_in_flight if smaller; max_attempts 5; record_deadline_ms
/// 3,600,000. A value above the chain's ceiling is refused with
/// InvalidGroupConfig naming the field and the ceiling.
GroupConfigV2 with_group_defaults(GroupConfigV2 config);

struct ClientStats {
  std::uint64_t connects = 0;       // sessions opened, the first one included
  std::uint64_t resent_appends = 0; // appends sent again after a reconnect
  std::uint64_t subscribes = 0;     // Subscribe requests sent (resubscriptions included)
};

/// §11.4 for an endpoint: its host (a literal, or every address the name
/// resolves to) outside the refused ranges, unless private destinations are
/// allowed. Client::connect checks this first; tools may check it earlier.
Outcome<Unit> check_destination(const std::string& endpoint, bool allow_private_destinations);

class Client {
 public:
  /// Dials, handshakes and opens the session; fails if the first session
  /// cannot be opened within connect_timeout (later drops are retried).
  static Outcome<std::unique_ptr<Client>> connect(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // ---- producer -------------------------------------------------------------
  /// Pipelined: any number may be outstanding. The future holds the sequence.
  std::future<Outcome<Sequence>> append(LaneId lane, Bytes payload);
  void append(LaneId lane, Bytes payload, std::function<void(Outcome<Sequence>)> done);
  /// Many appends in one hand-off: the payloads reach the io thread together
  /// (one lock, one post, at most one wake-up) and go out in the order given,
  /// each as its own Append on the one connection, so their sequences follow
  /// that order. Each is made durable, answered and (after a reconnect) sent
  /// again exactly as a single append. `done` runs once, on the io thread, when
  /// every one is answered: one outcome per payload, in the order given.
  /// The wire has no atomic batch, so a refusal by the broker is per record and
  /// the outcomes say which records are durable; what the SDK can see before
  /// sending (a payload over the grant's max_message_bytes) refuses the whole
  /// batch with the code the broker would give, and nothing is sent.
  void append_batch(LaneId lane, std::vector<Bytes> payloads,
                    std::function<void(std::vector<Outcome<Sequence>>)> done);
  std::future<std::vector<Outcome<Sequence>>> append_batch(LaneId lane, std::vector<Bytes> payloads);
  /// Waits until every append made so far is answered.
  Outcome<Unit> flush(std::chrono::milliseconds timeout);

  // ---- lanes, groups, settings, checkpoints --------------------------------
  Outcome<LaneId> create_lane();
  /// Creates (or finds) a room lane; its id is room_lane_id(room).
  Outcome<LaneId> open_room_lane(const RoomLaneV2& room);
  Outcome<Unit> close_lane(LaneId lane);
  /// Every lane the grant's scope shows, paging through ListLanes.
  Outcome<std::vector<LaneRecordV2>> list_lanes();
  Outcome<resp::Settings> settings();
  /// Replaces the stream's §13 settings; the stored ones (with the chain's group ceilings).
  Outcome<resp::Settings> update_settings(const StreamSettingsV2& settings);
  /// Creates a group on `config.lane_id`; fields left at 0 take with_group_defaults.
  Outcome<GroupId> create_group(const GroupConfigV2& config);
  Outcome<GroupConfigV2> get_group(GroupId group);
  Outcome<GroupConfigV2> update_group(const GroupConfigV2& config);
  Outcome<Unit> delete_group(GroupId group);
  /// The receipt covering `sequence`, or the latest one.
  Outcome<CheckpointReceiptV2> checkpoint(std::optional<Sequence> covering_sequence = std::nullopt);
  /// Any request; the answer's body.
  Outcome<CbqsResponseBodyV2> call(CbqsRequestBodyV2 body);

  // ---- subscriptions --------------------------------------------------------
  Outcome<std::unique_ptr<Reader>> read(ReaderOptions options = {});
  Outcome<std::unique_ptr<Consumer>> consume(ConsumerOptions options);

  const StreamGrantV2& grant() const;
  ClientStats stats() const;
  /// Drops the connection as if the network failed (tests, demos).
  void drop_connection();

  struct Impl;

 private:
  explicit Client(std::shared_ptr<Impl> impl);
  Outcome<LaneId> open_lane(std::optional<RoomLaneV2> room);
  std::shared_ptr<Impl> impl_;
};

}  // namespace cowboy::cbqs::sdk
