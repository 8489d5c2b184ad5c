// SIGKILL a real `cbqsd --dev` while a producer pipelines appends, restart it
// on the same data directory, and find every acknowledged record with its
// sequence and payload, and a checkpoint chain that verifies from sequence 1.
// A broker whose store fails a sync acknowledges nothing more.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <deque>
#include <regex>
#include <set>

#include "../../support/cbqsd_process.h"
#include "broker_fixture.h"
#include "group_config.h"
#include "cbqs/broker/auth.h"
#include "cbqs/store/store.h"
#include "restart_keys.h"
#include "cbqs/wire/ids.h"
#include "cbqs/wire/codec.h"
#include "devchain/http_client.h"
#include "devchain/keyfile.h"

namespace cowboy::cbqs::broker {
namespace {

using namespace testing;

Bytes32 rid(std::uint64_t n) { return testbed::request_id(n); }

Bytes32 open(client::WssConnection& c, const StreamGrantV2& g, const crypto::Ed25519Seed& holder) {
  if (!c.send(OpenSession{rid(1), g})) return {};
  auto ch = c.receive(std::chrono::seconds(5));
  if (!ch || !std::holds_alternative<SessionChallenge>(*ch)) return {};
  const auto& challenge = std::get<SessionChallenge>(*ch);
  SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), challenge.session_id, challenge.challenge, {}};
  sign_proof(proof, holder);
  if (!c.send(CompleteSession{rid(2), proof})) return {};
  auto opened = c.receive(std::chrono::seconds(5));
  if (!opened || !std::holds_alternative<SessionOpened>(*opened)) return {};
  return challenge.session_id;
}

