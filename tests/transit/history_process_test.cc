// History trimming with transitd and transit as real processes on 127.0.0.1
// (docs/transit.md, decisions 64-69): a realm made with
// `transit genesis --allow-history-trim`, workers publishing turns while a
// maintainer checkpoints and trims, and transitd SIGKILLed right after a trim
// was acknowledged (when its reclaim compaction may still run). After the restart
// nothing acknowledged is lost - every turn, checkpoint and floor answers its
// exact retry with the original receipt - the floor is where it was
// acknowledged, and trimming goes on, from the CLI too.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "../support/poll.h"
#include "../support/run.h"
#include "common/bytes.h"
#include "common/keyfile.h"
#include "net/http_connection.h"
#include "process_fixture.h"
#include "transit/history.h"
#include "transit/maintain/maintainer.h"

namespace cowboy::transit {
namespace {

using testing::key_of;
using testing::seed_of;

// The process tests' fixture (a temporary directory, transitd as a child), on one port across restarts.
class HistoryProcessTest : public ProcessTest {
 protected:
  std::unique_ptr<cowboy::testing::ChildProcess> start_node() { return ProcessTest::start_node(port_); }
  /// One attempt per request: a kill is a loss, nothing is resent.
  ClientOptions options(auto principal, const Secret32& seed) const {
    ClientOptions o = kill_options(port_, principal, 0);
    o.seed = seed;
    return o;
  }
  std::string cli() const {
    return kBin + "/transit --endpoint 127.0.0.1:" + std::to_string(port_) + " --realm dev --principal 1 --key " +
           (dir_ / "root.key").string() + " ";
  }

  /// genesis.json made by `transit genesis --allow-history-trim`, its root key in root.key (root_seed_).
  void opted_in_realm() {
    const auto made = cowboy::testing::run(kBin + "/transit genesis --realm dev --root-key " + (dir_ / "root.key").string() +
                                           " --allow-history-trim > " + (dir_ / "genesis.json").string());
    ASSERT_EQ(made.status, 0) << made.out;
    const auto seed = load_secret(dir_ / "root.key");
    ASSERT_TRUE(seed.ok()) << seed.error();
    root_seed_ = *seed;
  }

