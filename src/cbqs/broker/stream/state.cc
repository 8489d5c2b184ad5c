#include "cbqs/broker/stream/state.h"

#include "cbqs/broker/auth.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"

namespace cowboy::cbqs::broker {

namespace {

using store::StoreError;
using store::WriteBatch;

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
  auto records = layout.records(store, Sequence{0}, Sequence{UINT64_MAX}, [&](Record r) {
    s.retain(r.sequence, r.lane_id, r.committed_at_ms, retained_record_bytes(r.payload.size()));
    return true;
  });
  if (!records) return Err{records.error()};
  auto receipts = layout.receipts(store, [&](const CheckpointReceiptV2& receipt, std::size_t bytes) {
    s.receipts_[receipt.last_sequence.value] = {receipt.first_sequence.value, bytes};
    s.retained_bytes_ += bytes;
  });
  if (!receipts) return Err{receipts.error()};
  // The floor is derived from what is stored: retained records are contiguous up to the head.
  s.floor_ = s.retained_.empty() ? s.tail_.next_sequence : s.retained_.front().sequence;
  auto groups = layout.groups(store, [&](const GroupConfigV2& config) { s.groups_[config.group_id.value] = config; });
  if (!groups) return Err{groups.error()};
  auto settings = layout.settings(store);
  if (!settings) return Err{settings.error()};
  s.settings_ = *settings;
  return s;
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
  layout_.put_frontier(w, stored.group_id, Sequence{frontier});
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
  for (const auto& r : records) layout.put_record(write, r);
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
  layout.put_tail(write, ChainTail{receipt.last_sequence.value + 1, checkpoint_id, receipt.committed_at_ms,
                                   receipt.snapshot_height});
}

void StreamState::batch_durable(const PreparedBatch& batch) {
  batch_in_flight_ = false;
  if (batch.empty()) return;
  const auto& c = batch.receipt;
  tail_ = ChainTail{c.last_sequence.value + 1, batch.checkpoint_id, c.committed_at_ms, c.snapshot_height};
  for (const auto& r : batch.records) {
    retain(r.sequence, r.lane_id, r.committed_at_ms, retained_record_bytes(r.payload.size()));
    lane_heads_[r.lane_id] = r.sequence;
  }
  receipts_[c.last_sequence.value] = {c.first_sequence.value, batch.receipt_bytes};
  retained_bytes_ += batch.receipt_bytes;
}

void StreamState::retain(std::uint64_t sequence, std::uint64_t lane_id, std::uint64_t committed_at_ms,
                         std::uint64_t bytes) {
  retained_.push_back({sequence, lane_id, committed_at_ms, bytes});
  retained_bytes_ += bytes;
  lane_sequences_[lane_id].push_back(sequence);
}

std::optional<std::uint64_t> StreamState::committed_at(std::uint64_t sequence) const {
  if (retained_.empty() || sequence < retained_.front().sequence || sequence > retained_.back().sequence)
    return std::nullopt;
  return retained_[sequence - retained_.front().sequence].committed_at_ms;
}

std::optional<Sequence> StreamState::next_in_lane(LaneId lane_id, Sequence from) const {
  auto lane = lane_sequences_.find(lane_id.value);
  if (lane == lane_sequences_.end()) return std::nullopt;
  auto it = std::lower_bound(lane->second.begin(), lane->second.end(), from.value);
  if (it == lane->second.end()) return std::nullopt;
  return Sequence{*it};
}

std::uint64_t StreamState::count_in_lane(LaneId lane_id, Sequence from) const {
  auto lane = lane_sequences_.find(lane_id.value);
  if (lane == lane_sequences_.end()) return 0;
  return static_cast<std::uint64_t>(lane->second.end() -
                                    std::lower_bound(lane->second.begin(), lane->second.end(), from.value));
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
  std::uint64_t last;
  if (!covering) {
    if (receipts_.empty()) return Err{ErrorCode::kCheckpointNotFound};
    last = receipts_.rbegin()->first;
  } else {
    if (covering->value < floor_) return Err{ErrorCode::kSequenceNotRetained};
    auto it = receipts_.lower_bound(covering->value);
    if (it == receipts_.end() || it->second.first_sequence > covering->value) return Err{ErrorCode::kCheckpointNotFound};
    last = it->first;
  }
  auto receipt = layout_.receipt(store, Sequence{last});
  if (!receipt) return Err{receipt.error() == StoreError::kCorrupt ? ErrorCode::kInternal : ErrorCode::kUnavailable};
  if (!*receipt) return Err{ErrorCode::kUnavailable};
  return **receipt;
}

bool StreamState::advance_floor(const Params& params, std::uint64_t now_ms, WriteBatch& w) {
  StreamSettingsV2 s = effective_settings(params);
  std::uint64_t old_floor = floor_;
  while (!retained_.empty()) {
    const Retained& oldest = retained_.front();
    bool expired = now_ms >= oldest.committed_at_ms && now_ms - oldest.committed_at_ms >= s.retention_ms;
    if (!expired && retained_bytes_ <= s.retained_bytes_limit) break;
    retained_bytes_ -= oldest.bytes;
    floor_ = oldest.sequence + 1;
    if (auto lane = lane_sequences_.find(oldest.lane_id); lane != lane_sequences_.end()) {
      lane->second.pop_front();  // the oldest retained record is its lane's oldest too
      if (lane->second.empty()) lane_sequences_.erase(lane);
    }
    retained_.pop_front();
    // A receipt goes as soon as the floor passes the last record it attests.
    while (!receipts_.empty() && receipts_.begin()->first < floor_) {
      retained_bytes_ -= receipts_.begin()->second.bytes;
      layout_.drop_receipt(w, Sequence{receipts_.begin()->first});
      receipts_.erase(receipts_.begin());
    }
  }
  if (floor_ == old_floor) return false;
  layout_.drop_records(w, Sequence{old_floor}, Sequence{floor_});
  return true;
}

}  // namespace cowboy::cbqs::broker
