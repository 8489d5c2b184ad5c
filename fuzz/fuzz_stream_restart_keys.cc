// A stream's restart keys as a restart reads them (issue 46, stream/layout.h):
// arbitrary bytes stored as the tail, the retention marks, the id counters,
// one run of lane 1 and lane 1, then the load and the lookups that read runs
// and receipts. Each value is one length byte, then that many bytes. A value
// that does not decode must fail the load (kCorrupt), never crash it.
#include "cbqs/broker/stream/state.h"
#include "cbqs/store/memory_store.h"
#include "stored_values.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy::cbqs;
  using fuzz::be64;
  cowboy::Bytes32 sid{};
  sid[0] = 0x5e;
  const std::string prefix = fuzz::stream_prefix(sid);
  store::MemoryStore memory;
  store::WriteBatch w = fuzz::stored_values({prefix + "m", prefix + "d", prefix + "n", prefix + "i/" + be64(1) + "/" + be64(5),
                                             prefix + "l/" + be64(1)},
                                            data, size);
  if (!memory.write(w, store::Sync::kYes).ok()) return 0;
  auto state = broker::StreamState::load(memory, sid);
  if (!state) return 0;
  for (std::uint64_t from : {0ULL, 1ULL, 5ULL, 6ULL}) {
    (void)state->next_in_lane(LaneId{1}, Sequence{from});
    (void)state->count_in_lane(LaneId{1}, Sequence{from});
    (void)state->committed_at(from);
  }
  (void)state->checkpoint(memory, std::nullopt);
  (void)state->checkpoint(memory, Sequence{3});
  return 0;
}
