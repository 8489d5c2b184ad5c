#include "cip11/chain/mode_a.h"

#include <algorithm>
#include <map>

#include "cip11/subset.h"

namespace cowboy::cip11::chain {
namespace {

/// Cycles against the transaction's limit: a charge that does not fit is not taken.
struct Meter {
  std::uint64_t limit = 0;
  std::uint64_t used = 0;
  bool charge(std::uint64_t cycles) {
    if (limit - used < cycles) return false;
    used += cycles;
    return true;
  }
};

struct Candidate {
  std::size_t entry = 0;
  PresenceReceipt receipt;
};

crypto::Ed25519Public raw_validator_key(const PresenceReceipt& r) {
  crypto::Ed25519Public key;
  std::copy(r.validator_pubkey.raw().begin(), r.validator_pubkey.raw().end(), key.begin());
  return key;
}

/// Step 2 for one decoded entry, after its charge.
class Precheck {
 public:
  Precheck(const ChainParams& params, const ValidatorSnapshots& snapshots, Height height,
           const RunnerRecord& runner, const SubmitPresenceCertificate& cert)
      : params_(params), snapshots_(snapshots), height_(height), runner_(runner), cert_(cert) {}

  ReceiptVerdict operator()(ByteView entry, PresenceReceipt& out) {
    auto decoded = decode_receipt(entry);
    if (!decoded) {
      switch (decoded.error()) {
        case Errc::kBadScheme:
        case Errc::kBadKeyLength:
        case Errc::kRoleSchemeMismatch: return ReceiptVerdict::kWrongScheme;
        default: return ReceiptVerdict::kMalformed;
      }
    }
    out = std::move(*decoded);
    if (auto address = runner_address(out.runner_pubkey); !address || *address != cert_.runner)
      return ReceiptVerdict::kOtherRunner;
    if (!out.accepting_new) return ReceiptVerdict::kNotAccepting;
    if (out.block_height > cert_.height) return ReceiptVerdict::kFuture;
    if (cert_.height - out.block_height > kReceiptFreshnessBlocks) return ReceiptVerdict::kStale;
    const ValidatorSnapshot* snapshot = snapshots_.select(out.subset_epoch, out.validator_set_hash, height_);
    if (!snapshot) return ReceiptVerdict::kUnknownEpoch;
    const crypto::Ed25519Public key = raw_validator_key(out);
    auto at = std::find(snapshot->peers.begin(), snapshot->peers.end(), key);
    if (at == snapshot->peers.end()) return ReceiptVerdict::kUnknownValidator;
    const auto& subset = subset_in(*snapshot);
    const auto index = static_cast<std::size_t>(at - snapshot->peers.begin());
    if (std::find(subset.begin(), subset.end(), index) == subset.end()) return ReceiptVerdict::kOutsideSubset;
    return ReceiptVerdict::kSuperseded;  // prechecked: a candidate until it is verified
  }

 private:
  /// Sub_epoch(runner) in `snapshot`, computed once per snapshot.
  const std::vector<std::size_t>& subset_in(const ValidatorSnapshot& snapshot) {
    auto it = subsets_.find(snapshot.epoch);
    if (it == subsets_.end())
      it = subsets_.emplace(snapshot.epoch, subset_of(runner_.key, snapshot.peers, params_.subset)).first;
    return it->second;
  }

