// A consumer group's journal as a group's first load reads it (issue 46,
// stream/layout.h and cycles.h): arbitrary bytes stored as the frontier with
// its resolved mark, one cycle, one dead letter and one ack list of group 1,
// then the load. Each value is one length byte, then that many bytes. A value
// that does not decode must fail the load (kCorrupt), never crash it, and an
// ack list's count never allocates more than its bytes hold.
#include "cbqs/broker/stream/cycles.h"
#include "cbqs/store/memory_store.h"
#include "stored_values.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy::cbqs;
  using namespace cowboy::cbqs::broker;
  using fuzz::be64;
  cowboy::Bytes32 sid{};
  sid[0] = 0x6b;
  const std::string prefix = fuzz::stream_prefix(sid);
  const std::string group = be64(1);
  store::MemoryStore memory;
  store::WriteBatch w = fuzz::stored_values({prefix + "f/" + group, prefix + "y/" + group + "/" + be64(3),
                                             prefix + "x/" + group + "/" + be64(4), prefix + "k/" + group + "/" + be64(6)},
                                            data, size);
  if (!memory.write(w, store::Sync::kYes).ok()) return 0;
  GroupConfigV2 config{};
  config.group_id = GroupId{1};
  config.lane_id = LaneId{1};
  config.max_attempts = 3;
  config.visibility_timeout_ms = config.max_visibility_ms = 1'000;
  config.record_deadline_ms = 60'000;
  // The lane holds sequences 1..10 (a frontier past them ends the walk at 10).
  GroupCycles::LaneRecords lane = [](std::uint64_t from)
      -> cowboy::Result<std::optional<std::pair<std::uint64_t, std::uint64_t>>, store::StoreError> {
    if (from > 10) return std::optional<std::pair<std::uint64_t, std::uint64_t>>{};
    return std::optional{std::pair{from, std::uint64_t{1'000}}};
  };
  Timeline timeline;
  store::WriteBatch repair;
  auto g = GroupCycles::load(memory, sid, config, 1, 2'000, timeline, lane, repair);
  if (!g) return 0;
  (void)g->next_ready();
  g->write_frontier(repair);
  return 0;
}
