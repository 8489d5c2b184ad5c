// Admission envelopes (docs/admission.md): claims (210 bytes), sponsored
// claims (442) and conflicts (884 = two sponsored claims), their signature
// checks, and the downstream validator that the queue's output still needs.
#pragma once

#include <optional>

#include "common/bytes.h"
#include "common/crypto.h"

namespace cowboy::admission {

inline constexpr std::size_t kClaimBytes = 210;
inline constexpr std::size_t kSponsoredClaimBytes = 442;
inline constexpr std::size_t kConflictBytes = 2 * kSponsoredClaimBytes;
inline constexpr std::uint8_t kEnvelopeVersion = 1;
inline constexpr std::uint8_t kKindClaim = 1;
inline constexpr std::uint8_t kKindSponsoredClaim = 2;

enum class JobKind : std::uint8_t { kClaim, kSponsoredClaim, kConflict };

/// The job kind for a payload of this exact shape, or nullopt (length,
/// version or kind byte wrong). Parses no key and verifies nothing.
std::optional<JobKind> classify(ByteView payload);

enum class Verdict : std::uint8_t {
  kValid,                 // every signature verifies (a conflict: valid same-slot evidence)
  kBadIssuerSignature,
  kBadSponsorSignature,
  kIssuerMismatch,        // conflict halves from different issuer credentials: never evidence
  kNotSameSlot,           // conflict halves for different slots
  kNotConflicting,        // conflict halves with the same allocation and descriptor
  kExpired,               // aged out in the queue; nothing was verified
};
std::string_view to_string(Verdict v);

/// Verifies a classified payload: at most 2 signatures for a claim, 4 for a conflict.
Verdict verify(JobKind kind, ByteView payload);

// ---- building envelopes (tests, tools) ----
struct ClaimFields {
  std::uint64_t slot = 0;
  std::array<std::uint8_t, 16> allocation_id{};
  std::uint64_t issued_at = 0;
  std::uint64_t expires_at = 0;
  Bytes32 subject_key{};
  Bytes32 descriptor_hash{};
  std::uint64_t work_nonce = 0;
};
struct SponsorFields {
  Bytes32 beneficiary{};
  Bytes32 policy_hash{};
  Bytes32 sponsor_nonce{};
  std::uint64_t budget = 0;
  std::uint64_t fee = 0;
  std::uint64_t sequence = 0;
  std::uint64_t sponsor_expires_at = 0;
  std::uint64_t flags = 0;
};
Bytes make_claim(const ClaimFields& f, const crypto::Ed25519Seed& issuer);
Bytes make_sponsored_claim(const ClaimFields& f, const crypto::Ed25519Seed& issuer, const SponsorFields& s,
                           const crypto::Ed25519Seed& sponsor);

// ---- the downstream check the queue does not replace ----
enum class LedgerVerdict : std::uint8_t {
  kAccepted, kNotPreverified, kNotYetValid, kExpired, kSponsorExpired, kFeeOverBudget, kInsufficientWork, kNotAClaim,
};
struct LedgerPolicy {
  unsigned min_work_bits = 12;
};
/// Leading zero bits of keccak256("admission/work/v1" || subject_key || descriptor_hash || work_nonce).
unsigned work_bits(ByteView claim);
LedgerVerdict ledger_validate(ByteView claim, Verdict preverified, std::uint64_t now, const LedgerPolicy& policy = {});

}  // namespace cowboy::admission
