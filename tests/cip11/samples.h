// Fixed keys, a fixed connection and one signed sample of every CIP-11 frame,
// shared by the fixture, signature and fuzz-seed tests. Every signature is
// deterministic (RFC 6979 secp256k1, Ed25519), so the samples are too.
#pragma once

#include <string>
#include <vector>

#include "cip11/frames.h"
#include "cip11/preimages.h"

namespace cowboy::cip11::testing {

inline Bytes32 filled(std::uint8_t first) {
  Bytes32 out;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(first + i);
  return out;
}

struct Party {
  Signer runner;
  Signer validator;
  ConnectionBinding binding;
  Bytes32 connection;  // connection_id(binding)
};

inline const Party& party() {
  static const Party p = [] {
    crypto::init();
    crypto::Secp256k1Secret runner_secret;
    runner_secret.fill(0x11);
    crypto::Ed25519Seed validator_seed;
    validator_seed.fill(0x22);
    Signer runner = *Signer::runner(runner_secret);
    Signer validator = Signer::validator(validator_seed);
    ConnectionBinding b{7, kProtocolVersion, runner.pubkey(), validator.pubkey(), filled(0x40), Epoch{0}, filled(0x80)};
    return Party{runner, validator, b, connection_id(b)};
  }();
  return p;
}

/// Runner `n` of a crowd (tests of many runners): a key of its own.
inline Signer runner_key(std::uint32_t n) {
  crypto::init();
  crypto::Secp256k1Secret secret;
  secret.fill(0x33);
  for (int i = 0; i < 4; ++i) secret[28 + i] = static_cast<std::uint8_t>(n >> (24 - 8 * i));
  return *Signer::runner(secret);
}

template <std::size_t N>
std::array<std::uint8_t, N> to_array(const Bytes& b) {
  std::array<std::uint8_t, N> out{};
  std::copy_n(b.begin(), N, out.begin());
  return out;
}

inline Hello hello() {
  const auto& p = party();
  return Hello{kProtocolVersion, 7, filled(0x40), Epoch{0}, p.runner.pubkey(), Role::kRunner, Height{1000}, filled(0x60)};
}

inline HelloAck hello_ack() {
  const auto& p = party();
  auto pre = hello_ack_preimage(7, kProtocolVersion, Role::kValidator, p.validator.pubkey(), Role::kRunner,
                                p.runner.pubkey(), filled(0x40), Epoch{0}, filled(0x60), p.binding.channel_binding);
  return HelloAck{kProtocolVersion, 7, filled(0x40), Epoch{0}, p.validator.pubkey(), Role::kValidator, Height{1000},
                  Sig{p.validator.sign(pre)}};
}

inline HeartbeatPing heartbeat_ping() {
  const auto& p = party();
  HeartbeatPing f{Height{1001}, 0, {}};
  f.signed_ = to_array<65>(p.runner.sign(heartbeat_ping_preimage(p.connection, p.runner.pubkey(), p.validator.pubkey(), f)));
  return f;
}

inline HeartbeatPong heartbeat_pong() {
  const auto& p = party();
  HeartbeatPong f{Height{1001}, 0, true, {}};
  f.validator_signed =
      to_array<64>(p.validator.sign(heartbeat_pong_preimage(p.connection, p.validator.pubkey(), p.runner.pubkey(), f)));
  return f;
}

inline BackpressureSignal backpressure_signal() {
  const auto& p = party();
  BackpressureSignal f{Height{1002}, 8, 8, false, std::string("at capacity"), {}};
  f.signed_ = to_array<65>(p.runner.sign(control_preimage(p.connection, p.runner.pubkey(), p.validator.pubkey(), f)));
  return f;
}

inline CapabilityDelta capability_delta() {
  const auto& p = party();
  CapabilityDelta f{Height{1003}, {"llm", "tee"}, {"http"}, {filled(0xa0)}, {}, {}};
  f.signed_ = to_array<65>(p.runner.sign(control_preimage(p.connection, p.runner.pubkey(), p.validator.pubkey(), f)));
  return f;
}

inline JobAssignment job_assignment() {
  const auto& p = party();
  JobAssignment f;
  f.job_id = JobId{filled(0xc0)};
  f.job_spec = Bytes{0x01, 0x00, 0x00, 0x00, 0x04, 'j', 'o', 'b', '!'};  // opaque codec bytes
  f.job_spec_hash = job_spec_hash(f.job_spec);
  f.assignment_height = Height{1004};
  f.deadline_block = Height{1104};
  f.runner_pubkey = p.runner.pubkey();
  f.validator_pubkey = p.validator.pubkey();
  auto pre = job_assignment_preimage(7, f.job_id, f.job_spec_hash, f.assignment_height, f.deadline_block,
                                     f.runner_pubkey, f.validator_pubkey);
  f.assignment_hash = pre.digest();
  f.validator_signed = to_array<64>(p.validator.sign(pre));
  return f;
}

inline JobAck job_ack(AckStatus status, std::optional<std::string> reason) {
  const auto& p = party();
  JobAck f{JobId{filled(0xc0)}, job_assignment().assignment_hash, status, std::move(reason), {}};
  f.signed_ = to_array<65>(p.runner.sign(job_ack_preimage(p.connection, p.runner.pubkey(), p.validator.pubkey(), f)));
  return f;
}

inline JobCancel job_cancel() {
  const auto& p = party();
  JobCancel f{JobId{filled(0xc0)}, job_assignment().assignment_hash, CancelReason::kExpired, {}};
  f.validator_signed =
      to_array<64>(p.validator.sign(job_cancel_preimage(p.connection, p.validator.pubkey(), p.runner.pubkey(), f)));
  return f;
}

inline Goodbye goodbye_signed() {
  const auto& p = party();
  Goodbye f{GoodbyeReason::kShutdown, std::nullopt, std::uint64_t{10}, std::nullopt};
  f.signed_ = Sig{p.validator.sign(
      goodbye_preimage(p.connection, Role::kValidator, p.validator.pubkey(), p.runner.pubkey(), f))};
  return f;
}

/// A Mode A receipt (§8.3) for the party's runner, signed for chain 7.
inline PresenceReceipt presence_receipt() {
  const auto& p = party();
  PresenceReceipt r{p.validator.pubkey(), p.runner.pubkey(), Epoch{0}, filled(0x40), Height{1005}, 3, true, {}};
  return sign_receipt(p.validator, 7, r);
}

struct FrameSample {
  std::string name;
  Frame frame;
};

inline std::vector<FrameSample> frame_samples() {
  const Bytes tx{0x00, 0x00, 0x00, 0x03, 0xa1, 0x00, 0x01};  // u32 BE length, then a CBOR body
  return {
      {"hello", hello()},
      {"hello_ack", hello_ack()},
      {"heartbeat_ping", heartbeat_ping()},
      {"heartbeat_pong", heartbeat_pong()},
      {"backpressure_signal", backpressure_signal()},
      {"capability_delta", capability_delta()},
      {"job_assignment", job_assignment()},
      {"job_ack_accepted", job_ack(AckStatus::accepted(), std::nullopt)},
      {"job_ack_reject_unverifiable",
       job_ack(AckStatus::reject(RejectReason::kUnverifiableAssignment), std::string("assignment height not final"))},
      {"job_progress", JobProgress{JobId{filled(0xc0)}, 50, std::string("half way")}},
      {"job_result", JobResult{JobId{filled(0xc0)}, tx}},
      {"job_cancel", job_cancel()},
      {"job_result_commit", JobResultCommit{JobId{filled(0xc0)}, tx}},
      {"goodbye", goodbye_signed()},
      {"goodbye_unsigned", Goodbye{GoodbyeReason::kWrongChain, std::string("chain 7 expected"), std::nullopt,
                                   std::nullopt}},
      {"presence_receipt_frame", presence_receipt()},
  };
}

}  // namespace cowboy::cip11::testing
