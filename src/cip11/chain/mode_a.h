// Mode A (§8.3-§8.4): SubmitPresenceCertificate's evaluation, its metering,
// and the presence read point certificates feed.
//
// Evaluation order (§8.3, normative), cycles charged from the transaction's
// cycle_limit, never beyond it:
//   1. PRESENCE_CERT_BASE_CYCLES; then the certificate's own checks (the flag,
//      runner = sender, a live registration, height <= the current block).
//   2. Per receipt entry, PRESENCE_RECEIPT_PRECHECK_CYCLES, then every
//      signature-free check on its decoded fields and the snapshots: malformed,
//      wrong scheme, another runner (refuses the certificate), accepting_new,
//      future, stale, (subset_epoch, validator_set_hash) selecting no
//      snapshot, a validator not in it, a validator outside Sub_epoch(runner).
//      What passes is bucketed by the raw validator key.
//   3-4. Per raw key in ascending byte order, candidates by descending
//      block_height (submission order on a tie): charge
//      PRESENCE_RECEIPT_ED25519_VERIFY_CYCLES, verify; the first that verifies
//      is kept and the rest of its bucket is not looked at. No attempt without
//      the cycles to pay for it: OutOfCycles refuses the certificate.
//   5. At least t_hard kept keys; max kept block_height > presence_anchor;
//      then presence_anchor = that height, presence_proven_until = it + TTL.
// A refusal at any step leaves the state as it was.
#pragma once

#include "cip11/chain/errors.h"
#include "cip11/chain/instructions.h"
#include "cip11/chain/snapshots.h"
#include "cip11/chain/state.h"

namespace cowboy::cip11::chain {

inline constexpr std::uint64_t kReceiptFreshnessBlocks = 30;             // RECEIPT_FRESHNESS_BLOCKS
inline constexpr std::uint64_t kPresenceProofTtlBlocks = 60;             // PRESENCE_PROOF_TTL_BLOCKS
inline constexpr std::uint64_t kPresenceCertBaseCycles = 20'000;         // PRESENCE_CERT_BASE_CYCLES
inline constexpr std::uint64_t kPresenceReceiptPrecheckCycles = 1'000;   // PRESENCE_RECEIPT_PRECHECK_CYCLES
inline constexpr std::uint64_t kPresenceReceiptVerifyCycles = 5'000;     // PRESENCE_RECEIPT_ED25519_VERIFY_CYCLES

/// What became of one receipt entry, in the order of the checks.
enum class ReceiptVerdict : std::uint8_t {
  kCounted,           // the greatest valid receipt of its validator
  kMalformed,         // not a receipt's encoding
  kWrongScheme,       // a key whose scheme tag or length is not its role's
  kOtherRunner,       // another runner's key: the certificate is refused (RunnerKeyMismatch)
  kNotAccepting,      // accepting_new is false (§6.4)
  kFuture,            // block_height above the certificate's height
  kStale,             // more than RECEIPT_FRESHNESS_BLOCKS below the certificate's height
  kUnknownEpoch,      // the (subset_epoch, validator_set_hash) pair names no active or overlapping snapshot
  kUnknownValidator,  // validator_pubkey is not in the snapshot the pair names
  kOutsideSubset,     // the validator is not in Sub_epoch(runner)
  kBadSignature,      // verified, and the signature did not verify
  kSuperseded,        // prechecked; never verified, a higher receipt of its validator was kept
};
std::string_view receipt_verdict_name(ReceiptVerdict v);

struct CertificateReport {
  std::optional<ChainError> error;
  std::uint64_t cycles_used = 0;
  std::vector<ReceiptVerdict> verdicts;  // one per entry looked at, in submission order
  std::uint32_t validators = 0;          // distinct raw keys kept
  std::optional<Height> anchor;          // the greatest kept block_height
};

/// Steps 1-5 in block `height` for a transaction from `sender`; on acceptance
/// writes state.presence[cert.runner].
CertificateReport submit_certificate(State& state, const ChainParams& params, const ValidatorSnapshots& snapshots,
                                     Height height, const Address& sender,
                                     const SubmitPresenceCertificate& cert);

/// §8.4: Mode A is effective in a block when the flag is set and, for the
/// snapshot active there, effective_k >= K_HARD_MIN and t_hard >= floor(effective_k/2)+1.
bool mode_a_effective(const ChainParams& params, const ValidatorSnapshots& snapshots, Height height);

/// §8.3 point 3: PresenceInput(H) = { runner | presence_proven_until[runner] >= H },
/// from the parent state, indexed against registry(H-1) of `registry_size` runners.
PresentSet proven_presence(const State& state, Height height, std::uint32_t registry_size);

}  // namespace cowboy::cip11::chain
