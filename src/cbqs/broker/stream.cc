#include "cbqs/broker/stream.h"

#include "cbqs/broker/auth.h"
#include "cbqs/broker/store_bytes.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"

namespace cowboy::cbqs::broker {

namespace {

using store::StoreError;
using store::Sync;
using store::WriteBatch;

constexpr std::uint8_t kMetaVersion = 1;

std::string encode_record(const Record& r) {
  std::string out;
  out.reserve(16 + r.payload.size());
  put_be64(out, r.lane_id);
  put_be64(out, r.committed_at_ms);
  out.append(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
  return out;
}

std::optional<Record> decode_record(std::uint64_t sequence, std::string_view value) {
  if (value.size() < 16) return std::nullopt;
  Record r;
  r.sequence = sequence;
  r.lane_id = get_be64(value);
  r.committed_at_ms = get_be64(value.substr(8));
  r.payload.assign(value.begin() + 16, value.end());
  return r;
}

bool settings_valid(const StreamSettingsV2& s, const Params& p) {
  return s.retention_ms > 0 && s.retention_ms <= p.retention_ms && s.retained_bytes_limit > 0 &&
         s.retained_bytes_limit <= p.max_retained_bytes_per_stream && s.max_message_bytes > 0 &&
         s.max_message_bytes <= p.max_message_bytes && s.max_append_bytes_per_sec > 0 &&
         s.max_append_bytes_per_sec <= p.max_append_bytes_per_sec && s.max_delivered_bytes_per_sec > 0 &&
         s.max_delivered_bytes_per_sec <= p.max_delivered_bytes_per_sec;
}

}  // namespace

std::string stream_key(const Bytes32& stream_id, char kind) {
  std::string k = "s/";
  k.append(reinterpret_cast<const char*>(stream_id.data()), stream_id.size());
  k.push_back('/');
  k.push_back(kind);
  return k;
}

std::string stream_key(const Bytes32& stream_id, char kind, std::uint64_t a) {
  std::string k = stream_key(stream_id, kind);
  k.push_back('/');
  put_be64(k, a);
  return k;
}

std::string stream_key(const Bytes32& stream_id, char kind, std::uint64_t a, std::uint64_t b) {
  std::string k = stream_key(stream_id, kind, a);
  k.push_back('/');
  put_be64(k, b);
  return k;
}

std::pair<std::string, std::string> stream_key_range(const Bytes32& stream_id, char kind, std::uint64_t a) {
  std::string prefix = stream_key(stream_id, kind, a);
  return {prefix + "/", prefix + "0"};  // '0' follows '/'
}

std::string StreamState::key(char kind) const { return stream_key(stream_id_, kind); }
std::string StreamState::key(char kind, std::uint64_t n) const { return stream_key(stream_id_, kind, n); }

// 'n' = version u8 || next_lane_id u64 || next_group_id u64
std::string StreamState::encode_counters() const {
  codec::Writer w;
  w.u8(kMetaVersion);
  w.u64(next_lane_id_);
  w.u64(next_group_id_);
  return as_string(w.data());
}

namespace {
// 'm' = version u8 || next_sequence u64 || last_checkpoint_id [32] || last_committed_at_ms u64 ||
//       last_snapshot_height u64
std::string encode_tail(std::uint64_t next_sequence, const Bytes32& last_checkpoint_id, std::uint64_t committed_at,
                        std::uint64_t snapshot_height) {
  codec::Writer w;
  w.u8(kMetaVersion);
  w.u64(next_sequence);
  w.fixed(last_checkpoint_id);
  w.u64(committed_at);
  w.u64(snapshot_height);
  return as_string(w.data());
}
}  // namespace

Result<StreamState, StoreError> StreamState::load(store::Store& store, const Bytes32& stream_id) {
  StreamState s(stream_id);
  auto tail = store.get(s.key('m'));
  auto counters = store.get(s.key('n'));
  if (!tail) return Err{tail.error()};
  if (!counters) return Err{counters.error()};
  if (*tail) {
    codec::Reader r(as_view(**tail));
    r.version(kMetaVersion);
    s.next_sequence_durable_ = r.u64();
    s.last_checkpoint_id_ = r.fixed<32>();
    s.last_committed_at_ms_ = r.u64();
    s.last_snapshot_height_ = r.u64();
    r.finish();
    if (!r.ok()) return Err{StoreError::kIo};
  }
  if (*counters) {
    codec::Reader r(as_view(**counters));
    r.version(kMetaVersion);
    s.next_lane_id_ = r.u64();
    s.next_group_id_ = r.u64();
    r.finish();
    if (!r.ok()) return Err{StoreError::kIo};
  }
  s.next_sequence_staged_ = s.next_sequence_durable_;

  bool corrupt = false;
  auto scan = [&](char kind, const std::function<bool(std::uint64_t, std::string_view)>& visit) {
    std::string begin = s.key(kind) + "/", end = s.key(kind) + "0";  // '0' follows '/'
    return store.scan(begin, end, [&](std::string_view k, std::string_view v) {
      return visit(get_be64(k.substr(begin.size())), v);
    });
  };
  auto lanes = scan('l', [&](std::uint64_t id, std::string_view v) {
    codec::Reader r(as_view(v));
    LaneRecordV2 record;
    get(r, record);
    Lane lane{record.status, std::nullopt};
    if (r.option_tag()) lane.room = r.fixed<32>();
    r.finish();
    if (!r.ok()) return !(corrupt = true);
    s.lanes_[id] = lane;
    return true;
  });
  auto records = scan('r', [&](std::uint64_t seq, std::string_view v) {
    auto rec = decode_record(seq, v);
    if (!rec) return !(corrupt = true);
    s.retain(seq, rec->lane_id, rec->committed_at_ms, retained_record_bytes(rec->payload.size()));
    return true;
  });
  auto receipts = scan('c', [&](std::uint64_t last, std::string_view v) {
    auto receipt = decode<CheckpointReceiptV2>(as_view(v));
    if (!receipt) return !(corrupt = true);
    s.receipts_[last] = {receipt->first_sequence, v.size()};
    s.retained_bytes_ += v.size();
    return true;
  });
  if (!lanes || !records || !receipts || corrupt) return Err{StoreError::kIo};
  // The floor is derived from what is stored: retained records are contiguous up to the head.
  s.floor_ = s.retained_.empty() ? s.next_sequence_durable_ : s.retained_.front().sequence;
  auto groups = scan('g', [&](std::uint64_t id, std::string_view v) {
    auto config = decode<GroupConfigV2>(as_view(v));
    if (!config || config->group_id != id) return !(corrupt = true);
    s.groups_[id] = *config;
    return true;
  });
  if (!groups || corrupt) return Err{StoreError::kIo};
  auto settings = store.get(s.key('t'));
  if (!settings) return Err{settings.error()};
  if (*settings) {
    auto decoded = decode<StreamSettingsV2>(as_view(**settings));
    if (!decoded) return Err{StoreError::kIo};
    s.settings_ = *decoded;
  }
  return s;
}

// ---- lanes -------------------------------------------------------------------

Result<Unit, ErrorCode> StreamState::write_lane(store::Store& store, std::uint64_t lane_id, const Lane& lane,
                                                std::uint64_t next_lane_id) {
  codec::Writer w;
  put(w, LaneRecordV2{stream_id_, lane_id, lane.status});
  w.option(lane.room, [&](const Bytes32& c) { w.fixed(c); });
  auto saved_next = next_lane_id_;
  next_lane_id_ = next_lane_id;
  WriteBatch batch;
  batch.put(key('l', lane_id), as_string(w.data()));
  batch.put(key('n'), encode_counters());
  if (!store.write(batch, Sync::kYes)) {
    next_lane_id_ = saved_next;
    failed_ = true;
    return Err{ErrorCode::kUnavailable};
  }
  lanes_[lane_id] = lane;
  return Unit{};
}

Result<std::uint64_t, ErrorCode> StreamState::create_lane(store::Store& store, const std::optional<RoomLaneV2>& room,
                                                          const Params& params) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  if (room) {
    Bytes32 commitment = room_lane_commitment(*room);
    std::uint64_t id = room_lane_id(*room);
    if (auto it = lanes_.find(id); it != lanes_.end()) {
      if (it->second.room != commitment) return Err{ErrorCode::kLaneIdConflict};
      if (it->second.status == LaneStatusV2::kClosed) return Err{ErrorCode::kLaneClosed};
      return id;  // the same room, Active: idempotent
    }
    if (lanes_.size() >= params.max_lanes_per_stream) return Err{ErrorCode::kLaneLimit};
    if (id == 0) return Err{ErrorCode::kLaneIdConflict};
    if (auto ok = write_lane(store, id, Lane{LaneStatusV2::kActive, commitment}, next_lane_id_); !ok)
      return Err{ok.error()};
    return id;
  }
  if (lanes_.size() >= params.max_lanes_per_stream) return Err{ErrorCode::kLaneLimit};
  std::uint64_t id = next_lane_id_;
  while (lanes_.contains(id)) ++id;  // skip ids held by room lanes
  if (auto ok = write_lane(store, id, Lane{}, id + 1); !ok) return Err{ok.error()};
  return id;
}

Result<Unit, ErrorCode> StreamState::close_lane(store::Store& store, std::uint64_t lane_id) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  auto it = lanes_.find(lane_id);
  if (it == lanes_.end()) return Err{ErrorCode::kUnknownLane};
  if (it->second.status == LaneStatusV2::kClosed) return Err{ErrorCode::kLaneClosed};
  Lane closed = it->second;
  closed.status = LaneStatusV2::kClosed;
  return write_lane(store, lane_id, closed, next_lane_id_);
}

