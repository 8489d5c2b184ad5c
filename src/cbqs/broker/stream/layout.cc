#include "cbqs/broker/stream/layout.h"

#include "cbqs/wire/codec.h"

namespace cowboy::cbqs::broker {

namespace {

using store::StoreError;
using store::WriteBatch;

constexpr std::uint8_t kMetaVersion = 1;
constexpr std::uint8_t kTailVersion = 2;  // 1 lacks appended_bytes (before the restart keys)
constexpr std::uint8_t kLeased = 1;
constexpr std::uint8_t kWaiting = 2;

void put_be64(std::string& out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
}
std::uint64_t get_be64(std::string_view s) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8 && i < s.size(); ++i) v = v << 8 | static_cast<std::uint8_t>(s[i]);
  return v;
}
std::string as_string(ByteView b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }
ByteView as_view(std::string_view s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }
// Every key "<prefix>/..." as a [begin, end) range: '0' follows '/'.
std::pair<std::string, std::string> children_of(std::string prefix) {
  std::string end = prefix;
  prefix.push_back('/');
  end.push_back('0');
  return {std::move(prefix), std::move(end)};
}
// The number that ends a key.
std::uint64_t last_number(std::string_view key) { return get_be64(key.substr(key.size() - 8)); }

template <typename T>
std::optional<T> decode_value(std::string_view v) {
  auto decoded = decode<T>(as_view(v));
  if (!decoded) return std::nullopt;
  return *decoded;
}

std::optional<Record> decode_record(std::uint64_t sequence, std::string_view v) {
  if (v.size() < 16) return std::nullopt;
  return Record{sequence, get_be64(v), get_be64(v.substr(8)), Bytes(v.begin() + 16, v.end())};
}

// A single value under `key`, decoded by `parse`; nullopt when absent.
template <typename T, typename Parse>
StreamLayout::Read<std::optional<T>> get_one(store::Store& store, const std::string& key, Parse parse) {
  auto value = store.get(key);
  if (!value) return Err{value.error()};
  if (!*value) return std::optional<T>{};
  std::optional<T> parsed = parse(std::string_view(**value));
  if (!parsed) return Err{StoreError::kCorrupt};
  return parsed;
}

// Visits [begin, end), decoding each value with `parse`; stops at the first that does not decode.
template <typename Parse, typename Visit>
StreamLayout::Read<Unit> scan_all(store::Store& store, const std::string& begin, const std::string& end, Parse parse,
                                  Visit visit) {
  bool corrupt = false;
  auto scanned = store.scan(begin, end, [&](std::string_view k, std::string_view v) {
    auto parsed = parse(last_number(k), v);
    if (!parsed) return !(corrupt = true);
    return visit(last_number(k), std::move(*parsed));
  });
  if (!scanned) return Err{scanned.error()};
  if (corrupt) return Err{StoreError::kCorrupt};
  return Unit{};
}

std::optional<ChainTail> parse_tail(std::string_view v) {
  codec::Reader r(as_view(v));
  const bool legacy = !v.empty() && static_cast<std::uint8_t>(v[0]) == kMetaVersion;
  r.version(legacy ? kMetaVersion : kTailVersion);
  ChainTail t{r.u64(), r.fixed<32>(), r.u64(), r.u64()};
  if (legacy) t.legacy = true;
  else t.appended_bytes = r.u64();
  r.finish();
  if (!r.ok()) return std::nullopt;
  return t;
}

// The counters and the retention marks: a version byte and two u64.
std::string encode_pair(std::uint64_t a, std::uint64_t b) {
  codec::Writer v;
  v.u8(kMetaVersion);
  v.u64(a);
  v.u64(b);
  return as_string(v.data());
}
std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_pair(std::string_view v) {
  codec::Reader r(as_view(v));
  r.version(kMetaVersion);
  std::pair<std::uint64_t, std::uint64_t> p{r.u64(), r.u64()};
  r.finish();
  if (!r.ok()) return std::nullopt;
  return p;
}

std::optional<IdCounters> parse_counters(std::string_view v) {
  auto p = parse_pair(v);
  if (!p) return std::nullopt;
  return IdCounters{p->first, p->second};
}

std::optional<RetentionMarks> parse_marks(std::string_view v) {
  auto p = parse_pair(v);
  if (!p || p->first == 0) return std::nullopt;  // every floor is at least 1
  return RetentionMarks{p->first, p->second};
}

std::optional<StoredLane> parse_lane(std::string_view v) {
  codec::Reader r(as_view(v));
  LaneRecordV2 record;
  get(r, record);
  StoredLane lane{record.status, std::nullopt};
  if (r.option_tag()) lane.room = r.fixed<32>();
  r.finish();
  if (!r.ok()) return std::nullopt;
  return lane;
}

