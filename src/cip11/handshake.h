// §6.2 mutual authentication as a state machine that each end runs over its
// control stream, independent of the transport: both ends send Hello (a fresh
// challenge), answer the peer's Hello with a HelloAck signed over the peer's
// challenge and the channel binding, and verify the peer's HelloAck over
// their own challenge. Admitted only when both proofs hold; before that the
// caller does nothing else with the peer (§6.2: no presence, no DoS
// accounting, no pushes).
//
// The chain-dependent checks (the runner's registration, Sub(R) membership,
// the validator-set snapshot, §5.3 epoch pairing) are the user's, through
// Admission: the chain plane supplies it; tests supply a fixed one.
#pragma once

#include <optional>
#include <vector>

#include "cip11/frames.h"
#include "cip11/identity.h"
#include "cip11/preimages.h"
#include "common/clock.h"

namespace cowboy::cip11 {

/// What this end offers: its chain, the validator-set configuration and its key.
struct LocalOffer {
  std::uint64_t chain_id = 0;
  std::uint16_t version = kProtocolVersion;
  Bytes32 validator_set_hash{};
  std::uint64_t subset_epoch = 0;
  std::uint64_t block_height = 0;  // advisory telemetry (§6.2): in no check
};

class Admission {
 public:
  virtual ~Admission() = default;
  /// The peer's Hello passed the structural and offer checks; may it connect?
  /// nullopt: yes; otherwise the Goodbye reason (e.g. kNotInSubset, kAuthFailed).
  virtual std::optional<GoodbyeReason> admit(const Hello& peer) = 0;
};

class Handshake {
 public:
  /// `channel_binding` is the connection's TLS exporter value (quic::Connection).
  Handshake(const Signer& me, LocalOffer offer, const Bytes32& channel_binding, Admission& admission, Entropy& entropy);

  /// This end's Hello, sent first.
  const Hello& hello() const { return mine_; }

  struct Step {
    std::vector<Frame> send;              // frames for the peer, in order
    std::optional<GoodbyeReason> refuse;  // the handshake failed: send an unsigned Goodbye and close
  };
  /// A frame from the peer before admission. Anything but Hello then HelloAck is kProtocolError.
  Step on_frame(const Frame& frame);

  bool admitted() const { return acked_ && verified_; }
  /// The identities the connection is bound to; valid once admitted.
  const ConnectionBinding& binding() const { return binding_; }
  const Hello& peer_hello() const { return *peer_; }

 private:
  Step on_hello(const Hello& h);
  Step on_hello_ack(const HelloAck& a);

  const Signer& me_;
  LocalOffer offer_;
  Admission& admission_;
  Hello mine_;
  std::optional<Hello> peer_;
  ConnectionBinding binding_;
  bool acked_ = false, verified_ = false, failed_ = false;
};

}  // namespace cowboy::cip11
