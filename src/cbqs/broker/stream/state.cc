#include "cbqs/broker/stream/state.h"

#include "cbqs/broker/auth.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "common/log.h"

namespace cowboy::cbqs::broker {

namespace {

using store::StoreError;
using store::WriteBatch;

// The retention window's size: what retention holds of the oldest records at once.
constexpr std::size_t kWindowRecords = 4'096;
constexpr std::uint64_t kWindowBytes = 16 << 20;  // and payload read per fill

bool settings_valid(const StreamSettingsV2& s, const Params& p) {
  return s.retention_ms > 0 && s.retention_ms <= p.retention_ms && s.retained_bytes_limit > 0 &&
         s.retained_bytes_limit <= p.max_retained_bytes_per_stream && s.max_message_bytes > 0 &&
         s.max_message_bytes <= p.max_message_bytes && s.max_append_bytes_per_sec > 0 &&
         s.max_append_bytes_per_sec <= p.max_append_bytes_per_sec && s.max_delivered_bytes_per_sec > 0 &&
         s.max_delivered_bytes_per_sec <= p.max_delivered_bytes_per_sec;
}

}  // namespace

Result<StreamState, StoreError> StreamState::load(store::Store& store, const Bytes32& stream_id) {
  StreamState s(stream_id);
  s.store_ = &store;
  const StreamLayout& layout = s.layout_;
  auto tail = layout.tail(store);
  if (!tail) return Err{tail.error()};
  if (*tail) s.tail_ = **tail;
  auto counters = layout.counters(store);
  if (!counters) return Err{counters.error()};
  if (*counters) s.counters_ = **counters;
  s.next_sequence_staged_ = s.tail_.next_sequence;

  auto lanes = layout.lanes(store, [&](std::uint64_t id, const StoredLane& lane) { s.lanes_[id] = lane; });
  if (!lanes) return Err{lanes.error()};
  if (s.tail_.legacy) {
    if (auto migrated = s.migrate(store); !migrated) return Err{migrated.error()};
  }
  auto marks = layout.marks(store);
  if (!marks) return Err{marks.error()};
  RetentionMarks m = marks->value_or(RetentionMarks{});
  if (m.floor > s.tail_.next_sequence || m.dropped_bytes > s.tail_.appended_bytes) return Err{StoreError::kCorrupt};
  s.floor_ = s.window_end_ = m.floor;
  s.dropped_bytes_ = m.dropped_bytes;
  s.retained_bytes_ = s.tail_.appended_bytes - m.dropped_bytes;
  s.cold_end_ = s.tail_.next_sequence;
  auto groups = layout.groups(store, [&](const GroupConfigV2& config) { s.groups_[config.group_id.value] = config; });
  if (!groups) return Err{groups.error()};
  auto settings = layout.settings(store);
  if (!settings) return Err{settings.error()};
  s.settings_ = *settings;
  return s;
}

// Once per stream written before the restart keys: its records and receipts
// give the floor, the retained bytes and the lane runs, written in chunks
// (idempotent) with the tail and marks last, in one synced write, so a crash
// midway leaves a version-1 tail and the next load migrates again.
Result<Unit, StoreError> StreamState::migrate(store::Store& store) {
  constexpr std::size_t kChunk = 65'536;
  auto started = std::chrono::steady_clock::now();
  WriteBatch w;
  std::optional<std::uint64_t> floor;
  std::uint64_t bytes = 0, records = 0, expected = 0;
  std::optional<LaneRun> run;
  std::uint64_t run_lane = 0;
  bool gap = false;
  std::optional<StoreError> write_failed;
  auto flush_run = [&] {
    if (run) layout_.put_run(w, LaneId{run_lane}, *run);
    run.reset();
  };
  auto scanned = layout_.records(store, Sequence{0}, Sequence{UINT64_MAX}, [&](Record r) {
    if (floor && r.sequence != expected) return !(gap = true);  // retained records are gapless
    if (!floor) floor = r.sequence;
    expected = r.sequence + 1;
    ++records;
    bytes += retained_record_bytes(r.payload.size());
    if (run && run_lane == r.lane_id && run->last + 1 == r.sequence) run->last = r.sequence;
    else {
      flush_run();
      run = LaneRun{r.sequence, r.sequence};
      run_lane = r.lane_id;
    }
    if (w.size() >= kChunk) {
      if (auto written = store.write(w, store::Sync::kNo); !written.ok()) {
        write_failed = written.error();
        return false;
      }
      w = WriteBatch{};
    }
    return true;
  });
  if (!scanned) return Err{scanned.error()};
  if (write_failed) return Err{*write_failed};
  if (gap) return Err{StoreError::kCorrupt};
  flush_run();
  auto receipts = layout_.receipts(store, Sequence{0}, Sequence{UINT64_MAX},
                                   [&](const CheckpointReceiptV2&, std::size_t size) {
                                     bytes += size;
                                     return true;
                                   });
  if (!receipts) return Err{receipts.error()};
  tail_.legacy = false;
  tail_.appended_bytes = bytes;
  layout_.put_tail(w, tail_);
  layout_.put_marks(w, RetentionMarks{floor.value_or(tail_.next_sequence), 0});
  if (auto written = store.write(w, store::Sync::kYes); !written.ok()) return Err{written.error()};
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  log::info("stream_migrated", log::field("stream", to_hex(ByteView(stream_id_).first(8))), log::field("records", records),
            log::field("ms", ms), log::field("why", "written before the restart keys; once per stream"));
  return Unit{};
}

// ---- lanes -------------------------------------------------------------------

void StreamState::write_lane(std::uint64_t lane_id, const Lane& lane, WriteBatch& w) {
  layout_.put_lane(w, LaneId{lane_id}, lane);
  layout_.put_counters(w, counters_);
  lanes_[lane_id] = lane;
}

Result<LaneId, ErrorCode> StreamState::create_lane(const std::optional<RoomLaneV2>& room, const Params& params,
                                                   WriteBatch& w) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  if (room) {
    Bytes32 commitment = room_lane_commitment(*room);
    std::uint64_t id = room_lane_id(*room).value;
    if (auto it = lanes_.find(id); it != lanes_.end()) {
      if (it->second.room != commitment) return Err{ErrorCode::kLaneIdConflict};
      if (it->second.status == LaneStatusV2::kClosed) return Err{ErrorCode::kLaneClosed};
      return LaneId{id};  // the same room, Active: idempotent
    }
    if (lanes_.size() >= params.max_lanes_per_stream) return Err{ErrorCode::kLaneLimit};
    if (id == 0) return Err{ErrorCode::kLaneIdConflict};
    write_lane(id, Lane{LaneStatusV2::kActive, commitment}, w);
    return LaneId{id};
  }
  if (lanes_.size() >= params.max_lanes_per_stream) return Err{ErrorCode::kLaneLimit};
  std::uint64_t id = counters_.next_lane_id;
  while (lanes_.contains(id)) ++id;  // skip ids held by room lanes
  counters_.next_lane_id = id + 1;
  write_lane(id, Lane{}, w);
  return LaneId{id};
}

