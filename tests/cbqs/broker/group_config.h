// A valid GroupConfigV2 within the §15 default ceilings, for group tests.
#pragma once

#include "cbqs/wire/types.h"

namespace cowboy::cbqs::testing {

inline GroupConfigV2 valid_group_config(LaneId lane) {
  GroupConfigV2 g;
  g.lane_id = lane;
  g.start = StartHead{};
  g.visibility_timeout_ms = 10'000;
  g.max_visibility_ms = 30'000;
  g.max_in_flight = 100;
  g.max_in_flight_per_holder = 10;
  g.max_attempts = 5;
  g.record_deadline_ms = 3'600'000;
  return g;
}

}  // namespace cowboy::cbqs::testing
