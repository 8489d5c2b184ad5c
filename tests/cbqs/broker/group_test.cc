// Consumer groups over real wss (§9.2, §19 clause 5, clause 8's converse):
// competing holders, lease actions by the holder only, redelivery counting
// attempts, Backpressure, scope, suspension, deletion, the dead-letter view,
// and two consumers draining 100,000 records.
#include <thread>

#include "admin.h"
#include "broker_fixture.h"
#include "cbqs/chain/billing.h"
#include "group_config.h"

namespace cowboy::cbqs::broker {
namespace {

using namespace testing;
using cbqs::testing::valid_group_config;
constexpr std::uint16_t kAll = 0x003f;

/// One consumer connection with a Group subscription. Frames read while
/// waiting for something else are kept, so tests can take them in any order.
struct Consumer {
  std::unique_ptr<client::WssConnection> c;
  Bytes32 session{};
  Bytes32 sub{};
  std::deque<Delivery> deliveries;
  std::deque<CbqsServerFrameV2> others;

  std::optional<CbqsServerFrameV2> read(std::chrono::milliseconds t) {
    auto f = c->receive(t);
    if (!f) return std::nullopt;
    return std::move(*f);
  }
  /// The next Delivery, or nullopt if none arrives within `t`.
  std::optional<Delivery> delivery(std::chrono::milliseconds t = std::chrono::seconds(5)) {
    auto deadline = std::chrono::steady_clock::now() + t;
    while (deliveries.empty()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      auto f = read(left);
      if (!f) return std::nullopt;
      if (auto* d = std::get_if<Delivery>(&*f)) deliveries.push_back(std::move(*d));
      else others.push_back(std::move(*f));
    }
    Delivery d = std::move(deliveries.front());
    deliveries.pop_front();
    return d;
  }
  /// Sends a request and returns its answer (a Response or an Error with its request_id).
  CbqsServerFrameV2 request(const Bytes32& id, CbqsRequestBodyV2 body) {
    EXPECT_TRUE(c->send(Request{id, session, std::move(body)}).ok());
    return answer(id);
  }
  CbqsServerFrameV2 answer(const Bytes32& id) {
    for (auto it = others.begin(); it != others.end(); ++it)
      if (answers(*it, id)) {
        auto f = std::move(*it);
        others.erase(it);
        return f;
      }
    for (;;) {
      auto f = read(std::chrono::seconds(5));
      if (!f) return ErrorFrame{};
      if (answers(*f, id)) return std::move(*f);
      if (auto* d = std::get_if<Delivery>(&*f)) deliveries.push_back(std::move(*d));
      else others.push_back(std::move(*f));
    }
  }
  static bool answers(const CbqsServerFrameV2& f, const Bytes32& id) {
    if (const auto* r = std::get_if<Response>(&f)) return r->request_id == id;
    if (const auto* e = std::get_if<ErrorFrame>(&f)) return e->request_id == id;
    return false;
  }
  /// An unsolicited Error about this subscription with `code`, within `t`.
  bool saw_error(ErrorCode code, std::chrono::milliseconds t = std::chrono::seconds(5)) {
    auto deadline = std::chrono::steady_clock::now() + t;
    for (;;) {
      for (auto it = others.begin(); it != others.end(); ++it)
        if (const auto* e = std::get_if<ErrorFrame>(&*it); e && e->request_id == sub && e->code == static_cast<std::uint16_t>(code)) {
          others.erase(it);
          return true;
        }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      auto f = read(left);
      if (!f) return false;
      if (auto* d = std::get_if<Delivery>(&*f)) deliveries.push_back(std::move(*d));
      else others.push_back(std::move(*f));
    }
  }
};

class GroupTest : public BrokerFixture {
 protected:
  std::unique_ptr<client::WssConnection> manager;
  Bytes32 manager_session{};
  LaneId lane;
  GroupId group;
  std::uint64_t next_request = 10'000;

  Bytes32 fresh_id() { return rid(next_request++); }

  // Appends are not what these tests are about: lift the stream's append rate
  // to the §15 maximum, so a fast machine is not refused RateLimited.
  testbed::DeploymentOptions options() override {
    testbed::DeploymentOptions o;
    o.parameters = {{"cbqs.max_append_bytes_per_sec", kMaxAppendRate}};
    return o;
  }
  static constexpr std::uint64_t kMaxAppendRate = 268'435'456;

