// The CIP-11-local CapabilityDelta keys a runner sends (§6.5: advisory,
// transport only, never the registry). Besides Mode A's request for receipts
// (kPresenceReceiptsCapability, receipt.h), a runner names each job kind its
// registration lists but it cannot serve now as a removed capability, so
// that a validator does not push it (docs/cip11.md choice 126).
#pragma once

#include <string>

#include "cip11/selection.h"

namespace cowboy::cip11 {

/// "job_types/<Name>" (the §9.4 names: "job_types/Llm", "job_types/Custom", ...),
/// after the seed's example of `RunnerCapabilities.job_types` values.
inline std::string job_kind_capability(JobKind kind) { return "job_types/" + std::string(job_kind_name(kind)); }

/// The keys of the kinds in `mask` (bit i = JobKind i), in kind order.
inline std::vector<std::string> job_kind_capabilities(std::uint32_t mask) {
  std::vector<std::string> keys;
  for (unsigned bit = 0; bit <= static_cast<unsigned>(JobKind::kAgent); ++bit)
    if (mask & (1u << bit)) keys.push_back(job_kind_capability(static_cast<JobKind>(bit)));
  return keys;
}

}  // namespace cowboy::cip11
