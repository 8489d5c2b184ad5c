#include "cip11/runner/heartbeat.h"

#include "cip11/selection.h"

namespace cowboy::cip11 {

HeartbeatSchedule::HeartbeatSchedule(std::uint64_t chain_id, const Address& runner, std::uint64_t timeout_blocks,
                                     std::uint64_t safety_margin_blocks) {
  cadence_ = timeout_blocks > safety_margin_blocks + 1 ? timeout_blocks - safety_margin_blocks : 1;
  phase_ = heartbeat_phase(chain_id, runner, cadence_);
}

bool HeartbeatSchedule::due(Height height, Height last_heartbeat) const {
  if (height <= last_heartbeat) return false;
  return height.value % cadence_ == phase_ || overdue(height, last_heartbeat);
}

bool HeartbeatSchedule::overdue(Height height, Height last_heartbeat) const {
  return height > last_heartbeat && height - last_heartbeat >= cadence_;
}

}  // namespace cowboy::cip11