Result<Unit, ErrorCode> StreamState::close_lane(LaneId lane_id, WriteBatch& w) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  auto it = lanes_.find(lane_id.value);
  if (it == lanes_.end()) return Err{ErrorCode::kUnknownLane};
  if (it->second.status == LaneStatusV2::kClosed) return Err{ErrorCode::kLaneClosed};
  Lane closed = it->second;
  closed.status = LaneStatusV2::kClosed;
  write_lane(lane_id.value, closed, w);
  return Unit{};
}

resp::Lanes StreamState::list_lanes(std::optional<LaneId> after, std::uint32_t limit, const LaneScope& scope) const {
  resp::Lanes out;
  auto it = after ? lanes_.upper_bound(after->value) : lanes_.begin();
  for (; it != lanes_.end(); ++it) {
    if (!lane_in_scope(scope, LaneId{it->first})) continue;
    if (out.lanes.size() == limit) {  // one more in scope remains
      out.next_after_lane_id = out.lanes.back().lane_id;
      break;
    }
    out.lanes.push_back(LaneRecordV2{stream_id_, LaneId{it->first}, it->second.status});
  }
  return out;
}

std::optional<LaneStatusV2> StreamState::lane_status(LaneId lane_id) const {
  auto it = lanes_.find(lane_id.value);
  if (it == lanes_.end()) return std::nullopt;
  return it->second.status;
}

