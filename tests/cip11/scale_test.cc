// Issue 42's test at its size: four `cip11d --genesis` validators and forty
// `cip11-runner` processes on one devchain over 127.0.0.1 (docs/cip11.md
// choice 110). Every runner is admitted by the three validators of its
// Sub(R); every block marks all forty present, whichever validator proposes
// it, though each holds only three quarters of them (§8.2 gossip); jobs are
// pushed and completed; and a validator SIGKILLed with jobs running loses
// none of them. Real processes throughout (the runner's journal, its HTTP
// chain port and its QUIC links included); label `slow`.
#include <gtest/gtest.h>

#include "validator_processes.h"

namespace cowboy::cip11 {
namespace {

using namespace std::chrono_literals;
using namespace cip11::testing;

struct Cip11FortyRunners : Cip11Validators {
  // The validator killed mid-epoch. No runner reads the chain through it (each
  // reads through validator r mod 3): what is tested is the loss of its QUIC
  // links, presence and pushes, not of a runner's only chain API.
  static constexpr std::size_t kKilled = 3;
  Cip11FortyRunners() {
    runner_count = 40;
    // Forty runner processes starting at once on a shared two-core machine
    // once delayed a block past 500 ms and forked a validator off at height
    // 6, before forks were resolved (D11); 3 s keeps such a fork, and the
    // pushes it withdraws, to a three-second stall.
    view_timeout_ms = 3000;
  }
  std::vector<std::unique_ptr<RunnerProcess>> runners;
  std::vector<JobId> jobs;

