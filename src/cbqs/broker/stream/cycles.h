// One consumer group's delivery cycles (§9.2; docs/protocol.md §O), as a state
// machine with no I/O: callers pass the clock reading, the stream's Timeline
// and a WriteBatch that collects the durable changes, which they make durable
// (synced) before the effects are shown to anyone.
//
// A cycle exists per (retained record, group). Records at or above the
// frontier are PENDING implicitly (never issued, no state); below it, a record
// either has a live cycle here (LEASED, or WAITING for its redelivery time) or
// its cycle is terminal: ACKED (reclaimed, nothing kept) or EXPIRED (a dead
// letter kept until its record leaves retention or an operator redrives it).
//
// What is durable (issue 46): a lease issued from the frontier is written as
// the frontier's move alone, and Acks at or above the resolved mark as one ack
// list per write, so a drained record costs no journal operation of its own;
// the frontier key's resolved mark moves up past them once no first lease
// below it is live, and the lists it passes are deleted (layout.h). A first
// lease still outstanding 65,536 sequences below the frontier gets its own key,
// so the mark trails the frontier by at most that. Any other change of a
// cycle writes its own key as before.
//
// A terminal cycle keeps the handle of its last lease for the group's
// visibility_timeout_ms, so a repeated action gets DeliveryTerminal; then it is
// reclaimed and the handle is unknown (LeaseStale).
#pragma once

#include <boost/unordered/unordered_flat_map.hpp>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>
#include <vector>

#include "cbqs/broker/stream/layout.h"
#include "cbqs/wire/errors.h"
#include "cbqs/wire/types.h"

namespace cowboy::cbqs::broker {

/// The subscription a lease was issued to (unique within the process).
using HolderId = std::uint64_t;

/// The one timer structure of a stream: lease expiries, redelivery times,
/// record deadlines and reclamations of all its groups, earliest first. Entries
/// are never removed early; one whose epoch no longer matches is ignored.
class Timeline {
 public:
  struct Entry {
    std::uint64_t due_ms = 0;
    GroupId group_id{};
    std::uint64_t sequence = 0;  // 0: a reclamation
    std::uint64_t epoch = 0;
    bool operator>(const Entry& o) const { return due_ms > o.due_ms; }
  };
  void add(const Entry& e) { heap_.push(e); }
  std::optional<std::uint64_t> next_due() const;
  /// Removes and returns every entry due at `now_ms`.
  std::vector<Entry> take_due(std::uint64_t now_ms);
  std::size_t size() const { return heap_.size(); }

 private:
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
};

struct GroupCounters {
  std::uint64_t delivered = 0;    // leases issued
  std::uint64_t redelivered = 0;  // leases issued for an attempt after the first
  std::uint64_t acked = 0;
  std::uint64_t expired = 0;      // cycles that became EXPIRED
};

struct Issued {
  LeaseId lease;
  Sequence sequence{};
  std::uint16_t attempt = 0;
};

class GroupCycles {
 public:
  GroupCycles(const Bytes32& stream_id, GroupId group, Sequence frontier);

  /// The first retained record of the group's lane at or above a sequence:
  /// (sequence, committed_at_ms), nullopt when there is none.
  using LaneRecords = std::function<Result<std::optional<std::pair<std::uint64_t, std::uint64_t>>, store::StoreError>(
      std::uint64_t from)>;

  /// Loads the group's frontier, cycles, dead letters and ack lists. A cycle
  /// that was LEASED when the broker stopped (a stored lease, or a first lease
  /// that only the frontier's move recorded) has spent that attempt (its holder
  /// went with the process): it is redeliverable now, or EXPIRED if that was its
  /// last attempt; `repair` receives the writes that say so.
  static Result<GroupCycles, store::StoreError> load(store::Store& store, const Bytes32& stream_id,
                                                     const GroupConfigV2& config, std::uint64_t floor,
                                                     std::uint64_t now_ms, Timeline& timeline,
                                                     const LaneRecords& lane_records, store::WriteBatch& repair);