  void make_group(GroupConfigV2 config) {
    manager = connect();
    manager_session = open_session(*manager, grant(kAll));
    lane = body<resp::LaneCreated>(request(*manager, manager_session, 1, req::CreateLane{}))->lane_id;
    config.lane_id = lane;
    auto settings = body<resp::Settings>(request(*manager, manager_session, 5, req::GetSettings{}))->settings;
    settings.max_append_bytes_per_sec = kMaxAppendRate;
    auto raised = request(*manager, manager_session, 6, req::UpdateSettings{settings});
    ASSERT_NE(body<resp::Settings>(raised), nullptr) << error_text(raised);
    auto created = request(*manager, manager_session, 2, req::CreateGroup{config});
    ASSERT_NE(body<resp::GroupCreated>(created), nullptr) << error_text(created);
    group = body<resp::GroupCreated>(created)->group_id;
  }

  /// Pipelines `n` appends of `prefix-i` and waits until every one is durable.
  void append(int n, const std::string& prefix = "r") {
    for (int i = 0; i < n; ++i) {
      std::string p = prefix + "-" + std::to_string(i);
      ASSERT_TRUE(manager->send(Request{fresh_id(), manager_session, req::Append{{lane, Bytes(p.begin(), p.end())}}}));
    }
    for (int i = 0; i < n; ++i) {
      auto f = next(*manager);
      ASSERT_NE(body<resp::Appended>(f), nullptr) << error_text(f);
    }
  }

  Consumer consumer(const StreamGrantV2& g, std::uint64_t credit = 1 << 20) {
    Consumer k;
    k.c = connect();
    k.session = open_session(*k.c, g);
    k.sub = fresh_id();
    auto ok = k.request(k.sub, req::Subscribe{SourceGroup{lane, group}, credit});
    EXPECT_NE(body<resp::Ok>(ok), nullptr) << error_text(ok);
    return k;
  }
  Consumer consumer(std::uint64_t credit = 1 << 20) { return consumer(grant(kAll), credit); }

  static std::string text(const Delivery& d) { return std::string(d.payload.begin(), d.payload.end()); }
  std::optional<GroupMetrics> group_metrics() {
    for (const auto& s : broker->metrics().streams)
      for (const auto& g : s.groups)
        if (g.group_id == group) return g;
    return std::nullopt;
  }
};

TEST_F(GroupTest, CompetingHoldersGetTheirOwnLeasesAndOnlyTheHolderMayAct) {
  auto config = valid_group_config(LaneId{0});
  config.max_in_flight_per_holder = 1;
  config.visibility_timeout_ms = 1'000;  // also how long a terminal handle answers DeliveryTerminal
  make_group(config);
  append(2);
  Consumer a = consumer();
  auto da = a.delivery();
  ASSERT_TRUE(da);
  ASSERT_TRUE(da->lease);
  EXPECT_EQ(da->sequence, Sequence{1});
  EXPECT_EQ(text(*da), "r-0");
  EXPECT_TRUE(a.saw_error(ErrorCode::kBackpressure));  // max_in_flight_per_holder = 1
  Consumer b = consumer();
  auto db = b.delivery();
  ASSERT_TRUE(db);
  EXPECT_EQ(db->sequence, Sequence{2});  // the record a could not take
  EXPECT_NE(*db->lease, *da->lease);

  // Only the holder may act on a lease.
  EXPECT_EQ(error_code(a.request(fresh_id(), req::Ack{a.sub, *db->lease})), code(ErrorCode::kNotLeaseHolder));
  // A subscription of another session is not b's to name.
  EXPECT_EQ(error_code(b.request(fresh_id(), req::Ack{a.sub, *da->lease})), code(ErrorCode::kUnknownSubscription));
  EXPECT_EQ(error_code(b.request(fresh_id(), req::AddCredit{a.sub, 1})), code(ErrorCode::kUnknownSubscription));

  auto acked = a.request(fresh_id(), req::Ack{a.sub, *da->lease});
  EXPECT_NE(body<resp::Ok>(acked), nullptr) << error_text(acked);
  EXPECT_NE(body<resp::Ok>(b.request(fresh_id(), req::Ack{b.sub, *db->lease})), nullptr);
  EXPECT_EQ(error_code(a.request(fresh_id(), req::Ack{a.sub, *da->lease})), code(ErrorCode::kDeliveryTerminal));
  // Reclaimed after visibility_timeout_ms: the handle is then unknown.
  EXPECT_TRUE(cowboy::testing::eventually([&] {
    return error_code(a.request(fresh_id(), req::Ack{a.sub, *da->lease})) == code(ErrorCode::kLeaseStale);
  }));
  auto m = group_metrics();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->counters.acked, 2u);
  EXPECT_EQ(m->in_flight, 0u);
  EXPECT_EQ(m->pending, 0u);
}

TEST_F(GroupTest, AnUnackedLeaseIsRedeliveredCountingAttemptsThenDeadLetteredAndRedriven) {
  auto config = valid_group_config(LaneId{0});
  config.visibility_timeout_ms = 200;
  config.max_visibility_ms = 1'000;
  config.max_attempts = 2;
  make_group(config);
  append(1);
  Consumer a = consumer();
  auto first = a.delivery();
  ASSERT_TRUE(first);
  auto second = a.delivery();  // the lease expired without an action
  ASSERT_TRUE(second);
  EXPECT_EQ(second->sequence, first->sequence);
  EXPECT_NE(*second->lease, *first->lease);
  EXPECT_EQ(error_code(a.request(fresh_id(), req::Ack{a.sub, *first->lease})), code(ErrorCode::kLeaseStale));
  // The second expiry exhausts max_attempts = 2: no third delivery.
  EXPECT_FALSE(a.delivery(std::chrono::milliseconds(800)));
  auto m = group_metrics();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->counters.delivered, 2u);
  EXPECT_EQ(m->counters.redelivered, 1u);
  EXPECT_EQ(m->counters.expired, 1u);
  EXPECT_EQ(m->dead_letters, 1u);