// ---- consumer groups ---------------------------------------------------------------

// Every numeric field > 0 and within its ceiling (§15 Ceiling class); the
// pairs ordered; a deadline no longer than the stream's retention.
std::optional<std::string> StreamState::group_config_problem(const GroupConfigV2& c, const Params& p) const {
  struct Bound {
    const char* field;
    std::uint64_t value;
    std::uint64_t limit;
    const char* limit_name;
  };
  const Bound bounds[] = {
      {"visibility_timeout_ms", c.visibility_timeout_ms, c.max_visibility_ms, "the group's max_visibility_ms"},
      {"max_visibility_ms", c.max_visibility_ms, p.visibility_ms, "cbqs.visibility_ms"},
      {"max_in_flight_per_holder", c.max_in_flight_per_holder, c.max_in_flight, "the group's max_in_flight"},
      {"max_in_flight", c.max_in_flight, p.max_in_flight_per_group, "cbqs.max_in_flight_per_group"},
      {"max_attempts", c.max_attempts, p.max_attempts, "cbqs.max_attempts"},
      {"record_deadline_ms", c.record_deadline_ms, effective_settings(p).retention_ms, "the stream's retention_ms"},
  };
  for (const Bound& b : bounds) {
    if (b.value == 0) return std::string(b.field) + " must be at least 1";
    if (b.value > b.limit)
      return std::string(b.field) + " " + std::to_string(b.value) + " is above " + b.limit_name + " " +
             std::to_string(b.limit);
  }
  return std::nullopt;
}

Result<GroupId, ErrorCode> StreamState::create_group(const GroupConfigV2& config, const Params& params,
                                                    WriteBatch& w) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  if (config.group_id != GroupId{0}) return Err{ErrorCode::kInvalidRequest};
  if (group_config_problem(config, params)) return Err{ErrorCode::kInvalidGroupConfig};
  auto lane = lane_status(config.lane_id);
  if (!lane) return Err{ErrorCode::kUnknownLane};
  if (*lane == LaneStatusV2::kClosed) return Err{ErrorCode::kLaneClosed};
  if (groups_.size() >= params.max_groups_per_stream) return Err{ErrorCode::kGroupLimit};
  GroupConfigV2 stored = config;
  stored.group_id = GroupId{counters_.next_group_id++};
  std::uint64_t frontier = next_sequence_staged_;  // Head: what is appended from now on
  if (const auto* at = std::get_if<StartAt>(&stored.start)) frontier = std::max({at->sequence.value, floor_, std::uint64_t{1}});
  layout_.put_group(w, stored);
  layout_.put_frontier(w, stored.group_id, StoredFrontier{frontier, frontier});
  layout_.put_counters(w, counters_);
  groups_[stored.group_id.value] = stored;
  return stored.group_id;
}

Result<GroupConfigV2, ErrorCode> StreamState::update_group(const GroupConfigV2& config, const Params& params,
                                                           WriteBatch& w) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  if (group_config_problem(config, params)) return Err{ErrorCode::kInvalidGroupConfig};
  auto it = groups_.find(config.group_id.value);
  if (it == groups_.end()) return Err{ErrorCode::kUnknownGroup};
  if (config.lane_id != it->second.lane_id || config.start != it->second.start) return Err{ErrorCode::kImmutableField};
  layout_.put_group(w, config);
  it->second = config;
  return config;
}

Result<Unit, ErrorCode> StreamState::delete_group(GroupId group_id, WriteBatch& w) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  if (!groups_.contains(group_id.value)) return Err{ErrorCode::kUnknownGroup};
  layout_.drop_group(w, group_id);
  groups_.erase(group_id.value);
  return Unit{};
}

const GroupConfigV2* StreamState::group(GroupId group_id) const {
  auto it = groups_.find(group_id.value);
  return it == groups_.end() ? nullptr : &it->second;
}

// ---- settings ------------------------------------------------------------------

StreamSettingsV2 StreamState::effective_settings(const Params& p) const {
  if (settings_) return *settings_;
  return StreamSettingsV2{p.retention_ms, p.max_retained_bytes_per_stream, static_cast<std::uint32_t>(p.max_message_bytes),
                          p.max_append_bytes_per_sec, p.max_delivered_bytes_per_sec};
}