  GroupId group_id() const { return group_; }
  /// The lowest sequence never considered; records of the group's lane from here on are PENDING.
  Sequence frontier() const { return Sequence{frontier_}; }
  /// The lowest WAITING cycle whose redelivery time has come.
  std::optional<Sequence> next_ready() const;
  /// Room under max_in_flight and max_in_flight_per_holder.
  bool has_room(const GroupConfigV2& config, HolderId holder) const;

  /// Leases `sequence` (a ready cycle, or the next PENDING record at or above
  /// the frontier) to `holder`: the attempt is counted and written. Nullopt
  /// when the cycle turned out to be EXPIRED instead (deadline passed, or
  /// max_attempts lowered below its attempts).
  std::optional<Issued> issue(Sequence sequence, std::uint64_t committed_at_ms, HolderId holder,
                              const GroupConfigV2& config, std::uint64_t now_ms, const LeaseId& lease,
                              Timeline& timeline, store::WriteBatch& write);
  /// Adds the gathered Acks' list, the frontier with the resolved mark if
  /// either moved, and the deletion of the lists the mark passed, to `write`.
  /// The caller makes them part of the same durable batch as the leases and
  /// actions gathered since the last call.
  void write_frontier(store::WriteBatch& write);
  /// A change not yet handed to a write: a first lease (the frontier's move)
  /// or an Ack for the next list. What reveals it must wait for the next write.
  bool unwritten() const { return frontier_dirty_ || !acks_.empty(); }
  /// Every record of the lane below it is resolved or has its own key (layout.h).
  std::uint64_t resolved() const { return resolved_; }

  /// LeaseStale, DeliveryTerminal or NotLeaseHolder (that precedence), or nullopt.
  std::optional<ErrorCode> check_lease(const LeaseId& lease, HolderId holder, std::uint64_t now_ms) const;
  // Each action requires check_lease to have passed.
  void ack(const LeaseId& lease, const GroupConfigV2& config, std::uint64_t now_ms, Timeline& timeline,
           store::WriteBatch& write);
  void nack(const LeaseId& lease, const GroupConfigV2& config, std::uint64_t now_ms, Timeline& timeline,
            store::WriteBatch& write);
  void reject(const LeaseId& lease, const GroupConfigV2& config, std::uint64_t now_ms, Timeline& timeline,
              store::WriteBatch& write);
  void extend(const LeaseId& lease, std::uint64_t extend_ms, const GroupConfigV2& config, std::uint64_t now_ms,
              Timeline& timeline);
  /// The holder went away (unsubscribed, closed, session ended): its leases end
  /// as if they expired now.
  void release_holder(HolderId holder, const GroupConfigV2& config, std::uint64_t now_ms, Timeline& timeline,
                      store::WriteBatch& write);
  /// A Timeline entry of this group came due (sequence 0: a reclamation).
  void on_due(const Timeline::Entry& entry, const GroupConfigV2& config, std::uint64_t now_ms, Timeline& timeline,
              store::WriteBatch& write);
  /// Retention passed `floor`: cycles and dead letters below it die with their records.
  void drop_below(std::uint64_t floor, store::WriteBatch& write);
  /// An operator's redrive: every dead letter becomes deliverable again with its attempts reset.
  std::size_t redrive(const GroupConfigV2& config, std::uint64_t now_ms, Timeline& timeline,
                      store::WriteBatch& write);

  std::uint32_t in_flight() const { return in_flight_; }
  std::uint32_t in_flight_of(HolderId holder) const {
    auto it = per_holder_.find(holder);
    return it == per_holder_.end() ? 0 : it->second;
  }
  std::size_t waiting() const { return cycles_.size() - in_flight_; }
  std::optional<Sequence> oldest_live() const;
  const std::map<std::uint64_t, DeadLetter>& dead_letters() const { return dead_; }
  const GroupCounters& counters() const { return counters_; }

