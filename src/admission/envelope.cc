#include "admission/envelope.h"

#include <algorithm>
#include <bit>

namespace cowboy::admission {

namespace {

constexpr std::string_view kClaimDomain = "admission/claim/v1";
constexpr std::string_view kSponsorDomain = "admission/sponsor/v1";
constexpr std::string_view kWorkDomain = "admission/work/v1";

// Field offsets (docs/admission.md).
constexpr std::size_t kSlot = 2, kAllocation = 10, kIssuedAt = 26, kExpiresAt = 34, kIssuerKey = 42, kSubjectKey = 74,
                      kDescriptor = 106, kWorkNonce = 138, kIssuerSig = 146;
constexpr std::size_t kSponsorKey = 210, kBudget = 338, kFee = 346, kSponsorExpiresAt = 362, kSponsorSig = 378;

std::uint64_t u64_at(ByteView b, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i) v = v << 8 | b[at + i];
  return v;
}
void put_u64(Bytes& b, std::size_t at, std::uint64_t v) {
  for (std::size_t i = 0; i < 8; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
}
template <std::size_t N>
std::array<std::uint8_t, N> array_at(ByteView b, std::size_t at) {
  std::array<std::uint8_t, N> out;
  std::copy_n(b.begin() + static_cast<std::ptrdiff_t>(at), N, out.begin());
  return out;
}

bool signature_ok(std::string_view domain, ByteView signed_bytes, ByteView key, ByteView sig) {
  Bytes message = concat({as_bytes(domain), signed_bytes});
  return crypto::ed25519_verify(array_at<32>(key, 0), message, array_at<64>(sig, 0));
}

bool header_ok(ByteView b, std::uint8_t kind) { return b[0] == kEnvelopeVersion && b[1] == kind; }

// Verifies one claim or sponsored claim: the issuer, then (if sponsored) the sponsor.
Verdict verify_claim(ByteView b, bool sponsored) {
  if (!signature_ok(kClaimDomain, b.first(kIssuerSig), b.subspan(kIssuerKey, 32), b.subspan(kIssuerSig, 64)))
    return Verdict::kBadIssuerSignature;
  if (sponsored &&
      !signature_ok(kSponsorDomain, b.first(kSponsorSig), b.subspan(kSponsorKey, 32), b.subspan(kSponsorSig, 64)))
    return Verdict::kBadSponsorSignature;
  return Verdict::kValid;
}

}  // namespace

std::optional<JobKind> classify(ByteView p) {
  switch (p.size()) {
    case kClaimBytes:
      if (header_ok(p, kKindClaim)) return JobKind::kClaim;
      break;
    case kSponsoredClaimBytes:
      if (header_ok(p, kKindSponsoredClaim)) return JobKind::kSponsoredClaim;
      break;
    case kConflictBytes:
      if (header_ok(p.first(kSponsoredClaimBytes), kKindSponsoredClaim) &&
          header_ok(p.subspan(kSponsoredClaimBytes), kKindSponsoredClaim))
        return JobKind::kConflict;
      break;
  }
  return std::nullopt;
}

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kValid: return "Valid";
    case Verdict::kBadIssuerSignature: return "BadIssuerSignature";
    case Verdict::kBadSponsorSignature: return "BadSponsorSignature";
    case Verdict::kIssuerMismatch: return "IssuerMismatch";
    case Verdict::kNotSameSlot: return "NotSameSlot";
    case Verdict::kNotConflicting: return "NotConflicting";
    case Verdict::kExpired: return "Expired";
  }
  return "?";
}

Verdict verify(JobKind kind, ByteView p) {
  switch (kind) {
    case JobKind::kClaim: return verify_claim(p, false);
    case JobKind::kSponsoredClaim: return verify_claim(p, true);
    case JobKind::kConflict: {
      ByteView a = p.first(kSponsoredClaimBytes), b = p.subspan(kSponsoredClaimBytes);
      // Structural rules first: different issuer credentials never make evidence.
      if (!std::equal(a.begin() + kIssuerKey, a.begin() + kIssuerKey + 32, b.begin() + kIssuerKey))
        return Verdict::kIssuerMismatch;
      if (u64_at(a, kSlot) != u64_at(b, kSlot)) return Verdict::kNotSameSlot;
      bool same_allocation = std::equal(a.begin() + kAllocation, a.begin() + kAllocation + 16, b.begin() + kAllocation);
      bool same_descriptor = std::equal(a.begin() + kDescriptor, a.begin() + kDescriptor + 32, b.begin() + kDescriptor);
      if (same_allocation && same_descriptor) return Verdict::kNotConflicting;
      if (auto v = verify_claim(a, true); v != Verdict::kValid) return v;
      return verify_claim(b, true);
    }
  }
  return Verdict::kBadIssuerSignature;
}