  std::uint16_t port_ = 0;
  Secret32 root_seed_{};
};

TEST_F(HistoryProcessTest, ASigkillDuringTrimmingLosesNothingAndTrimmingGoesOnAfterTheRestart) {
  ASSERT_NO_FATAL_FAILURE(opted_in_realm());
  auto node = start_node();
  ASSERT_NE(port_, 0);
  Client root(options(1, root_seed_));
  auto caps = root.capabilities();
  ASSERT_TRUE(caps.ok()) << caps.error().message;
  ASSERT_TRUE(caps->allow_history_trim);

  constexpr int kWorkers = 3;
  for (int i = 0; i < kWorkers; ++i) {
    const Pid pid{static_cast<Id>(1 + i)};
    const PrincipalId worker{static_cast<Id>(10 + i)};
    ASSERT_TRUE(root.submit(CreatePrincipal{worker, key_of(seed_of(static_cast<std::uint8_t>(worker.value))), RealmScope{},
                                            Permissions{kAllPermissions & ~kRealmControl}, std::nullopt, std::nullopt})
                    .ok());
    auto created = root.submit(CreateResource{{"doc" + std::to_string(pid.value)}, std::nullopt});
    ASSERT_TRUE(created.ok());
    ASSERT_TRUE(root.submit(CreateProcess{pid, {{{"doc"}}}}).ok());
    ASSERT_TRUE(root.submit(Associate{pid, {"doc"}, std::get<ResourceCreated>(created->outcome).resource}).ok());
    ASSERT_TRUE(root.submit(Initialize{pid, 0}).ok());
  }

  // Each acknowledged decision, with the signed bytes that got it.
  using Acked = std::vector<std::pair<SignedRequest, Receipt>>;
  std::vector<Acked> acked(kWorkers + 1);  // the last: the maintainer's
  std::atomic<int> turns{0}, trims{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kWorkers; ++i)
    threads.emplace_back([&, i] {
      const Pid pid{static_cast<Id>(1 + i)};
      const ResourceId resource{static_cast<Id>(1 + i)};
      const auto seed = seed_of(static_cast<std::uint8_t>(10 + i));
      Client c(options(10 + i, seed));
      auto owned = c.submit(Own{pid, 1});
      if (!owned.ok()) return;
      const Id generation = std::get<ProcessChanged>(owned->outcome).generation;
      for (Id k = 1; !stop; ++k) {
        Turn t{pid, generation, std::nullopt, resource, std::nullopt, {}, {}, {}, {}, std::nullopt};
        for (std::uint8_t n = 0; n < 4; ++n)  // one turn's number under four keys: never a mix
          t.mutations.items.push_back(
              {EntryKey{std::vector<std::uint8_t>{n}}, EntryValue{std::vector<std::uint8_t>(256, static_cast<std::uint8_t>(k))}});
        const SignedRequest s = sign(c.build(t, *c.next_sequence()), seed);
        auto r = c.resubmit(s);
        if (!r.ok()) return;
        acked[i].emplace_back(s, *r);
        ++turns;
      }
    });
  // The maintainer: a checkpoint, then the floor onto it, again and again
  // (signed here, not by trim_history, to keep the bytes for the retries).
  std::atomic<Position> floor_acked{};
  threads.emplace_back([&] {
    Client m(options(1, root_seed_));
    auto& mine = acked[kWorkers];
    auto me = m.identity();
    if (!me.ok()) return;
    m.set_next_sequence(me->sequence + 1);
    while (!stop) {
      const SignedRequest cp = sign(m.build(Checkpoint{}, *m.next_sequence()), root_seed_);
      auto r = m.resubmit(cp);
      if (!r.ok()) return;
      mine.emplace_back(cp, *r);
      const SignedRequest floor =
          sign(m.build(AdvanceFloor{r->position, std::get<Checkpointed>(r->outcome).roots}, *m.next_sequence()), root_seed_);
      auto moved = m.resubmit(floor);
      if (!moved.ok()) return;
      mine.emplace_back(floor, *moved);
      floor_acked = r->position;
      ++trims;
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((turns < 300 || trims < 3) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int trims_seen = trims.load();
  while (trims == trims_seen && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  node->kill(SIGKILL);  // right after a trim's answer, while its reclaim compaction may still run
  stop = true;
  for (auto& t : threads) t.join();
  ASSERT_GE(trims.load(), 4) << "the workload did not reach its trims before the deadline; turns " << turns.load();

  node = start_node();
  ASSERT_NE(port_, 0);
  Client reader(options(1, root_seed_));
  const auto status = reader.query(CheckpointQuery{});
  ASSERT_TRUE(status.ok()) << status.error().message;
  const auto& history = std::get<CheckpointStatus>(status->result);
  // The last acknowledged floor stands (a later unanswered one may have landed too).
  Position last_checkpoint{};
  for (const auto& [request, receipt] : acked[kWorkers])
    if (std::holds_alternative<Checkpointed>(receipt.outcome)) last_checkpoint = receipt.position;
  EXPECT_GE(history.floor, floor_acked.load());
  EXPECT_LE(history.floor, last_checkpoint);
  for (int i = 0; i <= kWorkers; ++i) {
    ASSERT_FALSE(acked[i].empty());
    const bool maintainer = i == kWorkers;
    Client c(maintainer ? options(1, root_seed_) : options(10 + i, seed_of(static_cast<std::uint8_t>(10 + i))));
    for (const auto& [signed_request, receipt] : acked[i]) {
      auto again = c.resubmit(signed_request);
      ASSERT_TRUE(again.ok()) << again.error().message;
      EXPECT_EQ(to_json(*again), to_json(receipt));
    }
    if (maintainer) continue;
    Slots<EntryKey, 8> keys;
    for (std::uint8_t n = 0; n < 4; ++n) keys.items[n] = EntryKey{std::vector<std::uint8_t>{n}};
    auto read = reader.query(ReadEntries{ResourceId{static_cast<Id>(1 + i)}, std::nullopt, std::nullopt, keys});
    ASSERT_TRUE(read.ok()) << read.error().message;
    const auto& batch = std::get<EntryBatch>(read->result);
    for (std::uint8_t n = 0; n < 4; ++n) {
      ASSERT_TRUE(batch.entries.items[n]);
      EXPECT_EQ(batch.entries.items[n]->value, batch.entries.items[0]->value);
    }
    const Id published = batch.revision - Revision{1};  // one revision per turn
    EXPECT_GE(published, acked[i].size());
    EXPECT_LE(published, acked[i].size() + 1);
  }

  // Trimming goes on, here from the CLI: a checkpoint, then one trim step.
  const auto checkpointed = cowboy::testing::run(cli() + "checkpoint");
  ASSERT_EQ(checkpointed.status, 0) << checkpointed.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(checkpointed.out, m, std::regex(R"(^checkpoint at position (\d+), roots [0-9a-f]{64}\n$)")))
      << checkpointed.out;
  const std::string at = m[1];
  const auto trimmed = cowboy::testing::run(cli() + "history trim");
  ASSERT_EQ(trimmed.status, 0) << trimmed.out;
  EXPECT_TRUE(std::regex_search(trimmed.out, std::regex("^floor advanced from \\d+ to " + at + " at position \\d+\n$")))
      << trimmed.out;
  const auto nothing = cowboy::testing::run(cli() + "history trim");
  EXPECT_EQ(nothing.status, 0);
  EXPECT_EQ(nothing.out, "nothing to trim: floor " + at + "\n");
  const auto shown = cowboy::testing::run(cli() + "history");
  EXPECT_EQ(shown.status, 0);
  EXPECT_TRUE(std::regex_search(shown.out, std::regex("^floor " + at + ", latest checkpoint at position " + at + ", roots [0-9a-f]{64}\n$")))
      << shown.out;
}

// Decision 68 as processes: `transitd --maintain --checkpoint-every 20` beside
// a transitd whose genesis opts in publishes checkpoints as commands go by and
// moves the floor onto each: after each batch of commands the floor rests on
// the latest checkpoint, fewer than 20 positions behind, and the maintainer's
// /metrics count a checkpoint per batch at least, with no refusal.
TEST_F(HistoryProcessTest, TransitdMaintainCheckpointsEveryNPositionsAndTrimsUnattended) {
  ASSERT_NO_FATAL_FAILURE(opted_in_realm());
  auto node = start_node();
  ASSERT_NE(port_, 0);
  Client root(options(1, root_seed_));
  constexpr PrincipalId kMaintainer{3};
  constexpr Id kEvery = 20;
  ASSERT_TRUE(root.submit(CreatePrincipal{kMaintainer, key_of(seed_of(static_cast<std::uint8_t>(kMaintainer.value))), RealmScope{},
                                          Permissions{maintain::kRequiredPermissions}, std::nullopt, std::nullopt})
                  .ok());
  const auto key = dir_ / "maintainer.key";
  {
    std::ofstream out(key);
    const auto seed = seed_of(static_cast<std::uint8_t>(kMaintainer.value));
    out << to_hex(ByteView(seed.data(), seed.size())) << "\n";
  }
  std::filesystem::permissions(key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  cowboy::testing::ChildProcess maintainer({kBin + "/transitd", "--maintain", "--endpoint", "127.0.0.1:" + std::to_string(port_),
                                            "--realm", "dev", "--principal", std::to_string(kMaintainer.value), "--key",
                                            key.string(), "--admin-listen", "127.0.0.1:0", "--idle-ms", "2",
                                            "--checkpoint-every", std::to_string(kEvery), "--log-level", "warn"});
  auto ready = maintainer.wait_for_line("transit_maintain_ready", std::chrono::seconds(30));
  std::smatch admin;
  ASSERT_TRUE(ready && std::regex_search(*ready, admin, std::regex(R"(admin=127\.0\.0\.1:(\d+))")));
  // Five batches of 25 commands, each more than N: each calls for a checkpoint.
  constexpr int kBatches = 5, kBatch = 25;
  CheckpointStatus last;
  Position position{};
  for (int b = 0; b < kBatches; ++b) {
    for (int i = 0; i < kBatch; ++i) {
      std::string name = "role";
      ASSERT_TRUE(root.submit(CreateRole{{name.append(std::to_string(b * kBatch + i))}, std::nullopt}).ok());
    }
    ASSERT_TRUE(cowboy::testing::eventually(
        [&] {
          auto read = root.query(CheckpointQuery{});
          if (!read.ok()) return false;
          last = std::get<CheckpointStatus>(read->result);
          position = read->position;
          return last.latest && last.floor == last.latest->position && position < last.latest->position + kEvery;
        },
        std::chrono::seconds(60)))
        << "batch " << b << ": floor " << last.floor.value << " at position " << position.value;
  }
  auto metrics = net::HttpConnection("127.0.0.1", static_cast<std::uint16_t>(std::stoi(admin[1]))).get("/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.error();
  std::smatch checkpoints;
  ASSERT_TRUE(std::regex_search(metrics->body, checkpoints, std::regex(R"(\ntransit_maintain_checkpoints_total (\d+)\n)")));
  EXPECT_GE(std::stoull(checkpoints[1]), std::uint64_t{kBatches});
  EXPECT_NE(metrics->body.find("\ntransit_maintain_history_floor " + std::to_string(last.floor.value) + "\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("\ntransit_maintain_refused_total 0\n"), std::string::npos);
}

}  // namespace
}  // namespace cowboy::transit