resp::Lanes StreamState::list_lanes(std::optional<std::uint64_t> after, std::uint32_t limit,
                                    const LaneScope& scope) const {
  resp::Lanes out;
  auto it = after ? lanes_.upper_bound(*after) : lanes_.begin();
  for (; it != lanes_.end(); ++it) {
    if (!lane_in_scope(scope, it->first)) continue;
    if (out.lanes.size() == limit) {  // one more in scope remains
      out.next_after_lane_id = out.lanes.back().lane_id;
      break;
    }
    out.lanes.push_back(LaneRecordV2{stream_id_, it->first, it->second.status});
  }
  return out;
}

std::optional<LaneStatusV2> StreamState::lane_status(std::uint64_t lane_id) const {
  auto it = lanes_.find(lane_id);
  if (it == lanes_.end()) return std::nullopt;
  return it->second.status;
}

// ---- consumer groups ---------------------------------------------------------------

std::optional<ErrorCode> StreamState::check_group_fields(const GroupConfigV2& c, const Params& p) const {
  // Every numeric field > 0 and within its ceiling (§15 Ceiling class); the
  // pairs ordered; a deadline no longer than the stream's retention.
  bool ok = c.visibility_timeout_ms > 0 && c.max_visibility_ms > 0 && c.max_in_flight > 0 &&
            c.max_in_flight_per_holder > 0 && c.max_attempts > 0 && c.record_deadline_ms > 0 &&
            c.visibility_timeout_ms <= c.max_visibility_ms && c.max_visibility_ms <= p.visibility_ms &&
            c.max_in_flight_per_holder <= c.max_in_flight && c.max_in_flight <= p.max_in_flight_per_group &&
            c.max_attempts <= p.max_attempts && c.record_deadline_ms <= effective_settings(p).retention_ms;
  if (!ok) return ErrorCode::kInvalidGroupConfig;
  return std::nullopt;
}