  const ChainParams& params_;
  const ValidatorSnapshots& snapshots_;
  Height height_;
  const RunnerRecord& runner_;
  const SubmitPresenceCertificate& cert_;
  std::map<Epoch, std::vector<std::size_t>> subsets_;
};

}  // namespace

CertificateReport submit_certificate(State& state, const ChainParams& params, const ValidatorSnapshots& snapshots,
                                     Height height, const Address& sender,
                                     const SubmitPresenceCertificate& cert) {
  CertificateReport report;
  Meter meter{cert.cycle_limit};
  auto refuse = [&](ChainError e) {
    report.error = e;
    report.cycles_used = meter.used;
    return report;
  };

  // 1. The base charge, then what the certificate says of itself.
  if (!meter.charge(kPresenceCertBaseCycles)) return refuse(ChainError::kOutOfCycles);
  if (!params.presence_hard_exclude_enabled) return refuse(ChainError::kModeADisabled);
  if (cert.runner != sender) return refuse(ChainError::kRunnerNotSender);
  const RunnerRecord* runner = state.runners.get(cert.runner);
  if (!runner) return refuse(ChainError::kUnknownRunner);
  if (runner->health == HealthStatus::kDeregistered) return refuse(ChainError::kRunnerDeregistered);
  if (cert.height > height) return refuse(ChainError::kCertificateFromTheFuture);

  // 2. Every entry charged and checked without its signature; survivors bucketed by raw key.
  Precheck precheck(params, snapshots, height, *runner, cert);
  std::map<crypto::Ed25519Public, std::vector<Candidate>> buckets;
  for (std::size_t i = 0; i < cert.receipts.size(); ++i) {
    if (!meter.charge(kPresenceReceiptPrecheckCycles)) return refuse(ChainError::kOutOfCycles);
    PresenceReceipt receipt;
    const ReceiptVerdict verdict = precheck(cert.receipts[i], receipt);
    report.verdicts.push_back(verdict);
    if (verdict == ReceiptVerdict::kOtherRunner) return refuse(ChainError::kRunnerKeyMismatch);
    if (verdict == ReceiptVerdict::kSuperseded) buckets[raw_validator_key(receipt)].push_back({i, std::move(receipt)});
  }

  // 3-4. Per validator, the greatest receipt whose signature verifies; each attempt paid first.
  Height anchor{0};
  for (auto& [key, candidates] : buckets) {
    std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.receipt.block_height > b.receipt.block_height;
    });
    for (const Candidate& c : candidates) {
      if (!meter.charge(kPresenceReceiptVerifyCycles)) return refuse(ChainError::kOutOfCycles);
      if (!verify_receipt(params.chain_id, c.receipt)) {
        report.verdicts[c.entry] = ReceiptVerdict::kBadSignature;
        continue;
      }
      report.verdicts[c.entry] = ReceiptVerdict::kCounted;
      ++report.validators;
      anchor = std::max(anchor, c.receipt.block_height);
      report.anchor = anchor;
      break;
    }
  }

  // 5. The threshold, the strictly newer anchor, then the one write.
  if (report.validators == 0 || report.validators < params.t_hard) return refuse(ChainError::kBelowThreshold);
  if (const PresenceProof* now = state.presence.get(cert.runner); now && anchor <= now->anchor)
    return refuse(ChainError::kNotStrictlyNewer);
  const Height until =
      anchor > Height{UINT64_MAX - kPresenceProofTtlBlocks} ? Height{UINT64_MAX} : anchor + kPresenceProofTtlBlocks;
  state.presence[cert.runner] = PresenceProof{anchor, until};
  report.cycles_used = meter.used;
  return report;
}

bool mode_a_effective(const ChainParams& params, const ValidatorSnapshots& snapshots, Height height) {
  const std::size_t effective_k = subset_size(snapshots.active(height).peers.size(), params.subset);
  return cip11::mode_a_effective(params.presence_hard_exclude_enabled, effective_k, params.t_hard);
}

PresentSet proven_presence(const State& state, Height height, std::uint32_t registry_size) {
  PresentSet set(registry_size);
  for (const auto& [runner, proof] : state.presence)
    if (auto i = state.index.index_of(runner); i && *i < registry_size && proof.proven_until >= height) set.add(*i);
  return set;
}

std::string_view receipt_verdict_name(ReceiptVerdict v) {
  switch (v) {
    case ReceiptVerdict::kCounted: return "Counted";
    case ReceiptVerdict::kMalformed: return "Malformed";
    case ReceiptVerdict::kWrongScheme: return "WrongScheme";
    case ReceiptVerdict::kOtherRunner: return "OtherRunner";
    case ReceiptVerdict::kNotAccepting: return "NotAccepting";
    case ReceiptVerdict::kFuture: return "Future";
    case ReceiptVerdict::kStale: return "Stale";
    case ReceiptVerdict::kUnknownEpoch: return "UnknownEpoch";
    case ReceiptVerdict::kUnknownValidator: return "UnknownValidator";
    case ReceiptVerdict::kOutsideSubset: return "OutsideSubset";
    case ReceiptVerdict::kBadSignature: return "BadSignature";
    case ReceiptVerdict::kSuperseded: return "Superseded";
  }
  return "Unknown";
}

}  // namespace cowboy::cip11::chain
