#include "cip11/link/channel.h"

namespace cowboy::cip11 {

namespace {
constexpr std::uint64_t kGoodbyeCloseCode = 0;  // the QUIC application code after a Goodbye
// After sending Goodbye, the peer closes once it has read (and verified) it;
// this end closes by itself only if the peer has not within this time.
constexpr std::chrono::milliseconds kGoodbyeGrace{1'000};
// Job stream frames a runner holds until its own admission (one assignment
// per stream, and the validator has just admitted it): a few are plenty.
constexpr std::size_t kMaxEarlyFrames = 16;
// Before admission the control stream carries a Hello, a HelloAck and maybe
// a Goodbye, each a few hundred bytes: a larger declared length, or more
// frames, is refused from what arrived, so an unadmitted peer holds at most
// this much of the process's read budget and queues at most this many jobs.
constexpr std::uint32_t kMaxHandshakeFrameBytes = 4 * 1024;
constexpr std::size_t kMaxHandshakeFrames = 3;

bool server_initiated_bidi(std::int64_t stream) { return (stream & 0x03) == 0x01; }
}  // namespace

// Touched by one worker job at a time, and by the channel's thread only while no job runs.
struct Channel::Crypto {
  const Signer& me;
  std::unique_ptr<Handshake> handshake;  // until admission
  std::optional<BoundConnection> bound;  // from this end's HelloAck on
};

Channel::Channel(quic::Connection& connection, Setup setup, Callbacks callbacks)
    : connection_(connection), me_(setup.me), worker_(setup.worker), budget_(setup.budget),
      check_peer_seals_(setup.check_peer_seals), callbacks_(std::move(callbacks)),
      crypto_(std::make_shared<Crypto>(Crypto{
          setup.me, std::make_unique<Handshake>(setup.me, setup.offer, connection.channel_binding().value_or(Bytes32{}),
                                                  setup.admission, setup.entropy),
          std::nullopt})),
      deadline_(setup.worker.io()) {
  deadline_.expires_after(setup.admission_deadline);
  deadline_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (ec || !alive.lock() || admitted_) return;
    goodbye(GoodbyeReason::kAuthFailed, "not admitted within the admission deadline");
  });
}

Channel::~Channel() { deadline_.cancel(); }

const ConnectionBinding& Channel::binding() const {
  return crypto_->bound ? crypto_->bound->binding : crypto_->handshake->binding();
}

bool Channel::open() {
  auto stream = connection_.open_stream();
  if (!stream) return false;
  start(*stream);
  return true;
}

void Channel::start(std::int64_t stream_id) {
  started_ = true;
  streams_.try_emplace(stream_id, budget_).first->second.frames.set_max_frame_bytes(kMaxHandshakeFrameBytes);
  write(stream_id, crypto_->handshake->hello());
}

void Channel::on_stream_data(std::int64_t stream_id, ByteView data) {
  if (ended_) return after_goodbye(stream_id, data);
  if (refusing_) return;
  if (!started_) {
    if (stream_id != kControlStream) return refuse_in_turn("the control stream is stream 0");
    start(stream_id);  // the validator answers on the stream the runner opened
  }
  auto it = streams_.find(stream_id);
  if (it == streams_.end()) {
    // Only the validator opens job streams. It may push as soon as it has
    // admitted the runner, before the runner has read the validator's
    // HelloAck: QUIC does not order streams, so such a stream's frames wait
    // for this end's admission.
    if (me_.role() != Role::kRunner || !server_initiated_bidi(stream_id))
      return refuse_in_turn("a stream the validator did not open");
    it = streams_.try_emplace(stream_id, budget_).first;
  }
  Stream& s = it->second;
  auto pushed = s.frames.push(data);
  while (auto f = s.frames.next()) {  // what decoded before a refusal still counts
    if (!placement_allowed(type_of(*f), peer_role(me_.role()), kind(stream_id), s.first))
      return refuse_in_turn("frame type " + std::to_string(static_cast<int>(type_of(*f))) +
                            " on the wrong stream or from the wrong end");
    s.first = false;
    Job job{stream_id, std::move(*f), Job::kIn};
    if (stream_id == kControlStream && !admitted_ && ++handshake_frames_ > kMaxHandshakeFrames)
      return refuse_in_turn("more frames before admission than a handshake has");
    if (stream_id == kControlStream || admitted_) {
      enqueue(std::move(job));
    } else if (early_.size() < kMaxEarlyFrames) {
      early_.push_back(std::move(job));
    } else {
      return refuse_in_turn("job stream frames before admission");
    }
  }
  if (!pushed) refuse_in_turn(std::string(to_string(pushed.error())));
}

