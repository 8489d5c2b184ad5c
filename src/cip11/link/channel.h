// One CIP-11 connection's streams over a quic::Connection (§6.1): the
// control stream, where §6.2 admission runs through a Handshake, and the
// validator's job streams, one per assignment. Stream bytes become §12.1
// frames through a FrameReassembler per stream; each frame must be placed
// as §12.2 says (seal.h) and, after admission, carry the peer's signature.
// Every refusal ends in a Goodbye and the connection's close: unsigned until
// this end has sent its HelloAck, signed from then on (§12.5; handshake.h
// gives the order, so each end knows which kind to expect).
//
// Signing and verifying run on a SignatureWorker, one job at a time per
// channel, so frames keep their order; the channel itself lives on the
// endpoint's thread. A refusal found in the bytes (a misplaced frame, a
// broken or truncated one) joins the same queue, behind the frames that came
// before it on the wire: whether its Goodbye is signed follows from the
// stream's order, never from the worker's timing. The runner opens the
// control stream (stream 0) and starts; the validator starts when that
// stream's first bytes arrive. A peer that is not admitted within the
// admission deadline is refused. Before admission its handshake frames are
// checked through the worker's fair queue (signature_worker.h), and the
// control stream takes at most a handshake's frames, each at most 4 KiB.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cip11/handshake.h"
#include "cip11/link/seal.h"
#include "cip11/link/signature_worker.h"
#include "cip11/quic/endpoint.h"
#include "cip11/reassembler.h"

namespace cowboy::cip11 {

constexpr std::int64_t kControlStream = 0;  // the runner's first bidirectional stream (§6.1)

class Channel {
 public:
  struct Callbacks {
    std::function<void(Channel&)> on_admitted;
    /// A frame after admission, on `stream` (kControlStream or a job stream).
    /// `seal` is check_seal's verdict: only a frame with a valid one is the
    /// peer's word; a JobAssignment failing it is still shown, for the
    /// runner's JobAck{Reject(UnverifiableAssignment)}.
    std::function<void(Channel&, std::int64_t stream, const Frame&, const Res<Unit>& seal)> on_frame;
    /// This end refused the peer (`by_peer` false), or the peer said Goodbye
    /// (true; after admission only if its signature verifies, else this end
    /// says Goodbye kAuthFailed itself). The connection closes next.
    std::function<void(Channel&, const Goodbye&, bool by_peer)> on_goodbye;
  };

  struct Setup {
    const Signer& me;
    LocalOffer offer;
    Admission& admission;  // called on a worker thread: it must be safe to call concurrently
    Entropy& entropy;
    SignatureWorker& worker;
    net::ReadBudget* budget;  // process-wide, for partial frames of every stream
    std::chrono::milliseconds admission_deadline{10'000};
    /// Load generators only: false skips checking the peer's signatures after
    /// admission (every check_seal verdict is then ok), so one machine can
    /// stand in for thousands of runners. Every service keeps it true.
    bool check_peer_seals = true;
  };

  /// `connection` must be established (its channel binding is read here).
  Channel(quic::Connection& connection, Setup setup, Callbacks callbacks);
  ~Channel();

  /// Runner: opens the control stream and sends Hello. False if no stream could be opened.
  bool open();
  /// Bytes of a stream of this connection, as the endpoint reports them.
  void on_stream_data(std::int64_t stream_id, ByteView data);
  /// The peer ended a stream (FIN): inside a frame that is a truncated frame,
  /// and the control stream must last as long as the connection (§6.1, §12.1).
  void on_stream_end(std::int64_t stream_id);
  /// The endpoint closed a stream: its reassembly state goes.
  void on_stream_closed(std::int64_t stream_id);

  /// After admission: signs `frame` and sends it on `stream`. False before
  /// admission, after a Goodbye, or on a stream this channel does not hold.
  bool send(std::int64_t stream, Frame frame);
  /// Validator: opens a job stream and sends the assignment on it (seal()
  /// fills its hashes, keys and signature). nullopt before admission or when
  /// the runner's stream limit allows no stream now.
  std::optional<std::int64_t> open_job_stream(JobAssignment assignment);
  /// Ends this end's side of a job stream once its queued frames are sent.
  void end_job_stream(std::int64_t stream);
  /// Says Goodbye (signed once this end has sent its HelloAck); the peer
  /// closes the connection when it has read it, or this end does after a grace period.
  void goodbye(GoodbyeReason reason, std::optional<std::string> detail = std::nullopt,
               std::optional<std::uint64_t> retry_after_blocks = std::nullopt);

  bool admitted() const { return admitted_; }
  /// This end or the peer has said Goodbye.
  bool ended() const { return ended_; }
  /// Job streams not yet closed at both ends (QUIC closes one when both have sent FIN).
  std::size_t job_streams() const { return streams_.size() - streams_.count(kControlStream); }
  /// The identities the connection is bound to; complete once admitted.
  const ConnectionBinding& binding() const;
  quic::Connection& connection() { return connection_; }
  Role role() const { return me_.role(); }

 private:
  struct Crypto;  // what the worker touches: the handshake and the signer
  struct Stream {
    explicit Stream(net::ReadBudget* budget) : frames(budget) {}
    FrameReassembler frames;
    bool first = true;  // no frame has arrived on it yet
  };
  struct Job {  // one frame in or out, the end of a job stream, or a refusal of the peer's bytes, in order
    std::int64_t stream;
    Frame frame;
    enum Kind { kIn, kOut, kEnd, kRefuse } kind;
    std::string detail = {};  // kRefuse: why
  };

  void start(std::int64_t stream_id);
  void enqueue(Job job);
  void pump();
  void take(std::int64_t stream, Frame frame, bool admitted_before, Handshake::Step step, Res<Unit> seal);
  void peer_goodbye(const Goodbye& bye, bool valid);
  void close_soon();
  void after_goodbye(std::int64_t stream_id, ByteView data);
  void write(std::int64_t stream, const Frame& frame) { connection_.send(stream, encode_frame(frame)); }
  void refuse(std::string detail) { goodbye(GoodbyeReason::kProtocolError, std::move(detail)); }
  /// A protocol error in the peer's bytes, refused after the frames before it.
  void refuse_in_turn(std::string detail);
  StreamKind kind(std::int64_t stream) const { return stream == kControlStream ? StreamKind::kControl : StreamKind::kJob; }

  quic::Connection& connection_;
  const Signer& me_;
  SignatureWorker& worker_;
  net::ReadBudget* budget_;
  bool check_peer_seals_;
  Callbacks callbacks_;
  std::shared_ptr<Crypto> crypto_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  boost::asio::steady_timer deadline_;
  std::map<std::int64_t, Stream> streams_;
  std::vector<Job> jobs_;   // short: a vector costs nothing while empty
  std::vector<Job> early_;  // runner: job stream frames that came before this end's admission
  bool busy_ = false, started_ = false, admitted_ = false, ended_ = false;
  bool proved_ = false;     // this end has sent its HelloAck: its Goodbye is signed
  bool refusing_ = false;   // a refusal is queued: later bytes are not read
  bool close_after_send_ = false;  // a signed Goodbye is in the queue
  std::size_t handshake_frames_ = 0;  // control-stream frames read before admission
};

}  // namespace cowboy::cip11
