#include "cip11/control.h"

namespace cowboy::cip11 {

namespace {
constexpr std::int64_t kControlStream = 0;       // the runner's first bidirectional stream (§6.1)
constexpr std::uint64_t kGoodbyeCloseCode = 0;  // the QUIC application code after a Goodbye
}  // namespace

ControlChannel::ControlChannel(quic::Connection& connection, const Signer& me, LocalOffer offer, Admission& admission,
                               Entropy& entropy, net::ReadBudget* budget, Callbacks callbacks)
    : connection_(connection), me_(me),
      handshake_(me, offer, connection.channel_binding().value_or(Bytes32{}), admission, entropy), frames_(budget),
      callbacks_(std::move(callbacks)) {}

bool ControlChannel::open() {
  auto stream = connection_.open_stream();
  if (!stream) return false;
  start(*stream);
  return true;
}

void ControlChannel::start(std::int64_t stream_id) {
  stream_ = stream_id;
  write(handshake_.hello());
}

void ControlChannel::on_stream_data(std::int64_t stream_id, ByteView data) {
  if (ended_) return;
  if (stream_ < 0) {
    if (stream_id != kControlStream) return goodbye(GoodbyeReason::kProtocolError, "the control stream is stream 0");
    start(stream_id);  // the validator answers on the stream the runner opened
  }
  if (stream_id != stream_) return;  // job streams are not the control channel's
  if (auto pushed = frames_.push(data); !pushed) {
    while (auto f = frames_.next()) take(*f);  // what decoded before the refusal still counts
    return goodbye(GoodbyeReason::kProtocolError, std::string(to_string(pushed.error())));
  }
  while (!ended_)
    if (auto f = frames_.next()) take(*f);
    else break;
}

void ControlChannel::take(const Frame& frame) {
  if (ended_) return;
  if (const auto* bye = std::get_if<Goodbye>(&frame)) {
    // Once admitted, only a Goodbye signed by the peer counts as the peer's
    // word (its reason and retry_after_blocks); either way the connection ends.
    bool valid = true;
    if (admitted()) {
      const Role role = peer_role(me_.role());
      const PubKey& peer = key_of(binding(), role);
      valid = bye->signed_ &&
              verify(goodbye_preimage(connection_id(binding()), role, peer, me_.pubkey(), *bye), peer, bye->signed_->bytes);
    }
    ended_ = true;
    if (callbacks_.on_goodbye) callbacks_.on_goodbye(*this, valid ? bye->reason : GoodbyeReason::kAuthFailed, valid);
    connection_.close(kGoodbyeCloseCode);
    return;
  }
  if (admitted()) {
    if (callbacks_.on_frame) callbacks_.on_frame(*this, frame);
    return;
  }
  auto step = handshake_.on_frame(frame);
  for (const auto& out : step.send) write(out);
  if (step.refuse) return goodbye(*step.refuse);
  if (admitted() && callbacks_.on_admitted) callbacks_.on_admitted(*this);
}

bool ControlChannel::send(const Frame& frame) {
  if (ended_ || !admitted()) return false;
  write(frame);
  return true;
}

void ControlChannel::goodbye(GoodbyeReason reason, std::optional<std::string> detail,
                             std::optional<std::uint64_t> retry_after_blocks) {
  if (ended_) return;
  ended_ = true;
  Goodbye bye{reason, std::move(detail), retry_after_blocks, std::nullopt};
  if (admitted()) {  // §12.5: signed once both ends are authenticated; advisory before
    const PubKey& peer = key_of(binding(), peer_role(me_.role()));
    bye.signed_ = Sig{me_.sign(goodbye_preimage(connection_id(binding()), me_.role(), me_.pubkey(), peer, bye))};
  }
  if (stream_ >= 0) write(bye);
  if (callbacks_.on_goodbye) callbacks_.on_goodbye(*this, reason, false);
  connection_.close(kGoodbyeCloseCode);
}

}  // namespace cowboy::cip11