Result<StreamSettingsV2, ErrorCode> StreamState::update_settings(const StreamSettingsV2& s, const Params& params,
                                                                 WriteBatch& w) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  if (!settings_valid(s, params)) return Err{ErrorCode::kInvalidSettings};
  layout_.put_settings(w, s);
  settings_ = s;
  return s;
}

// ---- appends and checkpoints ------------------------------------------------------

Result<Sequence, ErrorCode> StreamState::stage_append(LaneId lane_id, Bytes payload) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  auto status = lane_status(lane_id);
  if (!status) return Err{ErrorCode::kUnknownLane};
  if (*status == LaneStatusV2::kClosed) return Err{ErrorCode::kLaneClosed};
  std::uint64_t seq = next_sequence_staged_++;
  open_.push_back(Record{seq, lane_id.value, 0, std::move(payload)});
  return Sequence{seq};
}

PreparedBatch StreamState::close_batch(const ChainView& view, const ProviderIdentity& provider,
                                       std::uint64_t now_ms, std::size_t max_records) {
  PreparedBatch batch;
  if (open_.empty() || batch_in_flight_ || failed_ || max_records == 0) return batch;
  batch_in_flight_ = true;
  if (open_.size() <= max_records) {
    batch.records = std::move(open_);
    open_.clear();
  } else {
    auto split = static_cast<std::ptrdiff_t>(max_records);
    batch.records.assign(std::make_move_iterator(open_.begin()), std::make_move_iterator(open_.begin() + split));
    open_.erase(open_.begin(), open_.begin() + split);
  }
  batch.appended_base = tail_.appended_bytes;
  std::uint64_t committed_at = std::max(tail_.last_committed_at_ms, now_ms);
  for (auto& r : batch.records) r.committed_at_ms = committed_at;
  CheckpointReceiptV2& c = batch.receipt;
  c.chain_instance_id = view.chain_instance_id;
  c.stream_id = stream_id_;
  c.provider = provider.address;
  c.first_sequence = Sequence{batch.records.front().sequence};
  c.last_sequence = Sequence{batch.records.back().sequence};
  c.previous_checkpoint = tail_.last_checkpoint_id;
  c.committed_at_ms = committed_at;
  c.snapshot_height = std::max(tail_.last_snapshot_height, view.height);
  return batch;
}

void PreparedBatch::seal(const ProviderIdentity& provider) {
  const Bytes32& sid = receipt.stream_id;
  const StreamLayout layout(sid);
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    layout.put_record(write, r);
    bytes += retained_record_bytes(r.payload.size());
    // One run per stretch of one lane: what lets a restart find a lane's records without reading them.
    if (i + 1 == records.size() || records[i + 1].lane_id != r.lane_id) {
      std::size_t first = i;
      while (first > 0 && records[first - 1].lane_id == r.lane_id) --first;
      layout.put_run(write, LaneId{r.lane_id}, LaneRun{records[first].sequence, r.sequence});
    }
  }
  std::vector<RecordView> views;
  views.reserve(records.size());
  for (const auto& r : records) views.push_back({RecordHeaderV2{sid, LaneId{r.lane_id}}, r.payload});
  receipt.records_digest = records_digest(record_digests(views));
  sign_checkpoint(receipt, provider.signing_seed);
  const Bytes encoded = encode(receipt);
  receipt_bytes = encoded.size();
  checkpoint_id = cbqs::checkpoint_id(receipt);
  layout.put_receipt(write, receipt.last_sequence, encoded);
  // The high-water marks as they stand once this batch is durable.
  tail = ChainTail{receipt.last_sequence.value + 1, checkpoint_id, receipt.committed_at_ms, receipt.snapshot_height,
                   appended_base + bytes + receipt_bytes};
  layout.put_tail(write, tail);
}

