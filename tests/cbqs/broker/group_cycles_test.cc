// The consumer-group state machine (§9.2) without a network: attempts,
// expiry, Nack timing, Extend's cap, the three lease-check answers,
// reclamation, a restart with outstanding leases, retention and redrive.
#include "cbqs/broker/stream/cycles.h"

#include <gtest/gtest.h>

#include <cstring>

#include "cbqs/broker/stream/state.h"
#include "cbqs/store/memory_store.h"
#include "group_config.h"

namespace cowboy::cbqs::broker {
namespace {

using store::MemoryStore;
using store::Sync;
using store::WriteBatch;

class GroupCyclesTest : public ::testing::Test {
 protected:
  MemoryStore store;
  Bytes32 sid{};
  GroupConfigV2 config = cbqs::testing::valid_group_config(LaneId{1});
  Timeline timeline;
  std::uint64_t now = 1'000'000;
  std::uint64_t committed_at = 999'000;
  HolderId alice = 1, bob = 2;

  void SetUp() override {
    sid[0] = 0x6a;
    config.group_id = GroupId{1};
    config.visibility_timeout_ms = 100;
    config.max_visibility_ms = 1'000;
    config.max_attempts = 3;
    config.record_deadline_ms = 60'000;
  }

  static LeaseId handle(std::uint8_t n) {
    LeaseId lease;
    lease.value[0] = n;
    lease.value[31] = 0xee;
    return lease;
  }

  /// Advances the clock and applies what came due, as the broker's timer does.
  void advance_to(GroupCycles& g, std::uint64_t t, WriteBatch& w) {
    now = t;
    for (const auto& e : timeline.take_due(now)) g.on_due(e, config, now, timeline, w);
  }

  GroupCycles fresh() { return GroupCycles(sid, config.group_id, Sequence{1}); }

