// The owner's part in StreamState tests: each change's writes made durable
// at once (synced), as the commit pipeline does before it shows the change.
#pragma once

#include <gtest/gtest.h>

#include "cbqs/broker/stream/state.h"

namespace cowboy::cbqs::testing {

using broker::StreamState;

class Durably {
  template <typename F>
  auto run(F change) {
    store::WriteBatch w;
    auto result = change(w);
    if (!result.ok()) {
      EXPECT_TRUE(w.empty()) << "a refusal writes nothing";
    }
    if (!w.empty()) {
      EXPECT_TRUE(store_.write(w, store::Sync::kYes).ok());
    }
    return result;
  }

 public:
  Durably(StreamState& state, store::Store& store) : state_(state), store_(store) {}

  auto create_lane(const std::optional<RoomLaneV2>& room, const Params& p) {
    return run([&](auto& w) { return state_.create_lane(room, p, w); });
  }
  auto close_lane(LaneId lane_id) {
    return run([&](auto& w) { return state_.close_lane(lane_id, w); });
  }
  auto create_group(const GroupConfigV2& c, const Params& p) {
    return run([&](auto& w) { return state_.create_group(c, p, w); });
  }
  auto update_group(const GroupConfigV2& c, const Params& p) {
    return run([&](auto& w) { return state_.update_group(c, p, w); });
  }
  auto delete_group(GroupId group_id) {
    return run([&](auto& w) { return state_.delete_group(group_id, w); });
  }
  auto update_settings(const StreamSettingsV2& s, const Params& p) {
    return run([&](auto& w) { return state_.update_settings(s, p, w); });
  }

 private:
  StreamState& state_;
  store::Store& store_;
};

/// What advance_floor deletes, as a batch.
inline store::WriteBatch floor_writes(StreamState& state, const Params& p, std::uint64_t now_ms) {
  store::WriteBatch w;
  state.advance_floor(p, now_ms, w);
  return w;
}

}  // namespace cowboy::cbqs::testing
