// One stream's durable state: lanes, batches and the checkpoint chain,
// crash and sync-failure behaviour, retention and settings.
#include "cbqs/broker/stream/state.h"

#include <gtest/gtest.h>

#include "cbqs/store/memory_store.h"
#include "durably.h"
#include "restart_keys.h"
#include "group_config.h"
#include "cbqs/wire/ids.h"

namespace cowboy::cbqs::broker {
namespace {

using store::MemoryStore;
using store::Sync;

class StreamTest : public ::testing::Test {
 protected:
  MemoryStore store;
  ChainView view;
  ProviderIdentity provider;
  Bytes32 sid{};
  std::uint64_t now = 1'000'000;

  void SetUp() override {
    sid[0] = 0x5e;
    view.height = 100;
    view.chain_instance_id[0] = 0xc1;
    provider.address[0] = 0xb0;
    provider.signing_seed[0] = 0x11;
    view.provider.chain_instance_id = view.chain_instance_id;
    view.provider.provider = provider.address;
    view.provider.signing_key = ed25519_public_key(provider.signing_seed);
  }

  StreamState load() { return std::move(*StreamState::load(store, sid)); }
  testing::Durably durably(StreamState& s) { return {s, store}; }

  /// The owner's job: close the open batch, write it synced, publish it.
  bool commit(StreamState& s) {
    PreparedBatch b = s.close_batch(view, provider, now);
    if (b.empty()) return true;
    b.seal(provider);
    if (!store.write(b.write, Sync::kYes)) {
      s.mark_failed();
      return false;
    }
    s.batch_durable(b);
    return true;
  }