  void submit(devchain::Wallet& wallet, int n, int sleep_ms) {
    const std::string spec = R"({"sleep_ms":)" + std::to_string(sleep_ms) + "}";
    for (int i = 0; i < n; ++i) {
      chain::SubmitJob job{JobKind::kCustom, Bytes(spec.begin(), spec.end()), 100, 1, 0};
      auto hash = wallet.send(devchain::Cip11Call{chain::encode_instruction(job)});
      ASSERT_TRUE(hash.ok()) << hash.error().message;
      jobs.push_back(chain::job_id_of(*hash));
    }
  }
  /// Every runner's event lines about job `id` (for a failure's message).
  std::string story(const JobId& id) {
    std::string out = to_hex0x(id.value) + ":";
    for (std::size_t r = 0; r < runners.size(); ++r) {
      runners[r]->saw({"no such line"}, 5ms);  // drains what is waiting
      for (const auto& l : runners[r]->lines_with(to_hex0x(id.value))) out += "\n  runner " + std::to_string(r) + ": " + l;
    }
    return out;
  }
  /// No job lost: each one sent ends Completed (validator 0's record).
  void expect_every_job_completed() {
  for (const auto& id : jobs) {
    ASSERT_TRUE(eventually(
        [&] {
          auto j = chain(0).job(id);
          return j.ok() && chain::terminal(j->state);
        },
        90s))
        << story(id);
    EXPECT_EQ(chain(0).job(id)->state, chain::JobState::kCompleted) << to_hex0x(id.value);
  }
  }
  /// Jobs validator `i` holds as ended.
  std::size_t ended(std::size_t i) {
    return static_cast<std::size_t>(std::count_if(jobs.begin(), jobs.end(), [&](const JobId& id) {
      auto j = chain(i).job(id);
      return j.ok() && chain::terminal(j->state);
    }));
  }
  /// Blocks from..to as validator `i` holds them: each marks every runner present; by proposer.
  std::map<std::uint32_t, std::size_t> expect_all_present(std::size_t i, std::uint64_t from, std::uint64_t to) {
    std::map<std::uint32_t, std::size_t> blocks_of;
    for (std::uint64_t h = from; h <= to; ++h) {
      auto b = chain(i).block_at(h);
      auto set = presence_at(i, h);
      EXPECT_TRUE(b.ok() && set) << h;
      if (!b.ok() || !set) continue;
      EXPECT_EQ(set->count(), runner_count) << "block " << h << " proposed by " << b->block.proposer;
      ++blocks_of[b->block.proposer];
    }
    return blocks_of;
  }
};

TEST_F(Cip11FortyRunners, EveryRunnerIsAdmittedPresentUnderEveryProposerPushedToAndNoJobIsLostToASigkill) {
  const std::vector<std::size_t> all{0, 1, 2, 3}, alive{0, 1, 2};
  ASSERT_TRUE(eventually([&] { return all_at_least(all, 3); }, 60s));
  for (std::size_t r = 0; r < runner_count; ++r) runners.push_back(start_runner(r, r % 3));
  // Each admitted by the three validators of its Sub(R).
  for (std::size_t r = 0; r < runner_count; ++r)
    ASSERT_TRUE(runners[r]->wait_count("event=connected", kValidators - 1, 120s)) << "runner " << r;
  for (std::size_t i : all) {
    const double holds = static_cast<double>(std::count_if(excluded.begin(), excluded.end(), [&](std::size_t e) { return e != i; }));
    ASSERT_EQ(holds, 30.0);  // the keys were chosen so: ten runners leave out each validator
    ASSERT_TRUE(eventually([&] { return processes[i]->metric("cip11d_present_runners") == holds; }, 60s)) << i;
    ASSERT_TRUE(eventually([&] { return processes[i]->metric("cip11d_presence_views_fresh") == kValidators - 1.0; }, 60s)) << i;
  }
  // Every block from here on marks all forty present, whoever proposes it (two
  // blocks on, so that every view a proposer holds was taken after the counts above).
  std::uint64_t from = std::max({height(0), height(1), height(2), height(3)}) + 3;
  ASSERT_TRUE(eventually([&] { return all_at_least(all, from + 11); }, 60s));
  EXPECT_EQ(expect_all_present(0, from, from + 11).size(), kValidators);  // each proposed some of them

  // Jobs that run 1.5 s, then the SIGKILL while they run.
  auto api = chain(0);
  devchain::Wallet wallet(api, submitter);
  submit(wallet, 20, 1500);
  ASSERT_TRUE(eventually(
      [&] {
        return std::any_of(runners.begin(), runners.end(), [](auto& r) { return r->saw({"event=accepted"}, 5ms); });
      },
      60s));
  processes[kKilled]->kill9();
  EXPECT_LT(ended(0), jobs.size()) << "every job had ended before the kill: nothing was in flight";
  // More jobs after it, on the three.
  submit(wallet, 20, 100);

  // No job lost: each completed, its assignment pushed to its runner.
  expect_every_job_completed();
  for (const auto& id : jobs)
    EXPECT_TRUE(std::any_of(runners.begin(), runners.end(),
                            [&](auto& r) { return r->saw({"event=accepted", to_hex0x(id.value), "via=push"}, 5ms); }))
        << to_hex0x(id.value) << " was not pushed";

  // With one validator gone every runner still holds two of its subset, and
  // the blocks of the three go on marking all forty present.
  from = std::max({height(0), height(1), height(2)}) + 3;
  ASSERT_TRUE(eventually([&] { return all_at_least(alive, from + 8); }, 60s));
  const auto proposers = expect_all_present(0, from, from + 8);
  EXPECT_EQ(proposers.count(index_of(kKilled)), 0u);
  expect_same_blocks(alive, from + 8);
}

// The same forty runners across a validator-set change by governance
// transaction (docs/devchain.md D2, D10): epoch 1 leaves genesis validator 3
// out. Every runner holds its epoch-1 subset (all three) before the overlap
// window ends, validator 3 stops proposing at the activation and closes its
// connections at the cutoff, and no job sent before, inside or at the end of
// the window is lost.
struct Cip11FortyRunnersAcrossAChange : Cip11FortyRunners {
  static constexpr std::uint64_t kOverlap = 60, kLeaving = 3;
  std::vector<chain::ValidatorEntry> genesis_validators;
  void configure(devchain::Cip11Genesis& c) override {
    c.overlap_blocks = kOverlap;
    genesis_validators = c.validators;
  }
};

TEST_F(Cip11FortyRunnersAcrossAChange, EveryRunnerReconnectsWithinTheOverlapAndNoJobIsLost) {
  const std::vector<std::size_t> all{0, 1, 2, 3};
  ASSERT_TRUE(eventually([&] { return all_at_least(all, 3); }, 60s));
  for (std::size_t r = 0; r < runner_count; ++r) runners.push_back(start_runner(r, r % 3));
  for (std::size_t r = 0; r < runner_count; ++r)
    ASSERT_TRUE(runners[r]->wait_count("event=connected", kValidators - 1, 120s)) << "runner " << r;

  // The change, far enough ahead for its lead and for its inclusion.
  const std::uint64_t activation = height(0) + kOverlap + 30, cutoff = activation + kOverlap;
  devchain::ScheduleValidatorSet change{1, activation, {}};
  for (std::size_t i = 0; i < kValidators; ++i)
    if (i != kLeaving) change.validators.push_back(genesis_validators[i]);
  auto api = chain(0);
  devchain::Wallet admin(api, submitter);
  auto receipt = admin.send_and_wait(devchain::ValidatorSetCall{devchain::encode_schedule_validator_set(change)});
  ASSERT_TRUE(receipt.ok()) << receipt.error().message;
  ASSERT_TRUE(receipt->ok()) << *receipt->error;

  auto submit_at = [&](std::uint64_t h, int n, int sleep_ms) {
    ASSERT_TRUE(eventually([&] { return height(0) >= h; }, 120s));
    submit(admin, n, sleep_ms);
  };
  submit_at(activation - 8, 10, 1500);
  submit_at(activation + 5, 10, 800);
  submit_at(cutoff - 6, 10, 2000);
  ASSERT_TRUE(eventually([&] { return all_at_least(all, cutoff + 10); }, 180s));
  expect_same_blocks(all, cutoff + 10);

  // Each runner admitted by the three of epoch 1 before the cutoff; validator
  // 3 admits none after the activation and holds none after the cutoff.
  for (std::size_t r = 0; r < runner_count; ++r) {
    for (std::size_t v = 0; v < kValidators; ++v) {
      if (v == kLeaving) continue;
      auto line = runners[r]->wait_for({"event=connected", endpoints.at(v) + " epoch 1"}, 60s);
      ASSERT_TRUE(line) << "runner " << r << " validator " << v;
      const auto at = line->find(" height=");
      ASSERT_NE(at, std::string::npos) << *line;
      EXPECT_LT(std::stoull(line->substr(at + 8)), cutoff) << *line;
    }
  }
  EXPECT_EQ(processes[kLeaving]->metric("cip11d_connected_runners"), 0.0);
  for (std::uint64_t h = activation; h <= cutoff + 10; ++h) {
    auto b = chain(0).block_at(h);
    ASSERT_TRUE(b.ok()) << h;
    EXPECT_EQ(b->block.epoch, 1u) << h;
    const auto epoch1 = devchain::as_change(change).peer_keys;
    ASSERT_LT(b->block.proposer, epoch1.size()) << h;
    EXPECT_NE(epoch1[b->block.proposer], genesis_validators[kLeaving].peer_key) << h;
  }

  // No job lost: each completed.
  expect_every_job_completed();
}

}  // namespace
}  // namespace cowboy::cip11
