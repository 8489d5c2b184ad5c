#include "cip11/handshake.h"

namespace cowboy::cip11 {

Handshake::Handshake(const Signer& me, LocalOffer offer, const Bytes32& channel_binding, Admission& admission,
                     Entropy& entropy)
    : me_(me), offer_(offer), admission_(admission) {
  mine_ = Hello{offer.version, offer.chain_id, offer.validator_set_hash, offer.subset_epoch, me.pubkey(), me.role(),
                offer.block_height, {}};
  entropy.fill(mine_.challenge_nonce);
  binding_.chain_id = offer.chain_id;
  binding_.version = offer.version;
  binding_.validator_set_hash = offer.validator_set_hash;
  binding_.subset_epoch = offer.subset_epoch;
  binding_.channel_binding = channel_binding;
  key_of(binding_, me.role()) = me.pubkey();
}

Handshake::Step Handshake::on_frame(const Frame& frame) {
  Step step;
  if (failed_) {
    step.refuse = GoodbyeReason::kProtocolError;
  } else if (const auto* h = std::get_if<Hello>(&frame)) {
    step = on_hello(*h);
  } else if (const auto* a = std::get_if<HelloAck>(&frame)) {
    step = on_hello_ack(*a);
  } else {
    step.refuse = GoodbyeReason::kProtocolError;  // nothing else before admission
  }
  failed_ = failed_ || step.refuse.has_value();
  return step;
}

// The peer's offer, in the order a mismatch is reported: version, chain, role,
// the validator-set configuration (one of this end's current pairs, §5.3),
// then the user's admission. A validator binds the connection to the runner's
// pair (the runner chose it; the Admission sees it in `h`). The runner answers
// with its HelloAck at once; the validator waits for the runner's.
Handshake::Step Handshake::on_hello(const Hello& h) {
  if (peer_) return {{}, GoodbyeReason::kProtocolError};  // one Hello per connection
  if (check_version(h.version, offer_.version) != VersionVerdict::kSupported) return {{}, GoodbyeReason::kUnsupportedVersion};
  if (h.chain_id != offer_.chain_id) return {{}, GoodbyeReason::kWrongChain};
  if (h.party_role != peer_role(me_.role()) || h.party_pubkey.wire().empty() || !check_role(h.party_pubkey, h.party_role))
    return {{}, GoodbyeReason::kAuthFailed};
  const EpochPair offered{h.subset_epoch, h.validator_set_hash};
  const bool mine = offered == EpochPair{offer_.subset_epoch, offer_.validator_set_hash};
  if (!mine && offered != offer_.overlap) return {{}, GoodbyeReason::kNotInSubset};
  if (auto refused = admission_.admit(h)) return {{}, *refused};
  if (me_.role() == Role::kValidator && !mine) {
    offer_.validator_set_hash = binding_.validator_set_hash = h.validator_set_hash;
    offer_.subset_epoch = binding_.subset_epoch = h.subset_epoch;
  }
  peer_ = h;
  key_of(binding_, h.party_role) = h.party_pubkey;
  if (me_.role() == Role::kValidator) return {};
  return {{Frame{ack()}}, std::nullopt};
}

// This end's proof over the peer's challenge and the channel binding.
HelloAck Handshake::ack() {
  auto pre = hello_ack_preimage(offer_.chain_id, offer_.version, me_.role(), me_.pubkey(), peer_->party_role,
                                peer_->party_pubkey, offer_.validator_set_hash, offer_.subset_epoch,
                                peer_->challenge_nonce, binding_.channel_binding);
  acked_ = true;
  return HelloAck{offer_.version, offer_.chain_id, offer_.validator_set_hash, offer_.subset_epoch,
                  me_.pubkey(),   me_.role(),      offer_.block_height,       Sig{me_.sign(pre)}};
}

// The peer's proof over this end's challenge and the channel binding: a relay
// that terminated TLS on each side has another binding on each, so its
// forwarded HelloAck verifies on neither. Its fields repeat the peer's Hello
// (version, key, role) and this end's offer (chain, validator-set hash,
// epoch); only block_height may differ. The validator then answers with its own.
Handshake::Step Handshake::on_hello_ack(const HelloAck& a) {
  if (!peer_ || verified_) return {{}, GoodbyeReason::kProtocolError};
  if (a.party_pubkey != peer_->party_pubkey || a.party_role != peer_->party_role || a.chain_id != offer_.chain_id ||
      a.version != peer_->version || a.validator_set_hash != offer_.validator_set_hash ||
      a.subset_epoch != offer_.subset_epoch)
    return {{}, GoodbyeReason::kAuthFailed};
  auto pre = hello_ack_preimage(offer_.chain_id, offer_.version, a.party_role, a.party_pubkey, me_.role(), me_.pubkey(),
                                offer_.validator_set_hash, offer_.subset_epoch, mine_.challenge_nonce,
                                binding_.channel_binding);
  if (!verify(pre, a.party_pubkey, a.signed_challenge.bytes)) return {{}, GoodbyeReason::kAuthFailed};
  verified_ = true;
  if (me_.role() == Role::kRunner) return {};
  return {{Frame{ack()}}, std::nullopt};
}

}  // namespace cowboy::cip11
