// The runner's on-chain heartbeats (§6.6, §7.1): what keeps it above the
// eligibility floor, staggered by a runner-specific phase (docs/cip11.md
// choice 28) inside an effective cadence of HEARTBEAT_TIMEOUT_BLOCKS -
// safety_margin_blocks, with an emergency refresh once a whole cadence has
// passed without one.
#pragma once

#include <cstdint>

#include "cip11/ids.h"
#include "common/bytes.h"

namespace cowboy::cip11 {

class HeartbeatSchedule {
 public:
  /// phase = heartbeat_phase(chain_id, runner, cadence) (selection.h: keccak256(chain_id_be8 ||
  /// address) as a 256-bit integer, mod the cadence).
  HeartbeatSchedule(std::uint64_t chain_id, const Address& runner, std::uint64_t timeout_blocks,
                    std::uint64_t safety_margin_blocks);
  /// Whether a heartbeat should be sent at `height`, given the last one the chain recorded.
  bool due(Height height, Height last_heartbeat) const;
  /// Whether a whole cadence has passed since the last one: the floor lapses
  /// within the safety margin, so one goes at once (and a starting runner
  /// waits for it before it calls itself started).
  bool overdue(Height height, Height last_heartbeat) const;
  std::uint64_t cadence() const { return cadence_; }
  std::uint64_t phase() const { return phase_; }

 private:
  std::uint64_t cadence_ = 1, phase_ = 0;
};

}  // namespace cowboy::cip11
