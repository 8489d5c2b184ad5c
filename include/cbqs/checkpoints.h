// Checkpoint verification (§10): a receipt against the provider record, or a
// whole chain from sequence 1 with the records themselves. Three verdicts:
// valid, invalid (a bad signature, a broken link, a record that does not match
// its receipt's digest), unverifiable (no key the provider record resolves,
// or records this grant cannot see).
#pragma once

#include <functional>

#include "cbqs/client.h"
#include "cbqs/wire/ids.h"

namespace cowboy::cbqs::sdk {

struct ChainReport {
  CheckpointVerdict verdict = CheckpointVerdict::kValid;
  std::uint64_t receipts = 0;       // receipts checked
  Sequence last_sequence{};           // records checked: 1..last_sequence
  std::string problem;              // for invalid / unverifiable: what and where
};

/// Verifies every receipt from the one covering sequence 1 up to the latest
/// one at the time of the call: each signature, each link (first_sequence,
/// previous_checkpoint, non-decreasing snapshot_height and committed_at_ms),
/// and each records_digest against the records replayed through a Reader.
/// `progress` is called after each receipt.
Outcome<ChainReport> verify_chain(Client& client, const ProviderRecordV2& provider,
                                  const std::function<void(const ChainReport&)>& progress = {});

/// The verdict's name: "valid", "invalid", "unverifiable".
const char* verdict_name(CheckpointVerdict v);

}  // namespace cowboy::cbqs::sdk