void StreamState::batch_durable(const PreparedBatch& batch) {
  batch_in_flight_ = false;
  if (batch.empty()) return;
  const auto& c = batch.receipt;
  tail_ = batch.tail;
  // The retention window keeps following the head while it is contiguous and small.
  const bool extend = window_end_ == c.first_sequence.value && window_.size() + batch.records.size() <= kWindowRecords;
  for (const auto& r : batch.records) {
    std::uint64_t bytes = retained_record_bytes(r.payload.size());
    retained_bytes_ += bytes;
    lane_sequences_[r.lane_id].push_back(r.sequence);
    lane_heads_[r.lane_id] = r.sequence;
    if (extend) window_.push_back({r.sequence, r.lane_id, r.committed_at_ms, bytes});
  }
  if (extend) {
    window_end_ = c.last_sequence.value + 1;
    window_receipts_[c.last_sequence.value] = batch.receipt_bytes;
  }
  retained_bytes_ += batch.receipt_bytes;
}

bool StreamState::fill_window() {
  const std::uint64_t end = std::min(durable_head() + 1, floor_ + kWindowRecords);
  window_end_ = floor_;
  std::uint64_t payload_bytes = 0;
  bool gap = false;
  auto records = layout_.records(*store_, Sequence{floor_}, Sequence{end}, [&](Record r) {
    if (r.sequence != window_end_) return !(gap = true);  // retained records are gapless
    window_.push_back({r.sequence, r.lane_id, r.committed_at_ms, retained_record_bytes(r.payload.size())});
    ++window_end_;
    payload_bytes += r.payload.size();
    return payload_bytes < kWindowBytes;  // large records: fewer at a time
  });
  auto receipts = layout_.receipts(*store_, Sequence{floor_}, Sequence{window_end_},
                                   [&](const CheckpointReceiptV2& receipt, std::size_t bytes) {
                                     window_receipts_[receipt.last_sequence.value] = bytes;
                                     return true;
                                   });
  if (records && receipts && !gap && window_end_ > floor_) return true;
  log::error("retention_window_unreadable", log::field("stream", to_hex(ByteView(stream_id_).first(8))),
             log::field("floor", floor_));
  window_.clear();
  window_receipts_.clear();
  window_end_ = floor_;
  return false;
}

std::optional<std::uint64_t> StreamState::committed_at(std::uint64_t sequence) const {
  if (sequence < floor_ || sequence > durable_head()) return std::nullopt;
  if (sequence < window_end_) return window_[sequence - floor_].committed_at_ms;
  auto record = layout_.record(*store_, Sequence{sequence});
  if (!record || !*record) return std::nullopt;
  return (*record)->committed_at_ms;
}

std::optional<Sequence> StreamState::next_in_lane(LaneId lane_id, Sequence from) const {
  const std::uint64_t start = std::max(from.value, floor_);
  if (start < cold_end_) {
    std::optional<std::uint64_t> found;
    auto runs = layout_.runs(*store_, lane_id, Sequence{start}, Sequence{cold_end_}, [&](const LaneRun& run) {
      found = std::max(run.first, start);
      return false;
    });
    if (!runs) return std::nullopt;
    if (found) return Sequence{*found};
  }
  auto lane = lane_sequences_.find(lane_id.value);
  if (lane == lane_sequences_.end()) return std::nullopt;
  auto it = std::lower_bound(lane->second.begin(), lane->second.end(), start);
  if (it == lane->second.end()) return std::nullopt;
  return Sequence{*it};
}

std::uint64_t StreamState::count_in_lane(LaneId lane_id, Sequence from) const {
  const std::uint64_t start = std::max(from.value, floor_);
  std::uint64_t n = 0;
  if (start < cold_end_)
    (void)layout_.runs(*store_, lane_id, Sequence{start}, Sequence{cold_end_}, [&](const LaneRun& run) {
      n += run.last - std::max(run.first, start) + 1;
      return true;
    });
  auto lane = lane_sequences_.find(lane_id.value);
  if (lane == lane_sequences_.end()) return n;
  return n + static_cast<std::uint64_t>(lane->second.end() -
                                        std::lower_bound(lane->second.begin(), lane->second.end(), start));
}

Result<std::optional<Record>, StoreError> StreamState::read(store::Store& store, std::uint64_t sequence) const {
  if (sequence < floor_ || sequence > durable_head()) return std::optional<Record>{};
  return layout_.record(store, Sequence{sequence});
}