 private:
  struct Cycle {
    std::uint16_t attempts = 0;
    bool leased = false;
    std::uint64_t committed_at_ms = 0;
    std::uint64_t epoch = 0;
    bool implicit = false;  // LEASED at its first attempt with no key: the frontier's move recorded it
    // LEASED
    Bytes32 lease{};
    HolderId holder = 0;
    std::uint64_t issued_at_ms = 0;
    std::uint64_t expires_at_ms = 0;
    std::uint64_t visibility_ms = 0;      // the group's, when this lease was issued
    std::uint64_t max_visibility_ms = 0;  // likewise
    // WAITING
    std::uint64_t visible_at_ms = 0;
  };
  struct Tombstone {
    std::uint64_t sequence = 0;
    std::uint64_t reclaim_at_ms = 0;
  };
  struct LeaseHash {
    std::size_t operator()(const Bytes32& b) const;
  };

  void write_cycle(std::uint64_t sequence, const Cycle& c, store::WriteBatch& write) const;
  void schedule(std::uint64_t sequence, Cycle& c, const GroupConfigV2& config, Timeline& timeline,
                std::uint64_t now_ms);
  void end_lease(Cycle& c);
  /// The cycle gets its own key from now on (or none, when it ends).
  void make_explicit(Cycle& c);
  /// Drops stale entries from the front of implicit_: its front is then the oldest implicit cycle.
  void trim_implicit();
  /// The attempt ended without a terminal action: WAITING until `visible_at`, or EXPIRED if it was the last.
  void attempt_over(std::uint64_t sequence, std::uint64_t visible_at_ms, const GroupConfigV2& config,
                    std::uint64_t now_ms, Timeline& timeline, store::WriteBatch& write);
  void terminate(std::uint64_t sequence, std::optional<DeadReason> expired, const GroupConfigV2& config,
                 std::uint64_t now_ms, Timeline& timeline, store::WriteBatch& write);

  StreamLayout layout_;
  GroupId group_;
  std::uint64_t frontier_;
  std::uint64_t resolved_;
  bool frontier_dirty_ = false;
  // Cycles made implicit, in sequence order (they are made at the frontier);
  // an entry whose cycle ended or got its own key is stale and leaves when it
  // reaches the front: a push per first lease instead of a tree insert and erase.
  std::deque<std::uint64_t> implicit_;
  std::vector<std::uint64_t> acks_;    // Acks at or above resolved_ gathered for the next write's list
  std::set<std::uint64_t> ack_lists_;  // stored ack lists, by their highest sequence
  std::uint64_t next_epoch_ = 1;
  std::map<std::uint64_t, Cycle> cycles_;  // live: LEASED or WAITING
  std::set<std::uint64_t> ready_;          // WAITING whose time has come
  // Open addressing (no node per entry): a drain inserts and erases one of
  // each per record, and terminal_ holds every handle of the last
  // visibility_timeout_ms (200,000 in a fast drain); node-based maps were a
  // third of the io thread's samples at 8 workers (docs/performance.md).
  boost::unordered_flat_map<Bytes32, std::uint64_t, LeaseHash> leases_;  // live leases
  boost::unordered_flat_map<Bytes32, Tombstone, LeaseHash> terminal_;    // handles of terminal cycles, until reclaimed
  std::deque<Bytes32> reclaim_order_;                             // terminal_ in reclamation order
  std::unordered_map<HolderId, std::uint32_t> per_holder_;
  std::uint32_t in_flight_ = 0;
  std::map<std::uint64_t, DeadLetter> dead_;
  // Where this process's range deletions of the group's keys ended (drop_below):
  // each starts here, so they never nest.
  std::uint64_t dropped_to_ = 0;
  GroupCounters counters_;
};

}  // namespace cowboy::cbqs::broker
