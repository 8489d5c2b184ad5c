// One stream's storage layout: every key the broker stores for a stream and
// the encoding of every stored value, spelled here and nowhere else. The state
// machines (state.h, cycles.h) ask for typed operations on a write batch; this
// module writes the bytes, and reads them back on load.
//
// Keys, per stream (<sid> = 32 raw bytes, <n> = a big-endian u64):
//   s/<sid>/m              the checkpoint-chain tail with appended_bytes; written only by record batches
//   s/<sid>/d              the retention marks (floor, dropped_bytes); written only by retention
//                          (retained_bytes = appended_bytes - dropped_bytes: each key has one writer)
//   s/<sid>/n              the lane and group id counters; written only by lane and group creation
//                          (two keys, so that no write can carry a stale copy of the other's fields)
//   s/<sid>/l/<lane>       lane: LaneRecordV2 || Option<Bytes32> room commitment
//   s/<sid>/r/<seq>        record: lane u64 || committed_at_ms u64 || payload
//   s/<sid>/c/<last>       CheckpointReceiptV2, keyed by its last_sequence
//   s/<sid>/i/<lane>/<last>  a lane run: first u64; the records first..last are consecutive and all
//                          of the lane (at most one run per lane per batch), written with its batch
//   s/<sid>/t              StreamSettingsV2, once the owner set them
//   s/<sid>/g/<group>      GroupConfigV2 (deleted with its group; ids are never reissued)
//   s/<sid>/f/<group>      the group's frontier: the lowest sequence it has not yet considered ||
//                          its resolved mark (an 8-byte value, written before issue 46's ack lists,
//                          has resolved = frontier)
//   s/<sid>/y/<group>/<seq>  a live delivery cycle: state u8 (1 LEASED, 2 WAITING) || attempts u16 ||
//                            visible_at_ms u64 || committed_at_ms u64
//   s/<sid>/k/<group>/<max>  an ack list: the sequences count u32 || each u64, acked in one write
//                            at or above the resolved mark; keyed by the highest of them
//   s/<sid>/x/<group>/<seq>  a dead letter, kept until its record goes:
//                            attempts u16 || reason u8 || expired_at_ms u64 || committed_at_ms u64
//
// A group's records below its frontier without a y, x or k entry are ACKED
// below the resolved mark and LEASED at their first attempt from it up (a
// lease issued from the frontier is written as the frontier's move alone;
// docs/protocol.md "Durability and restart").
//
// Restart keys (issue 46): m, d, n, l, t, g and f are all a load reads, so a
// restart reads an amount bounded by the lane and group limits, never the
// record count; the record log, receipts and runs are read on demand. A tail
// of version 1 (a store written before the restart keys) has no appended_bytes:
// the stream is migrated once when it is first loaded (state.cc).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "cbqs/broker/stream/ids.h"
#include "cbqs/store/store.h"
#include "cbqs/wire/types.h"

namespace cowboy::cbqs::broker {

struct Record {
  std::uint64_t sequence = 0;
  std::uint64_t lane_id = 0;
  std::uint64_t committed_at_ms = 0;
  Bytes payload;
};

/// The checkpoint chain's durable tail.
struct ChainTail {
  std::uint64_t next_sequence = 1;
  Bytes32 last_checkpoint_id{};
  std::uint64_t last_committed_at_ms = 0;
  std::uint64_t last_snapshot_height = 0;
  std::uint64_t appended_bytes = 0;  // every retained-accounted byte ever appended: records and receipts
  bool legacy = false;               // read from a version-1 value, without appended_bytes
};

/// What retention has dropped so far.
struct RetentionMarks {
  std::uint64_t floor = 1;          // the lowest retained sequence
  std::uint64_t dropped_bytes = 0;  // retained-accounted bytes of every record and receipt dropped
};

/// Consecutive records of one lane.
struct LaneRun {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

struct IdCounters {
  std::uint64_t next_lane_id = 1;
  std::uint64_t next_group_id = 1;
};

struct StoredLane {
  LaneStatusV2 status = LaneStatusV2::kActive;
  std::optional<Bytes32> room;  // the §11.1 commitment of a room lane
};

/// A group's frontier and resolved mark: every record of its lane below
/// `resolved` without a cycle or dead letter is ACKED; from `resolved` to
/// `frontier` one without a cycle, dead letter or ack-list entry is LEASED (first attempt).
struct StoredFrontier {
  std::uint64_t frontier = 1;
  std::uint64_t resolved = 1;
};

/// What survives a restart of a live cycle (cycles.h keeps the rest in memory).
struct StoredCycle {
  bool leased = false;
  std::uint16_t attempts = 0;
  std::uint64_t visible_at_ms = 0;  // WAITING only
  std::uint64_t committed_at_ms = 0;
};

enum class DeadReason : std::uint8_t { kAttempts = 1, kRejected = 2, kDeadline = 3 };
std::string_view to_string(DeadReason reason);

struct DeadLetter {
  std::uint64_t sequence = 0;
  std::uint16_t attempts = 0;
  DeadReason reason = DeadReason::kAttempts;
  std::uint64_t expired_at_ms = 0;
  std::uint64_t committed_at_ms = 0;
};

class StreamLayout {
 public:
  template <typename T>
  using Read = Result<T, store::StoreError>;

  explicit StreamLayout(const Bytes32& stream_id) : stream_id_(stream_id) {}
  const Bytes32& stream_id() const { return stream_id_; }

