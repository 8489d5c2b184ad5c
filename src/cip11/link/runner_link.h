// The runner's side of the §6 connection layer. A RunnerEndpoint is one UDP
// socket shared by any number of RunnerLinks (a runner holds one per
// validator of Sub(R); a load generator, thousands). A RunnerLink keeps one
// validator connection alive: it connects, opens the control stream, is
// admitted (§6.2), sends a signed HeartbeatPing at admission and at every
// block (§6.3), checks each Pong's signature and nonce echo, and after a
// loss reconnects with the §11.3 backoff, honouring retry_after_blocks.
//
// The block clock is the user's (on_block). Runs on the io_context's
// thread; signature work on the endpoint's worker.
#pragma once

#include <map>
#include <memory>

#include "cip11/link/channel.h"
#include "cip11/liveness.h"
#include "cip11/reconnect.h"

namespace cowboy::cip11 {

class RunnerLink;

class RunnerEndpoint {
 public:
  /// A client endpoint (no certificate) whose Channels sign on `worker`.
  static Result<std::unique_ptr<RunnerEndpoint>, std::string> open(boost::asio::io_context& io, SignatureWorker& worker,
                                                                   net::ReadBudget& budget, quic::EndpointConfig config);
  quic::Endpoint& quic() { return *endpoint_; }

 private:
  friend class RunnerLink;
  RunnerEndpoint(boost::asio::io_context& io, SignatureWorker& worker, net::ReadBudget& budget)
      : io_(io), worker_(worker), budget_(budget) {}
  boost::asio::io_context& io_;
  SignatureWorker& worker_;
  net::ReadBudget& budget_;
  std::unique_ptr<quic::Endpoint> endpoint_;
  std::map<quic::Connection*, RunnerLink*> routes_;
};

struct RunnerLinkConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  LocalOffer offer;
  std::chrono::milliseconds admission_deadline{10'000};
  std::chrono::milliseconds block_time{1'000};  // converts a Goodbye's retry_after_blocks to a wait
  bool check_peer_seals = true;                 // Channel::Setup: false in load generators only
};

struct RunnerLinkStats {
  std::uint64_t connects = 0, admissions = 0, losses = 0;
  std::uint64_t pings = 0, pongs = 0;
  std::uint64_t rejected_pongs = 0;  // a bad signature or a nonce_echo other than the outstanding Ping's
  std::uint64_t receipts = 0, rejected_receipts = 0;  // Mode A PresenceReceipts (§8.3), by the same two checks
};

class RunnerLink {
 public:
  struct Callbacks {
    std::function<void()> on_admitted;
    /// `why`: "Goodbye <Reason>" (then ": <detail>" if it gave one) when the
    /// validator said Goodbye, else the transport's reason.
    std::function<void(const std::string& why)> on_lost;
    /// A valid Pong for the outstanding Ping.
    std::function<void(const HeartbeatPong&)> on_pong;
    /// A valid PresenceReceipt (Mode A, §8.3) for the outstanding Ping, sent
    /// after its Pong by a validator this runner asked (kPresenceReceiptsCapability).
    std::function<void(const PresenceReceipt&)> on_receipt;
    /// A validator frame on a job stream, with its seal verdict (§10.1: an
    /// assignment failing it is answered with Reject(UnverifiableAssignment)).
    std::function<void(std::int64_t stream, const Frame&, const Res<Unit>& seal)> on_job_frame;
  };

  /// `admission` checks the validator's Hello (§6.2: its key is in the active snapshot).
  RunnerLink(RunnerEndpoint& endpoint, const Signer& me, Admission& admission, Entropy& entropy,
             RunnerLinkConfig config, Callbacks callbacks);
  ~RunnerLink();

  /// Connects, and keeps reconnecting after every loss until destroyed.
  void start();
  /// The runner saw block `height`: a Ping on an admitted connection.
  void on_block(Height height);
  /// A frame on a job stream (JobAck, JobProgress, JobResultCommit, JobResult)
  /// or the control stream (BackpressureSignal, CapabilityDelta); sealed here.
  bool send(std::int64_t stream, Frame frame);
  void end_job_stream(std::int64_t stream);
  /// Says Goodbye and stops reconnecting (the runner is leaving).
  void goodbye(GoodbyeReason reason);
  /// No longer wanted (§5.3: a reconfiguration left it out): it never
  /// reconnects, and its connection lasts until the validator ends it.
  void retire();
  /// What the next connection's Hello offers (the pairs current now).
  void set_offer(const LocalOffer& offer) { config_.offer = offer; }

  bool admitted() const { return channel_ && channel_->admitted(); }
  /// The validator's accepting_new in its last valid Pong (§6.4).
  bool validator_says_accepting() const { return accepting_; }
  const RunnerLinkStats& stats() const { return stats_; }
  Height height() const { return height_; }

 private:
  void on_established(quic::Connection& c);
  void on_stream_data(std::int64_t stream, ByteView data) {
    if (channel_) channel_->on_stream_data(stream, data);
  }
  void on_stream_end(std::int64_t stream) {
    if (channel_) channel_->on_stream_end(stream);
  }
  void on_stream_closed(std::int64_t stream) {
    if (channel_) channel_->on_stream_closed(stream);
  }
  void on_closed(const std::string& why);
  void on_frame(std::int64_t stream, const Frame& frame, const Res<Unit>& seal);
  void ping();
  void reconnect_later();
  friend class RunnerEndpoint;

  RunnerEndpoint& endpoint_;
  const Signer& me_;
  Admission& admission_;
  Entropy& entropy_;
  RunnerLinkConfig config_;
  Callbacks callbacks_;
  ReconnectBackoff backoff_;
  boost::asio::steady_timer retry_;
  quic::Connection* connection_ = nullptr;
  std::unique_ptr<Channel> channel_;
  HeartbeatNonces nonces_;
  std::optional<std::uint64_t> retry_after_blocks_;
  std::optional<GoodbyeReason> peer_goodbye_;  // the connection's end, as the validator said it
  std::string peer_goodbye_detail_;
  Height height_{};
  bool accepting_ = true;
  bool leaving_ = false;
  RunnerLinkStats stats_;
};

}  // namespace cowboy::cip11