TEST(CbqsdCrash, EveryAcknowledgedRecordSurvivesSigkillWithItsCheckpointChain) {
  cowboy::testing::TempDir dir;
  std::map<std::uint64_t, std::string> acked;  // sequence -> payload
  LaneId lane;
  {
    cowboy::testing::CbqsdProcess cbqsd(dir.path());
    ASSERT_TRUE(cbqsd.up());
    auto c = cbqsd.connect();
    ASSERT_NE(c, nullptr);
    Bytes32 session = open(*c, cbqsd.grant(), cbqsd.holder());
    ASSERT_NE(session, Bytes32{});
    ASSERT_TRUE(c->send(Request{rid(3), session, req::CreateLane{}}));
    auto created = c->receive(std::chrono::seconds(5));
    ASSERT_TRUE(created && std::holds_alternative<Response>(*created));
    lane = std::get<resp::LaneCreated>(std::get<Response>(*created).body).lane_id;
    // Pipeline 2,000 appends; kill the broker once 300 are acknowledged.
    constexpr int kAppends = 2'000;
    std::map<Bytes32, std::string> sent;
    for (int i = 0; i < kAppends; ++i) {
      std::string payload = "record-" + std::to_string(i);
      Bytes32 id = rid(1'000 + i);
      sent[id] = payload;
      ASSERT_TRUE(c->send(Request{id, session, req::Append{{lane, Bytes(payload.begin(), payload.end())}}}));
    }
    while (acked.size() < 300) {
      auto f = c->receive(std::chrono::seconds(10));
      ASSERT_TRUE(f.ok()) << f.error();
      const auto* r = std::get_if<Response>(&*f);
      ASSERT_NE(r, nullptr);
      acked[std::get<resp::Appended>(r->body).sequence.value] = sent[r->request_id];
    }
    cbqsd.kill9();
  }

  cowboy::testing::CbqsdProcess restarted(dir.path());
  ASSERT_TRUE(restarted.up());
  auto c = restarted.connect();
  ASSERT_NE(c, nullptr);
  Bytes32 session = open(*c, restarted.grant(), restarted.holder());
  ASSERT_NE(session, Bytes32{});
  // Replay everything from sequence 1.
  ASSERT_TRUE(c->send(Request{rid(10), session, req::Subscribe{SourceCursor{LaneScopeAny{}, StartAt{Sequence{1}}}, 1ULL << 30}}));
  std::map<std::uint64_t, std::string> replayed;
  std::uint64_t head = 0;
  bool caught_up = false;
  int progress_seen = 0;
  while (!caught_up) {
    auto f = c->receive(std::chrono::seconds(10));
    ASSERT_TRUE(f.ok()) << f.error();
    if (const auto* d = std::get_if<Delivery>(&*f)) {
      replayed[d->sequence.value] = std::string(d->payload.begin(), d->payload.end());
    } else if (const auto* r = std::get_if<Response>(&*f)) {
      // The first CursorProgress answers Subscribe; the second says replay reached the head.
      if (const auto* p = std::get_if<resp::CursorProgress>(&r->body); p && ++progress_seen == 2) {
        head = p->scanned_through.value;
        caught_up = true;
      }
    }
  }
  for (const auto& [seq, payload] : acked) {
    ASSERT_TRUE(replayed.contains(seq)) << "acknowledged sequence " << seq << " is missing";
    EXPECT_EQ(replayed[seq], payload);
  }
  EXPECT_GE(head, acked.rbegin()->first);
  EXPECT_EQ(replayed.size(), head);  // gapless from 1

  // Walk the checkpoint chain from sequence 1 to the head.
  auto chain = restarted.chain();
  std::uint64_t next = 1;
  Bytes32 previous{};
  std::uint64_t request = 100;
  while (next <= head) {
    ASSERT_TRUE(c->send(Request{rid(request++), session, req::GetCheckpoint{Sequence{next}}}));
    CbqsServerFrameV2 f;
    do {
      auto got = c->receive(std::chrono::seconds(5));
      ASSERT_TRUE(got.ok());
      f = std::move(*got);
    } while (!std::holds_alternative<Response>(f) && !std::holds_alternative<ErrorFrame>(f));
    ASSERT_TRUE(std::holds_alternative<Response>(f)) << "no receipt covers " << next;
    const auto& receipt = std::get<resp::Checkpoint>(std::get<Response>(f).body).receipt;
    EXPECT_EQ(receipt.first_sequence, Sequence{next});
    EXPECT_EQ(receipt.previous_checkpoint, previous);
    auto record = chain.provider(receipt.provider);
    ASSERT_TRUE(record.ok());
    EXPECT_EQ(verify_checkpoint(receipt, *record), CheckpointVerdict::kValid);
    std::vector<Bytes32> digests;
    for (std::uint64_t s = receipt.first_sequence.value; s <= receipt.last_sequence.value; ++s) {
      const auto& p = replayed[s];
      digests.push_back(record_digest(RecordHeaderV2{receipt.stream_id, lane}, Bytes(p.begin(), p.end())));
    }
    EXPECT_EQ(records_digest(digests), receipt.records_digest);
    previous = checkpoint_id(receipt);
    next = receipt.last_sequence.value + 1;
  }
}

// Issue 46: a restart reads only the restart keys (the tail with its
// appended bytes, the retention marks, the lane runs). After a SIGKILL while
// batches of two interleaved lanes are in flight, what they say must agree
// with the records themselves: head, floor, retained bytes, each lane's
// records and the latest receipt.
TEST(CbqsdCrash, TheRestartKeysAgreeWithTheRecordsAfterSigkillMidBatch) {
  cowboy::testing::TempDir dir;
  Bytes32 stream_id{};
  LaneId lanes[2] = {};
  std::uint64_t acked_head = 0;
  {
    cowboy::testing::CbqsdProcess cbqsd(dir.path());
    ASSERT_TRUE(cbqsd.up());
    stream_id = cbqsd.grant().stream_id;
    auto c = cbqsd.connect();
    ASSERT_NE(c, nullptr);
    Bytes32 session = open(*c, cbqsd.grant(), cbqsd.holder());
    ASSERT_NE(session, Bytes32{});
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(c->send(Request{rid(3 + i), session, req::CreateLane{}}));
      auto created = c->receive(std::chrono::seconds(5));
      ASSERT_TRUE(created && std::holds_alternative<Response>(*created));
      lanes[i] = std::get<resp::LaneCreated>(std::get<Response>(*created).body).lane_id;
    }
    constexpr int kAppends = 3'000;
    for (int i = 0; i < kAppends; ++i) {  // runs of three records per lane
      std::string payload(1 + i % 40, static_cast<char>('a' + i % 26));
      ASSERT_TRUE(c->send(Request{rid(1'000 + i), session,
                                  req::Append{{lanes[(i / 3) % 2], Bytes(payload.begin(), payload.end())}}}));
    }
    for (int acked = 0; acked < 500; ++acked) {
      auto f = c->receive(std::chrono::seconds(10));
      ASSERT_TRUE(f.ok()) << f.error();
      const auto* r = std::get_if<Response>(&*f);
      ASSERT_NE(r, nullptr);
      acked_head = std::max(acked_head, std::get<resp::Appended>(r->body).sequence.value);
    }
    cbqsd.kill9();  // batches are in flight: the kill lands between or inside their writes
  }

  auto store = store::open_rocksdb_store((dir.path() / "data" / "store").string());
  ASSERT_TRUE(store.ok()) << store.error();
  auto state = StreamState::load(**store, stream_id);
  ASSERT_TRUE(state.ok());
  // What the records themselves say.
  auto r = cbqs::testing::expect_restart_keys_agree(*state, **store);
  EXPECT_GE(r.last, acked_head);
  EXPECT_EQ(r.by_lane.size(), 2u);
}

class FailingStoreTest : public BrokerFixture {
 protected:
  testbed::DeploymentOptions options() override {
    testbed::DeploymentOptions o;
    o.memory_store = true;
    return o;
  }
};

TEST_F(FailingStoreTest, AFailedSyncAcknowledgesNothingAndTheBrokerSaysWhy) {
  auto c = connect();
  Bytes32 session = open_session(*c, grant(0x003f));
  auto lane = body<resp::LaneCreated>(request(*c, session, 10, req::CreateLane{}))->lane_id;
  ASSERT_NE(body<resp::Appended>(request(*c, session, 11, req::Append{{lane, Bytes{1}}})), nullptr);
  memory->fail_syncs(true);
  auto failed = request(*c, session, 12, req::Append{{lane, Bytes{2}}});
  EXPECT_EQ(error_code(failed), code(ErrorCode::kUnavailable)) << error_text(failed);
  std::string why;
  EXPECT_FALSE(broker->ready(&why));
  EXPECT_NE(why.find("store failed"), std::string::npos);
  memory->fail_syncs(false);  // even after the disk recovers, the broker stays failed closed
  EXPECT_EQ(error_code(request(*c, session, 13, req::Append{{lane, Bytes{3}}})), code(ErrorCode::kUnavailable));
  memory->crash();
  EXPECT_EQ(StreamState::load(*memory, stream_id)->durable_head(), 1u);
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

class WrongKeyTest : public testing::BrokerFixture {
 protected:
  testbed::DeploymentOptions options() override {
    testbed::DeploymentOptions o;
    o.wrong_provider_key = true;
    return o;
  }
};

TEST_F(WrongKeyTest, ABrokerWhoseKeyIsNotTheChainsIsNotReady) {
  std::string why;
  ASSERT_TRUE(cowboy::testing::eventually([&] { return broker->snapshot_height() > 0; }));
  EXPECT_FALSE(broker->ready(&why));
  EXPECT_NE(why.find("provider key does not match"), std::string::npos);
}

}  // namespace
}  // namespace cowboy::cbqs::broker

