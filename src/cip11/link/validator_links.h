// The validator's side of the §6 connection layer: a QUIC server whose
// connections each run a Channel, with the liveness the validator keeps over
// them (§6.3-§6.5, §7.4, §11.3). Admitted runners answer Pings with signed
// Pongs and are kept in local presence; Backpressure holds them out;
// CapabilityDelta is kept per connection as advisory state; a lost connection
// or a hard failure the user reports drops them. Job streams carry what the
// user pushes (§10) and bring back the runner's frames on them, each named by
// its connection (`LinkId`) and stream.
//
// One admitted connection per runner and epoch pair (§5.2): a newer one of
// the same pair supersedes the older at once (Goodbye RateLimited). One under
// the other pair of a §5.3 overlap becomes the runner's current connection
// (presence, new pushes), and the older one drains: it stays open while it
// carries job streams, so what was pushed on it still gets its results and
// its cancels (§11.5), and is told the same Goodbye once its last job stream
// closes, or Goodbye{OverlapExpired} at the cutoff (docs/cip11.md choice 135).
//
// The block clock is the user's: on_block(h) at each block this validator
// applies. Runs on the io_context's thread; signature work on the worker.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "cip11/link/channel.h"
#include "cip11/liveness.h"

namespace cowboy::cip11 {

struct ValidatorLinksConfig {
  quic::EndpointConfig endpoint;  // a server: certificate and key set
  LocalOffer offer;
  std::chrono::milliseconds admission_deadline{10'000};
  std::size_t read_budget_bytes = 64 * 1024 * 1024;  // partial frames of every connection together
  unsigned signature_threads = 1;
};

/// §6.5 advisory state of one connection: what its deltas have added and removed.
struct AdvisoryCapabilities {
  std::set<std::string> added, removed;
  std::set<Bytes32> added_entitlements, removed_entitlements;
};

struct ValidatorLinksStats {
  std::uint64_t admitted = 0, lost = 0;
  std::uint64_t pings = 0, pongs = 0;
  std::uint64_t stale_nonces = 0;  // Pings at or below an earlier nonce of their connection
  std::uint64_t bad_seals = 0;     // frames whose signature did not verify, dropped
  std::uint64_t presence_exits = 0;  // runners that left local presence (timeout, loss, backpressure, hard failure)
  std::uint64_t goodbyes_sent = 0;
  std::uint64_t receipts = 0;  // PresenceReceipts sent with a Pong to runners that asked (§8.3)
  std::uint64_t capability_deltas = 0;  // CapabilityDeltas taken (sealed, admitted), §6.5
  /// Connections this end said Goodbye to before admitting them, by the Goodbye's reason (its wire value).
  static constexpr std::size_t kReasons = static_cast<std::size_t>(GoodbyeReason::kShutdown) + 1;
  std::array<std::uint64_t, kReasons> refused{};
};

class ValidatorLinks {
 public:
  /// One admitted connection, never reused while the links last (stream ids are per connection).
  using LinkId = std::uint64_t;

  struct Callbacks {
    std::function<void(const Address& runner)> on_admitted;
    /// The runner's admitted connection is gone, with its job streams: closed,
    /// or superseded by a newer connection of the same runner (on_admitted follows).
    std::function<void(const Address& runner, const std::string& why)> on_lost;
    /// A runner frame on a job stream of connection `link` whose seal verified.
    std::function<void(const Address& runner, LinkId link, std::int64_t stream, const Frame&)> on_job_frame;
    /// Connection `link` carries no more job streams for the user: it closed,
    /// or it was superseded at once. A draining connection's comes when it closes.
    std::function<void(const Address& runner, LinkId link)> on_link_ended;
  };

  static Result<std::unique_ptr<ValidatorLinks>, std::string> open(boost::asio::io_context& io, const Signer& me,
                                                                   Admission& admission, Entropy& entropy,
                                                                   ValidatorLinksConfig config, Callbacks callbacks);
  ~ValidatorLinks();

