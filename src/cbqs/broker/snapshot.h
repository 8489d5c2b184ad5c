// Reads the provider snapshot from the chain (cbqs/chain/snapshot.h) and
// keeps the latest as an immutable ChainView. The snapshot's age in blocks is
// measured by the broker's clock since the last successful read, in units of
// the chain's block interval (docs/protocol.md §E): while the chain is
// unreachable the age grows, and past cbqs.max_snapshot_age_blocks new
// sessions are refused with ChainStateStale while open ones continue.
#pragma once

#include <mutex>

#include "cbqs/broker/chain_view.h"
#include "cbqs/chain/snapshot.h"
#include "common/clock.h"

namespace cowboy::cbqs::broker {

class SnapshotSource final : public ViewSource {
 public:
  SnapshotSource(SnapshotProvider& chain, const Address& provider, const Clock& clock,
                 std::uint64_t block_interval_ms);

  /// Reads a new snapshot now; on failure the previous one stays in force.
  Result<ChainViewPtr, std::string> refresh();
  /// The current view, or null before the first successful refresh.
  ChainViewPtr current() const override;
  /// Whole blocks elapsed since the current view was read; UINT64_MAX without one.
  std::uint64_t age_blocks() const;
  /// Milliseconds since the view in force was fetched (UINT64_MAX before the first).
  std::uint64_t age_ms() const;
  bool fresh() const override;

 private:
  SnapshotProvider& chain_;
  const Address provider_;
  const Clock& clock_;
  const std::uint64_t block_interval_ms_;
  mutable std::mutex mu_;
  ChainViewPtr view_;
  std::uint64_t fetched_at_ms_ = 0;
};

}  // namespace cowboy::cbqs::broker
