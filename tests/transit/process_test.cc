// transitd and transit as real processes on 127.0.0.1: acknowledged decisions
// and turns survive SIGKILL (and their exact retries return the original
// receipts), no turn is published in part, and the CLI works against
// `transitd --dev`.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "../support/poll.h"
#include "../support/run.h"
#include "common/bytes.h"
#include "common/keyfile.h"
#include "net/http_connection.h"
#include "net/http_server.h"
#include "process_fixture.h"
#include "transit/maintain/maintainer.h"

namespace cowboy::transit {
namespace {

using testing::key_of;
using testing::seed_of;

TEST_F(ProcessTest, AcknowledgedDecisionsSurviveSigkillAndTheirRetriesReturnTheOriginals) {
  write_sample_genesis();
  std::uint16_t port = 0;
  auto node = start_node(port);
  ASSERT_NE(port, 0);
  auto options = [&](auto principal, std::uint8_t seed) { return kill_options(port, principal, seed); };
  Client root(options(1, 0));
  constexpr int kWriters = 4;
  for (int i = 0; i < kWriters; ++i)
    ASSERT_TRUE(root.submit(CreatePrincipal{PrincipalId{10 + static_cast<Id>(i)}, key_of(seed_of(static_cast<std::uint8_t>(10 + i))),
                                            RealmScope{}, Permissions{kAllPermissions}, std::nullopt, std::nullopt})
                    .ok());

  // Writers submit until the node dies; each keeps the signed bytes and receipts acknowledged.
  std::vector<std::vector<std::pair<SignedRequest, Receipt>>> acked(kWriters);
  std::atomic<int> total{0};
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i)
    writers.emplace_back([&, i] {
      Client c(options(10 + i, static_cast<std::uint8_t>(10 + i)));
      for (Id seq = 1;; ++seq) {
        const SignedRequest s = sign(
            c.build(CreatePrincipal{PrincipalId{100000 * (i + 1) + seq}, key_of(seed_of(200)), RealmScope{}, Permissions{kInspect},
                                    std::nullopt, std::nullopt},
                    seq),
            seed_of(static_cast<std::uint8_t>(10 + i)));
        auto r = c.resubmit(s);
        if (!r.ok()) return;
        acked[i].emplace_back(s, *r);
        ++total;
      }
    });
  while (total < 200) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  node->kill(SIGKILL);
  for (auto& w : writers) w.join();

