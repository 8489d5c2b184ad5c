#include "cip11/chain/instructions.h"

#include "common/fields.h"

namespace cowboy::cip11::chain {
namespace {

constexpr std::uint32_t kKnownKinds = 0x3f;  // the six §9.4 bytes

// Each instruction lists its fields once; common/fields.h's Put writes them and
// Get reads them back, its checks where the decoder refuses a value.
struct Wire {
  static constexpr std::uint8_t kVersion = 1;
};
using Put = codec::Put<Wire>;
using Get = codec::Get<Wire>;
using codec::DecodeError;

COWBOY_FIELDS(RegisterRunner) {
  v(x.key), v(x.stake), v(x.job_kinds);
  capability_list(v, x.capabilities);
  v(x.max_concurrent), v(x.price);
  v.check([&] { return x.job_kinds != 0 && (x.job_kinds & ~kKnownKinds) == 0 && x.max_concurrent != 0; },
          DecodeError::kInvalidValue);
}
COWBOY_FIELDS(RunnerHeartbeat) {}
/// Healthy or Paused: the runner's own choice, never Unhealthy or Deregistered.
COWBOY_FIELDS(SetRunnerHealth) {
  v.enumeration(
      x.health,
      [](std::uint8_t h) {
        return h == static_cast<std::uint8_t>(HealthStatus::kHealthy) || h == static_cast<std::uint8_t>(HealthStatus::kPaused);
      },
      DecodeError::kInvalidValue);
}
COWBOY_FIELDS(DeregisterRunner) {}
/// The kind is checked with the other bounds, after the last field.
COWBOY_FIELDS(SubmitJob) {
  v.enumeration(x.kind, [](std::uint8_t) { return true; }, DecodeError::kInvalidValue);
  v.bytes(x.spec, kMaxSpecBytes);
  v(x.timeout_blocks), v(x.runners), v(x.max_price);
  v.check(
      [&] {
        return static_cast<std::uint8_t>(x.kind) <= static_cast<std::uint8_t>(JobKind::kAgent) && x.timeout_blocks != 0 &&
               x.timeout_blocks <= kMaxTimeoutBlocks && x.runners != 0 && x.runners <= kMaxCommittee;
      },
      DecodeError::kInvalidValue);
}
COWBOY_FIELDS(JobResultCommit) { v(x.job_id), v(x.commitment); }
COWBOY_FIELDS(JobResultSubmit) {
  v(x.job_id);
  v.bytes(x.result, kMaxResultBytes);
  v(x.salt);
}
COWBOY_FIELDS(SubmitPresenceCertificate) {
  v(x.runner), v(x.height), v(x.cycle_limit);
  v.list(x.receipts, kMaxCertificateReceipts, 4, [&](auto& receipt) { v.bytes(receipt, kMaxReceiptBytes); });
}

}  // namespace

Bytes encode_instruction(const Instruction& instruction) {
  codec::Writer w;
  Put p{w};
  p.version();
  p.variant(instruction);
  return std::move(w).take();
}

Result<Instruction, codec::DecodeError> decode_instruction(ByteView payload) {
  codec::Reader r(payload);
  Instruction out = RunnerHeartbeat{};
  Get g{r};
  g.version();
  g.variant(out);
  r.finish();
  if (!r.ok()) return Err{r.error()};
  return out;
}

Bytes32 result_commitment(const JobId& job_id, const Address& runner, ByteView result, const Bytes32& salt) {
  return crypto::keccak256({as_bytes(std::string_view("cowboy/cip11-result-commit/v1")), job_id.value, runner, salt, result});
}

}  // namespace cowboy::cip11::chain