  std::uint64_t append(StreamState& s, LaneId lane, std::string_view text) {
    return s.stage_append(lane, Bytes(text.begin(), text.end()))->value;
  }
};

TEST_F(StreamTest, PlainLaneIdsAreAssignedFromOneAndNeverReissued) {
  auto s = load();
  EXPECT_EQ(*durably(s).create_lane(std::nullopt, view.params), LaneId{1});
  EXPECT_EQ(*durably(s).create_lane(std::nullopt, view.params), LaneId{2});
  ASSERT_TRUE(durably(s).close_lane(LaneId{2}).ok());
  auto reloaded = load();  // across a restart too
  EXPECT_EQ(*durably(reloaded).create_lane(std::nullopt, view.params), LaneId{3});
  EXPECT_EQ(reloaded.lane_status(LaneId{2}), LaneStatusV2::kClosed);
  EXPECT_EQ(durably(reloaded).close_lane(LaneId{2}).error(), ErrorCode::kLaneClosed);
  EXPECT_EQ(durably(reloaded).close_lane(LaneId{99}).error(), ErrorCode::kUnknownLane);
}

TEST_F(StreamTest, RoomLanesAreDerivedIdempotentAndNeverReopened) {
  auto s = load();
  RoomLaneV2 room = RoomMessages{Bytes32{7}};
  auto id = durably(s).create_lane(room, view.params);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, room_lane_id(room));
  EXPECT_EQ(*durably(s).create_lane(room, view.params), *id);  // anyone may "create" it again
  RoomLaneV2 inbox = RoomInbox{Bytes32{7}, Bytes32{9}};
  EXPECT_NE(*durably(s).create_lane(inbox, view.params), *id);
  ASSERT_TRUE(durably(s).close_lane(*id).ok());
  EXPECT_EQ(durably(s).create_lane(room, view.params).error(), ErrorCode::kLaneClosed);
}

TEST_F(StreamTest, LaneLimitAndPaging) {
  view.params.max_lanes_per_stream = 3;
  auto s = load();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(durably(s).create_lane(std::nullopt, view.params).ok());
  EXPECT_EQ(durably(s).create_lane(std::nullopt, view.params).error(), ErrorCode::kLaneLimit);
  auto page = s.list_lanes(std::nullopt, 2, LaneScopeAny{});
  ASSERT_EQ(page.lanes.size(), 2u);
  EXPECT_EQ(page.next_after_lane_id, LaneId{2});
  auto rest = s.list_lanes(LaneId{2}, 2, LaneScopeAny{});
  ASSERT_EQ(rest.lanes.size(), 1u);
  EXPECT_EQ(rest.lanes[0].lane_id, LaneId{3});
  EXPECT_FALSE(rest.next_after_lane_id);
  auto scoped = s.list_lanes(std::nullopt, 10, LaneScopeSet{{LaneId{1}, LaneId{3}}});
  ASSERT_EQ(scoped.lanes.size(), 2u);
  EXPECT_EQ(scoped.lanes[1].lane_id, LaneId{3});
}

TEST_F(StreamTest, CheckpointChainAlongManyBatches) {
  auto s = load();
  LaneId lane = *durably(s).create_lane(std::nullopt, view.params);
  std::vector<CheckpointReceiptV2> chain;
  for (int batch = 0; batch < 20; ++batch) {
    for (int i = 0; i <= batch % 4; ++i) append(s, lane, "record " + std::to_string(batch) + "/" + std::to_string(i));
    now += batch % 3;  // the clock may stand still
    if (batch == 10) view.height = 90;  // a snapshot that went backwards must not lower the receipts
    ASSERT_TRUE(commit(s));
    chain.push_back(*s.checkpoint(store, std::nullopt));
  }
  Bytes32 previous{};
  Sequence next_first{1};
  std::uint64_t last_committed = 0, last_height = 0;
  for (const auto& c : chain) {
    EXPECT_EQ(c.first_sequence, next_first);
    EXPECT_EQ(c.previous_checkpoint, previous);
    EXPECT_GE(c.committed_at_ms, last_committed);
    EXPECT_GE(c.snapshot_height, last_height);
    EXPECT_EQ(verify_checkpoint(c, view.provider), CheckpointVerdict::kValid);
    std::vector<Bytes32> digests;
    for (std::uint64_t seq = c.first_sequence.value; seq <= c.last_sequence.value; ++seq) {
      auto r = *s.read(store, seq);
      ASSERT_TRUE(r);
      digests.push_back(record_digest(RecordHeaderV2{sid, LaneId{r->lane_id}}, r->payload));
    }
    EXPECT_EQ(records_digest(digests), c.records_digest);
    previous = checkpoint_id(c);
    next_first = Sequence{c.last_sequence.value + 1};
    last_committed = c.committed_at_ms;
    last_height = c.snapshot_height;
  }
  // GetCheckpoint by covering sequence.
  auto covering = s.checkpoint(store, Sequence{5});
  ASSERT_TRUE(covering.ok());
  EXPECT_LE(covering->first_sequence, Sequence{5});
  EXPECT_GE(covering->last_sequence, Sequence{5});
  EXPECT_EQ(s.checkpoint(store, Sequence{s.durable_head() + 1}).error(), ErrorCode::kCheckpointNotFound);
}

TEST_F(StreamTest, ReadRangeReturnsConsecutiveRecordsWithinItsBounds) {
  auto s = load();
  LaneId a = *durably(s).create_lane(std::nullopt, view.params), b = *durably(s).create_lane(std::nullopt, view.params);
  for (int i = 1; i <= 5; ++i) append(s, i % 2 ? a : b, "record-" + std::to_string(i));  // 8 bytes each
  ASSERT_TRUE(commit(s));
  auto all = *s.read_range(store, 2, 10, 1 << 20);
  ASSERT_EQ(all.size(), 4u);  // 2..5: the head bounds it
  EXPECT_EQ(all.front().sequence, 2u);
  EXPECT_EQ(all.back().sequence, 5u);
  EXPECT_EQ(all[1].lane_id, a.value);  // sequence 3
  EXPECT_EQ(std::string(all[1].payload.begin(), all[1].payload.end()), "record-3");
  EXPECT_EQ(s.read_range(store, 1, 2, 1 << 20)->size(), 2u);  // max_records
  EXPECT_EQ(s.read_range(store, 1, 10, 12)->size(), 2u);      // stops once 12 payload bytes are read
  EXPECT_EQ(s.read_range(store, 1, 10, 1)->size(), 1u);       // the first record is always included
  EXPECT_TRUE(s.read_range(store, 6, 10, 1 << 20)->empty());  // above the head
  EXPECT_EQ(s.next_in_lane(b, Sequence{1}), Sequence{2});
  EXPECT_EQ(s.next_in_lane(b, Sequence{5}), std::nullopt);
  EXPECT_EQ(s.count_in_lane(a, Sequence{2}), 2u);  // 3 and 5
}

TEST_F(StreamTest, NothingIsReadableBeforeItsBatchIsDurable) {
  auto s = load();
  LaneId lane = *durably(s).create_lane(std::nullopt, view.params);
  std::uint64_t seq = append(s, lane, "pending");
  EXPECT_EQ(seq, 1u);
  EXPECT_EQ(s.durable_head(), 0u);
  EXPECT_FALSE(*s.read(store, 1));
  ASSERT_TRUE(commit(s));
  EXPECT_EQ(s.durable_head(), 1u);
  EXPECT_TRUE(*s.read(store, 1));
}

TEST_F(StreamTest, CrashOnEitherSideOfTheDurableWrite) {
  {
    auto s = load();
    LaneId lane = *durably(s).create_lane(std::nullopt, view.params);
    append(s, lane, "a");
    ASSERT_TRUE(commit(s));  // durable: record 1 with its receipt
    append(s, lane, "b");
    PreparedBatch unwritten = s.close_batch(view, provider, now);  // closed but never written
    ASSERT_FALSE(unwritten.empty());
  }
  store.crash();
  auto s = load();
  EXPECT_EQ(s.durable_head(), 1u);  // record 2 never existed
  EXPECT_EQ(s.checkpoint(store, std::nullopt)->last_sequence, Sequence{1});
  EXPECT_EQ(append(s, LaneId{1}, "b again"), 2u);  // its sequence was never acknowledged, so it is free
  ASSERT_TRUE(commit(s));
  EXPECT_EQ(s.checkpoint(store, std::nullopt)->previous_checkpoint,
            checkpoint_id(*s.checkpoint(store, Sequence{1})));
}

TEST_F(StreamTest, AFailedSyncPublishesNothingAndFailsTheStreamClosed) {
  auto s = load();
  LaneId lane = *durably(s).create_lane(std::nullopt, view.params);
  append(s, lane, "doomed");
  store.fail_syncs(true);
  EXPECT_FALSE(commit(s));
  EXPECT_TRUE(s.failed());
  EXPECT_EQ(s.durable_head(), 0u);
  EXPECT_EQ(s.stage_append(lane, Bytes{1}).error(), ErrorCode::kUnavailable);
  store.fail_syncs(false);
  store.crash();
  EXPECT_EQ(load().durable_head(), 0u);
}

TEST_F(StreamTest, RetentionByTimeAndBytesWithReceipts) {
  auto s = load();
  LaneId lane = *durably(s).create_lane(std::nullopt, view.params);
  for (int i = 0; i < 3; ++i) {
    append(s, lane, "x");
    ASSERT_TRUE(commit(s));
    now += 1'000;
  }
  // By time: retention 1,500 ms at now = 1,003,000: records committed at 1,000,000 and 1,001,000 go.
  ASSERT_TRUE(durably(s).update_settings(StreamSettingsV2{1'500, 1'000'000, 1'024, 1'024, 4'096}, view.params).ok());
  auto drop = testing::floor_writes(s, view.params, now);
  ASSERT_TRUE(store.write(drop, Sync::kYes).ok());
  EXPECT_EQ(s.floor(), 3u);
  EXPECT_FALSE(*s.read(store, 2));
  EXPECT_EQ(s.checkpoint(store, Sequence{2}).error(), ErrorCode::kSequenceNotRetained);
  EXPECT_TRUE(s.checkpoint(store, Sequence{3}).ok());
  // By bytes: a limit below one record plus its receipt empties the stream.
  ASSERT_TRUE(durably(s).update_settings(StreamSettingsV2{1'000'000, 10, 1'024, 1'024, 4'096}, view.params).ok());
  ASSERT_TRUE(store.write(testing::floor_writes(s, view.params, now), Sync::kYes).ok());
  EXPECT_EQ(s.floor(), 4u);
  EXPECT_EQ(s.retained_bytes(), 0u);
  EXPECT_EQ(s.checkpoint(store, std::nullopt).error(), ErrorCode::kCheckpointNotFound);
  // The floor survives a restart.
  EXPECT_EQ(load().floor(), 4u);
}

TEST_F(StreamTest, SettingsAreValidatedStoredAndNotRedefinedByParameters) {
  auto s = load();
  EXPECT_EQ(s.effective_settings(view.params).retention_ms, view.params.retention_ms);
  EXPECT_EQ(durably(s).update_settings(StreamSettingsV2{0, 1, 1, 1, 1}, view.params).error(), ErrorCode::kInvalidSettings);
  StreamSettingsV2 over{view.params.retention_ms + 1, 1, 1, 1, 1};
  EXPECT_EQ(durably(s).update_settings(over, view.params).error(), ErrorCode::kInvalidSettings);
  StreamSettingsV2 mine{60'000, 1'000'000, 4'096, 8'192, 16'384};
  ASSERT_TRUE(durably(s).update_settings(mine, view.params).ok());
  Params changed = view.params;
  changed.retention_ms = 1;  // a later governance change
  EXPECT_EQ(load().effective_settings(changed), mine);
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

class GroupStateTest : public ::testing::Test {
 protected:
  store::MemoryStore store;
  Bytes32 sid{0x5e};
  Params params;

  static GroupConfigV2 config(LaneId lane) { return testing::valid_group_config(lane); }
  StreamState load() { return std::move(*StreamState::load(store, sid)); }
  testing::Durably durably(StreamState& s) { return {s, store}; }
};

TEST_F(GroupStateTest, IdsAreAssignedFromOneAndNeverReissuedAcrossRestarts) {
  auto s = load();
  LaneId lane = *durably(s).create_lane(std::nullopt, params);
  EXPECT_EQ(*durably(s).create_group(config(lane), params), GroupId{1});
  EXPECT_EQ(*durably(s).create_group(config(lane), params), GroupId{2});
  ASSERT_TRUE(durably(s).delete_group(GroupId{2}).ok());
  auto reloaded = load();
  EXPECT_EQ(reloaded.group(GroupId{2}), nullptr);
  ASSERT_NE(reloaded.group(GroupId{1}), nullptr);
  EXPECT_EQ(reloaded.group(GroupId{1})->max_attempts, 5);
  EXPECT_EQ(*durably(reloaded).create_group(config(lane), params), GroupId{3});  // 2 is never reissued
}

TEST_F(GroupStateTest, FieldRulesAndCeilings) {
  auto s = load();
  LaneId lane = *durably(s).create_lane(std::nullopt, params);
  auto bad = [&](auto mutate) {
    auto c = config(lane);
    mutate(c);
    return durably(s).create_group(c, params).error();
  };
  EXPECT_EQ(bad([](auto& c) { c.group_id = GroupId{9}; }), ErrorCode::kInvalidRequest);  // ids are the broker's
  EXPECT_EQ(bad([](auto& c) { c.max_attempts = 0; }), ErrorCode::kInvalidGroupConfig);
  EXPECT_EQ(bad([](auto& c) { c.visibility_timeout_ms = 40'000; }), ErrorCode::kInvalidGroupConfig);  // > max_visibility
  EXPECT_EQ(bad([&](auto& c) { c.max_visibility_ms = params.visibility_ms + 1; }), ErrorCode::kInvalidGroupConfig);
  EXPECT_EQ(bad([](auto& c) { c.max_in_flight_per_holder = 101; }), ErrorCode::kInvalidGroupConfig);
  EXPECT_EQ(bad([&](auto& c) { c.max_in_flight = static_cast<std::uint32_t>(params.max_in_flight_per_group) + 1; }),
            ErrorCode::kInvalidGroupConfig);
  EXPECT_EQ(bad([&](auto& c) { c.max_attempts = static_cast<std::uint16_t>(params.max_attempts + 1); }),
            ErrorCode::kInvalidGroupConfig);
  EXPECT_EQ(bad([&](auto& c) { c.record_deadline_ms = params.retention_ms + 1; }), ErrorCode::kInvalidGroupConfig);
  EXPECT_EQ(bad([](auto& c) { c.lane_id = LaneId{99}; }), ErrorCode::kUnknownLane);
  params.max_groups_per_stream = 1;
  ASSERT_TRUE(durably(s).create_group(config(lane), params).ok());
  EXPECT_EQ(durably(s).create_group(config(lane), params).error(), ErrorCode::kGroupLimit);
}

TEST_F(GroupStateTest, UpdateChangesOnlyMutableFields) {
  auto s = load();
  LaneId lane = *durably(s).create_lane(std::nullopt, params);
  LaneId other = *durably(s).create_lane(std::nullopt, params);
  auto c = config(lane);
  c.group_id = *durably(s).create_group(c, params);
  auto changed = c;
  changed.max_attempts = 9;
  changed.visibility_timeout_ms = 20'000;
  EXPECT_EQ(durably(s).update_group(changed, params)->max_attempts, 9);
  auto moved = changed;
  moved.lane_id = other;
  EXPECT_EQ(durably(s).update_group(moved, params).error(), ErrorCode::kImmutableField);
  auto restarted = changed;
  restarted.start = StartAt{Sequence{5}};
  EXPECT_EQ(durably(s).update_group(restarted, params).error(), ErrorCode::kImmutableField);
  auto unknown = changed;
  unknown.group_id = GroupId{77};
  EXPECT_EQ(durably(s).update_group(unknown, params).error(), ErrorCode::kUnknownGroup);
  EXPECT_EQ(load().group(c.group_id)->visibility_timeout_ms, 20'000u);
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

// A retention delete made durable by a later batch whose meta still carries
// the older floor: a restart derives the floor from the records themselves.
TEST_F(StreamTest, TheFloorIsDerivedFromTheStoredRecordsOnRestart) {
  auto s = load();
  LaneId lane = *durably(s).create_lane(std::nullopt, view.params);
  for (int i = 0; i < 3; ++i) {
    append(s, lane, "x");
    ASSERT_TRUE(commit(s));
  }
  append(s, lane, "y");
  PreparedBatch next = s.close_batch(view, provider, now);  // captures floor 1 in its meta
  ASSERT_TRUE(durably(s).update_settings(StreamSettingsV2{1'000'000, 60, 1'024, 1'024, 4'096}, view.params).ok());
  auto drop = testing::floor_writes(s, view.params, now);  // retention moves the floor past records 1..3
  ASSERT_FALSE(drop.empty());
  ASSERT_TRUE(store.write(drop, store::Sync::kNo).ok());
  next.seal(provider);
  ASSERT_TRUE(store.write(next.write, store::Sync::kYes).ok());  // makes the delete durable too
  store.crash();
  auto restarted = load();
  EXPECT_EQ(restarted.durable_head(), 4u);
  EXPECT_EQ(restarted.floor(), 4u);  // not the stale 1 in the meta
  EXPECT_FALSE(*restarted.read(store, 2));
  EXPECT_EQ(restarted.checkpoint(store, Sequence{2}).error(), ErrorCode::kSequenceNotRetained);
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

// A lane created while a durable batch is not yet published must not roll
// back the chain tail: otherwise, after a crash, new appends would reuse
// sequence numbers that were already durable.
TEST_F(StreamTest, ALaneCreatedDuringAnInFlightBatchCannotRollBackTheChainTail) {
  auto s = load();
  LaneId lane = *durably(s).create_lane(std::nullopt, view.params);
  append(s, lane, "a");
  ASSERT_TRUE(commit(s));
  append(s, lane, "b");
  PreparedBatch in_flight = s.close_batch(view, provider, now);
  in_flight.seal(provider);
  ASSERT_TRUE(store.write(in_flight.write, store::Sync::kYes).ok());  // durable, not yet published
  ASSERT_TRUE(durably(s).create_lane(std::nullopt, view.params).ok());  // written in that window
  store.crash();
  auto restarted = load();
  EXPECT_EQ(restarted.durable_head(), 2u);
  EXPECT_EQ(append(restarted, lane, "c"), 3u);
  EXPECT_EQ(restarted.checkpoint(store, std::nullopt)->last_sequence, Sequence{2});
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

// Counts the values a reader takes from the store it wraps.
class CountingStore final : public store::Store {
 public:
  explicit CountingStore(store::Store& inner) : inner_(inner) {}
  Result<Unit, store::StoreError> write(const store::WriteBatch& batch, Sync sync) override {
    return inner_.write(batch, sync);
  }
  Result<std::optional<std::string>, store::StoreError> get(std::string_view key) override {
    ++values;
    return inner_.get(key);
  }
  Result<Unit, store::StoreError> scan(std::string_view begin, std::string_view end,
                                       const std::function<bool(std::string_view, std::string_view)>& visit) override {
    return inner_.scan(begin, end, [&](std::string_view k, std::string_view v) {
      ++values;
      return visit(k, v);
    });
  }
  std::uint64_t values = 0;

 private:
  store::Store& inner_;
};

// Issue 46: a load read every record with its payload, so a restart's cost grew
// with the stream. It reads the restart keys only: the same count of values
// for 200 records as for 2,000.
TEST_F(StreamTest, ALoadReadsTheRestartKeysNotTheRecords) {
  auto values_read_by_a_load = [&] {
    CountingStore counting(store);
    auto loaded = StreamState::load(counting, sid);
    EXPECT_TRUE(loaded.ok());
    return counting.values;
  };
  auto s = load();
  LaneId a = *durably(s).create_lane(std::nullopt, view.params);
  LaneId b = *durably(s).create_lane(std::nullopt, view.params);
  auto fill = [&](int records) {
    for (int i = 0; i < records; ++i) {
      append(s, i % 3 == 0 ? b : a, "payload");
      if (i % 50 == 49) {
        ASSERT_TRUE(commit(s));
      }
    }
  };
  fill(200);
  std::uint64_t small = values_read_by_a_load();
  fill(1'800);
  EXPECT_EQ(values_read_by_a_load(), small);
  EXPECT_LT(small, 16u);
  // And what it derives from them matches the records.
  auto restarted = load();
  EXPECT_EQ(restarted.durable_head(), 2'000u);
  EXPECT_EQ(restarted.retained_bytes(), s.retained_bytes());
  EXPECT_EQ(restarted.count_in_lane(b, Sequence{1}), 667u);
  EXPECT_EQ(restarted.next_in_lane(b, Sequence{2}), std::optional<Sequence>(Sequence{4}));
  EXPECT_EQ(restarted.next_in_lane(a, Sequence{4}), std::optional<Sequence>(Sequence{5}));
  EXPECT_EQ(restarted.checkpoint(store, Sequence{1'234})->last_sequence.value, 1'250u);
}

// A store written before the restart keys (a version-1 tail, no marks, no
// runs) is migrated when the stream is first loaded: once, with the same
// head, floor, retained bytes and lanes as the records say.
TEST_F(StreamTest, AStreamWrittenBeforeTheRestartKeysIsMigratedOnItsFirstLoad) {
  auto s = load();
  LaneId a = *durably(s).create_lane(std::nullopt, view.params);
  LaneId b = *durably(s).create_lane(std::nullopt, view.params);
  for (int i = 0; i < 30; ++i) {
    append(s, i % 4 == 0 ? b : a, "x");
    if (i % 10 == 9) {
      ASSERT_TRUE(commit(s));
    }
  }
  ASSERT_TRUE(durably(s).update_settings(StreamSettingsV2{1'000'000, 60 * 25, 1'024, 1'024, 4'096}, view.params).ok());
  ASSERT_TRUE(store.write(testing::floor_writes(s, view.params, now), Sync::kYes).ok());
  ASSERT_GT(s.floor(), 1u);
  // Rewrite what the old code stored: the version-1 tail; no marks, no runs.
  std::string prefix = "s/" + std::string(reinterpret_cast<const char*>(sid.data()), sid.size()) + "/";
  std::string tail = *(*store.get(prefix + "m"));
  ASSERT_EQ(tail[0], 2);
  tail[0] = 1;
  tail.resize(tail.size() - 8);  // without appended_bytes
  store::WriteBatch legacy;
  legacy.put(prefix + "m", tail);
  legacy.del(prefix + "d");
  legacy.delete_range(prefix + "i/", prefix + "i0");
  ASSERT_TRUE(store.write(legacy, Sync::kYes).ok());
  // The first load migrates (reads the records); the next reads the restart keys only.
  CountingStore first(store);
  auto migrated = StreamState::load(first, sid);
  ASSERT_TRUE(migrated.ok());
  EXPECT_GE(first.values, 20u);
  CountingStore second(store);
  auto again = StreamState::load(second, sid);
  ASSERT_TRUE(again.ok());
  EXPECT_LT(second.values, 16u);
  for (auto* state : {&*migrated, &*again}) {
    EXPECT_EQ(state->durable_head(), 30u);
    EXPECT_EQ(state->floor(), s.floor());
    EXPECT_EQ(state->retained_bytes(), s.retained_bytes());
    EXPECT_EQ(state->count_in_lane(a, Sequence{1}), s.count_in_lane(a, Sequence{1}));
    EXPECT_EQ(state->next_in_lane(b, Sequence{s.floor()}), s.next_in_lane(b, Sequence{s.floor()}));
  }
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

// Issue 46: a crash at every point of a commit - the batch closed, sealed,
// written without a sync, written synced but not yet published, published;
// then retention staged, written without a sync, written synced - leaves
// restart keys that agree with the records and receipts themselves.
TEST_F(StreamTest, TheRestartKeysAgreeWithTheRecordsAtEveryPointOfTheCommit) {
  enum Point { kClosed, kSealed, kUnsynced, kSynced, kPublished, kRetentionStaged, kRetentionUnsynced, kRetentionSynced };
  for (int point = kClosed; point <= kRetentionSynced; ++point) {
    SCOPED_TRACE(point);
    MemoryStore m;
    auto s = std::move(*StreamState::load(m, sid));
    auto durable = [&](const store::WriteBatch& w) { ASSERT_TRUE(m.write(w, Sync::kYes).ok()); };
    store::WriteBatch lanes;
    LaneId a = *s.create_lane(std::nullopt, view.params, lanes);
    LaneId b = *s.create_lane(std::nullopt, view.params, lanes);
    durable(lanes);
    auto batch = [&](int records, int offset) {
      for (int i = 0; i < records; ++i) {
        std::string text(1 + (offset + i) % 9, 'r');
        EXPECT_TRUE(s.stage_append((offset + i) / 2 % 2 ? b : a, Bytes(text.begin(), text.end())).ok());
      }
      return s.close_batch(view, provider, now);
    };
    for (int n = 0; n < 3; ++n) {
      PreparedBatch done = batch(7, 7 * n);
      done.seal(provider);
      durable(done.write);
      s.batch_durable(done);
    }
    PreparedBatch next = batch(5, 21);
    if (point >= kSealed) next.seal(provider);
    if (point >= kUnsynced) {
      ASSERT_TRUE(m.write(next.write, point == kUnsynced ? Sync::kNo : Sync::kYes).ok());
    }
    if (point >= kPublished) s.batch_durable(next);
    if (point >= kRetentionStaged) {
      store::WriteBatch settings;
      ASSERT_TRUE(s.update_settings(StreamSettingsV2{1'000'000, 900, 1'024, 1'024, 4'096}, view.params, settings).ok());
      durable(settings);
      store::WriteBatch drop = testing::floor_writes(s, view.params, now);
      ASSERT_FALSE(drop.empty());
      if (point >= kRetentionUnsynced) {
        ASSERT_TRUE(m.write(drop, point == kRetentionUnsynced ? Sync::kNo : Sync::kYes).ok());
      }
    }
    m.crash();

    auto restarted = StreamState::load(m, sid);
    ASSERT_TRUE(restarted.ok());
    auto r = testing::expect_restart_keys_agree(*restarted, m);
    EXPECT_EQ(r.last, point >= kSynced ? 26u : 21u);
    EXPECT_EQ(r.first > 1, point == kRetentionSynced);
    EXPECT_EQ(r.by_lane.size(), 2u);
  }
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

// After a restart retention knows nothing of the records in memory: it reads
// the oldest ones from the store (a window at a time) and moves the floor
// exactly as the state that appended them does.
TEST_F(StreamTest, RetentionAfterARestartReadsTheOldestRecordsFromTheStore) {
  auto s = load();
  LaneId lane = *durably(s).create_lane(std::nullopt, view.params);
  for (int i = 0; i < 40; ++i) {
    append(s, lane, std::string(1 + i % 7, 'z'));
    if (i % 5 == 4) {
      ASSERT_TRUE(commit(s));
    }
  }
  auto restarted = load();
  const StreamSettingsV2 small{1'000'000, 1'200, 1'024, 1'024, 4'096};
  ASSERT_TRUE(durably(restarted).update_settings(small, view.params).ok());
  store::WriteBatch unused;
  ASSERT_TRUE(s.update_settings(small, view.params, unused).ok());
  ASSERT_FALSE(testing::floor_writes(s, view.params, now).empty());
  ASSERT_TRUE(store.write(testing::floor_writes(restarted, view.params, now), Sync::kYes).ok());
  EXPECT_GT(restarted.floor(), 1u);
  EXPECT_EQ(restarted.floor(), s.floor());
  EXPECT_EQ(restarted.retained_bytes(), s.retained_bytes());
  auto again = load();
  EXPECT_EQ(again.floor(), s.floor());
  EXPECT_EQ(again.retained_bytes(), s.retained_bytes());
  EXPECT_EQ(again.next_in_lane(lane, Sequence{1}), std::optional<Sequence>(Sequence{s.floor()}));
  EXPECT_EQ(again.count_in_lane(lane, Sequence{1}), 40 - s.floor() + 1);
}

}  // namespace
}  // namespace cowboy::cbqs::broker