  node = start_node(port);
  ASSERT_NE(port, 0);
  for (int i = 0; i < kWriters; ++i) {
    ASSERT_FALSE(acked[i].empty());
    Client c(options(10 + i, static_cast<std::uint8_t>(10 + i)));
    c.set_next_sequence(1);
    for (const auto& [signed_request, receipt] : acked[i]) {
      auto again = c.resubmit(signed_request);
      ASSERT_TRUE(again.ok()) << again.error().message;
      EXPECT_EQ(to_json(*again), to_json(receipt));
    }
    // The journal holds at least every acknowledged decision (one more may have landed unanswered).
    auto me = c.identity();
    ASSERT_TRUE(me.ok());
    EXPECT_GE(me->sequence, acked[i].back().first.request.sequence);
    EXPECT_LE(me->sequence, acked[i].back().first.request.sequence + 1);
  }
}

// Workers send an input and publish a turn consuming it, writing the input's
// number under four keys, until the node is killed: after the restart every
// acknowledged turn is there, each resource shows all four keys of one turn
// (never a mix), and the mailbox head moved with exactly the published turns.
TEST_F(ProcessTest, ASigkillDuringTurnsLosesNoAcknowledgedTurnAndPublishesNoPartialOne) {
  write_sample_genesis();
  std::uint16_t port = 0;
  auto node = start_node(port);
  ASSERT_NE(port, 0);
  auto options = [&](auto principal, std::uint8_t seed) { return kill_options(port, principal, seed); };
  auto bytes = [](const std::string& s) { return std::vector<std::uint8_t>(s.begin(), s.end()); };
  const std::vector<std::string> names = {"n", "a", "b", "c"};
  Client root(options(1, 0));
  constexpr int kWorkers = 4;
  for (int i = 0; i < kWorkers; ++i) {
    const Pid pid{static_cast<Id>(1 + i)};
    const PrincipalId worker{static_cast<Id>(10 + i)};
    ASSERT_TRUE(root.submit(CreatePrincipal{worker, key_of(seed_of(static_cast<std::uint8_t>(worker.value))), RealmScope{},
                                            Permissions{kAllPermissions}, std::nullopt, std::nullopt})
                    .ok());
    auto created = root.submit(CreateResource{{"doc" + std::to_string(pid.value)}, std::nullopt});
    ASSERT_TRUE(created.ok());
    ASSERT_TRUE(root.submit(CreateProcess{pid, {{{"doc"}}}}).ok());
    ASSERT_TRUE(root.submit(Associate{pid, {"doc"}, std::get<ResourceCreated>(created->outcome).resource}).ok());
    ASSERT_TRUE(root.submit(Initialize{pid, 0}).ok());
  }
  std::vector<std::vector<std::pair<SignedRequest, Receipt>>> acked(kWorkers);
  std::atomic<int> total{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < kWorkers; ++i)
    workers.emplace_back([&, i] {
      const Pid pid{static_cast<Id>(1 + i)};
      const ResourceId resource{static_cast<Id>(1 + i)};
      Client c(options(10 + i, static_cast<std::uint8_t>(10 + i)));
      auto owned = c.submit(Own{pid, 1});
      if (!owned.ok()) return;
      const Id generation = std::get<ProcessChanged>(owned->outcome).generation;
      for (Id k = 1;; ++k) {
        if (!c.submit(Send{pid, {bytes(std::to_string(k))}}).ok()) return;
        Turn t{pid, generation, k, resource, std::nullopt, {}, {}, {}, {}, std::nullopt};
        for (const auto& name : names) t.mutations.items.push_back({{bytes(name)}, {{bytes(std::to_string(k))}}});
        const SignedRequest s = sign(c.build(t, *c.next_sequence()), seed_of(static_cast<std::uint8_t>(10 + i)));
        auto r = c.resubmit(s);
        if (!r.ok()) return;
        acked[i].emplace_back(s, *r);
        ++total;
      }
    });
  while (total < 200) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  node->kill(SIGKILL);
  for (auto& w : workers) w.join();

  node = start_node(port);
  ASSERT_NE(port, 0);
  Client reader(options(1, 0));
  for (int i = 0; i < kWorkers; ++i) {
    const Pid pid{static_cast<Id>(1 + i)};
    const ResourceId resource{static_cast<Id>(1 + i)};
    ASSERT_FALSE(acked[i].empty());
    Client c(options(10 + i, static_cast<std::uint8_t>(10 + i)));
    for (const auto& [signed_request, receipt] : acked[i]) {
      auto again = c.resubmit(signed_request);
      ASSERT_TRUE(again.ok()) << again.error().message;
      EXPECT_EQ(to_json(*again), to_json(receipt));
    }
    Slots<EntryKey, 8> keys;
    for (std::size_t k = 0; k < names.size(); ++k) keys.items[k] = EntryKey{bytes(names[k])};
    auto read = reader.query(ReadEntries{resource, std::nullopt, std::nullopt, keys});
    ASSERT_TRUE(read.ok()) << read.error().message;
    const auto& batch = std::get<EntryBatch>(read->result);
    ASSERT_TRUE(batch.entries.items[0]);
    const auto n = batch.entries.items[0]->value;
    for (std::size_t k = 1; k < names.size(); ++k) {
      ASSERT_TRUE(batch.entries.items[k]);
      EXPECT_EQ(batch.entries.items[k]->value, n);  // one turn's keys, never a mix
    }
    const Id published = std::stoull(std::string(n.value.begin(), n.value.end()));
    const Id last_acked = std::get<TurnPublished>(acked[i].back().second.outcome).consumed.value();
    EXPECT_GE(published, last_acked);
    EXPECT_LE(published, last_acked + 1);
    auto process = reader.query(ProcessRead{pid});
    ASSERT_TRUE(process.ok());
    EXPECT_EQ(std::get<ProcessInfo>(process->result).head, published + 1);  // mailbox progress moved with the turns
    EXPECT_EQ(batch.revision, Revision{published + 1});
  }
}

// A worker process is SIGKILLed in the middle of its loop. The operator
// rotates the worker principal's key with the CLI (`transit worker rotate`,
// the procedure of docs/transit.md decision 59); the replacement worker takes
// over the process at the next generation and finishes the mailbox: every input consumed exactly
// once (count and sum), none lost, none twice - the dead worker's last turn,
// accepted or not, is counted once either way, since the replacement reads
// the state and the mailbox head the node published.
TEST_F(ProcessTest, AReplacementWorkerFinishesTheMailboxOfASigkilledOne) {
  write_sample_genesis();
  std::uint16_t port = 0;
  auto node = start_node(port);
  ASSERT_NE(port, 0);
  ClientOptions root_options = kill_options(port, 1, 0);
  root_options.max_attempts = 5;
  Client root(root_options);
  const auto old_key = dir_ / "old.key", new_key = dir_ / "new.key", root_key = dir_ / "root.key";
  const auto old_seed = load_or_create_secret(old_key);
  ASSERT_TRUE(old_seed.ok());
  {
    std::ofstream out(root_key);
    out << to_hex(ByteView(seed_of(0))) << "\n";
  }
  constexpr Pid kPid{7};
  constexpr PrincipalId kWorker{10};
  constexpr std::uint64_t kBits = kInspect | kRead | kWrite | kExecute;
  const auto accepted = [&](Command op) {
    auto r = root.submit(std::move(op));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : Receipt{};
  };
  accepted(CreatePrincipal{kWorker, key_of(*old_seed), RealmScope{}, Permissions{kBits}, kPid, std::nullopt});
  const auto doc = std::get<ResourceCreated>(accepted(CreateResource{{"doc"}, std::nullopt}).outcome).resource;
  accepted(CreateProcess{kPid, {{{"doc"}}}});
  accepted(Associate{kPid, {"doc"}, doc});
  accepted(Initialize{kPid, 0});
  constexpr Id kInputs = 60, kBeforeKill = 30;
  const auto send = [&](Id n) {
    const std::string v = std::to_string(n);
    accepted(Send{kPid, {{v.begin(), v.end()}}});
  };
  for (Id n = 1; n <= kBeforeKill; ++n) send(n);

  const auto worker = [&](const std::filesystem::path& key) {
    return std::make_unique<cowboy::testing::ChildProcess>(std::vector<std::string>{
        kBin + "/transit_test_worker", "--port", std::to_string(port), "--principal", std::to_string(kWorker.value), "--key",
        key.string(), "--pid", std::to_string(kPid.value), "--resource", std::to_string(doc.value), "--until",
        std::to_string(kInputs)});
  };
  auto first = worker(old_key);
  ASSERT_TRUE(first->wait_for_line("consumed 10", std::chrono::seconds(60)));
  first->kill(SIGKILL);
  for (Id n = kBeforeKill + 1; n <= kInputs; ++n) send(n);  // work the dead worker never saw

  auto read = root.query(ProcessRead{kPid});
  ASSERT_TRUE(read.ok());
  const auto before = std::get<ProcessInfo>(read->result);
  EXPECT_EQ(before.owner, std::optional<PrincipalId>(kWorker));
  EXPECT_GE(before.head, 11u);
  EXPECT_LE(before.head, kBeforeKill + 1);
  // The procedure's step 2: the dead worker's key file tells its mask at the PID.
  const std::string cli = kBin + "/transit --endpoint 127.0.0.1:" + std::to_string(port) + " --realm dev";
  auto identity = cowboy::testing::run(cli + " --principal 10 --key " + old_key.string() + " identity");
  ASSERT_EQ(identity.status, 0) << identity.out;
  const std::string prefix = "principal 10: ", suffix = ", pid scope 7";
  ASSERT_EQ(identity.out.rfind(prefix, 0), 0u) << identity.out;
  const std::string mask = identity.out.substr(prefix.size(), identity.out.find(suffix) - prefix.size());
  EXPECT_EQ(mask, "inspect,read,write,execute");
  auto rotated = cowboy::testing::run(cli + " --principal 1 --key " + root_key.string() + " worker rotate --pid 7" +
                                      " --generation " + std::to_string(before.generation) + " --worker 10 --old-key " +
                                      old_key.string() + " --permissions " + mask + " --key-out " + new_key.string());
  ASSERT_EQ(rotated.status, 0) << rotated.out;
  EXPECT_NE(rotated.out.find("worker_rotated"), std::string::npos) << rotated.out;
  const auto new_seed = load_secret(new_key);
  ASSERT_TRUE(new_seed.ok());
  EXPECT_NE(key_of(*new_seed), key_of(*old_seed));
  auto second = worker(new_key);
  ASSERT_TRUE(second->wait_for_line("done", std::chrono::seconds(120)));

  read = root.query(ProcessRead{kPid});
  ASSERT_TRUE(read.ok());
  const auto after = std::get<ProcessInfo>(read->result);
  EXPECT_EQ(after.head, kInputs + 1);
  EXPECT_EQ(after.generation, before.generation + 1);
  EXPECT_EQ(after.owner, std::optional<PrincipalId>(kWorker));
  Slots<EntryKey, 8> keys;
  keys.items[0] = EntryKey{{'c', 'o', 'u', 'n', 't'}};
  keys.items[1] = EntryKey{{'s', 'u', 'm'}};
  auto state = root.query(ReadEntries{doc, std::nullopt, std::nullopt, keys});
  ASSERT_TRUE(state.ok());
  const auto& batch = std::get<EntryBatch>(state->result);
  ASSERT_TRUE(batch.entries.items[0] && batch.entries.items[1]);
  const auto number = [](const EntryValue& v) { return std::string(v.value.begin(), v.value.end()); };
  EXPECT_EQ(number(batch.entries.items[0]->value), std::to_string(kInputs));                     // each input once
  EXPECT_EQ(number(batch.entries.items[1]->value), std::to_string(kInputs * (kInputs + 1) / 2));  // and every one
  EXPECT_EQ(batch.revision, Revision{kInputs + 1});  // one revision per turn: no turn published twice
}

/// `op` accepted by `c`: its receipt (an empty one, after a failure).
Receipt accepted(Client& c, Command op) {
  auto r = c.submit(std::move(op));
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : Receipt{};
}
/// A realm-wide principal `id` with the key of seed_of(id), holding `bits`.
void realm_principal(Client& root, PrincipalId id, std::uint64_t bits) {
  accepted(root, CreatePrincipal{id, key_of(seed_of(static_cast<std::uint8_t>(id.value))), RealmScope{}, Permissions{bits},
                                 std::nullopt, std::nullopt});
}
/// Process `pid` requiring "doc", associated with a new resource "doc<pid>", initialized (idle, generation 1).
void doc_process(Client& root, Pid pid) {
  std::string name = "doc";
  const auto doc = std::get<ResourceCreated>(accepted(root, CreateResource{{name.append(std::to_string(pid.value))}, std::nullopt}).outcome).resource;
  accepted(root, CreateProcess{pid, {{{"doc"}}}});
  accepted(root, Associate{pid, {"doc"}, doc});
  accepted(root, Initialize{pid, 0});
}
/// What a ping-pong actor holds: everything but courier, so it cannot deliver.
constexpr std::uint64_t kActor = kAllPermissions & ~std::uint64_t{kCourier};

// Two actors exchange 1,000 messages with nothing but transitd and
// transitd --maintain moving them (decisions 50, 53, 56): each worker process
// publishes a turn consuming its head input k and proposing k + 1 to the
// other; only the maintainer's courier delivers. Along the way each process
// is SIGKILLed and started again - the node once, the maintainer four times,
// each worker once - with a second maintainer beside the first from 600 on,
// and the exchange still ends exactly: every number once, in order
// (a lost output would stall it, a duplicate would show in the mailbox counts).
TEST_F(ProcessTest, APingPongOfAThousandMessagesRunsUnattendedAcrossASigkillOfEachProcess) {
  constexpr Id kLast = 1000;
  constexpr Pid kA{1}, kB{2};
  constexpr PrincipalId kMaintainer{3}, kSecondMaintainer{4}, kWorkerA{10}, kWorkerB{11};
  write_sample_genesis();
  std::uint16_t port = 0;
  auto node = start_node(port);
  ASSERT_NE(port, 0);
  Client root(kill_options(port, 1, 0));
  for (PrincipalId m : {kMaintainer, kSecondMaintainer}) realm_principal(root, m, maintain::kRequiredPermissions);
  for (PrincipalId worker : {kWorkerA, kWorkerB}) realm_principal(root, worker, kActor);
  for (Pid pid : {kA, kB}) doc_process(root, pid);
  accepted(root, Send{kA, InputValue{{'0'}}});  // A starts with 0: A consumes the even numbers, B the odd

  const std::string endpoint = "127.0.0.1:" + std::to_string(port);
  std::map<PrincipalId, std::uint16_t> admin_port;  // each maintainer's /metrics
  auto start_maintainer = [&](auto principal_of) {
    const PrincipalId principal = testing::id<PrincipalId>(principal_of);
    auto m = std::make_unique<cowboy::testing::ChildProcess>(std::vector<std::string>{
        kBin + "/transitd", "--maintain", "--endpoint", endpoint, "--realm", "dev", "--principal",
        std::to_string(principal.value), "--key",
        key_file("maintainer" + std::to_string(principal.value) + ".key", static_cast<std::uint8_t>(principal.value)),
        "--admin-listen", "127.0.0.1:0", "--idle-ms", "2", "--log-level", "warn"});
    auto ready = m->wait_for_line("transit_maintain_ready", std::chrono::seconds(30));
    std::smatch match;
    EXPECT_TRUE(ready && std::regex_search(*ready, match, std::regex(R"(admin=127\.0\.0\.1:(\d+))")));
    admin_port[principal] = ready ? static_cast<std::uint16_t>(std::stoi(match[1])) : 0;
    return m;
  };
  auto start_worker = [&](auto pid_of, auto peer_of, auto principal_of) {
    const Pid pid = testing::id<Pid>(pid_of);
    const Pid peer = testing::id<Pid>(peer_of);
    const PrincipalId principal = testing::id<PrincipalId>(principal_of);
    auto w = std::make_unique<cowboy::testing::ChildProcess>(std::vector<std::string>{
        kBin + "/transit_ping_pong_worker", "--port", std::to_string(port), "--principal", std::to_string(principal.value), "--key",
        key_file("worker" + std::to_string(principal.value) + ".key", static_cast<std::uint8_t>(principal.value)), "--pid",
        std::to_string(pid.value), "--peer", std::to_string(peer.value), "--resource", std::to_string(pid.value), "--last",
        std::to_string(kLast)});
    EXPECT_TRUE(w->wait_for_line("transit_ping_pong_worker_ready", std::chrono::seconds(30)));
    return w;
  };
  auto maintainer = start_maintainer(kMaintainer);
  auto worker_a = start_worker(kA, kB, kWorkerA);
  auto worker_b = start_worker(kB, kA, kWorkerB);

  // The highest number consumed so far (the "last" entries), 0 while the node is away.
  auto progress = [&] {
    Id best = 0;
    for (Pid pid : {kA, kB}) {
      Slots<EntryKey, 8> keys;
      keys.items[0] = EntryKey{{'l', 'a', 's', 't'}};
      auto read = root.query(ReadEntries{ResourceId{pid.value}, std::nullopt, std::nullopt, keys});  // doc<pid> is resource <pid>
      if (!read.ok()) continue;
      if (const auto& e = std::get<EntryBatch>(read->result).entries.items[0])
        best = std::max<Id>(best, std::stoull(std::string(e->value.value.begin(), e->value.value.end())));
    }
    return best;
  };
  const auto started = std::chrono::steady_clock::now();
  auto reach = [&](Id n) { return cowboy::testing::eventually([&] { return progress() >= n; }, std::chrono::seconds(60)); };
  ASSERT_TRUE(reach(200)) << "stalled at " << progress();
  node->kill(SIGKILL);
  node = start_node(port);  // the same port: the others reconnect
  ASSERT_NE(port, 0);
  ASSERT_TRUE(reach(400)) << "stalled at " << progress() << " after the node's SIGKILL";
  for (Id at = 450; at <= 600; at += 50) {  // the maintainer, four times, wherever it is in its round
    maintainer->kill(SIGKILL);
    maintainer = start_maintainer(kMaintainer);
    ASSERT_TRUE(reach(at)) << "stalled at " << progress() << " after the maintainer's SIGKILL";
  }
  auto second = start_maintainer(kSecondMaintainer);  // from here on, two at once
  worker_a->kill(SIGKILL);
  worker_a = start_worker(kA, kB, kWorkerA);
  ASSERT_TRUE(reach(800)) << "stalled at " << progress() << " after worker A's SIGKILL";
  worker_b->kill(SIGKILL);
  worker_b = start_worker(kB, kA, kWorkerB);
  ASSERT_TRUE(reach(kLast)) << "stalled at " << progress() << " after worker B's SIGKILL";
  // Both workers see the end and exit by themselves.
  std::optional<int> a_status, b_status;
  ASSERT_TRUE(cowboy::testing::eventually(
      [&] {
        if (!a_status) a_status = worker_a->exited();
        if (!b_status) b_status = worker_b->exited();
        return a_status && b_status;
      },
      std::chrono::seconds(30)));
  EXPECT_TRUE(WIFEXITED(*a_status) && WEXITSTATUS(*a_status) == 0);
  EXPECT_TRUE(WIFEXITED(*b_status) && WEXITSTATUS(*b_status) == 0);
  std::printf("ping-pong of %llu messages across seven SIGKILLs: %.1f s\n", static_cast<unsigned long long>(kLast),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());

  // Exactly once: A was given 0, 2, .., 1000 (501 inputs), B 1, 3, .., 999 (500), each consumed.
  for (auto [pid, inputs] : {std::pair<Pid, Id>{kA, kLast / 2 + 1}, {kB, kLast / 2}}) {
    auto read = root.query(ProcessRead{pid});
    ASSERT_TRUE(read.ok()) << read.error().message;
    const auto& info = std::get<ProcessInfo>(read->result);
    EXPECT_EQ(info.tail, inputs) << "process " << pid.value;
    EXPECT_EQ(info.head, inputs + 1) << "process " << pid.value;
    EXPECT_EQ(info.cancelled, 0u);
  }
  auto routes = root.query(ListRoutes{std::nullopt});
  ASSERT_TRUE(routes.ok());
  EXPECT_TRUE(std::get<RoutePage>(routes->result).items.items.empty());  // nothing left pending
  // The two maintainers running since 600 delivered the rest between them, and say so on their /metrics.
  EXPECT_FALSE(maintainer->exited());
  EXPECT_FALSE(second->exited());
  Id delivered_by_both = 0;
  for (const auto& [principal, at] : admin_port) {
    auto metrics = net::HttpConnection("127.0.0.1", at).get("/metrics");
    ASSERT_TRUE(metrics.ok()) << metrics.error();
    std::smatch delivered;
    ASSERT_TRUE(std::regex_search(metrics->body, delivered,
                                  std::regex(R"(\ntransit_maintain_resolved_total\{disposition="delivered"\} (\d+))")))
        << metrics->body;
    delivered_by_both += std::stoull(delivered[1]);
    std::printf("maintainer %llu (last start) delivered %s\n", static_cast<unsigned long long>(principal.value),
                delivered[1].str().c_str());
    EXPECT_NE(metrics->body.find("\ntransit_maintain_lag_positions 0\n"), std::string::npos) << principal.value;
    EXPECT_NE(metrics->body.find("\ntransit_maintain_refused_total 0\n"), std::string::npos)  // races only, no errors
        << principal.value;
  }
  EXPECT_GE(delivered_by_both, kLast - 600);  // every output from 600 on, each counted once
  EXPECT_LE(delivered_by_both, kLast - 550);
}

// Two actors exchanging messages and calling an external API run unattended:
// every fifth number's turn also declares an effect (a charge) executed by a
// third real process, which attempts it, calls an HTTP API (this test's) and
// observes the answer as its final result; the answer enters the caller's
// mailbox and the actor consumes it. Only transitd, transitd --maintain, the
// two actors and the executor run; the executor is SIGKILLed once midway.
// Every effect ends closed `observed` with its result in its caller's
// mailbox, consumed; each message arrives once. Then a terminated caller's
// unattempted charge is closed by the maintainer process.
TEST_F(ProcessTest, TwoActorsCallingAnExternalApiRunUnattendedAcrossAnExecutorsSigkill) {
  constexpr Id kLast = 60, kEvery = 5;
  constexpr Pid kA{1}, kB{2};
  constexpr PrincipalId kMaintainer{3}, kWorkerA{10}, kWorkerB{11}, kExecutor{12};
  constexpr Id kEffects = kLast / kEvery + 1;  // 0, 5, .., 60
  std::atomic<int> calls{0};
  net::HttpServer api(
      [&](const net::HttpRequest& req) -> net::HttpReply {
        ++calls;
        return {200, "text/plain", "paid " + req.target.substr(req.target.rfind('/') + 1)};
      },
      "127.0.0.1", 0);
  api.start();
  write_sample_genesis();
  std::uint16_t port = 0;
  auto node = start_node(port);
  ASSERT_NE(port, 0);
  Client root(kill_options(port, 1, 0));
  realm_principal(root, kMaintainer, maintain::kRequiredPermissions);
  realm_principal(root, kWorkerA, kActor);
  realm_principal(root, kWorkerB, kActor);
  realm_principal(root, kExecutor, kInspect | kEffect);
  for (Pid pid : {kA, kB}) doc_process(root, pid);
  accepted(root, Send{kA, InputValue{{'0'}}});

  const auto key = [&](auto principal_of) {

    const PrincipalId principal = testing::id<PrincipalId>(principal_of);
    const Id id = principal.value;
    std::string name = std::to_string(id);  // GCC 12 warns, wrongly, about "p" + std::to_string(id)
    return key_file(name.append(".key"), static_cast<std::uint8_t>(id));
  };
  const std::string bin = kBin + "/transit_ping_pong_worker";
  auto spawn = [&](std::vector<std::string> argv, const char* ready) {
    auto child = std::make_unique<cowboy::testing::ChildProcess>(std::move(argv));
    EXPECT_TRUE(child->wait_for_line(ready, std::chrono::seconds(30)));
    return child;
  };
  auto maintainer = spawn({kBin + "/transitd", "--maintain", "--endpoint", "127.0.0.1:" + std::to_string(port), "--realm",
                           "dev", "--principal", std::to_string(kMaintainer.value), "--key", key(kMaintainer),
                           "--admin-listen", "127.0.0.1:0", "--idle-ms", "2", "--log-level", "warn"},
                          "transit_maintain_ready");
  auto start_executor = [&] {
    return spawn({bin, "--port", std::to_string(port), "--principal", std::to_string(kExecutor.value), "--key", key(kExecutor),
                  "--execute", "--api-port", std::to_string(api.port())},
                 "transit_ping_pong_worker_ready");
  };
  auto executor = start_executor();
  auto actor = [&](auto pid_of, auto peer_of, auto principal_of) {
    const Pid pid = testing::id<Pid>(pid_of);
    const Pid peer = testing::id<Pid>(peer_of);
    const PrincipalId principal = testing::id<PrincipalId>(principal_of);
    return spawn({bin, "--port", std::to_string(port), "--principal", std::to_string(principal.value), "--key", key(principal),
                  "--pid", std::to_string(pid.value), "--peer", std::to_string(peer.value), "--resource", std::to_string(pid.value),
                  "--last", std::to_string(kLast), "--effect-every", std::to_string(kEvery), "--executor",
                  std::to_string(kExecutor.value)},
                 "transit_ping_pong_worker_ready");
  };
  auto a = actor(kA, kB, kWorkerA);
  auto b = actor(kB, kA, kWorkerB);
  ASSERT_TRUE(cowboy::testing::eventually([&] { return calls >= 4; }, std::chrono::seconds(60)));
  executor->kill(SIGKILL);
  executor = start_executor();
  std::optional<int> a_status, b_status;
  ASSERT_TRUE(cowboy::testing::eventually(
      [&] {
        if (!a_status) a_status = a->exited();
        if (!b_status) b_status = b->exited();
        return a_status && b_status;
      },
      std::chrono::seconds(120)))
      << calls << " API calls";
  EXPECT_TRUE(WIFEXITED(*a_status) && WEXITSTATUS(*a_status) == 0);
  EXPECT_TRUE(WIFEXITED(*b_status) && WEXITSTATUS(*b_status) == 0);

  // Each effect closed observed once, its answer an input of its caller's mailbox.
  std::map<Pid, Id> results;  // per caller
  std::optional<Cursor> cursor;
  Id effects = 0;
  do {
    auto page = root.query(ListEffects{std::nullopt, EffectFilter::kAll, cursor});
    ASSERT_TRUE(page.ok()) << page.error().message;
    for (const auto& e : std::get<EffectPage>(page->result).items.items) {
      ++effects;
      ASSERT_TRUE(e.closure) << e.effect;
      EXPECT_EQ(e.closure->kind, ClosureKind::kObserved);
      EXPECT_EQ(e.closure->step.principal, kExecutor);
      ASSERT_EQ(e.observations.items.size(), 1u);
      EXPECT_TRUE(e.observations.items[0].input);
      const std::string paid = "paid " + std::string(e.intent.intent.value.begin(), e.intent.intent.value.end());
      EXPECT_EQ(std::string(e.observations.items[0].result.value.begin(), e.observations.items[0].result.value.end()), paid);
      ++results[e.pid];
    }
    cursor = std::get<EffectPage>(page->result).cursor;
  } while (cursor);
  EXPECT_EQ(effects, kEffects);
  EXPECT_GE(calls.load(), static_cast<int>(kEffects));  // at least once each: a SIGKILL may repeat one
  // A consumed 0, 2, .., 60 and its results, B 1, 3, .., 59 and its; nothing left.
  for (auto [pid, numbers] : {std::pair<Pid, Id>{kA, kLast / 2 + 1}, {kB, kLast / 2}}) {
    auto read = root.query(ProcessRead{pid});
    ASSERT_TRUE(read.ok()) << read.error().message;
    const auto& info = std::get<ProcessInfo>(read->result);
    EXPECT_EQ(info.tail, numbers + results[pid]) << "process " << pid.value;
    EXPECT_EQ(info.head, info.tail + 1) << "process " << pid.value;
    EXPECT_EQ(info.cancelled, 0u);
  }
  std::printf("%llu effects, %d API calls\n", static_cast<unsigned long long>(effects), calls.load());

  // With the executor gone, a process that declares a charge and is
  // terminated before anyone attempts it: the maintainer process closes the
  // intent unattempted_cancel, as its own principal (decision 60).
  executor->kill(SIGKILL);
  doc_process(root, Pid{3});
  const Id generation = std::get<ProcessChanged>(accepted(root, Own{Pid{3}, 1}).outcome).generation;
  Turn charge{Pid{3}, generation, std::nullopt, std::nullopt, std::nullopt, {}, {}, {}, {}, std::nullopt};
  charge.effect = EffectIntent{kExecutor, TrustedMs{SystemClock().now_ms()} + Millis{600'000}, Hex<256>{{'9', '9'}}, 1};
  const Id orphan = std::get<TurnPublished>(accepted(root, charge).outcome).effect.value_or(0);
  accepted(root, Terminate{Pid{3}, generation});
  std::optional<EffectInfo> closed;
  ASSERT_TRUE(cowboy::testing::eventually(
      [&] {
        auto read = root.query(EffectRead{orphan});
        if (read.ok()) closed = std::get<EffectInfo>(read->result);
        return closed && closed->closure;
      },
      std::chrono::seconds(60)));
  EXPECT_EQ(closed->closure->kind, ClosureKind::kUnattemptedCancel);
  EXPECT_EQ(closed->closure->step.principal, kMaintainer);
  EXPECT_FALSE(closed->attempt);
  EXPECT_FALSE(maintainer->exited());
  api.stop();
}

TEST_F(ProcessTest, TheCliAgainstTransitdDev) {
  const auto dev = dir_ / "transitd-dev";
  cowboy::testing::ChildProcess node({kBin + "/transitd", "--dev", "--dev-dir", dev.string(), "--listen", "127.0.0.1:0",
                                         "--admin-listen", "127.0.0.1:0"});
  ASSERT_NE(ready_port(node), 0);
  const std::string cli = kBin + "/transit --dev " + dev.string();

  auto identity = cowboy::testing::run(cli + " identity");
  EXPECT_EQ(identity.status, 0);
  EXPECT_EQ(identity.out,
            "principal 1: inspect,read,write,send,execute,effect,courier,pid_admin,realm_control, policy revision 1, "
            "last sequence 0 (at position 0)\n");
  const auto alice_key = (dir_ / "alice.key").string();
  auto created = cowboy::testing::run(cli + " principal create --id 2 --key-out " + alice_key + " --permissions inspect,read");
  EXPECT_EQ(created.status, 0);
  EXPECT_EQ(created.out, "principal 2 created (role 2, grant 2) at position 1, policy revision 2\n");
  struct stat st {};
  ASSERT_EQ(::stat(alice_key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dev / "root.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto json = cowboy::testing::run(cli + " --json role create --name ops");
  EXPECT_EQ(json.status, 0);
  const auto receipt = nlohmann::json::parse(json.out, nullptr, false);
  EXPECT_EQ(receipt["position"], 2);
  EXPECT_EQ(receipt["outcome"]["role_created"]["role"], 3);

  std::ifstream profile(dev / "transitd-dev.json");
  const auto endpoint = nlohmann::json::parse(profile)["endpoint"].get<std::string>();
  const std::string as_alice =
      kBin + "/transit --endpoint " + endpoint + " --realm dev --principal 2 --key " + alice_key;
  auto mine = cowboy::testing::run(as_alice + " identity");
  EXPECT_EQ(mine.status, 0);
  EXPECT_EQ(mine.out, "principal 2: inspect,read, policy revision 3, last sequence 0 (at position 2)\n");
  auto denied = cowboy::testing::run(as_alice + " --json role create --name x");
  EXPECT_EQ(denied.status, 1);
  EXPECT_NE(denied.out.find(R"("code":"Denied","reason":"not_permitted")"), std::string::npos) << denied.out;
  auto taken = cowboy::testing::run(cli + " principal create --id 2 --key-out " + (dir_ / "bob.key").string());
  EXPECT_EQ(taken.status, 1);
  EXPECT_NE(taken.out.find("subject_taken"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "bob.key"));  // the refused principal's key is not left behind
  // Secrets stay out of output.
  std::ifstream key_in(alice_key);
  std::string seed_hex;
  key_in >> seed_hex;
  EXPECT_EQ((identity.out + created.out + json.out + mine.out + denied.out).find(seed_hex), std::string::npos);
}

// The worker loop docs/transit.md shows, command by command.
TEST_F(ProcessTest, TheWorkerLoopFromTheCli) {
  const auto dev = dir_ / "transitd-dev";
  cowboy::testing::ChildProcess node({kBin + "/transitd", "--dev", "--dev-dir", dev.string(), "--listen", "127.0.0.1:0",
                                         "--admin-listen", "127.0.0.1:0"});
  ASSERT_NE(ready_port(node), 0);
  const std::string cli = kBin + "/transit --dev " + dev.string() + " ";
  auto run = [&](const std::string& args) {
    auto r = cowboy::testing::run(cli + args);
    EXPECT_EQ(r.status, 0) << args << ": " << r.out;
    return r.out;
  };
  EXPECT_EQ(run("resource create --name doc"), "resource_created {\"resource\":1,\"revision\":1} at position 1\n");
  run("process create --pid 7 --require doc");
  run("process associate --pid 7 --name doc --resource 1");
  run("process init --pid 7 --generation 0");
  EXPECT_EQ(run("send --pid 7 --value hello"), "sent {\"pid\":7,\"input\":1} at position 5\n");
  run("process own --pid 7 --generation 1");
  EXPECT_EQ(run("process show --pid 7"), "process 7 generation 2 owned owner 1 mailbox 1..1\ninput 1 hello\n");
  EXPECT_NE(run("turn --pid 7 --generation 2 --input 1 --resource 1 --put greeting=hello --put hex:00ff=hex:0102")
                .find("\"consumed\":1,\"resource\":1,\"revision\":2"),
            std::string::npos);
  EXPECT_EQ(run("entries --resource 1 --revision 2 --all"),
            "hex:00ff=hex:0102 (revision 2)\ngreeting=hello (revision 2)\n");
  EXPECT_EQ(run("read --resource 1 --revision 2 greeting missing"),
            "greeting=hello\nmissing=(absent)\n(resource 1 revision 2)\n");
  EXPECT_EQ(run("process show --pid 7"), "process 7 generation 2 owned owner 1 mailbox 2..1\n");
  // Listings as recorded, and a first page at a position (7: the turn's).
  EXPECT_EQ(run("process list"), "process 7 generation 2 owned owner 1 mailbox 2..1\n");
  EXPECT_EQ(run("process list --cut 7"), "process 7 generation 2 owned owner 1 mailbox 2..1\n");
  auto expired = cowboy::testing::run(cli + "resource list --cut 6");  // the turn revised the resource at 7
  EXPECT_EQ(expired.status, 1);
  EXPECT_NE(expired.out.find("catalog_changed"), std::string::npos) << expired.out;
  auto stale = cowboy::testing::run(cli + "entries --resource 1 --revision 1");
  EXPECT_EQ(stale.status, 1);
  EXPECT_NE(stale.out.find("resource_revision_changed"), std::string::npos) << stale.out;
  auto usage = cowboy::testing::run(cli + "entries --resource 1");
  EXPECT_EQ(usage.status, 2);
  // A child bound to the parent's resource, then the parent's end (decisions 60 and 62).
  run("process spawn --parent 7 --generation 2 --pid 8 --require doc --allow-collection");
  EXPECT_EQ(run("process show --pid 8"), "process 8 generation 1 idle owner - mailbox 1..0 parent 7 collectable\n");
  run("send --pid 7 --value unread");
  EXPECT_EQ(run("process terminate --pid 7 --generation 2"),
            "process_terminated {\"pid\":7,\"generation\":2,\"cancelled\":1} at position 10\n");
  EXPECT_EQ(run("process show --pid 7"), "process 7 generation 2 retired owner - mailbox 2..2 cancelled 1\n");
  // Grant replacement (decision 61): the resource right of the retired private role is gone.
  run("principal create --id 20 --permissions inspect,read --scope resource:1 --public-key " + std::string(64, '0'));
  const std::string read_doc = "decision --principal 20 --scope resource:1 --permissions read";
  EXPECT_EQ(run(read_doc), "principal 20 holds read at resource:1 (policy revision 2)\n");
  EXPECT_EQ(run("principal replace-grant --id 20 --permissions inspect --scope pid:8"),
            "grant_replaced {\"principal\":20,\"role\":3,\"retired_role\":2,\"grant\":3,\"policy_revision\":3} at "
            "position 12, policy revision 3\n");
  EXPECT_EQ(run(read_doc), "principal 20 does not hold read at resource:1 (policy revision 3)\n");
}

// Leased snapshots from the CLI (decisions 70-78): the token printed by one
// invocation holds the snapshot for the next, which reads the pinned state
// while a turn changes the resource; a finishing read releases it.
TEST_F(ProcessTest, SnapshotsFromTheCli) {
  auto node = start_dev_node();
  ASSERT_NE(ready_port(node), 0);
  const auto run = [this](const std::string& args, int status = 0) { return dev_cli(args, status); };
  two_entries_from_the_cli();
  const std::string opened = run("snapshot open --resource 1 --revision 2 --lease-ms 60000");
  ASSERT_EQ(opened.rfind("snapshot ", 0), 0u) << opened;
  const std::string token = opened.substr(9, 64);
  EXPECT_NE(opened.find(" of resource 1 at revision 2, position 6, lease until "), std::string::npos) << opened;
  run("turn --pid 7 --generation 2 --resource 1 --put a=changed --delete b");
  EXPECT_EQ(run("snapshot entries --token " + token + " --all"), "a=one (revision 2)\nb=two (revision 2)\n");
  EXPECT_EQ(run("snapshot entries --token " + token + " --key b"), "b=two (revision 2)\n");
  const std::string read = run("snapshot read --token " + token + " --after a --finish");
  EXPECT_NE(read.find("b=two (revision 2)\n(current revision 3, released)\n"), std::string::npos) << read;
  EXPECT_EQ(run("snapshot close --token " + token), "not open (closed, expired or unknown): nothing to release\n");
  EXPECT_NE(run("snapshot entries --token " + token, 1).find("snapshot_closed"), std::string::npos);
  EXPECT_NE(run("capabilities").find("leased_snapshots, snapshot_read"), std::string::npos);
  run("snapshot entries --token 00", 2);  // not a token: usage
}

// Segmented results from the CLI (decisions 150-154): the whole result, then its evidence.
TEST_F(ProcessTest, SegmentsFromTheCli) {
  auto node = start_dev_node();
  ASSERT_NE(ready_port(node), 0);
  const auto run = [this](const std::string& args, int status = 0) { return dev_cli(args, status); };
  two_entries_from_the_cli();
  const std::string read = run("entries --resource 1 --revision 2 --segments");
  ASSERT_EQ(read.rfind("a=one (revision 2)\nb=two (revision 2)\ncomplete: 2 records in 1 segments, digest ", 0), 0u) << read;
  EXPECT_EQ(read.size(), std::string("a=one (revision 2)\nb=two (revision 2)\ncomplete: 2 records in 1 segments, digest ").size() + 65);
  run("entries --resource 1 --revision 2 --segments --all", 2);  // the whole result already: usage
  EXPECT_NE(run("entries --resource 1 --revision 1 --segments", 1).find("resource_revision_changed"), std::string::npos);
  const std::string caps = run("capabilities");
  EXPECT_NE(caps.find("blocks, segmented_results"), std::string::npos) << caps;
  EXPECT_NE(caps.find("dependency budgets: 4 required resources a process, 64 resources owned a process"), std::string::npos)
      << caps;
}

// Blocks from the CLI (decisions 100-109): a record, a source-qualified read, retirement and deletion.
TEST_F(ProcessTest, BlocksFromTheCli) {
  auto node = start_dev_node();
  ASSERT_NE(ready_port(node), 0);
  const auto run = [this](const std::string& args, int status = 0) { return dev_cli(args, status); };
  const std::string in = (dir_ / "blob.in").string(), out = (dir_ / "blob.out").string();
  std::ofstream(in) << "hello block";
  run("resource create --name doc");
  run("process create --pid 7 --require doc");
  run("process associate --pid 7 --name doc --resource 1");
  run("process init --pid 7 --generation 0");
  run("process own --pid 7 --generation 1");
  run("turn --pid 7 --generation 2 --resource 1 --block blob=" + in);  // revision 2
  const std::string shown = run("blocks show --resource 1 --name blob");
  const std::string expected = "block blob of resource 1: published, published at revision 2 by process 7 (principal 1), 11 bytes, sha256 ";
  ASSERT_EQ(shown.rfind(expected, 0), 0u) << shown;
  const std::string sha = shown.substr(expected.size(), 64);
  EXPECT_EQ(run("block --resource 1 --revision 2 --name blob --out " + out + " --source-revision 2 --source-sha256 " + sha),
            "block blob: 11 bytes from revision 2\n");
  std::ifstream got(out);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(got), {}), "hello block");
  EXPECT_NE(run("block --resource 1 --revision 2 --name blob --out " + out + " --source-revision 1 --source-sha256 " + sha, 1)
                .find("block_source_mismatch"),
            std::string::npos);
  EXPECT_NE(run("blocks delete --resource 1 --name blob", 1).find("block_not_retired"), std::string::npos);
  EXPECT_NE(run("blocks retire --resource 1 --name blob").find("block_changed"), std::string::npos);
  EXPECT_NE(run("block --resource 1 --revision 3 --name blob --out " + out, 1).find("block_retired"), std::string::npos);
  EXPECT_NE(run("blocks delete --resource 1 --name blob").find(R"("state":"deleted")"), std::string::npos);
  EXPECT_NE(run("blocks show --resource 1 --name blob").find(": deleted, "), std::string::npos);
  EXPECT_NE(run("capabilities").find("collection, blocks"), std::string::npos);  // the last two names
}

TEST_F(ProcessTest, AGenesisFromTheCliLaidOutByHandStartsANode) {
  const std::string key = (dir_ / "root.key").string();
  auto made = cowboy::testing::run(kBin + "/transit genesis --realm prod --root-key " + key + " --admission-ceiling 100");
  ASSERT_EQ(made.status, 0) << made.out;
  EXPECT_NE(made.out.find(R"("realm":"prod")"), std::string::npos);
  EXPECT_NE(made.out.find(R"("admission_ceiling":100)"), std::string::npos);
  {  // reindented, as an operator's editor might leave it
    std::ofstream out(dir_ / "genesis.json");
    out << nlohmann::ordered_json::parse(made.out).dump(4) << "\n";
  }
  std::uint16_t port = 0;
  auto node = start_node(port);
  ASSERT_NE(port, 0);
  auto caps = cowboy::testing::run(kBin + "/transit --endpoint 127.0.0.1:" + std::to_string(port) +
                                   " --realm prod --principal 1 --key " + key + " capabilities");
  EXPECT_EQ(caps.status, 0) << caps.out;
  EXPECT_NE(caps.out.find("admission ceiling: 100, control reserve 0"), std::string::npos) << caps.out;
  // The wrong realm is refused before anything else.
  auto wrong = cowboy::testing::run(kBin + "/transit --endpoint 127.0.0.1:" + std::to_string(port) +
                                    " --realm dev --principal 1 --key " + key + " identity");
  EXPECT_EQ(wrong.status, 1);
  EXPECT_NE(wrong.out.find("foreign_realm"), std::string::npos) << wrong.out;
}

}  // namespace
}  // namespace cowboy::transit
