#include "cbqs/broker/stream/cycles.h"

#include <algorithm>
#include <cstring>

namespace cowboy::cbqs::broker {

namespace {

using store::WriteBatch;

constexpr std::uint64_t kImplicitSpan = 65'536;  // sequences from the oldest key-less first lease to the frontier

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

}  // namespace

std::optional<std::uint64_t> Timeline::next_due() const {
  if (heap_.empty()) return std::nullopt;
  return heap_.top().due_ms;
}

std::vector<Timeline::Entry> Timeline::take_due(std::uint64_t now_ms) {
  std::vector<Entry> due;
  while (!heap_.empty() && heap_.top().due_ms <= now_ms) {
    due.push_back(heap_.top());
    heap_.pop();
  }
  return due;
}

std::size_t GroupCycles::LeaseHash::operator()(const Bytes32& b) const {
  std::size_t h;  // lease handles are uniformly random: any 8 bytes are a good hash
  std::memcpy(&h, b.data(), sizeof h);
  return h;
}

GroupCycles::GroupCycles(const Bytes32& stream_id, GroupId group, Sequence frontier)
    : layout_(stream_id), group_(group), frontier_(frontier.value), resolved_(frontier.value) {}

Result<GroupCycles, store::StoreError> GroupCycles::load(store::Store& store, const Bytes32& stream_id,
                                                         const GroupConfigV2& config, std::uint64_t floor,
                                                         std::uint64_t now_ms, Timeline& timeline,
                                                         const LaneRecords& lane_records, WriteBatch& repair) {
  const StreamLayout layout(stream_id);
  const GroupId group{config.group_id};
  auto stored = layout.frontier(store, group);
  if (!stored) return Err{stored.error()};
  std::uint64_t frontier = floor, resolved = floor;
  if (*stored) {
    frontier = (*stored)->frontier;
    resolved = (*stored)->resolved;
  } else if (const auto* at = std::get_if<StartAt>(&config.start)) {
    frontier = resolved = at->sequence.value;
  }
  GroupCycles g(stream_id, group, Sequence{std::max({frontier, floor, std::uint64_t{1}})});
  g.resolved_ = std::min(g.frontier_, std::max({resolved, floor, std::uint64_t{1}}));

  std::set<std::uint64_t> acked;  // at or above the resolved mark
  auto lists = layout.acks(store, group, [&](std::uint64_t highest, const std::vector<std::uint64_t>& list) {
    if (highest < g.resolved_) return layout.drop_acks(repair, group, Sequence{highest});  // the mark passed it
    g.ack_lists_.insert(highest);
    for (std::uint64_t s : list)
      if (s >= g.resolved_) acked.insert(s);
  });
  if (!lists) return Err{lists.error()};

  auto cycles = layout.cycles(store, group, [&](std::uint64_t seq, const StoredCycle& stored_cycle) {
    if (seq < floor) return layout.drop_cycle(repair, group, Sequence{seq});
    Cycle& c = g.cycles_[seq];
    c.attempts = stored_cycle.attempts;
    c.visible_at_ms = stored_cycle.visible_at_ms;
    c.committed_at_ms = stored_cycle.committed_at_ms;
    if (stored_cycle.leased) {  // the lease ended with the process; its attempt is spent
      g.attempt_over(seq, now_ms, config, now_ms, timeline, repair);
    } else {
      g.schedule(seq, c, config, timeline, now_ms);
    }
  });
  if (!cycles) return Err{cycles.error()};
  auto dead = layout.dead_letters(store, group, [&](const DeadLetter& d) {
    if (d.sequence < floor) layout.drop_dead_letter(repair, group, Sequence{d.sequence});
    else g.dead_[d.sequence] = d;
  });
  if (!dead) return Err{dead.error()};
  // The first leases the frontier's move recorded: every record from the mark
  // to the frontier with no key of its own was leased and not acked.
  for (std::uint64_t from = g.resolved_; from < g.frontier_;) {
    auto next = lane_records(from);
    if (!next) return Err{next.error()};
    if (!*next || (*next)->first >= g.frontier_) break;
    const auto [seq, committed_at_ms] = **next;
    from = seq + 1;
    if (g.cycles_.contains(seq) || g.dead_.contains(seq) || acked.contains(seq)) continue;
    Cycle& c = g.cycles_[seq];
    c.attempts = 1;
    c.committed_at_ms = committed_at_ms;
    g.attempt_over(seq, now_ms, config, now_ms, timeline, repair);
  }
  return g;
}

std::optional<Sequence> GroupCycles::next_ready() const {
  if (ready_.empty()) return std::nullopt;
  return Sequence{*ready_.begin()};
}

bool GroupCycles::has_room(const GroupConfigV2& config, HolderId holder) const {
  if (in_flight_ >= config.max_in_flight) return false;
  auto it = per_holder_.find(holder);
  return it == per_holder_.end() || it->second < config.max_in_flight_per_holder;
}

void GroupCycles::write_cycle(std::uint64_t sequence, const Cycle& c, WriteBatch& write) const {
  layout_.put_cycle(write, group_, Sequence{sequence}, StoredCycle{c.leased, c.attempts, c.visible_at_ms, c.committed_at_ms});
}

// Gives the cycle a new epoch (older Timeline entries for it are now ignored)
// and one entry: its lease expiry or redelivery time, or its deadline if earlier.
void GroupCycles::schedule(std::uint64_t sequence, Cycle& c, const GroupConfigV2& config, Timeline& timeline,
                           std::uint64_t now_ms) {
  c.epoch = next_epoch_++;
  std::uint64_t due = saturating_add(c.committed_at_ms, config.record_deadline_ms);
  if (c.leased) {
    due = std::min(due, c.expires_at_ms);
  } else if (c.visible_at_ms <= now_ms) {
    ready_.insert(sequence);
  } else {
    due = std::min(due, c.visible_at_ms);
  }
  timeline.add({due, group_, sequence, c.epoch});
}

void GroupCycles::make_explicit(Cycle& c) {
  c.implicit = false;  // its entry in implicit_ is now stale (trim_implicit)
}

void GroupCycles::end_lease(Cycle& c) {
  if (!c.leased) return;
  c.leased = false;
  leases_.erase(c.lease);
  in_flight_ -= 1;
  if (auto h = per_holder_.find(c.holder); h != per_holder_.end() && --h->second == 0) per_holder_.erase(h);
}

std::optional<Issued> GroupCycles::issue(Sequence issued, std::uint64_t committed_at_ms, HolderId holder,
                                         const GroupConfigV2& config, std::uint64_t now_ms, const LeaseId& lease,
                                         Timeline& timeline, WriteBatch& write) {
  const std::uint64_t sequence = issued.value;
  auto it = cycles_.find(sequence);
  if (it == cycles_.end()) {  // the next PENDING record: the frontier moves past it
    frontier_ = sequence + 1;
    frontier_dirty_ = true;  // written once per write, by write_frontier
    it = cycles_.emplace(sequence, Cycle{}).first;
    it->second.committed_at_ms = committed_at_ms;
    it->second.implicit = true;  // if leased, the frontier's move is its durable record
    implicit_.push_back(sequence);  // above every earlier one: the frontier only moves up
  }
  ready_.erase(sequence);
  Cycle& c = it->second;
  if (now_ms >= saturating_add(c.committed_at_ms, config.record_deadline_ms)) {
    terminate(sequence, DeadReason::kDeadline, config, now_ms, timeline, write);
    return std::nullopt;
  }
  if (c.attempts >= config.max_attempts) {  // max_attempts was lowered while it waited
    terminate(sequence, DeadReason::kAttempts, config, now_ms, timeline, write);
    return std::nullopt;
  }
  if (c.attempts > 0) counters_.redelivered += 1;
  counters_.delivered += 1;
  c.attempts += 1;
  c.leased = true;
  c.lease = lease.value;
  c.holder = holder;
  c.issued_at_ms = now_ms;
  c.expires_at_ms = saturating_add(now_ms, config.visibility_timeout_ms);
  c.visibility_ms = config.visibility_timeout_ms;
  c.max_visibility_ms = config.max_visibility_ms;
  leases_[lease.value] = sequence;
  in_flight_ += 1;
  per_holder_[holder] += 1;
  if (!c.implicit) write_cycle(sequence, c, write);
  schedule(sequence, c, config, timeline, now_ms);
  return Issued{lease, issued, c.attempts};
}

void GroupCycles::write_frontier(WriteBatch& write) {
  // A first lease held long (up to max_visibility_ms) gets its own key once the
  // frontier is kImplicitSpan past it, so that the mark, and what a load walks
  // and the ack lists hold, stay within that span.
  trim_implicit();
  while (!implicit_.empty() && frontier_ - implicit_.front() > kImplicitSpan) {
    const std::uint64_t sequence = implicit_.front();
    Cycle& c = cycles_.at(sequence);
    make_explicit(c);
    write_cycle(sequence, c, write);
    trim_implicit();
  }
  // The mark moves up to the oldest first lease still live, or the frontier.
  std::uint64_t resolved = implicit_.empty() ? frontier_ : std::min(frontier_, implicit_.front());
  if (resolved > resolved_) {
    resolved_ = resolved;
    frontier_dirty_ = true;
  }
  std::erase_if(acks_, [&](std::uint64_t s) { return s < resolved_; });  // the mark alone says ACKED
  if (!acks_.empty()) {
    layout_.put_acks(write, group_, acks_);
    ack_lists_.insert(*std::max_element(acks_.begin(), acks_.end()));
    acks_.clear();
  }
  while (!ack_lists_.empty() && *ack_lists_.begin() < resolved_) {
    layout_.drop_acks(write, group_, Sequence{*ack_lists_.begin()});
    ack_lists_.erase(ack_lists_.begin());
  }
  if (!frontier_dirty_) return;
  layout_.put_frontier(write, group_, StoredFrontier{frontier_, resolved_});
  frontier_dirty_ = false;
}

void GroupCycles::trim_implicit() {
  while (!implicit_.empty()) {
    auto it = cycles_.find(implicit_.front());
    if (it != cycles_.end() && it->second.implicit) return;
    implicit_.pop_front();
  }
}

std::optional<ErrorCode> GroupCycles::check_lease(const LeaseId& lease, HolderId holder, std::uint64_t now_ms) const {
  if (auto live = leases_.find(lease.value); live != leases_.end()) {
    const Cycle& c = cycles_.at(live->second);
    if (now_ms >= c.expires_at_ms) return ErrorCode::kLeaseStale;  // expired; its timer has not run yet
    if (c.holder != holder) return ErrorCode::kNotLeaseHolder;
    return std::nullopt;
  }
  if (auto t = terminal_.find(lease.value); t != terminal_.end() && now_ms < t->second.reclaim_at_ms)
    return ErrorCode::kDeliveryTerminal;
  return ErrorCode::kLeaseStale;
}

void GroupCycles::ack(const LeaseId& lease, const GroupConfigV2& config, std::uint64_t now_ms, Timeline& timeline,
                      WriteBatch& write) {
  terminate(leases_.at(lease.value), std::nullopt, config, now_ms, timeline, write);
}

void GroupCycles::nack(const LeaseId& lease, const GroupConfigV2& config, std::uint64_t now_ms, Timeline& timeline,
                       WriteBatch& write) {
  std::uint64_t sequence = leases_.at(lease.value);
  const Cycle& c = cycles_.at(sequence);
  // §9.2: deliverable again when a silent expiry would have released it.
  attempt_over(sequence, saturating_add(c.issued_at_ms, c.visibility_ms), config, now_ms, timeline, write);
}

void GroupCycles::reject(const LeaseId& lease, const GroupConfigV2& config, std::uint64_t now_ms, Timeline& timeline,
                         WriteBatch& write) {
  terminate(leases_.at(lease.value), DeadReason::kRejected, config, now_ms, timeline, write);
}

void GroupCycles::extend(const LeaseId& lease, std::uint64_t extend_ms, const GroupConfigV2& config,
                         std::uint64_t now_ms, Timeline& timeline) {
  std::uint64_t sequence = leases_.at(lease.value);
  Cycle& c = cycles_.at(sequence);
  c.expires_at_ms = std::min(saturating_add(now_ms, extend_ms), saturating_add(c.issued_at_ms, c.max_visibility_ms));
  schedule(sequence, c, config, timeline, now_ms);
}

void GroupCycles::release_holder(HolderId holder, const GroupConfigV2& config, std::uint64_t now_ms,
                                 Timeline& timeline, WriteBatch& write) {
  std::vector<std::uint64_t> held;
  for (const auto& [lease, sequence] : leases_)
    if (cycles_.at(sequence).holder == holder) held.push_back(sequence);
  for (std::uint64_t sequence : held) attempt_over(sequence, now_ms, config, now_ms, timeline, write);
}

void GroupCycles::attempt_over(std::uint64_t sequence, std::uint64_t visible_at_ms, const GroupConfigV2& config,
                               std::uint64_t now_ms, Timeline& timeline, WriteBatch& write) {
  Cycle& c = cycles_.at(sequence);
  end_lease(c);
  if (c.attempts >= config.max_attempts) return terminate(sequence, DeadReason::kAttempts, config, now_ms, timeline, write);
  make_explicit(c);
  c.visible_at_ms = visible_at_ms;
  write_cycle(sequence, c, write);
  schedule(sequence, c, config, timeline, now_ms);
}

void GroupCycles::terminate(std::uint64_t sequence, std::optional<DeadReason> expired, const GroupConfigV2& config,
                            std::uint64_t now_ms, Timeline& timeline, WriteBatch& write) {
  Cycle& c = cycles_.at(sequence);
  end_lease(c);
  if (c.attempts > 0) {  // its last lease handle answers DeliveryTerminal until reclaimed
    std::uint64_t reclaim_at = saturating_add(now_ms, config.visibility_timeout_ms);
    terminal_[c.lease] = Tombstone{sequence, reclaim_at};
    if (reclaim_order_.empty()) timeline.add({reclaim_at, group_, 0, 0});  // one entry for the queue's head
    reclaim_order_.push_back(c.lease);
  }
  if (!c.implicit) layout_.drop_cycle(write, group_, Sequence{sequence});
  make_explicit(c);
  if (expired) {
    DeadLetter d{sequence, c.attempts, *expired, now_ms, c.committed_at_ms};
    layout_.put_dead_letter(write, group_, d);
    dead_[sequence] = d;
    counters_.expired += 1;
  } else {
    counters_.acked += 1;
    // Below the mark a record without a key is ACKED; at or above it the Ack is listed.
    if (sequence >= resolved_) acks_.push_back(sequence);
  }
  ready_.erase(sequence);
  cycles_.erase(sequence);
}

void GroupCycles::on_due(const Timeline::Entry& entry, const GroupConfigV2& config, std::uint64_t now_ms,
                         Timeline& timeline, WriteBatch& write) {
  if (entry.sequence == 0) {  // reclamation of terminal handles
    while (!reclaim_order_.empty()) {
      auto t = terminal_.find(reclaim_order_.front());
      if (t != terminal_.end() && t->second.reclaim_at_ms > now_ms) break;
      if (t != terminal_.end()) terminal_.erase(t);
      reclaim_order_.pop_front();
    }
    if (!reclaim_order_.empty()) timeline.add({terminal_.at(reclaim_order_.front()).reclaim_at_ms, group_, 0, 0});
    return;
  }
  auto it = cycles_.find(entry.sequence);
  if (it == cycles_.end() || it->second.epoch != entry.epoch) return;  // superseded
  Cycle& c = it->second;
  if (now_ms >= saturating_add(c.committed_at_ms, config.record_deadline_ms))
    return terminate(entry.sequence, DeadReason::kDeadline, config, now_ms, timeline, write);
  if (c.leased && now_ms >= c.expires_at_ms)  // §9.2: redelivered while attempts remain
    return attempt_over(entry.sequence, now_ms, config, now_ms, timeline, write);
  schedule(entry.sequence, c, config, timeline, now_ms);  // ready now, or a deadline that moved
}

// Retention moves with every batch of records. A range deletion per group and
// step, each from sequence 0, filled the memtable with nested range tombstones:
// RocksDB fragments them when it switches the memtable (on the write path) at
// a cost that grows with their square, and after the peer bench's drains (ten
// groups, 500 single-record batches a second) a synced write took over 10 s
// (issue 46: a CreateLane unanswered). So the range is deleted only when the
// group holds a key below the floor, and from where the last one ended.
void GroupCycles::drop_below(std::uint64_t floor, WriteBatch& write) {
  if (floor <= 1) return;
  const bool keyed_below = (!cycles_.empty() && cycles_.begin()->first < floor) ||
                           (!dead_.empty() && dead_.begin()->first < floor) ||
                           (!ack_lists_.empty() && *ack_lists_.begin() < floor);
  for (auto it = cycles_.begin(); it != cycles_.end() && it->first < floor;) {
    end_lease(it->second);
    make_explicit(it->second);
    ready_.erase(it->first);
    it = cycles_.erase(it);
  }
  dead_.erase(dead_.begin(), dead_.lower_bound(floor));
  frontier_ = std::max(frontier_, floor);
  ack_lists_.erase(ack_lists_.begin(), ack_lists_.lower_bound(floor));  // the range deletion below takes them
  if (!keyed_below || floor <= dropped_to_) return;
  layout_.drop_group_below(write, group_, Sequence{dropped_to_}, Sequence{floor});
  dropped_to_ = floor;
}

std::size_t GroupCycles::redrive(const GroupConfigV2& config, std::uint64_t now_ms, Timeline& timeline,
                                 WriteBatch& write) {
  std::size_t n = dead_.size();
  for (const auto& [sequence, d] : dead_) {
    Cycle& c = cycles_[sequence];
    c.committed_at_ms = d.committed_at_ms;
    c.visible_at_ms = now_ms;
    layout_.drop_dead_letter(write, group_, Sequence{sequence});
    write_cycle(sequence, c, write);
    schedule(sequence, c, config, timeline, now_ms);
  }
  dead_.clear();
  return n;
}

std::optional<Sequence> GroupCycles::oldest_live() const {
  if (cycles_.empty()) return std::nullopt;
  return Sequence{cycles_.begin()->first};
}

}  // namespace cowboy::cbqs::broker
