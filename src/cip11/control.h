// One CIP-11 connection's control stream (§6.1) over a quic::Connection: its
// bytes become §12.1 frames through a FrameReassembler, §6.2 runs through a
// Handshake over the connection's exporter value, and once both ends are
// admitted the frames go to the user. Every refusal ends in a Goodbye
// (§12.5: unsigned before admission, signed after) and the connection's close.
//
// The runner opens the control stream (stream 0) and starts; the validator
// starts when that stream's first bytes arrive. Runs on the endpoint's thread.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cip11/handshake.h"
#include "cip11/quic/endpoint.h"
#include "cip11/reassembler.h"

namespace cowboy::cip11 {

class ControlChannel {
 public:
  struct Callbacks {
    std::function<void(ControlChannel&)> on_admitted;
    /// A frame on the control stream after admission.
    std::function<void(ControlChannel&, const Frame&)> on_frame;
    /// This end refused the peer (`by_peer` false), or the peer said Goodbye
    /// (true; after admission only if its signature verifies, else this end
    /// reports kAuthFailed): the connection closes next.
    std::function<void(ControlChannel&, GoodbyeReason, bool by_peer)> on_goodbye;
  };

  /// `connection` must be established (its channel binding is read here).
  ControlChannel(quic::Connection& connection, const Signer& me, LocalOffer offer, Admission& admission,
                 Entropy& entropy, net::ReadBudget* budget, Callbacks callbacks);

  /// Runner: opens the control stream and sends Hello. False if no stream could be opened.
  bool open();
  /// Bytes of a stream of this connection, as the endpoint reports them.
  void on_stream_data(std::int64_t stream_id, ByteView data);
  /// After admission: a frame on the control stream.
  bool send(const Frame& frame);
  /// Says Goodbye (signed once admitted) and closes the connection.
  void goodbye(GoodbyeReason reason, std::optional<std::string> detail = std::nullopt,
               std::optional<std::uint64_t> retry_after_blocks = std::nullopt);

  bool admitted() const { return handshake_.admitted(); }
  const ConnectionBinding& binding() const { return handshake_.binding(); }
  quic::Connection& connection() { return connection_; }

 private:
  void start(std::int64_t stream_id);
  void take(const Frame& frame);
  void write(const Frame& frame) { connection_.send(stream_, encode_frame(frame)); }

  quic::Connection& connection_;
  const Signer& me_;
  Handshake handshake_;
  FrameReassembler frames_;
  Callbacks callbacks_;
  std::int64_t stream_ = -1;
  bool ended_ = false;
};

}  // namespace cowboy::cip11