  // ---- writes: each adds its operations to `w` ----
  void put_tail(store::WriteBatch& w, const ChainTail& tail) const;
  void put_counters(store::WriteBatch& w, const IdCounters& counters) const;
  void put_marks(store::WriteBatch& w, const RetentionMarks& marks) const;
  void put_run(store::WriteBatch& w, LaneId lane, const LaneRun& run) const;
  void drop_run(store::WriteBatch& w, LaneId lane, Sequence last) const;
  void put_lane(store::WriteBatch& w, LaneId lane, const StoredLane& stored) const;
  void put_record(store::WriteBatch& w, const Record& record) const;
  /// Deletes the records in [from, to).
  void drop_records(store::WriteBatch& w, Sequence from, Sequence to) const;
  /// `encoded` is the canonical CheckpointReceiptV2.
  void put_receipt(store::WriteBatch& w, Sequence last, ByteView encoded) const;
  void drop_receipt(store::WriteBatch& w, Sequence last) const;
  void put_settings(store::WriteBatch& w, const StreamSettingsV2& settings) const;
  void put_group(store::WriteBatch& w, const GroupConfigV2& config) const;
  void put_frontier(store::WriteBatch& w, GroupId group, const StoredFrontier& f) const;
  /// One ack list, keyed by its highest sequence; `sequences` is not empty.
  void put_acks(store::WriteBatch& w, GroupId group, const std::vector<std::uint64_t>& sequences) const;
  void drop_acks(store::WriteBatch& w, GroupId group, Sequence highest) const;
  /// Deletes the group's config, frontier, cycles and dead letters.
  void drop_group(store::WriteBatch& w, GroupId group) const;
  /// Deletes the group's state of a group whose config is gone already.
  void drop_group_state(store::WriteBatch& w, GroupId group) const;
  void put_cycle(store::WriteBatch& w, GroupId group, Sequence sequence, const StoredCycle& c) const;
  void drop_cycle(store::WriteBatch& w, GroupId group, Sequence sequence) const;
  void put_dead_letter(store::WriteBatch& w, GroupId group, const DeadLetter& d) const;
  void drop_dead_letter(store::WriteBatch& w, GroupId group, Sequence sequence) const;
  /// Deletes the group's cycles, dead letters and ack lists in [from, floor).
  void drop_group_below(store::WriteBatch& w, GroupId group, Sequence from, Sequence floor) const;

  // ---- reads: a stored value that does not decode is StoreError::kCorrupt ----
  Read<std::optional<ChainTail>> tail(store::Store& store) const;
  Read<std::optional<IdCounters>> counters(store::Store& store) const;
  Read<std::optional<RetentionMarks>> marks(store::Store& store) const;
  Read<std::optional<StreamSettingsV2>> settings(store::Store& store) const;
  Read<std::optional<StoredFrontier>> frontier(store::Store& store, GroupId group) const;
  Read<std::optional<Record>> record(store::Store& store, Sequence sequence) const;
  Read<std::optional<CheckpointReceiptV2>> receipt(store::Store& store, Sequence last) const;

  // Scans in ascending order.
  Read<Unit> lanes(store::Store& store, const std::function<void(std::uint64_t, const StoredLane&)>& visit) const;
  /// Records in [from, to) until `visit` returns false.
  Read<Unit> records(store::Store& store, Sequence from, Sequence to,
                     const std::function<bool(Record)>& visit) const;
  /// Receipts whose last_sequence is in [from, to), with their encoded sizes, until `visit` returns false.
  Read<Unit> receipts(store::Store& store, Sequence from, Sequence to,
                      const std::function<bool(const CheckpointReceiptV2&, std::size_t)>& visit) const;
  /// Runs of `lane` whose last is in [from, to) until `visit` returns false.
  Read<Unit> runs(store::Store& store, LaneId lane, Sequence from, Sequence to,
                  const std::function<bool(const LaneRun&)>& visit) const;
  Read<Unit> groups(store::Store& store, const std::function<void(const GroupConfigV2&)>& visit) const;
  Read<Unit> cycles(store::Store& store, GroupId group,
                    const std::function<void(std::uint64_t, const StoredCycle&)>& visit) const;
  Read<Unit> dead_letters(store::Store& store, GroupId group,
                          const std::function<void(const DeadLetter&)>& visit) const;
  /// Ack lists by their highest sequence.
  Read<Unit> acks(store::Store& store, GroupId group,
                  const std::function<void(std::uint64_t, const std::vector<std::uint64_t>&)>& visit) const;

 private:
  std::string key(char kind) const;
  std::string key(char kind, std::uint64_t a) const;
  std::string key(char kind, std::uint64_t a, std::uint64_t b) const;
  /// Every key "s/<sid>/<kind>/<a>/..." as a [begin, end) range.
  std::pair<std::string, std::string> range(char kind, std::uint64_t a) const;
  /// Every key "s/<sid>/<kind>/..." as a [begin, end) range.
  std::pair<std::string, std::string> range(char kind) const;

  Bytes32 stream_id_;
};

/// Bytes a record counts against retained_bytes_limit: canonical(RecordHeaderV2)
/// 41 + sequence 8 + payload length 4 + n (docs/protocol.md §P).
constexpr std::uint64_t retained_record_bytes(std::uint64_t n) { return 53 + n; }

}  // namespace cowboy::cbqs::broker