// An ack list: its count is bounded by the value's size before anything is allocated.
std::optional<std::vector<std::uint64_t>> parse_acks(std::uint64_t, std::string_view v) {
  codec::Reader r(as_view(v));
  std::uint32_t n = r.u32();
  if (!r.ok() || n == 0 || n > (v.size() - 4) / 8) return std::nullopt;
  std::vector<std::uint64_t> out(n);
  for (auto& s : out) s = r.u64();
  r.finish();
  if (!r.ok()) return std::nullopt;
  return out;
}

std::optional<StoredCycle> parse_cycle(std::string_view v) {
  codec::Reader r(as_view(v));
  std::uint8_t state = r.u8();
  StoredCycle c{state == kLeased, r.u16(), r.u64(), r.u64()};
  r.finish();
  if (!r.ok() || (state != kLeased && state != kWaiting)) return std::nullopt;
  return c;
}

std::optional<DeadLetter> parse_dead(std::uint64_t sequence, std::string_view v) {
  codec::Reader r(as_view(v));
  DeadLetter d{sequence, r.u16(), static_cast<DeadReason>(r.u8()), r.u64(), r.u64()};
  r.finish();
  if (!r.ok()) return std::nullopt;
  return d;
}

}  // namespace

std::string_view to_string(DeadReason reason) {
  switch (reason) {
    case DeadReason::kAttempts: return "max_attempts";
    case DeadReason::kRejected: return "rejected";
    case DeadReason::kDeadline: return "record_deadline";
  }
  return "unknown";
}

// ---- keys ----------------------------------------------------------------------

std::string StreamLayout::key(char kind) const {
  std::string k = "s/";
  k.append(reinterpret_cast<const char*>(stream_id_.data()), stream_id_.size());
  k.push_back('/');
  k.push_back(kind);
  return k;
}

std::string StreamLayout::key(char kind, std::uint64_t a) const {
  std::string k = key(kind);
  k.push_back('/');
  put_be64(k, a);
  return k;
}

std::string StreamLayout::key(char kind, std::uint64_t a, std::uint64_t b) const {
  std::string k = key(kind, a);
  k.push_back('/');
  put_be64(k, b);
  return k;
}

std::pair<std::string, std::string> StreamLayout::range(char kind, std::uint64_t a) const {
  return children_of(key(kind, a));
}

std::pair<std::string, std::string> StreamLayout::range(char kind) const { return children_of(key(kind)); }

// ---- writes --------------------------------------------------------------------

void StreamLayout::put_tail(WriteBatch& w, const ChainTail& t) const {
  codec::Writer v;
  v.u8(kTailVersion);
  v.u64(t.next_sequence);
  v.fixed(t.last_checkpoint_id);
  v.u64(t.last_committed_at_ms);
  v.u64(t.last_snapshot_height);
  v.u64(t.appended_bytes);
  w.put(key('m'), as_string(v.data()));
}

void StreamLayout::put_marks(WriteBatch& w, const RetentionMarks& m) const {
  w.put(key('d'), encode_pair(m.floor, m.dropped_bytes));
}

void StreamLayout::put_run(WriteBatch& w, LaneId lane, const LaneRun& run) const {
  std::string v;
  put_be64(v, run.first);
  w.put(key('i', lane.value, run.last), std::move(v));
}

void StreamLayout::drop_run(WriteBatch& w, LaneId lane, Sequence last) const {
  w.del(key('i', lane.value, last.value));
}

void StreamLayout::put_counters(WriteBatch& w, const IdCounters& c) const {
  w.put(key('n'), encode_pair(c.next_lane_id, c.next_group_id));
}

void StreamLayout::put_lane(WriteBatch& w, LaneId lane, const StoredLane& stored) const {
  codec::Writer v;
  put(v, LaneRecordV2{stream_id_, lane, stored.status});
  v.option(stored.room, [&](const Bytes32& c) { v.fixed(c); });
  w.put(key('l', lane.value), as_string(v.data()));
}