Result<std::vector<Record>, StoreError> StreamState::read_range(store::Store& store, std::uint64_t from,
                                                                std::size_t max_records, std::size_t max_bytes) const {
  std::vector<Record> out;
  if (from < floor_ || from > durable_head() || max_records == 0) return out;
  std::uint64_t end = from + std::min<std::uint64_t>(max_records, durable_head() - from + 1);
  std::size_t bytes = 0;
  bool gap = false;
  auto scanned = layout_.records(store, Sequence{from}, Sequence{end}, [&](Record r) {
    if (r.sequence != from + out.size()) return !(gap = true);  // retained records are gapless
    bytes += r.payload.size();
    out.push_back(std::move(r));
    return bytes < max_bytes;
  });
  if (!scanned) return Err{scanned.error()};
  if (gap) return Err{StoreError::kCorrupt};
  return out;
}

Result<CheckpointReceiptV2, ErrorCode> StreamState::checkpoint(store::Store& store,
                                                                std::optional<Sequence> covering) const {
  // Receipts are keyed by their last sequence: the first at or above `covering` covers it.
  std::uint64_t from = durable_head();
  if (!covering) {
    if (floor_ > durable_head()) return Err{ErrorCode::kCheckpointNotFound};
  } else {
    if (covering->value < floor_) return Err{ErrorCode::kSequenceNotRetained};
    if (covering->value > durable_head()) return Err{ErrorCode::kCheckpointNotFound};
    from = covering->value;
  }
  std::optional<CheckpointReceiptV2> found;
  auto scanned = layout_.receipts(store, Sequence{from}, Sequence{durable_head() + 1},
                                  [&](const CheckpointReceiptV2& receipt, std::size_t) {
                                    found = receipt;
                                    return false;
                                  });
  if (!scanned) return Err{scanned.error() == StoreError::kCorrupt ? ErrorCode::kInternal : ErrorCode::kUnavailable};
  if (!found) return Err{ErrorCode::kUnavailable};  // a retained record without its receipt
  if (found->first_sequence.value > from) return Err{ErrorCode::kCheckpointNotFound};
  return *found;
}

bool StreamState::advance_floor(const Params& params, std::uint64_t now_ms, WriteBatch& w) {
  StreamSettingsV2 s = effective_settings(params);
  std::uint64_t old_floor = floor_;
  while (floor_ <= durable_head()) {
    if (window_.empty() && !fill_window()) break;
    const Retained& oldest = window_.front();
    bool expired = now_ms >= oldest.committed_at_ms && now_ms - oldest.committed_at_ms >= s.retention_ms;
    if (!expired && retained_bytes_ <= s.retained_bytes_limit) break;
    retained_bytes_ -= oldest.bytes;
    dropped_bytes_ += oldest.bytes;
    floor_ = oldest.sequence + 1;
    // The run ending here goes with it (a run ends at a batch's end or where the lane changes).
    if (window_receipts_.contains(oldest.sequence) || window_.size() == 1 || window_[1].lane_id != oldest.lane_id)
      layout_.drop_run(w, LaneId{oldest.lane_id}, Sequence{oldest.sequence});
    if (auto lane = lane_sequences_.find(oldest.lane_id);
        oldest.sequence >= cold_end_ && lane != lane_sequences_.end()) {
      lane->second.pop_front();  // the oldest retained record is its lane's oldest too
      if (lane->second.empty()) lane_sequences_.erase(lane);
    }
    window_.pop_front();
    // A receipt goes as soon as the floor passes the last record it attests.
    while (!window_receipts_.empty() && window_receipts_.begin()->first < floor_) {
      retained_bytes_ -= window_receipts_.begin()->second;
      dropped_bytes_ += window_receipts_.begin()->second;
      layout_.drop_receipt(w, Sequence{window_receipts_.begin()->first});
      window_receipts_.erase(window_receipts_.begin());
    }
  }
  if (window_.empty()) window_end_ = floor_;
  if (floor_ == old_floor) return false;
  layout_.drop_records(w, Sequence{old_floor}, Sequence{floor_});
  layout_.put_marks(w, RetentionMarks{floor_, dropped_bytes_});
  return true;
}

}  // namespace cowboy::cbqs::broker