Result<std::uint64_t, ErrorCode> StreamState::create_group(store::Store& store, const GroupConfigV2& config,
                                                           const Params& params) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  if (config.group_id != 0) return Err{ErrorCode::kInvalidRequest};
  if (auto e = check_group_fields(config, params)) return Err{*e};
  auto lane = lane_status(config.lane_id);
  if (!lane) return Err{ErrorCode::kUnknownLane};
  if (*lane == LaneStatusV2::kClosed) return Err{ErrorCode::kLaneClosed};
  if (groups_.size() >= params.max_groups_per_stream) return Err{ErrorCode::kGroupLimit};
  GroupConfigV2 stored = config;
  stored.group_id = next_group_id_;
  next_group_id_ += 1;
  std::uint64_t frontier = next_sequence_staged_;  // Head: what is appended from now on
  if (const auto* at = std::get_if<StartAt>(&stored.start)) frontier = std::max({at->sequence, floor_, std::uint64_t{1}});
  WriteBatch batch;
  batch.put(key('g', stored.group_id), as_string(encode(stored)));
  batch.put(key('f', stored.group_id), be64_string(frontier));
  batch.put(key('n'), encode_counters());
  if (!store.write(batch, Sync::kYes)) {
    next_group_id_ -= 1;
    failed_ = true;
    return Err{ErrorCode::kUnavailable};
  }
  groups_[stored.group_id] = stored;
  return stored.group_id;
}