void Channel::on_stream_end(std::int64_t stream_id) {
  if (ended_ || refusing_) return;
  auto it = streams_.find(stream_id);
  if (it == streams_.end()) return;
  if (auto ended = it->second.frames.end(); !ended)
    return refuse_in_turn("the stream ended inside a frame: " + std::string(to_string(ended.error())));
  if (stream_id == kControlStream) refuse_in_turn("the control stream ended before the connection");
}

void Channel::refuse_in_turn(std::string detail) {
  refusing_ = true;
  enqueue(Job{kControlStream, Frame{Goodbye{}}, Job::kRefuse, std::move(detail)});
}

// This end has said Goodbye: nothing the peer says counts now, but its own
// Goodbye means it has read ours, so the connection can close at once.
void Channel::after_goodbye(std::int64_t stream_id, ByteView data) {
  auto it = streams_.find(stream_id);
  if (stream_id != kControlStream || it == streams_.end() || !it->second.frames.push(data)) return;
  while (auto f = it->second.frames.next())
    if (std::holds_alternative<Goodbye>(*f)) return connection_.close(kGoodbyeCloseCode);
}

void Channel::on_stream_closed(std::int64_t stream_id) {
  if (stream_id != kControlStream) streams_.erase(stream_id);
}

bool Channel::send(std::int64_t stream, Frame frame) {
  auto it = streams_.find(stream);
  if (ended_ || !admitted_ || it == streams_.end() ||
      !placement_allowed(type_of(frame), me_.role(), kind(stream), it->second.first))
    return false;
  enqueue(Job{stream, std::move(frame), Job::kOut});
  return true;
}

std::optional<std::int64_t> Channel::open_job_stream(JobAssignment assignment) {
  if (ended_ || !admitted_ || me_.role() != Role::kValidator) return std::nullopt;
  auto stream = connection_.open_stream();
  if (!stream) return std::nullopt;
  streams_.try_emplace(*stream, budget_).first->second.first = false;
  enqueue(Job{*stream, Frame{std::move(assignment)}, Job::kOut});
  return stream;
}

void Channel::end_job_stream(std::int64_t stream) {
  if (stream != kControlStream && streams_.contains(stream)) enqueue(Job{stream, Frame{Goodbye{}}, Job::kEnd});
}

void Channel::goodbye(GoodbyeReason reason, std::optional<std::string> detail,
                      std::optional<std::uint64_t> retry_after_blocks) {
  if (ended_) return;
  ended_ = true;
  Goodbye bye{reason, std::move(detail), retry_after_blocks, std::nullopt};
  if (callbacks_.on_goodbye) callbacks_.on_goodbye(*this, bye, false);
  // §12.5: signed once this end has proved itself, since the peer reads it
  // after that HelloAck, as an admitted peer; it goes through the worker.
  if (proved_) {
    close_after_send_ = true;
    enqueue(Job{kControlStream, Frame{std::move(bye)}, Job::kOut});
    return;
  }
  if (started_) write(kControlStream, bye);  // advisory before admission
  close_soon();
}

void Channel::close_soon() {
  deadline_.expires_after(kGoodbyeGrace);
  deadline_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (!ec && alive.lock()) connection_.close(kGoodbyeCloseCode);
  });
}

void Channel::enqueue(Job job) {
  jobs_.push_back(std::move(job));
  pump();
}

