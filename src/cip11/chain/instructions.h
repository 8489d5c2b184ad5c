// The CIP-11 chain plane's instructions: the payload of a devchain
// `Cip11Call` transaction, signed by its sender like every devchain
// transaction (docs/devchain.md). Canonical encoding, common/codec.h rules:
//
//   Cip11InstructionV1 { version: u8 = 1, tag: u8, body }
//     1 RegisterRunner   { key: [u8; 33], stake: u128, job_kinds: u32, capabilities: [Bytes],
//                          max_concurrent: u32, price: u128 }
//     2 RunnerHeartbeat  { }
//     3 SetRunnerHealth  { health: u8 }            // Healthy = 0 or Paused = 2 (the runner's own choice)
//     4 DeregisterRunner { }
//     5 SubmitJob        { kind: u8, spec: Bytes, timeout_blocks: u64, runners: u32, max_price: u128 }
//     6 JobResultCommit  { job_id: [u8; 32], commitment: [u8; 32] }
//     7 JobResultSubmit  { job_id: [u8; 32], result: Bytes, salt: [u8; 32] }
//     8 SubmitPresenceCertificate { runner: [u8; 20], height: u64, cycle_limit: u64,
//                                   receipts: [Bytes] }   // each a receipt.h encoding, not yet decoded
//
// A SubmitPresenceCertificate (§8.3, Mode A) carries at most
// kMaxCertificateReceipts receipts of at most kMaxReceiptBytes each; both bounds
// are checked before anything is allocated. Its receipts stay bytes here: the
// machine decodes each one after charging for it (mode_a.h). cycle_limit is the
// transaction's cycle budget, which DevchainTxV1 has no field for.
// A JobResultCommit's commitment is result_commitment(job_id, runner, result, salt).
#pragma once

#include <variant>

#include "cip11/receipt.h"
#include "cip11/selection.h"
#include "common/codec.h"
#include "common/crypto.h"

namespace cowboy::cip11::chain {

inline constexpr std::size_t kMaxSpecBytes = 32 * 1024;
inline constexpr std::size_t kMaxResultBytes = 32 * 1024;
inline constexpr std::size_t kMaxCapabilities = 16;
inline constexpr std::size_t kMaxCapabilityBytes = 64;
inline constexpr std::uint32_t kMaxCommittee = 16;
inline constexpr std::uint64_t kMaxTimeoutBlocks = 100'000;
inline constexpr std::size_t kMaxCertificateReceipts = 256;  // above any t_hard a k <= |V| can ask for (§8.4)

struct RegisterRunner {
  static constexpr std::uint8_t kTag = 1;
  crypto::Secp256k1Compressed key{};
  u128 stake = 0;
  std::uint32_t job_kinds = 0;
  std::vector<std::string> capabilities;
  std::uint32_t max_concurrent = 1;
  u128 price = 0;
  bool operator==(const RegisterRunner&) const = default;
};
struct RunnerHeartbeat {
  static constexpr std::uint8_t kTag = 2;
  bool operator==(const RunnerHeartbeat&) const = default;
};
struct SetRunnerHealth {
  static constexpr std::uint8_t kTag = 3;
  HealthStatus health = HealthStatus::kHealthy;
  bool operator==(const SetRunnerHealth&) const = default;
};
struct DeregisterRunner {
  static constexpr std::uint8_t kTag = 4;
  bool operator==(const DeregisterRunner&) const = default;
};
struct SubmitJob {
  static constexpr std::uint8_t kTag = 5;
  JobKind kind = JobKind::kCustom;
  Bytes spec;
  std::uint64_t timeout_blocks = 0;
  std::uint32_t runners = 1;
  u128 max_price = 0;
  bool operator==(const SubmitJob&) const = default;
};
struct JobResultCommit {
  static constexpr std::uint8_t kTag = 6;
  JobId job_id{};
  Bytes32 commitment{};
  bool operator==(const JobResultCommit&) const = default;
};
struct JobResultSubmit {
  static constexpr std::uint8_t kTag = 7;
  JobId job_id{};
  Bytes result;
  Bytes32 salt{};
  bool operator==(const JobResultSubmit&) const = default;
};

struct SubmitPresenceCertificate {
  static constexpr std::uint8_t kTag = 8;
  Address runner{};
  Height height{};                // the certificate height receipts are fresh against
  std::uint64_t cycle_limit = 0;  // what the transaction may spend (mode_a.h's charges)
  std::vector<Bytes> receipts;    // encode_receipt bytes
  bool operator==(const SubmitPresenceCertificate&) const = default;
};

using Instruction = std::variant<RegisterRunner, RunnerHeartbeat, SetRunnerHealth, DeregisterRunner, SubmitJob,
                                 JobResultCommit, JobResultSubmit, SubmitPresenceCertificate>;

Bytes encode_instruction(const Instruction& instruction);
/// Strict: version 1, a known tag, every bound above, no trailing bytes.
Result<Instruction, codec::DecodeError> decode_instruction(ByteView payload);

/// A runner's capability list, as RegisterRunner and the stored record carry it:
/// a field of a common/fields.h field list (v is its Put or Get).
template <typename V, typename List>
void capability_list(V& v, List& capabilities) {
  v.list(capabilities, kMaxCapabilities, 4, [&](auto& c) { v.text(c, kMaxCapabilityBytes); });
}

/// keccak256("cowboy/cip11-result-commit/v1" || job_id || runner || salt || result): binding
/// the runner means one runner's commitment cannot be replayed by another.
Bytes32 result_commitment(const JobId& job_id, const Address& runner, ByteView result, const Bytes32& salt);

}  // namespace cowboy::cip11::chain