Result<GroupConfigV2, ErrorCode> StreamState::update_group(store::Store& store, const GroupConfigV2& config,
                                                           const Params& params) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  if (auto e = check_group_fields(config, params)) return Err{*e};
  auto it = groups_.find(config.group_id);
  if (it == groups_.end()) return Err{ErrorCode::kUnknownGroup};
  if (config.lane_id != it->second.lane_id || config.start != it->second.start) return Err{ErrorCode::kImmutableField};
  WriteBatch batch;
  batch.put(key('g', config.group_id), as_string(encode(config)));
  if (!store.write(batch, Sync::kYes)) {
    failed_ = true;
    return Err{ErrorCode::kUnavailable};
  }
  it->second = config;
  return config;
}

Result<Unit, ErrorCode> StreamState::delete_group(store::Store& store, std::uint64_t group_id) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  if (!groups_.contains(group_id)) return Err{ErrorCode::kUnknownGroup};
  WriteBatch batch;
  batch.del(key('g', group_id));
  batch.del(key('f', group_id));
  for (char kind : {'y', 'x'}) {
    auto [begin, end] = stream_key_range(stream_id_, kind, group_id);
    batch.delete_range(std::move(begin), std::move(end));
  }
  if (!store.write(batch, Sync::kYes)) {
    failed_ = true;
    return Err{ErrorCode::kUnavailable};
  }
  groups_.erase(group_id);
  return Unit{};
}

const GroupConfigV2* StreamState::group(std::uint64_t group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : &it->second;
}

// ---- settings ------------------------------------------------------------------

StreamSettingsV2 StreamState::effective_settings(const Params& p) const {
  if (settings_) return *settings_;
  return StreamSettingsV2{p.retention_ms, p.max_retained_bytes_per_stream, static_cast<std::uint32_t>(p.max_message_bytes),
                          p.max_append_bytes_per_sec, p.max_delivered_bytes_per_sec};
}

Result<StreamSettingsV2, ErrorCode> StreamState::update_settings(store::Store& store, const StreamSettingsV2& s,
                                                                 const Params& params) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  if (!settings_valid(s, params)) return Err{ErrorCode::kInvalidSettings};
  WriteBatch batch;
  batch.put(key('t'), as_string(encode(s)));
  if (!store.write(batch, Sync::kYes)) {
    failed_ = true;
    return Err{ErrorCode::kUnavailable};
  }
  settings_ = s;
  return s;
}

// ---- appends and checkpoints ------------------------------------------------------

Result<std::uint64_t, ErrorCode> StreamState::stage_append(std::uint64_t lane_id, Bytes payload) {
  if (failed_) return Err{ErrorCode::kUnavailable};
  auto status = lane_status(lane_id);
  if (!status) return Err{ErrorCode::kUnknownLane};
  if (*status == LaneStatusV2::kClosed) return Err{ErrorCode::kLaneClosed};
  std::uint64_t seq = next_sequence_staged_++;
  open_.push_back(Record{seq, lane_id, 0, std::move(payload)});
  return seq;
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
  std::uint64_t committed_at = std::max(last_committed_at_ms_, now_ms);
  for (auto& r : batch.records) r.committed_at_ms = committed_at;
  CheckpointReceiptV2& c = batch.receipt;
  c.chain_instance_id = view.chain_instance_id;
  c.stream_id = stream_id_;
  c.provider = provider.address;
  c.first_sequence = batch.records.front().sequence;
  c.last_sequence = batch.records.back().sequence;
  c.previous_checkpoint = last_checkpoint_id_;
  c.committed_at_ms = committed_at;
  c.snapshot_height = std::max(last_snapshot_height_, view.height);
  return batch;
}

void PreparedBatch::seal(const ProviderIdentity& provider) {
  const Bytes32& sid = receipt.stream_id;
  for (const auto& r : records) write.put(stream_key(sid, 'r', r.sequence), encode_record(r));
  std::vector<RecordView> views;
  views.reserve(records.size());
  for (const auto& r : records) views.push_back({RecordHeaderV2{sid, r.lane_id}, r.payload});
  receipt.records_digest = records_digest(record_digests(views));
  sign_checkpoint(receipt, provider.signing_seed);
  const Bytes encoded = encode(receipt);
  receipt_bytes = encoded.size();
  checkpoint_id = cbqs::checkpoint_id(receipt);
  write.put(stream_key(sid, 'c', receipt.last_sequence), as_string(encoded));
  // The high-water marks as they stand once this batch is durable.
  write.put(stream_key(sid, 'm'),
            encode_tail(receipt.last_sequence + 1, checkpoint_id, receipt.committed_at_ms, receipt.snapshot_height));
}