namespace cowboy::cbqs::broker {
namespace {

// Reads frames until the answer to `id`; Deliveries met on the way are kept.
CbqsServerFrameV2 answer_to(client::WssConnection& c, const Bytes32& id, std::deque<Delivery>& deliveries) {
  for (;;) {
    auto f = c.receive(std::chrono::seconds(10));
    if (!f) return ErrorFrame{};
    if (auto* d = std::get_if<Delivery>(&*f)) {
      deliveries.push_back(std::move(*d));
      continue;
    }
    if (const auto* r = std::get_if<Response>(&*f); r && r->request_id == id) return std::move(*f);
    if (const auto* e = std::get_if<ErrorFrame>(&*f); e && e->request_id == id) return std::move(*f);
  }
}

Delivery next_delivery(client::WssConnection& c, std::deque<Delivery>& deliveries) {
  while (deliveries.empty()) {
    auto f = c.receive(std::chrono::seconds(10));
    if (!f) return Delivery{};
    if (auto* d = std::get_if<Delivery>(&*f)) deliveries.push_back(std::move(*d));
  }
  Delivery d = std::move(deliveries.front());
  deliveries.pop_front();
  return d;
}

// Creates a lane and a group on it whose leases outlast the test (visibility
// at the §15 ceiling), and appends the records 1..20, each acknowledged.
void group_of_twenty(client::WssConnection& c, const Bytes32& session, std::uint32_t per_holder,
                     std::uint16_t max_attempts, LaneId& lane, GroupId& group, std::deque<Delivery>& deliveries) {
  ASSERT_TRUE(c.send(Request{rid(3), session, req::CreateLane{}}));
  lane = std::get<resp::LaneCreated>(std::get<Response>(answer_to(c, rid(3), deliveries)).body).lane_id;
  GroupConfigV2 config = cbqs::testing::valid_group_config(lane);
  config.visibility_timeout_ms = 30'000;  // the §15 ceiling: nothing expires during the test
  config.max_visibility_ms = 30'000;
  config.max_in_flight_per_holder = per_holder;
  config.max_attempts = max_attempts;
  ASSERT_TRUE(c.send(Request{rid(4), session, req::CreateGroup{config}}));
  group = std::get<resp::GroupCreated>(std::get<Response>(answer_to(c, rid(4), deliveries)).body).group_id;
  for (int i = 1; i <= 20; ++i) {
    ASSERT_TRUE(c.send(Request{rid(100 + i), session, req::Append{{lane, Bytes{static_cast<std::uint8_t>(i)}}}}));
    ASSERT_TRUE(std::holds_alternative<Response>(answer_to(c, rid(100 + i), deliveries)));
  }
}

TEST(CbqsdCrash, LeasesOutstandingAtSigkillAreDeliveredAgainWithTheirAttemptCounted) {
  cowboy::testing::TempDir dir;
  LaneId lane;
  GroupId group;
  std::deque<Delivery> deliveries;
  {
    cowboy::testing::CbqsdProcess cbqsd(dir.path());
    ASSERT_TRUE(cbqsd.up());
    auto c = cbqsd.connect();
    ASSERT_NE(c, nullptr);
    Bytes32 session = open(*c, cbqsd.grant(), cbqsd.holder());
    ASSERT_NO_FATAL_FAILURE(group_of_twenty(*c, session, 10, 2, lane, group, deliveries));
    ASSERT_TRUE(c->send(Request{rid(5), session, req::Subscribe{SourceGroup{lane, group}, 1 << 20}}));
    ASSERT_TRUE(std::holds_alternative<Response>(answer_to(*c, rid(5), deliveries)));
    // Ten leases (max_in_flight_per_holder); 1..4 are acked durably, 5..10 stay outstanding.
    for (std::uint64_t seq = 1; seq <= 10; ++seq) {
      Delivery d = next_delivery(*c, deliveries);
      ASSERT_EQ(d.sequence, Sequence{seq});
      if (seq <= 4) {
        ASSERT_TRUE(c->send(Request{rid(200 + seq), session, req::Ack{rid(5), *d.lease}}));
        ASSERT_TRUE(std::holds_alternative<Response>(answer_to(*c, rid(200 + seq), deliveries)));
      }
    }
    cbqsd.kill9();
  }

  cowboy::testing::CbqsdProcess restarted(dir.path());
  ASSERT_TRUE(restarted.up());
  auto c = restarted.connect();
  ASSERT_NE(c, nullptr);
  Bytes32 session = open(*c, restarted.grant(), restarted.holder());
  deliveries.clear();
  ASSERT_TRUE(c->send(Request{rid(6), session, req::Subscribe{SourceGroup{lane, group}, 1 << 20}}));
  ASSERT_TRUE(std::holds_alternative<Response>(answer_to(*c, rid(6), deliveries)));
  std::set<std::uint64_t> seen;
  std::uint64_t request = 1'000;
  while (seen.size() < 16) {
    Delivery d = next_delivery(*c, deliveries);
    ASSERT_GE(d.sequence, Sequence{5}) << "an Ack made durable before the crash was lost";
    ASSERT_LE(d.sequence, Sequence{20});
    ASSERT_TRUE(seen.insert(d.sequence.value).second) << "sequence " << d.sequence.value << " delivered twice";
    if (d.sequence.value <= 10) {
      // Its second attempt, the last of max_attempts = 2: a Nack ends the cycle
      // EXPIRED, so repeating it gets DeliveryTerminal. Had the crash forgotten
      // the first attempt, the repeat would get LeaseStale (a WAITING cycle).
      ASSERT_TRUE(c->send(Request{rid(request), session, req::Nack{rid(6), *d.lease}}));
      ASSERT_TRUE(std::holds_alternative<Response>(answer_to(*c, rid(request++), deliveries)));
      ASSERT_TRUE(c->send(Request{rid(request), session, req::Nack{rid(6), *d.lease}}));
      auto again = answer_to(*c, rid(request++), deliveries);
      ASSERT_TRUE(std::holds_alternative<ErrorFrame>(again));
      EXPECT_EQ(std::get<ErrorFrame>(again).code, static_cast<std::uint16_t>(ErrorCode::kDeliveryTerminal));
    } else {
      ASSERT_TRUE(c->send(Request{rid(request), session, req::Ack{rid(6), *d.lease}}));
      ASSERT_TRUE(std::holds_alternative<Response>(answer_to(*c, rid(request++), deliveries)));
    }
  }
  EXPECT_EQ(*seen.begin(), 5u);
  EXPECT_EQ(*seen.rbegin(), 20u);
}

// Issue 46: a first lease is durable as the group frontier's move and Acks
// above the oldest outstanding lease as one ack list per write. Across two
// SIGKILLs, with Acks out of order (so the lists are what holds them), no
// acked record comes back and every other one does, its attempts counted.
TEST(CbqsdCrash, OutOfOrderAcksSurviveTwoSigkillsAndEveryUnackedLeaseComesBack) {
  cowboy::testing::TempDir dir;
  LaneId lane;
  GroupId group;
  std::deque<Delivery> deliveries;
  std::uint64_t request = 1'000;
  // One subscription of a group consumer on `c`: takes exactly the deliveries
  // in `expected`, each once, and returns them with the subscription's id.
  struct Taken {
    Bytes32 session, sub;
    std::vector<Delivery> got;
  };
  auto take = [&](cowboy::testing::CbqsdProcess& cbqsd, cbqs::client::WssConnection& c,
                  const std::set<std::uint64_t>& expected, Taken& out) {
    out.session = open(c, cbqsd.grant(), cbqsd.holder());
    deliveries.clear();
    out.sub = rid(request++);
    ASSERT_TRUE(c.send(Request{out.sub, out.session, req::Subscribe{SourceGroup{lane, group}, 1 << 20}}));
    ASSERT_TRUE(std::holds_alternative<Response>(answer_to(c, out.sub, deliveries)));
    std::set<std::uint64_t> seen;
    while (seen.size() < expected.size()) {
      Delivery d = next_delivery(c, deliveries);
      ASSERT_TRUE(expected.contains(d.sequence.value)) << "sequence " << d.sequence.value << " delivered";
      ASSERT_TRUE(seen.insert(d.sequence.value).second) << "sequence " << d.sequence.value << " delivered twice";
      out.got.push_back(std::move(d));
    }
  };
  // One life of the broker: takes `expected`, acks those `ack` selects
  // (newest first: out of order), and is killed with the rest outstanding.
  auto life = [&](cowboy::testing::CbqsdProcess& cbqsd, const std::set<std::uint64_t>& expected,
                  const std::function<bool(std::uint64_t)>& ack) {
    auto c = cbqsd.connect();
    ASSERT_NE(c, nullptr);
    Taken t;
    ASSERT_NO_FATAL_FAILURE(take(cbqsd, *c, expected, t));
    for (auto it = t.got.rbegin(); it != t.got.rend(); ++it) {
      if (!ack(it->sequence.value)) continue;
      ASSERT_TRUE(c->send(Request{rid(request), t.session, req::Ack{t.sub, *it->lease}}));
      ASSERT_TRUE(std::holds_alternative<Response>(answer_to(*c, rid(request++), deliveries)));
    }
    cbqsd.kill9();
  };
  std::set<std::uint64_t> all, odd, third;
  for (std::uint64_t s = 1; s <= 20; ++s) {
    all.insert(s);
    if (s % 2 == 1) odd.insert(s);
    if (s % 2 == 1 && !(s >= 3 && s <= 7)) third.insert(s);
  }
  {
    cowboy::testing::CbqsdProcess cbqsd(dir.path());
    ASSERT_TRUE(cbqsd.up());
    auto c = cbqsd.connect();
    ASSERT_NE(c, nullptr);
    Bytes32 session = open(*c, cbqsd.grant(), cbqsd.holder());
    ASSERT_NO_FATAL_FAILURE(group_of_twenty(*c, session, 64, 3, lane, group, deliveries));
    // First leases of 1..20; the even ones acked (1 outstanding holds the mark below them all).
    life(cbqsd, all, [](std::uint64_t s) { return s % 2 == 0; });
  }
  {
    // The odd ones again (second attempt, each now with its own key); 3, 5, 7 acked.
    cowboy::testing::CbqsdProcess cbqsd(dir.path());
    ASSERT_TRUE(cbqsd.up());
    life(cbqsd, odd, [](std::uint64_t s) { return s >= 3 && s <= 7; });
  }
  cowboy::testing::CbqsdProcess cbqsd(dir.path());
  ASSERT_TRUE(cbqsd.up());
  auto c = cbqsd.connect();
  ASSERT_NE(c, nullptr);
  Taken t;
  ASSERT_NO_FATAL_FAILURE(take(cbqsd, *c, third, t));
  for (const Delivery& d : t.got) {
    // The third attempt is the last (max_attempts = 3): a Nack ends it EXPIRED,
    // so repeating it gets DeliveryTerminal. A crash that had forgotten an
    // attempt would leave a WAITING cycle, and the repeat would get LeaseStale.
    ASSERT_TRUE(c->send(Request{rid(request), t.session, req::Nack{t.sub, *d.lease}}));
    ASSERT_TRUE(std::holds_alternative<Response>(answer_to(*c, rid(request++), deliveries)));
    ASSERT_TRUE(c->send(Request{rid(request), t.session, req::Nack{t.sub, *d.lease}}));
    auto again = answer_to(*c, rid(request++), deliveries);
    ASSERT_TRUE(std::holds_alternative<ErrorFrame>(again));
    EXPECT_EQ(std::get<ErrorFrame>(again).code, static_cast<std::uint16_t>(ErrorCode::kDeliveryTerminal))
        << "sequence " << d.sequence.value;
  }
  // Nothing else is deliverable: the next delivery is a new record, not an acked one.
  ASSERT_TRUE(c->send(Request{rid(request), t.session, req::Append{{lane, Bytes{21}}}}));
  ASSERT_TRUE(std::holds_alternative<Response>(answer_to(*c, rid(request++), deliveries)));
  EXPECT_EQ(next_delivery(*c, deliveries).sequence, Sequence{21});
}

}  // namespace
}  // namespace cowboy::cbqs::broker