  /// The validator applied block `height`: it stamps later Pings and Pongs, and
  /// runners silent for PRESENCE_TIMEOUT_BLOCKS leave local presence.
  void on_block(Height height);
  /// §10.1: a job stream to `runner` carrying `assignment` (sealed here).
  /// nullopt when no admitted connection to it exists or it allows no stream now.
  struct Pushed {
    std::int64_t stream = 0;
    Bytes32 assignment_hash{};  // what the runner's JobAck must echo
    LinkId link = 0;            // the connection the stream is on
  };
  std::optional<Pushed> push(const Address& runner, JobAssignment assignment);
  /// A frame (JobCancel) on a job stream of the runner's current connection.
  bool send(const Address& runner, std::int64_t stream, Frame frame);
  void end_job_stream(const Address& runner, std::int64_t stream);
  /// The same on a job stream of connection `link`, current or draining.
  bool send(LinkId link, std::int64_t stream, Frame frame);
  void end_job_stream(LinkId link, std::int64_t stream);
  /// §10.6 HardFailure: out of local presence until its next valid Ping.
  void hard_failure(const Address& runner);
  /// Says Goodbye to every admitted connection of `runner` (a deregistered runner: kAuthFailed).
  void goodbye(const Address& runner, GoodbyeReason reason, std::optional<std::string> detail = std::nullopt);
  /// New connections offer this from their Hello on (§5.3: a block changes the current pairs).
  void set_offer(const LocalOffer& offer) { config_.offer = offer; }
  /// Says Goodbye to every admitted connection whose binding `ends` picks
  /// (§5.3 point 4: kOverlapExpired to those under an expired pair); how many.
  std::size_t goodbye_where(const std::function<bool(const ConnectionBinding&)>& ends, GoodbyeReason reason,
                            const std::string& detail);
  /// Says Goodbye to every connection (kShutdown, kDraining).
  void goodbye_all(GoodbyeReason reason, std::optional<std::uint64_t> retry_after_blocks = std::nullopt);

  const LocalPresence& presence() const { return presence_; }
  bool connected(const Address& runner) const { return by_runner_.contains(runner); }
  /// Older connections kept open, under the other pair of an overlap, while their job streams drain.
  std::size_t draining() const { return draining_.size(); }
  std::size_t admitted_runners() const { return by_runner_.size(); }
  /// Job streams open on every connection: each holds one of the runner's stream credits until both ends FIN it.
  std::size_t job_streams() const;
  /// nullptr until the runner's connection has sent a CapabilityDelta.
  const AdvisoryCapabilities* capabilities(const Address& runner) const;
  std::uint16_t port() const { return endpoint_->port(); }
  const ValidatorLinksStats& stats() const { return stats_; }
  quic::EndpointStats endpoint_stats() const { return endpoint_->stats(); }
  SignatureWorkerStats signature_stats() { return worker_.stats(); }
  std::size_t connections() const { return endpoint_->connections(); }
  /// Signature work waiting for the worker's threads (Hello checks, Ping seals, push seals).
  SignatureWorker::Depth signature_queue() const { return worker_.depth(); }

 private:
  struct Peer {
    std::unique_ptr<Channel> channel;
    HeartbeatNonces nonces;
    Address runner{};
    LinkId link = 0;  // from admission on
    bool link_ended = false;  // on_link_ended was said
    std::unique_ptr<AdvisoryCapabilities> capabilities;  // from the first CapabilityDelta on
  };

  ValidatorLinks(boost::asio::io_context& io, const Signer& me, Admission& admission, Entropy& entropy,
                 ValidatorLinksConfig config, Callbacks callbacks);
  void on_established(quic::Connection& c);
  void on_admitted(Peer& peer);
  void on_frame(Peer& peer, std::int64_t stream, const Frame& frame, const Res<Unit>& seal);
  void on_closed(quic::Connection& c, const std::string& why);
  /// A job stream of `c` closed: a draining connection with none left is superseded now.
  void on_job_stream_closed(quic::Connection& c);
  /// Goodbye RateLimited to an older connection of its runner, and its link ended.
  void supersede(Peer& older);
  void end_link(Peer& peer);
  /// The runner's current connection is gone (closed, or superseded by a newer one).
  void lose(const Address& runner, const std::string& why);
  void leave_presence(const Address& runner);
  const Peer* peer_of(const Address& runner) const;
  Peer* peer_of(const Address& runner) { return const_cast<Peer*>(std::as_const(*this).peer_of(runner)); }
  Peer* peer_of(LinkId link);

  const Signer& me_;
  Admission& admission_;
  Entropy& entropy_;
  ValidatorLinksConfig config_;
  Callbacks callbacks_;
  net::ReadBudget budget_;
  SignatureWorker worker_;
  std::unique_ptr<quic::Endpoint> endpoint_;
  std::map<quic::Connection*, Peer> peers_;
  std::map<Address, quic::Connection*> by_runner_;  // the newest admitted connection of each runner
  std::map<Address, quic::Connection*> draining_;   // an older one, of the other pair, with job streams open
  std::map<LinkId, quic::Connection*> by_link_;     // every admitted connection
  LinkId next_link_ = 1;
  LocalPresence presence_;
  Height height_{};
  ValidatorLinksStats stats_;
};

}  // namespace cowboy::cip11
