// One stream's durable state: lanes, the record log, the checkpoint chain,
// settings and the retention floor. Not thread-safe: its owner (one executor per
// stream) calls everything.
//
// Durability contract (§10, §19 clauses 6 and 9). Appends are staged into the
// open batch with their sequence numbers; close_batch() takes them out, and
// PreparedBatch::seal() turns them into one WriteBatch holding the records,
// their signed CheckpointReceiptV2 and the stream's high-water marks; the owner
// writes it with Sync::kYes and only after that write returns calls
// batch_durable(), which publishes the records (readable, deliverable) and
// allows the Appended answers. A crash before the
// write returns leaves none of the batch; after, all of it with its receipt.
// A failed write fails the stream closed: nothing more is staged or acked.
//
// Every other change (lanes, groups, settings, retention) is applied here at
// once and adds its writes to a batch the caller passes; the owner makes that
// batch durable before it shows anyone the change. Nothing here writes.
//
// The keys and values it stores are spelled in layout.h. A load reads only the
// restart keys (layout.h): the tail with appended_bytes, the retention marks,
// the counters, lanes, groups and settings - an amount bounded by the lane and
// group limits, not by the record count. Per-record facts are read on demand:
// retention reads a bounded window of the oldest records, lane lookups for
// records older than the load read the lane runs, checkpoint lookups seek the
// receipts. Records made durable since the load are also indexed in memory.
#pragma once

#include <deque>
#include <map>

#include "cbqs/broker/chain_view.h"
#include "cbqs/broker/stream/layout.h"
#include "cbqs/store/store.h"
#include "cbqs/wire/errors.h"
#include "cbqs/wire/frames.h"
#include "common/crypto.h"

namespace cowboy::cbqs::broker {

/// Who signs checkpoints: the provider's address and Ed25519 seed.
struct ProviderIdentity {
  Address address{};
  crypto::Ed25519Seed signing_seed{};
};

/// What close_batch() produced. seal() - the record digests, the batch
/// digest, the signature and the encoding - needs no stream state, so the owner
/// runs it on the committer thread; then `write` is the batch to make durable.
struct PreparedBatch {
  std::vector<Record> records;
  CheckpointReceiptV2 receipt;     // every field but the digest and signature until sealed
  store::WriteBatch write;         // filled by seal()
  Bytes32 checkpoint_id{};         // seal()'s, so the io thread does not hash the receipt again
  std::uint64_t receipt_bytes = 0; // seal()'s encoded receipt size, for retention accounting
  std::uint64_t appended_base = 0; // the durable tail's appended_bytes when the batch was closed
  ChainTail tail;                  // seal()'s: the tail written with the batch
  bool empty() const { return records.empty(); }
  void seal(const ProviderIdentity& provider);
};

class StreamState {
 public:
  /// Loads the stream from the store (an unknown stream starts empty). A stream
  /// written before the restart keys is migrated first: one scan of its records
  /// and receipts, and one synced write of its runs and marks.
  static Result<StreamState, store::StoreError> load(store::Store& store, const Bytes32& stream_id);

  const Bytes32& stream_id() const { return stream_id_; }
  bool failed() const { return failed_; }
  void mark_failed() { failed_ = true; }

  // ---- lanes (§8, docs/protocol.md §N) ----
  Result<LaneId, ErrorCode> create_lane(const std::optional<RoomLaneV2>& room, const Params& params,
                                        store::WriteBatch& w);
  Result<Unit, ErrorCode> close_lane(LaneId lane_id, store::WriteBatch& w);
  /// Lanes in ascending id after `after`, at most `limit`, only those `in_scope`.
  resp::Lanes list_lanes(std::optional<LaneId> after, std::uint32_t limit, const LaneScope& scope) const;
  std::optional<LaneStatusV2> lane_status(LaneId lane_id) const;
  /// The highest durable sequence per lane that has records (since this stream was loaded).
  const std::map<std::uint64_t, std::uint64_t>& lane_heads() const { return lane_heads_; }

  // ---- consumer groups (§9.2, docs/protocol.md §O) ----
  /// `config.group_id` must be 0; returns the assigned id. The group's frontier
  /// is written with it: At(n) from max(n, floor), Head from the next sequence.
  Result<GroupId, ErrorCode> create_group(const GroupConfigV2& config, const Params& params,
                                          store::WriteBatch& w);
  Result<GroupConfigV2, ErrorCode> update_group(const GroupConfigV2& config, const Params& params,
                                                store::WriteBatch& w);
  /// Why `config` is an InvalidGroupConfig: the first field out of bounds, with
  /// its bound (e.g. "max_attempts 9 is above cbqs.max_attempts 5"); nullopt if valid.
  std::optional<std::string> group_config_problem(const GroupConfigV2& config, const Params& params) const;
  /// Removes the group with its frontier, cycles and dead letters.
  Result<Unit, ErrorCode> delete_group(GroupId group_id, store::WriteBatch& w);
  const GroupConfigV2* group(GroupId group_id) const;
  const std::map<std::uint64_t, GroupConfigV2>& groups() const { return groups_; }