void StreamState::batch_durable(const PreparedBatch& batch) {
  batch_in_flight_ = false;
  if (batch.empty()) return;
  const auto& c = batch.receipt;
  next_sequence_durable_ = c.last_sequence + 1;
  last_checkpoint_id_ = batch.checkpoint_id;
  last_committed_at_ms_ = c.committed_at_ms;
  last_snapshot_height_ = c.snapshot_height;
  for (const auto& r : batch.records) {
    retain(r.sequence, r.lane_id, r.committed_at_ms, retained_record_bytes(r.payload.size()));
    lane_heads_[r.lane_id] = r.sequence;
  }
  receipts_[c.last_sequence] = {c.first_sequence, batch.receipt_bytes};
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

std::optional<std::uint64_t> StreamState::next_in_lane(std::uint64_t lane_id, std::uint64_t from) const {
  auto lane = lane_sequences_.find(lane_id);
  if (lane == lane_sequences_.end()) return std::nullopt;
  auto it = std::lower_bound(lane->second.begin(), lane->second.end(), from);
  if (it == lane->second.end()) return std::nullopt;
  return *it;
}

std::uint64_t StreamState::count_in_lane(std::uint64_t lane_id, std::uint64_t from) const {
  auto lane = lane_sequences_.find(lane_id);
  if (lane == lane_sequences_.end()) return 0;
  return static_cast<std::uint64_t>(lane->second.end() -
                                    std::lower_bound(lane->second.begin(), lane->second.end(), from));
}

Result<std::optional<Record>, StoreError> StreamState::read(store::Store& store, std::uint64_t sequence) const {
  if (sequence < floor_ || sequence > durable_head()) return std::optional<Record>{};
  auto value = store.get(key('r', sequence));
  if (!value) return Err{value.error()};
  if (!*value) return std::optional<Record>{};
  return decode_record(sequence, **value);
}

Result<std::vector<Record>, StoreError> StreamState::read_range(store::Store& store, std::uint64_t from,
                                                                std::size_t max_records, std::size_t max_bytes) const {
  std::vector<Record> out;
  if (from < floor_ || from > durable_head() || max_records == 0) return out;
  std::uint64_t end = from + std::min<std::uint64_t>(max_records, durable_head() - from + 1);
  std::size_t bytes = 0;
  bool corrupt = false;
  auto scanned = store.scan(key('r', from), key('r', end), [&](std::string_view k, std::string_view v) {
    auto r = decode_record(get_be64(k.substr(k.size() - 8)), v);
    if (!r || r->sequence != from + out.size()) return !(corrupt = true);  // retained records are gapless
    bytes += r->payload.size();
    out.push_back(std::move(*r));
    return bytes < max_bytes;
  });
  if (!scanned) return Err{scanned.error()};
  if (corrupt) return Err{StoreError::kIo};
  return out;
}

Result<CheckpointReceiptV2, ErrorCode> StreamState::checkpoint(store::Store& store,
                                                                std::optional<std::uint64_t> covering) const {
  std::uint64_t last;
  if (!covering) {
    if (receipts_.empty()) return Err{ErrorCode::kCheckpointNotFound};
    last = receipts_.rbegin()->first;
  } else {
    if (*covering < floor_) return Err{ErrorCode::kSequenceNotRetained};
    auto it = receipts_.lower_bound(*covering);
    if (it == receipts_.end() || it->second.first_sequence > *covering) return Err{ErrorCode::kCheckpointNotFound};
    last = it->first;
  }
  auto value = store.get(key('c', last));
  if (!value || !*value) return Err{ErrorCode::kUnavailable};
  auto receipt = decode<CheckpointReceiptV2>(as_view(**value));
  if (!receipt) return Err{ErrorCode::kInternal};
  return *receipt;
}

store::WriteBatch StreamState::advance_floor(const Params& params, std::uint64_t now_ms) {
  WriteBatch batch;
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
      batch.del(key('c', receipts_.begin()->first));
      receipts_.erase(receipts_.begin());
    }
  }
  if (floor_ == old_floor) return WriteBatch{};
  batch.delete_range(key('r', old_floor), key('r', floor_));
  return batch;
}

}  // namespace cowboy::cbqs::broker
