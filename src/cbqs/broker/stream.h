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
// Store layout, per stream (<sid> = 32 raw bytes):
//   s/<sid>/m              the checkpoint-chain tail; written only by batches
//   s/<sid>/n              the lane and group id counters; written only by lane and group creation
//                          (two keys, so that no write can carry a stale copy of the other's fields;
//                          the retention floor is not stored: it is derived from the records)
//   s/<sid>/l/<lane BE>    lane: LaneRecordV2 || Option<Bytes32> room commitment
//   s/<sid>/r/<seq BE>     record: lane u64 || committed_at_ms u64 || payload
//   s/<sid>/c/<last BE>    CheckpointReceiptV2, keyed by its last_sequence
//   s/<sid>/t              StreamSettingsV2, once the owner set them
//   s/<sid>/g/<group BE>   GroupConfigV2 (deleted with its group; ids are never reissued)
//   s/<sid>/f/<group BE>   the group's frontier: the lowest sequence it has not yet considered
//   s/<sid>/y/<group BE>/<seq BE>  a live delivery cycle (group.h)
//   s/<sid>/x/<group BE>/<seq BE>  a dead letter: an EXPIRED cycle, kept until its record goes
#pragma once

#include <deque>
#include <map>

#include "cbqs/broker/chain_view.h"
#include "cbqs/store/store.h"
#include "cbqs/wire/errors.h"
#include "cbqs/wire/frames.h"
#include "common/crypto.h"

namespace cowboy::cbqs::broker {

/// Bytes a record counts against retained_bytes_limit: canonical(RecordHeaderV2)
/// 41 + sequence 8 + payload length 4 + n (docs/protocol.md §P).
constexpr std::uint64_t retained_record_bytes(std::uint64_t n) { return 53 + n; }

/// The one spelling of the store layout above: "s/<sid>/<kind>[/<a BE>[/<b BE>]]".
std::string stream_key(const Bytes32& stream_id, char kind);
std::string stream_key(const Bytes32& stream_id, char kind, std::uint64_t a);
std::string stream_key(const Bytes32& stream_id, char kind, std::uint64_t a, std::uint64_t b);
/// Every key "s/<sid>/<kind>/<a BE>/..." as a [begin, end) range.
std::pair<std::string, std::string> stream_key_range(const Bytes32& stream_id, char kind, std::uint64_t a);

struct Record {
  std::uint64_t sequence = 0;
  std::uint64_t lane_id = 0;
  std::uint64_t committed_at_ms = 0;
  Bytes payload;
};

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
  bool empty() const { return records.empty(); }
  void seal(const ProviderIdentity& provider);
};

class StreamState {
 public:
  /// Loads the stream from the store (an unknown stream starts empty).
  static Result<StreamState, store::StoreError> load(store::Store& store, const Bytes32& stream_id);

  const Bytes32& stream_id() const { return stream_id_; }
  bool failed() const { return failed_; }
  void mark_failed() { failed_ = true; }

  // ---- lanes (§8, docs/protocol.md §N); each change is one synced write ----
  Result<std::uint64_t, ErrorCode> create_lane(store::Store& store, const std::optional<RoomLaneV2>& room,
                                               const Params& params);
  Result<Unit, ErrorCode> close_lane(store::Store& store, std::uint64_t lane_id);
  /// Lanes in ascending id after `after`, at most `limit`, only those `in_scope`.
  resp::Lanes list_lanes(std::optional<std::uint64_t> after, std::uint32_t limit, const LaneScope& scope) const;
  std::optional<LaneStatusV2> lane_status(std::uint64_t lane_id) const;
  /// The highest durable sequence per lane that has records (since this process started).
  const std::map<std::uint64_t, std::uint64_t>& lane_heads() const { return lane_heads_; }

  // ---- consumer groups (§9.2, docs/protocol.md §O); each change is one synced write ----
  /// `config.group_id` must be 0; returns the assigned id. The group's frontier
  /// is written with it: At(n) from max(n, floor), Head from the next sequence.
  Result<std::uint64_t, ErrorCode> create_group(store::Store& store, const GroupConfigV2& config, const Params& params);
  Result<GroupConfigV2, ErrorCode> update_group(store::Store& store, const GroupConfigV2& config, const Params& params);
  /// Removes the group with its frontier, cycles and dead letters.
  Result<Unit, ErrorCode> delete_group(store::Store& store, std::uint64_t group_id);
  const GroupConfigV2* group(std::uint64_t group_id) const;
  const std::map<std::uint64_t, GroupConfigV2>& groups() const { return groups_; }

  // ---- settings (§13) ----
  StreamSettingsV2 effective_settings(const Params& params) const;
  Result<StreamSettingsV2, ErrorCode> update_settings(store::Store& store, const StreamSettingsV2& s,
                                                      const Params& params);

