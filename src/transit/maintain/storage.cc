// The storage pass (docs/transit.md, decision 181): every `storage_every` of
// trusted time, one storage run - a storage_fence, recording the read-lease
// grace whenever a grace has passed since the stored fence (so that the
// bodies deleted before it are purged, decision 180), then at most
// `compacts_per_run` storage_compacts of the leaves the node lists as most
// worth relocating (compaction_needs, decision 183), most needy first; none
// when nothing needs it. Between runs it reads nothing: when the next is due comes from the
// stored fence's trusted time, so a restarted or a second maintainer does
// not fence early either. Each run is logged and counted.
#include "common/log.h"
#include "transit/contract/operations.h"
#include "transit/maintain/maintainer.h"

namespace cowboy::transit::maintain {

Maintainer::Round Maintainer::storage_pass() {
  if (!storage_ || options_.storage_every.count() == 0) return Round::kIdle;
  const Millis every{static_cast<std::uint64_t>(options_.storage_every.count())};
  if (trusted_now() < next_storage_ms_) return Round::kIdle;
  Response response;
  switch (list(StorageQuery{}, response)) {
    case Listed::kPage: break;
    case Listed::kUnreachable: return Round::kUnreachable;
    case Listed::kStale:
    case Listed::kRefused: return Round::kIdle;
  }
  const StorageStatus status = std::get<StorageStatus>(response.result);
  const TrustedMs now = trusted_now();
  if (status.fenced_at.value != 0 && now < status.fenced_at_ms + every) {
    next_storage_ms_ = status.fenced_at_ms + every;  // someone fenced since: the next run is due from that fence
    return Round::kIdle;
  }
  // Record the grace when the stored fence is a lease behind; the node judges it by its trusted time.
  const bool record_grace = status.fenced_at.value != 0 && now >= status.fenced_at_ms + status.read_lease_grace_ms;
  bool worked = false;
  switch (act(StorageFence{status.epoch, record_grace})) {
    case Act::kUnreachable: return Round::kUnreachable;
    case Act::kDone: worked = true; break;
    case Act::kLostRace: return Round::kWorked;  // another maintainer fenced: its run, read again next round
    case Act::kWaiting: next_storage_ms_ = now + Millis{1'000}; return Round::kIdle;  // the node's time is short of the grace
    case Act::kRefused: next_storage_ms_ = now + every; return Round::kIdle;
  }
  ++metrics_.storage_runs;
  std::size_t compacted = 0;
  Id cursor = status.compaction_cursor;
  // The node's most needy leaves, a page at a time: a relocation resets its
  // leaf's need, so the next page lists the next ones (decision 183).
  for (std::size_t sent = 0; sent < options_.compacts_per_run;) {  // commands, not successes: bounded
    Response needs;
    const Listed listed = list(CompactionNeedsQuery{}, needs);
    if (listed == Listed::kUnreachable) return Round::kUnreachable;
    if (listed != Listed::kPage) break;
    const auto& leaves = std::get<CompactionNeeds>(needs.result).leaves.items;
    if (leaves.empty()) break;  // nothing needs relocating
    bool lost = false;
    for (const auto& candidate : leaves) {
      if (sent == options_.compacts_per_run) break;
      ++sent;
      const Act acted = act(StorageCompact{cursor, candidate.leaf});
      if (acted == Act::kUnreachable) return Round::kUnreachable;
      if (acted == Act::kLostRace) lost = true;  // another compactor took the cursor: this run's compaction ends
      if (lost) break;
      if (acted == Act::kDone) ++cursor, ++compacted;
      // kRefused (logged): the next one
    }
    if (lost) break;
  }
  next_storage_ms_ = now + every;
  log::info("transit_maintain_storage_run", log::field("epoch", status.epoch + 1),
            log::field("grace_recorded", record_grace ? "yes" : "no"), log::field("compacted", compacted),
            log::field("cursor", cursor));
  return worked ? Round::kWorked : Round::kIdle;
}

}  // namespace cowboy::transit::maintain