  // The operator's dead-letter view lists it, and a redrive delivers it again.
  auto handler = cbqsd::admin_handler(*broker);
  std::string q = "stream=" + to_hex(stream_id) + "&group=" + std::to_string(group.value);
  auto listed = handler({"GET", "/v1/groups/dead-letters?" + q, "", {}});
  EXPECT_EQ(listed.status, 200);
  EXPECT_NE(listed.body.find("{\"sequence\":1,\"attempts\":2,\"reason\":\"max_attempts\""), std::string::npos)
      << listed.body;
  EXPECT_NE(listed.body.find("\"next_after\":null"), std::string::npos);
  EXPECT_EQ(handler({"GET", "/v1/groups/dead-letters?stream=zz&group=1", "", {}}).status, 400);
  EXPECT_EQ(handler({"GET", "/v1/groups/dead-letters?" + q + "7", "", {}}).status, 404);
  auto redriven = handler({"POST", "/v1/groups/redrive?" + q, "", {}});
  EXPECT_EQ(redriven.body, "{\"redriven\":1}\n");
  auto again = a.delivery();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->sequence, first->sequence);
  EXPECT_NE(body<resp::Ok>(a.request(fresh_id(), req::Ack{a.sub, *again->lease})), nullptr);
  EXPECT_EQ(group_metrics()->dead_letters, 0u);
}

TEST_F(GroupTest, NackRedeliversAndRejectDeadLettersAtOnce) {
  auto config = valid_group_config(LaneId{0});
  config.visibility_timeout_ms = 1'000;
  make_group(config);
  append(2);
  Consumer a = consumer();
  auto one = a.delivery(), two = a.delivery();
  ASSERT_TRUE(one && two);
  EXPECT_NE(body<resp::Ok>(a.request(fresh_id(), req::Nack{a.sub, *one->lease})), nullptr);
  EXPECT_NE(body<resp::Ok>(a.request(fresh_id(), req::Reject{a.sub, *two->lease})), nullptr);
  EXPECT_EQ(error_code(a.request(fresh_id(), req::Extend{a.sub, *two->lease, 100})), code(ErrorCode::kDeliveryTerminal));
  auto redelivered = a.delivery();
  ASSERT_TRUE(redelivered);
  EXPECT_EQ(redelivered->sequence, one->sequence);
  EXPECT_FALSE(a.delivery(std::chrono::milliseconds(500)));  // the rejected one is not delivered again
  EXPECT_EQ(broker->dead_letters(stream_id, group, Sequence{0}, 10)->at(0).reason, DeadReason::kRejected);
}

