// §6.2 mutual authentication as a state machine that each end runs over its
// control stream, independent of the transport. The order is fixed, so that
// admission completes at a moment both ends can name:
//
//   runner                               validator
//   Hello ---------------------------->                  (the runner speaks first)
//         <---------------------------- Hello            (answering the runner's)
//   HelloAck ------------------------->                  (over the validator's challenge)
//                                       verifies it: ADMITTED
//         <---------------------------- HelloAck         (over the runner's challenge)
//   verifies it: ADMITTED
//
// The validator sends its HelloAck only once it has verified the runner's, so
// the runner's admission implies the validator's: the validator's HelloAck
// is what tells the runner it is admitted there. Everything a runner sends
// after a HelloAck that verifies is read by an admitted validator. Before admission the
// caller does nothing else with the peer (§6.2: no presence, no DoS
// accounting, no pushes).
//
// This end has "proved" once it has sent its HelloAck: from then on it signs
// its Goodbye (§12.5), and the peer, which reads that Goodbye after the
// HelloAck, expects a signature on it.
//
// The chain-dependent checks (the runner's registration, Sub(R) membership,
// the validator-set snapshot) are the user's, through Admission: the chain
// plane supplies it; tests supply a fixed one.
//
// Epoch pairing (§5.3, §6.2): each end has one (subset_epoch,
// validator_set_hash) pair current, two during a reconfiguration overlap
// (LocalOffer::overlap). The peer's Hello must offer one of them. The runner
// speaks first and chooses the epoch of the connection: its offered pair is
// the one the connection is bound to (both HelloAcks sign it and repeat it),
// and the validator's Admission checks membership in the snapshot that pair
// names, never in the other.
#pragma once

#include <optional>
#include <vector>

#include "cip11/frames.h"
#include "cip11/identity.h"
#include "cip11/preimages.h"
#include "cip11/subset.h"
#include "common/clock.h"

namespace cowboy::cip11 {

/// What this end offers: its chain, the validator-set configuration and its key.
struct LocalOffer {
  std::uint64_t chain_id = 0;
  std::uint16_t version = kProtocolVersion;
  Bytes32 validator_set_hash{};
  Epoch subset_epoch{};
  Height block_height{};  // advisory telemetry (§6.2): in no check
  /// During a §5.3 overlap, the other epoch's pair, also current at this end.
  std::optional<EpochPair> overlap = std::nullopt;
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

  /// This end's Hello: the runner's opens the control stream, the validator's answers it.
  const Hello& hello() const { return mine_; }

  struct Step {
    std::vector<Frame> send;              // frames for the peer, in order
    std::optional<GoodbyeReason> refuse;  // the handshake failed: send an unsigned Goodbye and close
  };
  /// A frame from the peer before admission. Anything but Hello then HelloAck is kProtocolError.
  Step on_frame(const Frame& frame);

  /// This end has sent its HelloAck (its Goodbye is signed from now on).
  bool proved() const { return acked_; }
  /// Both proofs hold.
  bool admitted() const { return acked_ && verified_; }
  /// The identities the connection is bound to; valid once admitted.
  const ConnectionBinding& binding() const { return binding_; }
  const Hello& peer_hello() const { return *peer_; }

 private:
  Step on_hello(const Hello& h);
  Step on_hello_ack(const HelloAck& a);
  HelloAck ack();

  const Signer& me_;
  LocalOffer offer_;
  Admission& admission_;
  Hello mine_;
  std::optional<Hello> peer_;
  ConnectionBinding binding_;
  bool acked_ = false, verified_ = false, failed_ = false;
};

}  // namespace cowboy::cip11