  // ---- appends and the checkpoint chain (§9, §10) ----
  /// Stages an append into the open batch; returns its sequence. The lane must
  /// exist and be Active (the caller checked scope, verbs, solvency, size, rate).
  Result<std::uint64_t, ErrorCode> stage_append(std::uint64_t lane_id, Bytes payload);
  std::size_t open_batch_size() const { return open_.size(); }
  /// Closes the oldest `max_records` staged appends (all by default) into a
  /// signed, ready-to-write batch; empty when nothing is staged or a batch is in flight.
  PreparedBatch close_batch(const ChainView& view, const ProviderIdentity& provider, std::uint64_t now_ms,
                            std::size_t max_records = SIZE_MAX);
  /// Publishes a batch whose write returned ok.
  void batch_durable(const PreparedBatch& batch);

  /// Highest durable sequence (0 before the first batch).
  std::uint64_t durable_head() const { return next_sequence_durable_ - 1; }
  std::uint64_t floor() const { return floor_; }  // lowest retained sequence
  std::uint64_t retained_bytes() const { return retained_bytes_; }
  /// When a retained record's batch became durable; nullopt outside [floor, head].
  std::optional<std::uint64_t> committed_at(std::uint64_t sequence) const;
  /// The lowest retained sequence >= `from` in `lane_id`; nullopt if none.
  std::optional<std::uint64_t> next_in_lane(std::uint64_t lane_id, std::uint64_t from) const;
  /// Retained records of `lane_id` with sequence >= `from`.
  std::uint64_t count_in_lane(std::uint64_t lane_id, std::uint64_t from) const;

  /// A durable, retained record; nullopt below the floor or above the head.
  Result<std::optional<Record>, store::StoreError> read(store::Store& store, std::uint64_t sequence) const;
  /// Consecutive retained records from `from` in one store scan: at most
  /// `max_records`, and stopping once `max_bytes` of payload are read (the
  /// first record is always included).
  Result<std::vector<Record>, store::StoreError> read_range(store::Store& store, std::uint64_t from,
                                                            std::size_t max_records, std::size_t max_bytes) const;
  /// docs/protocol.md §P: None = latest; Some(s) = the receipt covering s.
  Result<CheckpointReceiptV2, ErrorCode> checkpoint(store::Store& store, std::optional<std::uint64_t> covering) const;

  // ---- retention (§12) ----
  /// Advances the floor by retention_ms and retained_bytes_limit; returns the
  /// write that deletes what fell below it (empty if nothing did).
  store::WriteBatch advance_floor(const Params& params, std::uint64_t now_ms);

 private:
  struct Lane {
    LaneStatusV2 status = LaneStatusV2::kActive;
    std::optional<Bytes32> room;  // the §11.1 commitment of a room lane
  };
  struct Retained {  // one durable record, for retention accounting
    std::uint64_t sequence;
    std::uint64_t lane_id;
    std::uint64_t committed_at_ms;
    std::uint64_t bytes;
  };
  void retain(std::uint64_t sequence, std::uint64_t lane_id, std::uint64_t committed_at_ms, std::uint64_t bytes);
  struct ReceiptInfo {
    std::uint64_t first_sequence;
    std::uint64_t bytes;
  };

  explicit StreamState(const Bytes32& id) : stream_id_(id) {}
  std::string key(char kind) const;
  std::string key(char kind, std::uint64_t n) const;
  std::string encode_counters() const;
  Result<Unit, ErrorCode> write_lane(store::Store& store, std::uint64_t lane_id, const Lane& lane,
                                     std::uint64_t next_lane_id);

  Bytes32 stream_id_;
  bool failed_ = false;
  std::map<std::uint64_t, Lane> lanes_;
  std::map<std::uint64_t, std::uint64_t> lane_heads_;
  std::map<std::uint64_t, GroupConfigV2> groups_;
  std::optional<ErrorCode> check_group_fields(const GroupConfigV2& c, const Params& params) const;
  std::uint64_t next_lane_id_ = 1;
  std::uint64_t next_group_id_ = 1;
  std::optional<StreamSettingsV2> settings_;

  // The checkpoint chain tail (durable).
  std::uint64_t next_sequence_durable_ = 1;
  Bytes32 last_checkpoint_id_{};
  std::uint64_t last_committed_at_ms_ = 0;
  std::uint64_t last_snapshot_height_ = 0;
  // Staged, not yet durable.
  std::uint64_t next_sequence_staged_ = 1;
  std::vector<Record> open_;
  bool batch_in_flight_ = false;  // one closed batch at a time keeps the chain in order

  // Retention.
  std::uint64_t floor_ = 1;
  std::uint64_t retained_bytes_ = 0;
  std::deque<Retained> retained_;                               // consecutive from floor_
  std::map<std::uint64_t, std::deque<std::uint64_t>> lane_sequences_;  // retained sequences per lane
  std::map<std::uint64_t, ReceiptInfo> receipts_;  // by last_sequence
};

}  // namespace cowboy::cbqs::broker