  /// The lane holds every sequence up to `head`, each committed at `committed_at`.
  GroupCycles::LaneRecords lane_up_to(std::uint64_t head) const {
    return [head, at = committed_at](std::uint64_t from)
               -> Result<std::optional<std::pair<std::uint64_t, std::uint64_t>>, store::StoreError> {
      if (from > head) return std::optional<std::pair<std::uint64_t, std::uint64_t>>{};
      return std::optional{std::pair{from, at}};
    };
  }
};

TEST_F(GroupCyclesTest, AnExpiredLeaseIsRedeliveredUntilTheExpiryThatExhaustsAttempts) {
  GroupCycles g = fresh();
  WriteBatch w;
  for (std::uint16_t attempt = 1; attempt <= 3; ++attempt) {
    auto ready = attempt == 1 ? std::optional(Sequence{1}) : g.next_ready();
    ASSERT_EQ(ready, std::optional(Sequence{1})) << "attempt " << attempt;
    auto issued = g.issue(Sequence{1}, committed_at, alice, config, now, handle(attempt), timeline, w);
    ASSERT_TRUE(issued);
    EXPECT_EQ(issued->attempt, attempt);
    EXPECT_EQ(g.in_flight(), 1u);
    advance_to(g, now + 99, w);
    EXPECT_EQ(g.in_flight(), 1u) << "expired early";
    advance_to(g, now + 1, w);  // issued_at + visibility_timeout_ms
    EXPECT_EQ(g.in_flight(), 0u);
  }
  EXPECT_FALSE(g.next_ready());  // the third expiry terminated it
  ASSERT_EQ(g.dead_letters().size(), 1u);
  EXPECT_EQ(g.dead_letters().at(1).attempts, 3);
  EXPECT_EQ(g.dead_letters().at(1).reason, DeadReason::kAttempts);
  EXPECT_EQ(g.counters().redelivered, 2u);
  EXPECT_EQ(g.counters().expired, 1u);
}

TEST_F(GroupCyclesTest, NackFreesTheSlotAtOnceAndRedeliversAtIssuedAtPlusVisibility) {
  GroupCycles g = fresh();
  WriteBatch w;
  std::uint64_t issued_at = now;
  ASSERT_TRUE(g.issue(Sequence{1}, committed_at, alice, config, now, handle(1), timeline, w));
  advance_to(g, issued_at + 30, w);
  ASSERT_EQ(g.check_lease(handle(1), alice, now), std::nullopt);
  g.nack(handle(1), config, now, timeline, w);
  EXPECT_EQ(g.in_flight(), 0u);
  EXPECT_TRUE(g.has_room(config, alice));
  EXPECT_EQ(g.check_lease(handle(1), alice, now), ErrorCode::kLeaseStale);  // resolved, not terminal
  advance_to(g, issued_at + 99, w);
  EXPECT_FALSE(g.next_ready());
  advance_to(g, issued_at + 100, w);
  EXPECT_EQ(g.next_ready(), std::optional(Sequence{1}));
}

TEST_F(GroupCyclesTest, ExtendIsCappedAtIssuedAtPlusMaxVisibility) {
  GroupCycles g = fresh();
  WriteBatch w;
  std::uint64_t issued_at = now;
  ASSERT_TRUE(g.issue(Sequence{1}, committed_at, alice, config, now, handle(1), timeline, w));
  g.extend(handle(1), 5'000, config, now, timeline);  // asks past max_visibility_ms (1,000)
  advance_to(g, issued_at + 999, w);
  EXPECT_EQ(g.check_lease(handle(1), alice, now), std::nullopt);
  advance_to(g, issued_at + 1'000, w);
  EXPECT_EQ(g.in_flight(), 0u);
  EXPECT_EQ(g.next_ready(), std::optional(Sequence{1}));
}

TEST_F(GroupCyclesTest, LeaseChecksAnswerNotLeaseHolderThenDeliveryTerminalThenLeaseStaleAfterReclamation) {
  GroupCycles g = fresh();
  WriteBatch w;
  ASSERT_TRUE(g.issue(Sequence{1}, committed_at, alice, config, now, handle(1), timeline, w));
  EXPECT_EQ(g.check_lease(handle(1), bob, now), ErrorCode::kNotLeaseHolder);
  EXPECT_EQ(g.check_lease(handle(9), alice, now), ErrorCode::kLeaseStale);  // never issued
  g.ack(handle(1), config, now, timeline, w);
  EXPECT_EQ(g.counters().acked, 1u);
  // Terminal and not yet reclaimed: DeliveryTerminal, for anyone (it precedes NotLeaseHolder).
  EXPECT_EQ(g.check_lease(handle(1), alice, now), ErrorCode::kDeliveryTerminal);
  EXPECT_EQ(g.check_lease(handle(1), bob, now), ErrorCode::kDeliveryTerminal);
  advance_to(g, now + config.visibility_timeout_ms, w);  // reclaimed
  EXPECT_EQ(g.check_lease(handle(1), alice, now), ErrorCode::kLeaseStale);
  EXPECT_EQ(g.oldest_live(), std::nullopt);
}

TEST_F(GroupCyclesTest, RejectExpiresAtOnceAndRecordDeadlineExpiresALeasedCycle) {
  GroupCycles g = fresh();
  WriteBatch w;
  ASSERT_TRUE(g.issue(Sequence{1}, committed_at, alice, config, now, handle(1), timeline, w));
  g.reject(handle(1), config, now, timeline, w);
  EXPECT_EQ(g.dead_letters().at(1).reason, DeadReason::kRejected);
  EXPECT_EQ(g.dead_letters().at(1).attempts, 1);

  config.record_deadline_ms = 2'000;  // record 2 was committed at 999,000: deadline 1,001,000
  config.max_visibility_ms = 5'000;
  ASSERT_TRUE(g.issue(Sequence{2}, committed_at, alice, config, now, handle(2), timeline, w));
  g.extend(handle(2), 4'000, config, now, timeline);
  advance_to(g, 1'001'000, w);
  EXPECT_EQ(g.dead_letters().at(2).reason, DeadReason::kDeadline);
  EXPECT_EQ(g.check_lease(handle(2), alice, now), ErrorCode::kDeliveryTerminal);
  // A PENDING record past its deadline is found EXPIRED when the group reaches it.
  EXPECT_FALSE(g.issue(Sequence{3}, committed_at, alice, config, now, handle(3), timeline, w));
  EXPECT_EQ(g.dead_letters().at(3).attempts, 0);
  EXPECT_EQ(g.frontier(), Sequence{4});
}

TEST_F(GroupCyclesTest, InFlightLimitsPerGroupAndPerHolder) {
  config.max_in_flight = 3;
  config.max_in_flight_per_holder = 2;
  GroupCycles g = fresh();
  WriteBatch w;
  ASSERT_TRUE(g.issue(Sequence{1}, committed_at, alice, config, now, handle(1), timeline, w));
  ASSERT_TRUE(g.issue(Sequence{2}, committed_at, alice, config, now, handle(2), timeline, w));
  EXPECT_FALSE(g.has_room(config, alice));
  EXPECT_TRUE(g.has_room(config, bob));
  ASSERT_TRUE(g.issue(Sequence{3}, committed_at, bob, config, now, handle(3), timeline, w));
  EXPECT_FALSE(g.has_room(config, bob));  // the group is full
  g.ack(handle(1), config, now, timeline, w);
  EXPECT_TRUE(g.has_room(config, alice));  // cleared by draining, not by time
  // A holder that goes away: its leases end as if expired now.
  g.release_holder(alice, config, now, timeline, w);
  EXPECT_EQ(g.in_flight(), 1u);
  EXPECT_EQ(g.next_ready(), std::optional(Sequence{2}));
}

TEST_F(GroupCyclesTest, ARestartCountsTheAttemptOfEveryOutstandingLeaseAndKeepsAcks) {
  config.max_attempts = 2;
  {
    GroupCycles g = fresh();
    WriteBatch w;
    for (std::uint64_t seq = 1; seq <= 4; ++seq)
      ASSERT_TRUE(g.issue(Sequence{seq}, committed_at, alice, config, now, handle(static_cast<std::uint8_t>(seq)), timeline, w));
    g.ack(handle(1), config, now, timeline, w);
    g.nack(handle(2), config, now, timeline, w);  // waiting until now + 100
    advance_to(g, now + 100, w);                  // 3 and 4 expire; all three are ready
    ASSERT_TRUE(g.issue(Sequence{3}, committed_at, alice, config, now, handle(13), timeline, w));  // attempt 2
    g.write_frontier(w);
    ASSERT_TRUE(store.write(w, Sync::kYes));
  }
  store.crash();
  Timeline after;
  WriteBatch repair;
  auto loaded = GroupCycles::load(store, sid, config, 1, now + 10, after, lane_up_to(4), repair);
  ASSERT_TRUE(loaded);
  GroupCycles& g = *loaded;
  EXPECT_EQ(g.frontier(), Sequence{5});
  // 1 was acked: gone. 3 was leased on its last attempt: EXPIRED. 2 and 4 are ready again.
  EXPECT_EQ(g.dead_letters().size(), 1u);
  EXPECT_EQ(g.dead_letters().at(3).attempts, 2);
  EXPECT_EQ(g.next_ready(), std::optional(Sequence{2}));
  EXPECT_EQ(g.waiting(), 2u);
  EXPECT_FALSE(repair.empty());
}

TEST_F(GroupCyclesTest, RetentionDropsCyclesAndDeadLettersBelowTheFloorAndRedriveResetsAttempts) {
  GroupCycles g = fresh();
  WriteBatch w;
  for (std::uint64_t seq = 1; seq <= 3; ++seq)
    ASSERT_TRUE(g.issue(Sequence{seq}, committed_at, alice, config, now, handle(static_cast<std::uint8_t>(seq)), timeline, w));
  g.reject(handle(1), config, now, timeline, w);
  g.reject(handle(3), config, now, timeline, w);
  g.drop_below(2, w);
  EXPECT_EQ(g.dead_letters().size(), 1u);  // 1 went with its record
  EXPECT_EQ(g.in_flight(), 1u);
  EXPECT_EQ(g.redrive(config, now, timeline, w), 1u);
  EXPECT_TRUE(g.dead_letters().empty());
  EXPECT_EQ(g.next_ready(), std::optional(Sequence{3}));
  auto again = g.issue(Sequence{3}, committed_at, alice, config, now, handle(23), timeline, w);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->attempt, 1);
}

// Issue 46: range tombstones that nest cost RocksDB their square when it
// switches a memtable; retention ran one per group and step, each from 0.
TEST_F(GroupCyclesTest, RetentionDeletesAGroupsRangeOnlyOverItsKeysAndNeverFromTheStartTwice) {
  auto ranges = [](const WriteBatch& w) {
    std::vector<std::pair<std::string, std::string>> r;
    for (const auto& op : w.ops())
      if (op.kind == WriteBatch::Op::kDeleteRange) r.emplace_back(op.key, op.value);
    return r;
  };
  auto expected = [&](std::uint64_t from, std::uint64_t floor) {
    WriteBatch w;
    StreamLayout(sid).drop_group_below(w, config.group_id, Sequence{from}, Sequence{floor});
    return ranges(w);
  };
  GroupCycles g = fresh();
  WriteBatch w;
  for (std::uint64_t seq = 1; seq <= 4; ++seq)
    ASSERT_TRUE(g.issue(Sequence{seq}, committed_at, alice, config, now, handle(static_cast<std::uint8_t>(seq)), timeline, w));
  g.ack(handle(1), config, now, timeline, w);     // a first lease acked: no key of its own
  g.reject(handle(3), config, now, timeline, w);  // a dead letter at 3
  g.reject(handle(4), config, now, timeline, w);  // and at 4

  WriteBatch passed_acked;
  g.drop_below(2, passed_acked);  // only the acked 1 is below: nothing keyed
  EXPECT_TRUE(ranges(passed_acked).empty());
  WriteBatch passed_dead;
  g.drop_below(4, passed_dead);  // the dead letter at 3
  EXPECT_EQ(ranges(passed_dead), expected(0, 4));
  WriteBatch passed_more;
  g.drop_below(6, passed_more);  // the dead letter at 4: from where the last range ended
  EXPECT_EQ(ranges(passed_more), expected(4, 6));
  WriteBatch passed_nothing;
  g.drop_below(9, passed_nothing);
  EXPECT_TRUE(ranges(passed_nothing).empty());
  EXPECT_TRUE(g.dead_letters().empty());
}

TEST_F(GroupCyclesTest, ALoadDeletesCyclesAndDeadLettersThatRetentionPassed) {
  {
    GroupCycles g = fresh();
    WriteBatch w;
    for (std::uint64_t seq = 1; seq <= 3; ++seq)
      ASSERT_TRUE(g.issue(Sequence{seq}, committed_at, alice, config, now, handle(static_cast<std::uint8_t>(seq)), timeline, w));
    g.reject(handle(1), config, now, timeline, w);  // a dead letter at 1, live cycles at 2 and 3
    g.write_frontier(w);
    ASSERT_TRUE(store.write(w, Sync::kYes));
  }
  // Retention moved the floor to 3, and the crash lost its unsynced deletes.
  Timeline after;
  WriteBatch repair;
  auto g = GroupCycles::load(store, sid, config, 3, now, after, lane_up_to(3), repair);
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->dead_letters().empty());
  EXPECT_EQ(g->next_ready(), std::optional(Sequence{3}));  // its lease ended with the process
  EXPECT_EQ(g->waiting(), 1u);
  ASSERT_TRUE(store.write(repair, Sync::kYes));
  Timeline again;
  WriteBatch none;
  auto reloaded = GroupCycles::load(store, sid, config, 3, now, again, lane_up_to(3), none);
  ASSERT_TRUE(reloaded);
  EXPECT_TRUE(reloaded->dead_letters().empty());
  EXPECT_EQ(reloaded->waiting(), 1u);
}

// Issue 46: a record leased from the frontier and acked costs no journal
// operation of its own. Before, each cost two (its cycle's put, then its
// delete): 201 operations in each test here instead of 2 and 4 (shown failing on
// the old cycles.cc: 101 + 100, and 101 + 99 + 1).
TEST_F(GroupCyclesTest, ADrainedRecordCostsNoJournalOperationOfItsOwn) {
  GroupCycles g = fresh();
  WriteBatch leases;
  for (std::uint64_t seq = 1; seq <= 100; ++seq)
    ASSERT_TRUE(g.issue(Sequence{seq}, committed_at, alice, config, now, handle(static_cast<std::uint8_t>(seq)), timeline, leases));
  g.write_frontier(leases);
  EXPECT_EQ(leases.size(), 1u);  // the frontier with its resolved mark
  WriteBatch acks;
  for (std::uint64_t seq = 1; seq <= 100; ++seq) g.ack(handle(static_cast<std::uint8_t>(seq)), config, now, timeline, acks);
  g.write_frontier(acks);
  EXPECT_EQ(acks.size(), 1u);  // the mark moved past all of them: no list needed
  EXPECT_EQ(g.resolved(), 101u);
}

TEST_F(GroupCyclesTest, AcksAboveTheOldestOutstandingLeaseCostOneListPerWrite) {
  GroupCycles g = fresh();
  WriteBatch leases;
  for (std::uint64_t seq = 1; seq <= 100; ++seq)
    ASSERT_TRUE(g.issue(Sequence{seq}, committed_at, alice, config, now, handle(static_cast<std::uint8_t>(seq)), timeline, leases));
  g.write_frontier(leases);
  WriteBatch acks;
  for (std::uint64_t seq = 2; seq <= 100; ++seq) g.ack(handle(static_cast<std::uint8_t>(seq)), config, now, timeline, acks);
  g.write_frontier(acks);
  EXPECT_EQ(acks.size(), 1u);  // one ack list; 1 still holds the mark
  EXPECT_EQ(g.resolved(), 1u);
  WriteBatch last;
  g.ack(handle(1), config, now, timeline, last);
  g.write_frontier(last);
  EXPECT_EQ(last.size(), 2u);  // the frontier with its mark, and the passed list's deletion
  EXPECT_EQ(leases.size() + acks.size() + last.size(), 4u);
}

// A first lease held while the frontier runs 65,536 past it gets its own key,
// and the mark (what a load walks, what the ack lists cover) moves on.
TEST_F(GroupCyclesTest, AFirstLeaseHeldFarBelowTheFrontierGetsItsOwnKeyAndTheMarkMovesOn) {
  GroupCycles g = fresh();
  WriteBatch w;
  ASSERT_TRUE(g.issue(Sequence{1}, committed_at, alice, config, now, handle(1), timeline, w));
  config.max_in_flight = config.max_in_flight_per_holder = 70'000;
  for (std::uint64_t seq = 2; seq <= 65'538; ++seq) {
    LeaseId lease;
    std::memcpy(lease.value.data(), &seq, sizeof seq);
    ASSERT_TRUE(g.issue(Sequence{seq}, committed_at, bob, config, now, lease, timeline, w));
    g.ack(lease, config, now, timeline, w);
  }
  WriteBatch last;
  g.write_frontier(last);
  EXPECT_EQ(g.frontier(), Sequence{65'539});
  EXPECT_EQ(g.resolved(), 65'539u);  // 1 has its own key now
  EXPECT_EQ(last.size(), 2u);        // 1's cycle and the frontier with the mark
  ASSERT_TRUE(store.write(w, Sync::kYes));
  ASSERT_TRUE(store.write(last, Sync::kYes));
  store.crash();
  Timeline after;
  WriteBatch repair;
  auto loaded = GroupCycles::load(store, sid, config, 1, now + 10, after, lane_up_to(65'538), repair);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->next_ready(), std::optional(Sequence{1}));  // its lease ended with the process
  EXPECT_EQ(loaded->waiting(), 1u);
}

// Eight holders draining one group, as the peer bench's 8-worker drain: first
// leases issued round-robin from the frontier, each record to one holder once;
// Acks arrive holder by holder (out of sequence order) and a Nack turns one
// first lease into a keyed cycle in the middle. The resolved mark stays at the
// oldest first lease still live after every write and reaches the frontier
// once all are acked; a load then finds nothing to deliver again.
TEST_F(GroupCyclesTest, EightHoldersEachLeaseARecordOnceAndTheirAcksInAnyOrderResolveTheMark) {
  GroupCycles g = fresh();
  config.max_in_flight = config.max_in_flight_per_holder = 1'000;
  constexpr std::uint64_t kRecords = 800, kHolders = 8;
  auto lease_of = [](std::uint64_t seq, std::uint16_t attempt) {
    LeaseId lease;
    std::memcpy(lease.value.data(), &seq, sizeof seq);
    std::memcpy(lease.value.data() + 8, &attempt, sizeof attempt);
    return lease;
  };
  auto holder_of = [](std::uint64_t seq) { return HolderId{10 + seq % kHolders}; };
  WriteBatch w;
  for (std::uint64_t seq = 1; seq <= kRecords; ++seq) {
    auto issued = g.issue(Sequence{seq}, committed_at, holder_of(seq), config, now, lease_of(seq, 1), timeline, w);
    ASSERT_TRUE(issued);
    EXPECT_EQ(issued->attempt, 1);
  }
  EXPECT_TRUE(g.unwritten());  // the Deliveries must wait for the next write (StreamOwner::release)
  g.write_frontier(w);
  EXPECT_FALSE(g.unwritten());
  EXPECT_EQ(w.size(), 1u);  // the frontier's move is every first lease's record
  EXPECT_EQ(g.in_flight(), kRecords);
  for (HolderId h = 10; h < 10 + kHolders; ++h) EXPECT_EQ(g.in_flight_of(h), kRecords / kHolders);
  for (std::uint64_t seq = 1; seq <= kRecords; ++seq) {
    ASSERT_EQ(g.check_lease(lease_of(seq, 1), holder_of(seq), now), std::nullopt) << seq;
    EXPECT_EQ(g.check_lease(lease_of(seq, 1), holder_of(seq + 1), now), ErrorCode::kNotLeaseHolder) << seq;
  }
  EXPECT_FALSE(g.next_ready());

  // Record 9 (holder 11) is nacked: it gets its own key and no longer holds the mark.
  g.nack(lease_of(9, 1), config, now, timeline, w);
  // Holders 17 down to 11 ack everything they hold (record 9 aside); holder 10's records 8, 16, ... stay out.
  for (HolderId h = 10 + kHolders - 1; h >= 11; --h) {
    for (std::uint64_t seq = 1; seq <= kRecords; ++seq) {
      if (holder_of(seq) != h || seq == 9) continue;
      ASSERT_EQ(g.check_lease(lease_of(seq, 1), h, now), std::nullopt) << seq;
      g.ack(lease_of(seq, 1), config, now, timeline, w);
      EXPECT_TRUE(g.unwritten()) << seq;  // its Ok waits for the write with its list
    }
    g.write_frontier(w);
    EXPECT_EQ(g.resolved(), h == 11 ? 8u : 1u) << "after holder " << h;  // 1 is 11's, 8 is 10's
  }
  for (std::uint64_t seq = kHolders; seq <= kRecords; seq += kHolders)  // holder 10 keeps its leases past the Nack's time
    g.extend(lease_of(seq, 1), config.max_visibility_ms, config, now, timeline);
  advance_to(g, now + config.visibility_timeout_ms, w);  // record 9 is due again; the acked handles are reclaimed
  EXPECT_EQ(g.in_flight(), kRecords / kHolders);
  ASSERT_EQ(g.next_ready(), std::optional(Sequence{9}));
  ASSERT_TRUE(g.issue(Sequence{9}, committed_at, HolderId{10}, config, now, lease_of(9, 2), timeline, w));
  EXPECT_EQ(g.check_lease(lease_of(9, 1), HolderId{11}, now), ErrorCode::kLeaseStale);  // the earlier attempt's handle
  // Holder 10 acks newest first: the mark waits for its oldest, 8.
  for (std::uint64_t seq = kRecords; seq >= 8; seq -= kHolders) {
    g.ack(lease_of(seq, 1), config, now, timeline, w);
    g.write_frontier(w);
    EXPECT_EQ(g.resolved(), seq == 8 ? kRecords + 1 : 8u) << seq;
  }
  g.ack(lease_of(9, 2), config, now, timeline, w);
  g.write_frontier(w);
  EXPECT_EQ(g.resolved(), kRecords + 1);
  EXPECT_EQ(g.frontier(), Sequence{kRecords + 1});
  EXPECT_EQ(g.in_flight(), 0u);
  EXPECT_EQ(g.counters().acked, kRecords);
  EXPECT_EQ(g.counters().delivered, kRecords + 1);  // record 9 twice
  EXPECT_EQ(g.counters().redelivered, 1u);
  for (std::uint64_t seq = 1; seq <= kRecords; ++seq) {  // acked after the clock moved: terminal; before it: reclaimed
    bool late = seq == 9 || holder_of(seq) == HolderId{10};
    EXPECT_EQ(g.check_lease(lease_of(seq, seq == 9 ? 2 : 1), holder_of(seq), now),
              late ? ErrorCode::kDeliveryTerminal : ErrorCode::kLeaseStale) << seq;
  }

  ASSERT_TRUE(store.write(w, Sync::kYes));
  store.crash();
  Timeline after;
  WriteBatch repair;
  auto loaded = GroupCycles::load(store, sid, config, 1, now + 10, after, lane_up_to(kRecords), repair);
  ASSERT_TRUE(loaded);
  EXPECT_FALSE(loaded->next_ready());  // every record acked: none comes back
  EXPECT_EQ(loaded->waiting(), 0u);
  EXPECT_EQ(loaded->frontier(), Sequence{kRecords + 1});
}

// What a crash keeps of first leases and listed Acks: each write is durable or
// not as a whole, and a load finds every unacked lease (its attempt spent) and
// no acked record.
TEST_F(GroupCyclesTest, ALoadFindsFirstLeasesTheFrontierRecordedAndKeepsListedAcks) {
  config.max_attempts = 2;
  {
    GroupCycles g = fresh();
    WriteBatch leases;
    for (std::uint64_t seq = 1; seq <= 6; ++seq)
      ASSERT_TRUE(g.issue(Sequence{seq}, committed_at, alice, config, now, handle(static_cast<std::uint8_t>(seq)), timeline, leases));
    g.write_frontier(leases);
    ASSERT_TRUE(store.write(leases, Sync::kYes));
    WriteBatch acks;  // 2 and 5 acked, 4 nacked: 1, 3 and 6 stay leased
    g.ack(handle(2), config, now, timeline, acks);
    g.ack(handle(5), config, now, timeline, acks);
    g.nack(handle(4), config, now, timeline, acks);
    g.write_frontier(acks);
    ASSERT_TRUE(store.write(acks, Sync::kYes));
    WriteBatch lost;  // gathered, never written: the crash takes it
    g.ack(handle(1), config, now, timeline, lost);
    g.write_frontier(lost);
  }
  store.crash();
  Timeline after;
  WriteBatch repair;
  auto loaded = GroupCycles::load(store, sid, config, 1, now + 10, after, lane_up_to(6), repair);
  ASSERT_TRUE(loaded);
  GroupCycles& g = *loaded;
  EXPECT_EQ(g.frontier(), Sequence{7});
  EXPECT_EQ(g.resolved(), 1u);
  EXPECT_TRUE(g.dead_letters().empty());
  // 1, 3 and 6 are ready again at their second attempt; 4 waits out its Nack; 2 and 5 stay acked.
  EXPECT_EQ(g.waiting(), 4u);
  std::vector<std::uint64_t> ready;
  WriteBatch w;
  while (auto seq = g.next_ready()) {
    auto issued = g.issue(*seq, committed_at, alice, config, now + 10, handle(static_cast<std::uint8_t>(50 + seq->value)), after, w);
    ASSERT_TRUE(issued);
    EXPECT_EQ(issued->attempt, 2) << seq->value;
    ready.push_back(seq->value);
  }
  EXPECT_EQ(ready, (std::vector<std::uint64_t>{1, 3, 6}));
  // Once the repair and the second leases are durable the mark passes
  // everything and the list goes.
  repair.append(std::move(w));
  g.write_frontier(repair);
  ASSERT_TRUE(store.write(repair, Sync::kYes));
  EXPECT_EQ(g.resolved(), 7u);
  Timeline again;
  WriteBatch none;
  auto reloaded = GroupCycles::load(store, sid, config, 1, now + 20, again, lane_up_to(6), none);
  ASSERT_TRUE(reloaded);
  EXPECT_EQ(reloaded->waiting(), 1u);  // 4, still waiting out its Nack
  EXPECT_EQ(reloaded->dead_letters().size(), 3u);  // 1, 3 and 6 were leased at their last attempt
}

TEST_F(GroupCyclesTest, TimelineReturnsEntriesInDueOrder) {
  Timeline t;
  t.add({30, GroupId{1}, 3, 1});
  t.add({10, GroupId{1}, 1, 1});
  t.add({20, GroupId{2}, 2, 1});
  EXPECT_EQ(t.next_due(), std::optional<std::uint64_t>(10));
  auto due = t.take_due(20);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].sequence, 1u);
  EXPECT_EQ(due[1].sequence, 2u);
  EXPECT_EQ(t.size(), 1u);
}

}  // namespace
}  // namespace cowboy::cbqs::broker

