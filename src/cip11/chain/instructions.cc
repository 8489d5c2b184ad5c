#include "cip11/chain/instructions.h"

namespace cowboy::cip11::chain {
namespace {

constexpr std::uint8_t kVersion = 1;
constexpr std::uint32_t kKnownKinds = 0x3f;  // the six §9.4 bytes

void put(codec::Writer& w, const RegisterRunner& b) {
  w.fixed(b.key);
  w.u128(b.stake);
  w.u32(b.job_kinds);
  put_capabilities(w, b.capabilities);
  w.u32(b.max_concurrent);
  w.u128(b.price);
}
void put(codec::Writer&, const RunnerHeartbeat&) {}
void put(codec::Writer& w, const SetRunnerHealth& b) { w.u8(static_cast<std::uint8_t>(b.health)); }
void put(codec::Writer&, const DeregisterRunner&) {}
void put(codec::Writer& w, const SubmitJob& b) {
  w.u8(static_cast<std::uint8_t>(b.kind));
  w.bytes(b.spec);
  w.u64(b.timeout_blocks);
  w.u32(b.runners);
  w.u128(b.max_price);
}
void put(codec::Writer& w, const JobResultCommit& b) {
  w.fixed(b.job_id);
  w.fixed(b.commitment);
}
void put(codec::Writer& w, const JobResultSubmit& b) {
  w.fixed(b.job_id);
  w.bytes(b.result);
  w.fixed(b.salt);
}

void put(codec::Writer& w, const SubmitPresenceCertificate& b) {
  w.fixed(b.runner);
  w.u64(b.height);
  w.u64(b.cycle_limit);
  w.count(b.receipts.size());
  for (const auto& receipt : b.receipts) w.bytes(receipt);
}

SubmitPresenceCertificate get_certificate(codec::Reader& r) {
  SubmitPresenceCertificate b;
  b.runner = r.fixed<20>();
  b.height = r.u64();
  b.cycle_limit = r.u64();
  const std::uint32_t n = r.count(kMaxCertificateReceipts, 4);  // bounded before the vector is sized
  b.receipts.reserve(n);
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) b.receipts.push_back(r.bytes(kMaxReceiptBytes));
  return b;
}

RegisterRunner get_register(codec::Reader& r) {
  RegisterRunner b;
  b.key = r.fixed<33>();
  b.stake = r.u128();
  b.job_kinds = r.u32();
  b.capabilities = get_capabilities(r);
  b.max_concurrent = r.u32();
  b.price = r.u128();
  if (r.ok() && (b.job_kinds == 0 || (b.job_kinds & ~kKnownKinds) != 0 || b.max_concurrent == 0))
    r.fail(codec::DecodeError::kInvalidValue);
  return b;
}

SetRunnerHealth get_health(codec::Reader& r) {
  std::uint8_t h = r.u8();
  if (h != static_cast<std::uint8_t>(HealthStatus::kHealthy) && h != static_cast<std::uint8_t>(HealthStatus::kPaused))
    r.fail(codec::DecodeError::kInvalidValue);
  return SetRunnerHealth{static_cast<HealthStatus>(h)};
}

SubmitJob get_job(codec::Reader& r) {
  SubmitJob b;
  std::uint8_t kind = r.u8();
  b.kind = static_cast<JobKind>(kind);
  b.spec = r.bytes(kMaxSpecBytes);
  b.timeout_blocks = r.u64();
  b.runners = r.u32();
  b.max_price = r.u128();
  if (r.ok() && (kind > 5 || b.timeout_blocks == 0 ||
                 b.timeout_blocks > kMaxTimeoutBlocks || b.runners == 0 || b.runners > kMaxCommittee))
    r.fail(codec::DecodeError::kInvalidValue);
  return b;
}

}  // namespace

void put_capabilities(codec::Writer& w, const std::vector<std::string>& capabilities) {
  w.count(capabilities.size());
  for (const auto& c : capabilities) w.bytes(as_bytes(c));
}

std::vector<std::string> get_capabilities(codec::Reader& r) {
  std::vector<std::string> out;
  std::uint32_t n = r.count(kMaxCapabilities, 4);
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    Bytes c = r.bytes(kMaxCapabilityBytes);
    out.emplace_back(c.begin(), c.end());
  }
  return out;
}

Bytes encode_instruction(const Instruction& instruction) {
  codec::Writer w;
  w.u8(kVersion);
  std::visit(
      [&](const auto& body) {
        w.u8(std::decay_t<decltype(body)>::kTag);
        put(w, body);
      },
      instruction);
  return std::move(w).take();
}

Result<Instruction, codec::DecodeError> decode_instruction(ByteView payload) {
  codec::Reader r(payload);
  r.version(kVersion);
  Instruction out = RunnerHeartbeat{};
  switch (r.u8()) {
    case RegisterRunner::kTag: out = get_register(r); break;
    case RunnerHeartbeat::kTag: break;
    case SetRunnerHealth::kTag: out = get_health(r); break;
    case DeregisterRunner::kTag: out = DeregisterRunner{}; break;
    case SubmitJob::kTag: out = get_job(r); break;
    case JobResultCommit::kTag: {
      Bytes32 id = r.fixed<32>();
      out = JobResultCommit{id, r.fixed<32>()};
      break;
    }
    case JobResultSubmit::kTag: {
      JobResultSubmit b;
      b.job_id = r.fixed<32>();
      b.result = r.bytes(kMaxResultBytes);
      b.salt = r.fixed<32>();
      out = std::move(b);
      break;
    }
    case SubmitPresenceCertificate::kTag: out = get_certificate(r); break;
    default: r.fail(codec::DecodeError::kUnknownVariant);
  }
  r.finish();
  if (!r.ok()) return Err{r.error()};
  return out;
}

Bytes32 result_commitment(const Bytes32& job_id, const Address& runner, ByteView result, const Bytes32& salt) {
  return crypto::keccak256({as_bytes(std::string_view("cowboy/cip11-result-commit/v1")), job_id, runner, salt, result});
}

}  // namespace cowboy::cip11::chain