void StreamLayout::put_record(WriteBatch& w, const Record& r) const {
  std::string v;
  v.reserve(16 + r.payload.size());
  put_be64(v, r.lane_id);
  put_be64(v, r.committed_at_ms);
  v.append(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
  w.put(key('r', r.sequence), std::move(v));
}

void StreamLayout::drop_records(WriteBatch& w, Sequence from, Sequence to) const {
  w.delete_range(key('r', from.value), key('r', to.value));
}

void StreamLayout::put_receipt(WriteBatch& w, Sequence last, ByteView encoded) const {
  w.put(key('c', last.value), as_string(encoded));
}

void StreamLayout::drop_receipt(WriteBatch& w, Sequence last) const { w.del(key('c', last.value)); }

void StreamLayout::put_settings(WriteBatch& w, const StreamSettingsV2& s) const { w.put(key('t'), as_string(encode(s))); }

void StreamLayout::put_group(WriteBatch& w, const GroupConfigV2& config) const {
  w.put(key('g', config.group_id.value), as_string(encode(config)));
}

void StreamLayout::put_frontier(WriteBatch& w, GroupId group, const StoredFrontier& f) const {
  std::string v;
  put_be64(v, f.frontier);
  put_be64(v, f.resolved);
  w.put(key('f', group.value), std::move(v));
}

void StreamLayout::drop_group(WriteBatch& w, GroupId group) const {
  w.del(key('g', group.value));
  drop_group_state(w, group);
}

void StreamLayout::drop_group_state(WriteBatch& w, GroupId group) const {
  w.del(key('f', group.value));
  for (char kind : {'y', 'x', 'k'}) {
    auto [begin, end] = range(kind, group.value);
    w.delete_range(std::move(begin), std::move(end));
  }
}

void StreamLayout::put_cycle(WriteBatch& w, GroupId group, Sequence sequence, const StoredCycle& c) const {
  codec::Writer v;
  v.u8(c.leased ? kLeased : kWaiting);
  v.u16(c.attempts);
  v.u64(c.leased ? 0 : c.visible_at_ms);
  v.u64(c.committed_at_ms);
  w.put(key('y', group.value, sequence.value), as_string(v.data()));
}

void StreamLayout::drop_cycle(WriteBatch& w, GroupId group, Sequence sequence) const {
  w.del(key('y', group.value, sequence.value));
}

void StreamLayout::put_dead_letter(WriteBatch& w, GroupId group, const DeadLetter& d) const {
  codec::Writer v;
  v.u16(d.attempts);
  v.u8(static_cast<std::uint8_t>(d.reason));
  v.u64(d.expired_at_ms);
  v.u64(d.committed_at_ms);
  w.put(key('x', group.value, d.sequence), as_string(v.data()));
}

void StreamLayout::drop_dead_letter(WriteBatch& w, GroupId group, Sequence sequence) const {
  w.del(key('x', group.value, sequence.value));
}

void StreamLayout::put_acks(WriteBatch& w, GroupId group, const std::vector<std::uint64_t>& sequences) const {
  codec::Writer v;
  v.u32(static_cast<std::uint32_t>(sequences.size()));
  std::uint64_t highest = 0;
  for (std::uint64_t s : sequences) {
    v.u64(s);
    highest = std::max(highest, s);
  }
  w.put(key('k', group.value, highest), as_string(v.data()));
}

void StreamLayout::drop_acks(WriteBatch& w, GroupId group, Sequence highest) const {
  w.del(key('k', group.value, highest.value));
}

void StreamLayout::drop_group_below(WriteBatch& w, GroupId group, Sequence from, Sequence floor) const {
  for (char kind : {'y', 'x', 'k'})
    w.delete_range(key(kind, group.value, from.value), key(kind, group.value, floor.value));
}

// ---- reads ---------------------------------------------------------------------

StreamLayout::Read<std::optional<ChainTail>> StreamLayout::tail(store::Store& store) const {
  return get_one<ChainTail>(store, key('m'), parse_tail);
}

StreamLayout::Read<std::optional<IdCounters>> StreamLayout::counters(store::Store& store) const {
  return get_one<IdCounters>(store, key('n'), parse_counters);
}

StreamLayout::Read<std::optional<RetentionMarks>> StreamLayout::marks(store::Store& store) const {
  return get_one<RetentionMarks>(store, key('d'), parse_marks);
}

StreamLayout::Read<std::optional<StreamSettingsV2>> StreamLayout::settings(store::Store& store) const {
  return get_one<StreamSettingsV2>(store, key('t'), decode_value<StreamSettingsV2>);
}

StreamLayout::Read<std::optional<StoredFrontier>> StreamLayout::frontier(store::Store& store, GroupId group) const {
  return get_one<StoredFrontier>(store, key('f', group.value), [](std::string_view v) -> std::optional<StoredFrontier> {
    if (v.size() == 8) return StoredFrontier{get_be64(v), get_be64(v)};  // before ack lists: all resolved
    if (v.size() != 16 || get_be64(v.substr(8)) > get_be64(v)) return std::nullopt;
    return StoredFrontier{get_be64(v), get_be64(v.substr(8))};
  });
}

StreamLayout::Read<std::optional<Record>> StreamLayout::record(store::Store& store, Sequence sequence) const {
  return get_one<Record>(store, key('r', sequence.value),
                         [&](std::string_view v) { return decode_record(sequence.value, v); });
}

StreamLayout::Read<std::optional<CheckpointReceiptV2>> StreamLayout::receipt(store::Store& store, Sequence last) const {
  return get_one<CheckpointReceiptV2>(store, key('c', last.value), decode_value<CheckpointReceiptV2>);
}

StreamLayout::Read<Unit> StreamLayout::lanes(store::Store& store,
                                             const std::function<void(std::uint64_t, const StoredLane&)>& visit) const {
  auto [begin, end] = range('l');
  return scan_all(store, begin, end, [](std::uint64_t, std::string_view v) { return parse_lane(v); },
                  [&](std::uint64_t id, const StoredLane& lane) {
                    visit(id, lane);
                    return true;
                  });
}

StreamLayout::Read<Unit> StreamLayout::records(store::Store& store, Sequence from, Sequence to,
                                               const std::function<bool(Record)>& visit) const {
  return scan_all(store, key('r', from.value), key('r', to.value), decode_record,
                  [&](std::uint64_t, Record r) { return visit(std::move(r)); });
}

StreamLayout::Read<Unit> StreamLayout::receipts(
    store::Store& store, Sequence from, Sequence to,
    const std::function<bool(const CheckpointReceiptV2&, std::size_t)>& visit) const {
  return scan_all(
      store, key('c', from.value), key('c', to.value),
      [](std::uint64_t, std::string_view v) -> std::optional<std::pair<CheckpointReceiptV2, std::size_t>> {
        auto receipt = decode_value<CheckpointReceiptV2>(v);
        if (!receipt) return std::nullopt;
        return std::pair{*receipt, v.size()};
      },
      [&](std::uint64_t, const std::pair<CheckpointReceiptV2, std::size_t>& r) { return visit(r.first, r.second); });
}

StreamLayout::Read<Unit> StreamLayout::runs(store::Store& store, LaneId lane, Sequence from, Sequence to,
                                            const std::function<bool(const LaneRun&)>& visit) const {
  return scan_all(
      store, key('i', lane.value, from.value), key('i', lane.value, to.value),
      [](std::uint64_t last, std::string_view v) -> std::optional<LaneRun> {
        if (v.size() != 8 || get_be64(v) == 0 || get_be64(v) > last) return std::nullopt;
        return LaneRun{get_be64(v), last};
      },
      [&](std::uint64_t, const LaneRun& run) { return visit(run); });
}

StreamLayout::Read<Unit> StreamLayout::groups(store::Store& store,
                                              const std::function<void(const GroupConfigV2&)>& visit) const {
  auto [begin, end] = range('g');
  return scan_all(
      store, begin, end,
      [](std::uint64_t id, std::string_view v) -> std::optional<GroupConfigV2> {
        auto config = decode_value<GroupConfigV2>(v);
        if (!config || config->group_id != GroupId{id}) return std::nullopt;
        return config;
      },
      [&](std::uint64_t, const GroupConfigV2& config) {
        visit(config);
        return true;
      });
}

StreamLayout::Read<Unit> StreamLayout::cycles(store::Store& store, GroupId group,
                                              const std::function<void(std::uint64_t, const StoredCycle&)>& visit) const {
  auto [begin, end] = range('y', group.value);
  return scan_all(store, begin, end, [](std::uint64_t, std::string_view v) { return parse_cycle(v); },
                  [&](std::uint64_t seq, const StoredCycle& c) {
                    visit(seq, c);
                    return true;
                  });
}

StreamLayout::Read<Unit> StreamLayout::dead_letters(store::Store& store, GroupId group,
                                                    const std::function<void(const DeadLetter&)>& visit) const {
  auto [begin, end] = range('x', group.value);
  return scan_all(store, begin, end, parse_dead, [&](std::uint64_t, const DeadLetter& d) {
    visit(d);
    return true;
  });
}

StreamLayout::Read<Unit> StreamLayout::acks(
    store::Store& store, GroupId group,
    const std::function<void(std::uint64_t, const std::vector<std::uint64_t>&)>& visit) const {
  auto [begin, end] = range('k', group.value);
  return scan_all(store, begin, end, parse_acks, [&](std::uint64_t highest, const std::vector<std::uint64_t>& list) {
    visit(highest, list);
    return true;
  });
}

}  // namespace cowboy::cbqs::broker