TEST_F(GroupTest, GroupSubscriptionsCheckVerbLaneScopeGroupScopeThenTheGroup) {
  make_group(valid_group_config(LaneId{0}));
  auto try_subscribe = [&](const StreamGrantV2& g, SourceGroup source) {
    auto c = connect();
    Bytes32 s = open_session(*c, g);
    return error_code(request(*c, s, 1, req::Subscribe{source, 1 << 20}));
  };
  EXPECT_EQ(try_subscribe(grant(kAll & ~0x0002), {lane, group}), code(ErrorCode::kVerbNotGranted));
  EXPECT_EQ(try_subscribe(grant(kAll, LaneScopeExact{LaneId{lane.value + 1}}), {lane, group}),
            code(ErrorCode::kLaneNotInScope));
  // Lane before group when both are out of scope.
  EXPECT_EQ(try_subscribe(d->grant(kAll, LaneScopeExact{LaneId{lane.value + 1}}, 600'000,
                                   GroupScopeExact{GroupId{group.value + 1}}),
                          {lane, group}),
            code(ErrorCode::kLaneNotInScope));
  EXPECT_EQ(try_subscribe(d->grant(kAll, LaneScopeAny{}, 600'000, GroupScopeExact{GroupId{group.value + 1}}), {lane, group}),
            code(ErrorCode::kGroupNotInScope));
  EXPECT_EQ(try_subscribe(grant(kAll), {lane, GroupId{group.value + 1}}), code(ErrorCode::kUnknownGroup));
  EXPECT_EQ(try_subscribe(grant(kAll), {LaneId{lane.value + 1}, group}), code(ErrorCode::kUnknownGroup));  // not that lane's group
  // An exact group scope naming this group is enough.
  auto c = connect();
  Bytes32 s = open_session(*c, d->grant(0x0002, LaneScopeExact{lane}, 600'000, GroupScopeExact{group}));
  EXPECT_NE(body<resp::Ok>(request(*c, s, 2, req::Subscribe{SourceGroup{lane, group}, 1 << 20})), nullptr);
}

TEST_F(GroupTest, ASuspendedAccountKeepsLeaseActionsButGetsNoNewLeaseUntilSolventAgain) {
  auto config = valid_group_config(LaneId{0});
  config.max_in_flight_per_holder = 2;
  make_group(config);
  append(5);
  Consumer a = consumer();
  auto one = a.delivery(), two = a.delivery();
  ASSERT_TRUE(one && two);
  std::uint64_t rate = node->params()->stream_rate_per_block;
  ASSERT_TRUE(set_param("cbqs.stream_rate_per_block", 1'000'000'000'000));
  ASSERT_TRUE(admin->send_instruction(SettleAccountV2{owner->address(), provider.address})->ok());
  auto solvent_now = [&] {
    auto account = node->account(owner->address(), provider.address);
    return account.ok() && solvent(*account, *node->height());
  };
  ASSERT_TRUE(cowboy::testing::eventually([&] { return !solvent_now(); }));
  await_refresh();
  // §6.2's converse: Ack and Nack stay available ...
  EXPECT_NE(body<resp::Ok>(a.request(fresh_id(), req::Ack{a.sub, *one->lease})), nullptr);
  EXPECT_NE(body<resp::Ok>(a.request(fresh_id(), req::Nack{a.sub, *two->lease})), nullptr);
  // ... and no new lease is issued although slots are free and records wait.
  EXPECT_FALSE(a.delivery(std::chrono::milliseconds(1'500)));
  EXPECT_EQ(group_metrics()->in_flight, 0u);

  // Back to the old rate (a settle snapshots it), then enough balance for it.
  ASSERT_TRUE(set_param("cbqs.stream_rate_per_block", rate));
  ASSERT_TRUE(admin->send_instruction(SettleAccountV2{owner->address(), provider.address})->ok());
  auto topped = owner->send_instruction(TopUpAccountV2{owner->address(), provider.address, u128(1'000'000'000ULL)});
  ASSERT_TRUE(topped.ok() && topped->ok()) << (topped.ok() ? topped->error.value_or("") : "no receipt");
  ASSERT_TRUE(cowboy::testing::eventually(solvent_now));
  await_refresh();
  auto resumed = a.delivery();
  ASSERT_TRUE(resumed);
  EXPECT_NE(body<resp::Ok>(a.request(fresh_id(), req::Reject{a.sub, *resumed->lease})), nullptr);
}

TEST_F(GroupTest, DeletingAGroupEndsItsSubscriptionsWithUnknownGroup) {
  make_group(valid_group_config(LaneId{0}));
  append(1);
  Consumer a = consumer();
  auto d1 = a.delivery();
  ASSERT_TRUE(d1);
  EXPECT_NE(body<resp::Ok>(request(*manager, manager_session, 3, req::DeleteGroup{group})), nullptr);
  EXPECT_TRUE(a.saw_error(ErrorCode::kUnknownGroup));
  EXPECT_EQ(error_code(a.request(fresh_id(), req::Ack{a.sub, *d1->lease})), code(ErrorCode::kUnknownSubscription));
  EXPECT_FALSE(broker->dead_letters(stream_id, group, Sequence{0}, 10));
}

TEST_F(GroupTest, TwoCompetingConsumersDrain100kRecordsEveryOneAcked) {
  constexpr int kRecords = 100'000;
  auto config = valid_group_config(LaneId{0});
  config.max_in_flight = 2'000;
  config.max_in_flight_per_holder = 1'000;
  config.visibility_timeout_ms = 30'000;
  make_group(config);
  for (int done = 0; done < kRecords; done += 10'000) append(10'000, "bulk" + std::to_string(done));

  std::vector<std::uint32_t> acked(kRecords + 1, 0);  // per sequence; each consumer writes its own array
  std::vector<std::uint32_t> acked_b(kRecords + 1, 0);
  std::atomic<int> total{0};
  std::atomic<bool> failed{false};
  auto run = [&](Consumer& k, std::vector<std::uint32_t>& mine) {
    std::uint64_t sent = 0, answered = 0;
    // Until every record is taken, then until this consumer's requests are all
    // answered: closing earlier could drop Acks the broker has not read yet.
    while ((total.load() < kRecords || answered < sent) && !failed) {
      auto f = k.c->receive(std::chrono::milliseconds(200));
      if (!f) continue;  // the other consumer may be draining the rest
      if (auto* d = std::get_if<Delivery>(&*f)) {
        if (!k.c->send(Request{rid(1'000'000 + sent++), k.session, req::Ack{k.sub, *d->lease}})) failed = true;
        if (!k.c->send(Request{rid(1'000'000 + sent++), k.session, req::AddCredit{k.sub, 152 + d->payload.size()}}))
          failed = true;
        if (d->sequence.value > static_cast<std::uint64_t>(kRecords)) failed = true;
        else if (mine[d->sequence.value]++ == 0) total.fetch_add(1);
      } else if (std::holds_alternative<Response>(*f)) {
        ++answered;
      } else if (auto* e = std::get_if<ErrorFrame>(&*f); e && e->code != code(ErrorCode::kBackpressure)) {
        failed = true;
      }
    }
  };
  // Credit for 1,000 deliveries each, topped up one delivery at a time.
  Consumer a = consumer(1'000 * 200), b = consumer(1'000 * 200);
  std::thread ta([&] { run(a, acked); }), tb([&] { run(b, acked_b); });
  ta.join();
  tb.join();
  ASSERT_FALSE(failed);
  std::uint64_t duplicates = 0, missing = 0, by_a = 0;
  for (int s = 1; s <= kRecords; ++s) {
    std::uint32_t seen = acked[s] + acked_b[s];
    if (seen == 0) ++missing;
    if (seen > 1) duplicates += seen - 1;
    by_a += acked[s] > 0;
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(duplicates, 0u);  // no lease expired: nothing was delivered twice
  EXPECT_GT(by_a, 0u);
  EXPECT_LT(by_a, static_cast<std::uint64_t>(kRecords));  // both consumers took part
  std::cout << "[ drained ] 100000 records: consumer a " << by_a << ", consumer b " << kRecords - by_a
            << ", duplicates " << duplicates << "\n";
  ASSERT_TRUE(cowboy::testing::eventually([&] { return group_metrics()->counters.acked == kRecords; }));
  EXPECT_EQ(group_metrics()->pending, 0u);
}

}  // namespace
}  // namespace cowboy::cbqs::broker