// One job at a time on the worker: the handshake before admission, the peer's
// signature after it, this end's signature on what it sends.
void Channel::pump() {
  while (!busy_ && !jobs_.empty()) {
    Job job = std::move(jobs_.front());
    jobs_.erase(jobs_.begin());
    if (job.kind == Job::kIn && ended_) continue;  // nothing the peer says counts after a Goodbye
    if (job.kind == Job::kEnd) {
      connection_.end_stream(job.stream);
      continue;
    }
    if (job.kind == Job::kRefuse) {
      refuse(std::move(job.detail));
      continue;
    }
    struct Out {
      Job job;
      Handshake::Step step;
      Res<Unit> seal = Unit{};
    };
    auto out = std::make_shared<Out>(Out{std::move(job), {}, Unit{}});
    const bool admitted = admitted_;
    if (!admitted && out->job.kind == Job::kIn && std::holds_alternative<Goodbye>(out->job.frame)) {
      peer_goodbye(std::get<Goodbye>(out->job.frame), true);  // advisory: nothing to verify
      continue;
    }
    if (admitted && out->job.kind == Job::kIn && !check_peer_seals_) {
      take(out->job.stream, std::move(out->job.frame), true, {}, Unit{});
      continue;
    }
    busy_ = true;
    const bool own = out->job.kind == Job::kOut;
    auto work = [out, crypto = crypto_, admitted] {
      if (out->job.kind == Job::kOut) seal(out->job.frame, crypto->me, *crypto->bound);
      else if (!admitted) out->step = crypto->handshake->on_frame(out->job.frame);
      else out->seal = check_seal(out->job.frame, peer_role(crypto->me.role()), *crypto->bound);
    };
    auto done = [this, out, alive = std::weak_ptr<bool>(alive_), admitted] {
      if (!alive.lock()) return;
      busy_ = false;
      if (out->job.kind == Job::kOut) {
        write(out->job.stream, out->job.frame);
        if (std::holds_alternative<Goodbye>(out->job.frame) && close_after_send_) close_soon();
      } else {
        take(out->job.stream, std::move(out->job.frame), admitted, std::move(out->step), std::move(out->seal));
      }
      pump();
    };
    if (own || admitted) {
      worker_.run(std::move(work), std::move(done), own);
      continue;
    }
    // A handshake frame of a peer not yet admitted: in the fair queue, under its address.
    worker_.run_handshake(handshake_source(connection_.peer_address()), std::move(work), std::move(done),
                          [this, alive = std::weak_ptr<bool>(alive_)] {
                            if (!alive.lock()) return;
                            busy_ = false;
                            goodbye(GoodbyeReason::kRateLimited, "the handshake verification queue has no room");
                            pump();
                          });
  }
}

void Channel::take(std::int64_t stream, Frame frame, bool admitted_before, Handshake::Step step, Res<Unit> seal) {
  if (ended_) return;
  if (admitted_before) {
    if (const auto* bye = std::get_if<Goodbye>(&frame)) return peer_goodbye(*bye, seal.ok());
    const FrameType t = type_of(frame);
    if (t == FrameType::kHello || t == FrameType::kHelloAck) return refuse("a Hello or HelloAck after admission");
    if (callbacks_.on_frame) callbacks_.on_frame(*this, stream, frame, seal);
    return;
  }
  for (const auto& f : step.send) write(kControlStream, f);
  if (!proved_ && crypto_->handshake->proved()) {
    proved_ = true;
    crypto_->bound.emplace(crypto_->handshake->binding());  // no job runs now; later ones read it
  }
  if (step.refuse) return goodbye(*step.refuse);
  if (!crypto_->handshake->admitted()) return;
  admitted_ = true;
  crypto_->handshake.reset();
  if (auto control = streams_.find(kControlStream); control != streams_.end())
    control->second.frames.set_max_frame_bytes(kMaxFrameBytes);
  deadline_.cancel();
  if (callbacks_.on_admitted) callbacks_.on_admitted(*this);
  for (auto& job : std::exchange(early_, {})) enqueue(std::move(job));
}

// Once admitted, only a Goodbye signed by the peer counts as the peer's word
// (its reason and retry_after_blocks), and this end closes at once. An
// unsigned or forged one is answered with this end's own signed
// Goodbye{AuthFailed}, which the peer gets the grace period to read.
void Channel::peer_goodbye(const Goodbye& bye, bool valid) {
  if (!valid) return goodbye(GoodbyeReason::kAuthFailed, "a Goodbye whose signature does not verify");
  ended_ = true;
  if (callbacks_.on_goodbye) callbacks_.on_goodbye(*this, bye, true);
  connection_.close(kGoodbyeCloseCode);
}

}  // namespace cowboy::cip11