  // ---- settings (§13) ----
  StreamSettingsV2 effective_settings(const Params& params) const;
  Result<StreamSettingsV2, ErrorCode> update_settings(const StreamSettingsV2& s, const Params& params,
                                                      store::WriteBatch& w);

  // ---- appends and the checkpoint chain (§9, §10) ----
  /// Stages an append into the open batch; returns its sequence. The lane must
  /// exist and be Active (the caller checked scope, verbs, solvency, size, rate).
  Result<Sequence, ErrorCode> stage_append(LaneId lane_id, Bytes payload);
  std::size_t open_batch_size() const { return open_.size(); }
  /// Closes the oldest `max_records` staged appends (all by default) into a
  /// signed, ready-to-write batch; empty when nothing is staged or a batch is in flight.
  PreparedBatch close_batch(const ChainView& view, const ProviderIdentity& provider, std::uint64_t now_ms,
                            std::size_t max_records = SIZE_MAX);
  /// Publishes a batch whose write returned ok.
  void batch_durable(const PreparedBatch& batch);

  /// Highest durable sequence (0 before the first batch).
  std::uint64_t durable_head() const { return tail_.next_sequence - 1; }
  std::uint64_t floor() const { return floor_; }  // lowest retained sequence
  std::uint64_t retained_bytes() const { return retained_bytes_; }
  /// When a retained record's batch became durable; nullopt outside [floor, head] (or unreadable).
  std::optional<std::uint64_t> committed_at(std::uint64_t sequence) const;
  /// The lowest retained sequence >= `from` in `lane_id`; nullopt if none (or unreadable).
  std::optional<Sequence> next_in_lane(LaneId lane_id, Sequence from) const;
  /// Retained records of `lane_id` with sequence >= `from` (older than the load: from the runs).
  std::uint64_t count_in_lane(LaneId lane_id, Sequence from) const;

  /// A durable, retained record; nullopt below the floor or above the head.
  Result<std::optional<Record>, store::StoreError> read(store::Store& store, std::uint64_t sequence) const;
  /// Consecutive retained records from `from` in one store scan: at most
  /// `max_records`, and stopping once `max_bytes` of payload are read (the
  /// first record is always included).
  Result<std::vector<Record>, store::StoreError> read_range(store::Store& store, std::uint64_t from,
                                                            std::size_t max_records, std::size_t max_bytes) const;
  /// docs/protocol.md §P: None = latest; Some(s) = the receipt covering s.
  Result<CheckpointReceiptV2, ErrorCode> checkpoint(store::Store& store, std::optional<Sequence> covering) const;

  // ---- retention (§12) ----
  /// Advances the floor by retention_ms and retained_bytes_limit; adds the
  /// deletes of what fell below it and the new retention marks to `w`. Whether
  /// the floor moved (not when the oldest records cannot be read).
  bool advance_floor(const Params& params, std::uint64_t now_ms, store::WriteBatch& w);
  const StreamLayout& layout() const { return layout_; }

 private:
  using Lane = StoredLane;
  struct Retained {  // one durable record, for retention accounting
    std::uint64_t sequence;
    std::uint64_t lane_id;
    std::uint64_t committed_at_ms;
    std::uint64_t bytes;
  };
  explicit StreamState(const Bytes32& id) : stream_id_(id), layout_(id) {}
  void write_lane(std::uint64_t lane_id, const Lane& lane, store::WriteBatch& w);
  /// A store written before the restart keys: derives them from the records once.
  Result<Unit, store::StoreError> migrate(store::Store& store);
  /// Reads the oldest retained records into the empty window; false if unreadable.
  bool fill_window();

  Bytes32 stream_id_;
  StreamLayout layout_;
  store::Store* store_ = nullptr;  // where records, receipts and runs are read on demand
  bool failed_ = false;
  std::map<std::uint64_t, Lane> lanes_;
  std::map<std::uint64_t, std::uint64_t> lane_heads_;
  std::map<std::uint64_t, GroupConfigV2> groups_;
  IdCounters counters_;
  std::optional<StreamSettingsV2> settings_;

  ChainTail tail_;  // durable
  // Staged, not yet durable.
  std::uint64_t next_sequence_staged_ = 1;
  std::vector<Record> open_;
  bool batch_in_flight_ = false;  // one closed batch at a time keeps the chain in order

  // Retention.
  std::uint64_t floor_ = 1;
  std::uint64_t dropped_bytes_ = 0;  // durable with the floor (RetentionMarks)
  std::uint64_t retained_bytes_ = 0;
  // The oldest retained records, consecutive from floor_ to window_end_, read
  // from the store a chunk at a time (or kept from batches while contiguous);
  // and the receipts whose last_sequence is in that range, with their sizes.
  std::deque<Retained> window_;
  std::uint64_t window_end_ = 1;
  std::map<std::uint64_t, std::uint64_t> window_receipts_;
  // Lanes of the records made durable since the load (>= cold_end_); older
  // records' lanes are read from the runs.
  std::uint64_t cold_end_ = 1;
  std::map<std::uint64_t, std::deque<std::uint64_t>> lane_sequences_;  // retained sequences per lane
};

}  // namespace cowboy::cbqs::broker
