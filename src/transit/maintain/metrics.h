// What the maintenance process reports on its own /metrics (docs/transit.md,
// decision 55; docs/operations.md): its work as counters, its lag and what it
// last saw as gauges, in the Prometheus text format. Written by the loop's
// thread, read by the admin server's: every value is an atomic.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace cowboy::transit::maintain {

struct Metrics {
  // Counters: each command the node accepted, by what it did.
  std::atomic<std::uint64_t> delivered{0};   // admitted into the destination's mailbox
  std::atomic<std::uint64_t> disposed{0};    // delivered to a retired destination: disposed of
  std::atomic<std::uint64_t> cancelled{0};   // an output of a terminated source
  std::atomic<std::uint64_t> retired_expired{0};     // retirements recorded: an expired suspension
  std::atomic<std::uint64_t> retired_dependency{0};  // ... a required dependency's end
  std::atomic<std::uint64_t> effects_cancelled{0};   // effects closed unattempted_cancel
  std::atomic<std::uint64_t> effects_deadline{0};    // ... and deadline
  std::atomic<std::uint64_t> checkpoints{0};         // checkpoints published
  std::atomic<std::uint64_t> floor_advances{0};      // history floors advanced (trims)
  std::atomic<std::uint64_t> collected{0};           // collects that removed their record (complete)
  std::atomic<std::uint64_t> collect_steps{0};       // ... and those that removed part of it, to go on
  std::atomic<std::uint64_t> storage_runs{0};        // storage runs: a fence, then compactions (decision 181)
  std::atomic<std::uint64_t> fences{0};              // storage fences accepted
  std::atomic<std::uint64_t> compactions{0};         // storage compactions accepted
  // Counters: what did not get done, and why.
  std::atomic<std::uint64_t> lost_races{0};  // another courier or maintainer resolved it first: not an error
  std::atomic<std::uint64_t> refused{0};     // any other refusal: an error, logged
  std::atomic<std::uint64_t> uncertain{0};   // no answer from the node (it is down or restarting)
  std::atomic<std::uint64_t> stale_cuts{0};  // a listing changed under its continuation: listed again
  std::atomic<std::uint64_t> queries{0};
  std::atomic<std::uint64_t> rounds{0};
  // Gauges, from the last pass of each kind.
  std::atomic<std::uint64_t> routes_seen{0};     // route heads listed
  std::atomic<std::uint64_t> routes_waiting{0};  // ... whose destination is uninitialized or fenced
  std::atomic<std::uint64_t> ended_seen{0};      // ended processes listed
  std::atomic<std::uint64_t> cancellable_seen{0};  // effects listed cancellable
  std::atomic<std::uint64_t> overdue_seen{0};      // ... and overdue
  std::atomic<std::uint64_t> collectable_seen{0};  // processes with records listed collectable, last pass
  std::atomic<std::uint64_t> history_floor{0};     // the floor after the last trim step (0 without the opt-in)
  std::atomic<std::uint64_t> storage_epoch{0};     // the epoch its last fence made
  std::atomic<std::uint64_t> grace_below{0};       // ... and the grace recorded with it
  std::atomic<std::uint64_t> compaction_cursor{0};  // the cursor its last compaction advanced to
  std::atomic<std::uint64_t> lag_positions{0};   // the oldest route head's age in authority positions
  std::atomic<std::uint64_t> lag_ms{0};          // ... and in milliseconds, by this process's clock
  std::atomic<std::uint64_t> node_position{0};   // the node's position at the last answer
  std::atomic<std::uint64_t> last_round_us{0};
  std::atomic<bool> up{false};  // the last exchange with the node was answered

  /// The text exposition: these series, then the process_* ones.
  std::string text() const;
};

}  // namespace cowboy::transit::maintain