Bytes make_claim(const ClaimFields& f, const crypto::Ed25519Seed& issuer) {
  Bytes b(kClaimBytes, 0);
  b[0] = kEnvelopeVersion;
  b[1] = kKindClaim;
  put_u64(b, kSlot, f.slot);
  std::copy(f.allocation_id.begin(), f.allocation_id.end(), b.begin() + kAllocation);
  put_u64(b, kIssuedAt, f.issued_at);
  put_u64(b, kExpiresAt, f.expires_at);
  auto issuer_key = crypto::ed25519_from_seed(issuer).public_key;
  std::copy(issuer_key.begin(), issuer_key.end(), b.begin() + kIssuerKey);
  std::copy(f.subject_key.begin(), f.subject_key.end(), b.begin() + kSubjectKey);
  std::copy(f.descriptor_hash.begin(), f.descriptor_hash.end(), b.begin() + kDescriptor);
  put_u64(b, kWorkNonce, f.work_nonce);
  auto sig = crypto::ed25519_sign(issuer, concat({as_bytes(kClaimDomain), ByteView(b).first(kIssuerSig)}));
  std::copy(sig.begin(), sig.end(), b.begin() + kIssuerSig);
  return b;
}

Bytes make_sponsored_claim(const ClaimFields& f, const crypto::Ed25519Seed& issuer, const SponsorFields& s,
                           const crypto::Ed25519Seed& sponsor) {
  Bytes b(kSponsoredClaimBytes, 0);
  Bytes head = make_claim(f, issuer);
  std::copy(head.begin(), head.end(), b.begin());
  b[1] = kKindSponsoredClaim;  // the issuer signs the sponsored kind, so re-sign the head
  auto issuer_sig = crypto::ed25519_sign(issuer, concat({as_bytes(kClaimDomain), ByteView(b).first(kIssuerSig)}));
  std::copy(issuer_sig.begin(), issuer_sig.end(), b.begin() + kIssuerSig);
  auto sponsor_key = crypto::ed25519_from_seed(sponsor).public_key;
  std::copy(sponsor_key.begin(), sponsor_key.end(), b.begin() + kSponsorKey);
  std::copy(s.beneficiary.begin(), s.beneficiary.end(), b.begin() + 242);
  std::copy(s.policy_hash.begin(), s.policy_hash.end(), b.begin() + 274);
  std::copy(s.sponsor_nonce.begin(), s.sponsor_nonce.end(), b.begin() + 306);
  put_u64(b, kBudget, s.budget);
  put_u64(b, kFee, s.fee);
  put_u64(b, 354, s.sequence);
  put_u64(b, kSponsorExpiresAt, s.sponsor_expires_at);
  put_u64(b, 370, s.flags);
  auto sponsor_sig = crypto::ed25519_sign(sponsor, concat({as_bytes(kSponsorDomain), ByteView(b).first(kSponsorSig)}));
  std::copy(sponsor_sig.begin(), sponsor_sig.end(), b.begin() + kSponsorSig);
  return b;
}

unsigned work_bits(ByteView claim) {
  Bytes32 h = crypto::keccak256({as_bytes(kWorkDomain), claim.subspan(kSubjectKey, 32), claim.subspan(kDescriptor, 32),
                                 claim.subspan(kWorkNonce, 8)});
  unsigned bits = 0;
  for (auto byte : h) {
    if (byte == 0) {
      bits += 8;
      continue;
    }
    bits += static_cast<unsigned>(std::countl_zero(byte));
    break;
  }
  return bits;
}

LedgerVerdict ledger_validate(ByteView claim, Verdict preverified, std::uint64_t now, const LedgerPolicy& policy) {
  auto kind = classify(claim);
  if (!kind || *kind == JobKind::kConflict) return LedgerVerdict::kNotAClaim;
  if (preverified != Verdict::kValid) return LedgerVerdict::kNotPreverified;
  if (now < u64_at(claim, kIssuedAt)) return LedgerVerdict::kNotYetValid;
  if (now >= u64_at(claim, kExpiresAt)) return LedgerVerdict::kExpired;
  if (*kind == JobKind::kSponsoredClaim) {
    if (now >= u64_at(claim, kSponsorExpiresAt)) return LedgerVerdict::kSponsorExpired;
    if (u64_at(claim, kFee) > u64_at(claim, kBudget)) return LedgerVerdict::kFeeOverBudget;
  }
  if (work_bits(claim) < policy.min_work_bits) return LedgerVerdict::kInsufficientWork;
  return LedgerVerdict::kAccepted;
}

}  // namespace cowboy::admission
