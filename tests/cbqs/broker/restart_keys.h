// Issue 46's check: what a stream's restart keys say (StreamState::load) against
// what its records and receipts say, read the slow way.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "cbqs/broker/stream/state.h"

namespace cowboy::cbqs::testing {

struct Recount {
  std::uint64_t first = 0, last = 0, bytes = 0;  // first = last = 0: no record
  std::map<std::uint64_t, std::vector<std::uint64_t>> by_lane;
};

/// Every record and receipt of the stream: gapless, with their retained bytes.
inline Recount recount(store::Store& store, const Bytes32& stream_id) {
  Recount r;
  const broker::StreamLayout layout(stream_id);
  EXPECT_TRUE(layout.records(store, Sequence{0}, Sequence{UINT64_MAX}, [&](broker::Record rec) {
    if (r.first == 0) r.first = rec.sequence;
    EXPECT_EQ(rec.sequence, r.last == 0 ? r.first : r.last + 1) << "a gap in the records";
    r.last = rec.sequence;
    r.bytes += broker::retained_record_bytes(rec.payload.size());
    r.by_lane[rec.lane_id].push_back(rec.sequence);
    return true;
  }).ok());
  EXPECT_TRUE(layout.receipts(store, Sequence{0}, Sequence{UINT64_MAX}, [&](const CheckpointReceiptV2&, std::size_t n) {
    r.bytes += n;
    return true;
  }).ok());
  return r;
}

/// Expects the loaded state's head, floor, retained bytes, latest receipt and
/// each lane's records (walked through its lookups) to be the records' own.
inline Recount expect_restart_keys_agree(const broker::StreamState& state, store::Store& store) {
  Recount r = recount(store, state.stream_id());
  EXPECT_EQ(state.durable_head(), r.last);
  EXPECT_EQ(state.floor(), r.first);
  EXPECT_EQ(state.retained_bytes(), r.bytes);
  EXPECT_EQ(state.checkpoint(store, std::nullopt)->last_sequence.value, r.last);
  for (const auto& [lane, sequences] : r.by_lane) {
    EXPECT_EQ(state.count_in_lane(LaneId{lane}, Sequence{1}), sequences.size());
    std::vector<std::uint64_t> walked;
    for (auto at = state.next_in_lane(LaneId{lane}, Sequence{1}); at;
         at = state.next_in_lane(LaneId{lane}, Sequence{at->value + 1}))
      walked.push_back(at->value);
    EXPECT_EQ(walked, sequences) << "lane " << lane;
  }
  return r;
}

}  // namespace cowboy::cbqs::testing
