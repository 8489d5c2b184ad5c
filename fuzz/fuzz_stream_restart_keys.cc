// A stream's restart keys as a restart reads them (issue 46, stream/layout.h):
// arbitrary bytes stored as the tail, the retention marks, the id counters,
// one run of lane 1 and lane 1, then the load and the lookups that read runs
// and receipts. Each value is one length byte, then that many bytes. A value
// that does not decode must fail the load (kCorrupt), never crash it.
#include "cbqs/broker/stream/state.h"
#include "cbqs/store/memory_store.h"

namespace {
std::string be64(std::uint64_t v) {
  std::string s;
  for (int i = 7; i >= 0; --i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy::cbqs;
  cowboy::Bytes32 sid{};
  sid[0] = 0x5e;
  const std::string prefix = "s/" + std::string(reinterpret_cast<const char*>(sid.data()), sid.size()) + "/";
  const std::string keys[] = {prefix + "m", prefix + "d", prefix + "n", prefix + "i/" + be64(1) + "/" + be64(5),
                              prefix + "l/" + be64(1)};
  store::MemoryStore memory;
  store::WriteBatch w;
  std::size_t at = 0;
  for (const auto& key : keys) {
    if (at >= size) break;
    std::size_t n = data[at];
    ++at;
    n = std::min(n, size - at);
    w.put(key, std::string(reinterpret_cast<const char*>(data + at), n));
    at += n;
  }
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
