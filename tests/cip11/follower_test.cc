// A follower of the four validators' chain (docs/devchain.md D14,
// docs/cip11.md choices 173-175): `cip11d --follow`, a fifth process with no
// key and no QUIC listener that takes every block from the validators,
// verifying each as they do, and serves the chain API a runner reads. The
// runners here read the chain only through it: their own view (§10.1).
#include <gtest/gtest.h>

#include <thread>

#include "cip11/chain/codec.h"
#include "cip11/chain/consumed_seeds.h"
#include "validator_processes.h"

namespace cowboy::cip11 {
namespace {

using namespace std::chrono_literals;
using namespace cip11::testing;

// The four validators of Cip11Validators and a follower, index kFollower of
// chain_ports (so chain(kFollower), height() and expect_same_blocks read it).
struct Cip11Follower : Cip11Validators {
  static constexpr std::size_t kFollower = kValidators;
  std::unique_ptr<FollowerProcess> follower;
  // Every wait of a test draws on one budget, under the ctest TIMEOUT (300 s)
  // with the processes' start and stop: a run that slow fails on the wait
  // that ran out, named, rather than being killed.
  const std::chrono::steady_clock::time_point budget_end = std::chrono::steady_clock::now() + 250s;
  /// `want`, or what is left of the test's budget if less.
  std::chrono::milliseconds left(std::chrono::milliseconds want) const {
    const auto rest =
        std::chrono::duration_cast<std::chrono::milliseconds>(budget_end - std::chrono::steady_clock::now());
    return std::clamp(rest, std::chrono::milliseconds(1), want);
  }

  /// Starts (or restarts, on its store) the follower asking validators `from` (genesis order).
  void start_follower(const std::vector<std::size_t>& from) {
    if (chain_ports.size() == kFollower) chain_ports.push_back(cowboy::testing::free_ports(SOCK_STREAM, 1)[0]);
    std::vector<std::string> peers;
    for (std::size_t i : from) peers.push_back(url(i));
    follower.reset();
    follower = std::make_unique<FollowerProcess>(dir.path() / "follower", genesis_path, chain_ports[kFollower], peers);
    ASSERT_TRUE(follower->up());
  }
  bool completed_at(std::size_t i, const JobId& id) {
    auto j = chain(i).job(id);
    return j.ok() && j->state == chain::JobState::kCompleted;
  }
  /// expect_same_blocks, its wait for F blocks past `to` drawn on the test's budget.
  void expect_same_final_blocks(const std::vector<std::size_t>& who, std::uint64_t to) {
    ASSERT_TRUE(eventually([&] { return all_at_least(who, to + kFinalityDepth); }, left(60s)))
        << "block " << to << " + F not reached";
    expect_same_blocks(who, to);
  }
  /// The job `id` as the follower and validator 0 hold it, equal, in `state`.
  void expect_job_at_both(const JobId& id, chain::JobState state) {
    auto at_follower = chain(kFollower).job(id);
    auto at_validator = chain(0).job(id);
    ASSERT_TRUE(at_follower.ok() && at_validator.ok()) << to_hex0x(id.value);
    EXPECT_EQ(at_follower->state, state) << to_hex0x(id.value);
    EXPECT_EQ(chain::encode_job(*at_follower), chain::encode_job(*at_validator)) << to_hex0x(id.value);
  }
};

// With runners that read the chain through the follower only.
struct Cip11FollowerRunners : Cip11Follower {
  static constexpr std::size_t kRunners = 2;
  std::vector<crypto::Secp256k1Secret> keys;
  // 1.5 s: while validator 3 is down (the last test) its views pass one a
  // view timeout, so the 15 blocks of a push's ack timeout (§11.1) last
  // longer than its restart and the follower's catch-up.
  Cip11FollowerRunners() { view_timeout_ms = 1'500; }
  void configure(devchain::Cip11Genesis& c) override { keys = register_runners(c, kRunners); }
  std::unique_ptr<RunnerProcess> start_runner_via_follower(std::size_t i) {
    return std::make_unique<RunnerProcess>(std::vector<std::string>{
        "--chain-url", url(kFollower), "--key", (dir.path() / "runners" / (std::to_string(i) + ".key")).string(),
        "--state-dir", (dir.path() / "runners" / ("state-" + std::to_string(i))).string(), "--block-ms", "100",
        "--height-poll-ms", "20"});
  }
  /// A job of `committee` runners sent through validator 0; its id.
  std::optional<JobId> submit(std::uint32_t committee) {
    auto api = chain(0);
    devchain::Wallet wallet(api, submitter);
    const std::string spec = R"({"sleep_ms":10})";
    chain::SubmitJob job{JobKind::kCustom, Bytes(spec.begin(), spec.end()), 200, committee, 0};
    auto receipt = wallet.send_and_wait(devchain::Cip11Call{chain::encode_instruction(job)}, left(30s));
    EXPECT_TRUE(receipt.ok() && receipt->ok()) << (receipt.ok() ? receipt->error.value_or("") : receipt.error().message);
    if (!receipt || !receipt->ok()) return std::nullopt;
    return receipt->job_id;
  }
};

// Choice 173: runners admitted by the validators, reading the chain only
// through the follower, run an M = 1 and an M = 2 job whose results land;
// the follower holds the validators' blocks, and after a SIGKILL it restarts
// on its store and catches up to the same blocks.
TEST_F(Cip11FollowerRunners, RunnersReadingTheFollowerRunJobsAndItHoldsTheValidatorsBlocksAcrossASigkill) {
  start_follower({0, 1, 2, 3});
  const std::vector<std::size_t> all{0, 1, 2, 3, kFollower};
  ASSERT_TRUE(eventually([&] { return all_at_least(all, 3); }, left(60s)));
  std::vector<std::unique_ptr<RunnerProcess>> runners;
  for (std::size_t r = 0; r < kRunners; ++r) runners.push_back(start_runner_via_follower(r));
  for (std::size_t r = 0; r < kRunners; ++r)
    ASSERT_TRUE(runners[r]->wait_count("event=connected", kValidators - 1, left(60s))) << "runner " << r;
  auto one = submit(1), two = submit(2);
  ASSERT_TRUE(one && two);
  for (const JobId& id : {*one, *two})
    ASSERT_TRUE(eventually([&] { return completed_at(kFollower, id); }, left(60s)))
        << to_hex0x(id.value);
  // Pushed by the validators, verified against the follower's view, run.
  for (std::size_t r = 0; r < kRunners; ++r)
    EXPECT_TRUE(runners[r]->saw({"event=accepted", to_hex0x(two->value), "via=push"}, left(10s))) << "runner " << r;
  EXPECT_TRUE(runners[0]->saw({"event=accepted", to_hex0x(one->value), "via=push"}, left(2s)) ||
              runners[1]->saw({"event=accepted", to_hex0x(one->value), "via=push"}, left(2s)));
  const std::uint64_t past = height(kFollower) + 1;  // read once: the follower moves too
  ASSERT_TRUE(eventually([&] { return all_at_least(all, past); }, left(30s)));
  for (const JobId& id : {*one, *two}) expect_job_at_both(id, chain::JobState::kCompleted);
  expect_same_final_blocks(all, std::min({height(0), height(1), height(2), height(3), height(kFollower)}));

  // SIGKILL, and back on its store: the blocks it missed, the same as theirs.
  follower->kill9();
  const std::uint64_t killed_at = height(0);
  ASSERT_TRUE(eventually([&] { return all_at_least({0, 1, 2, 3}, killed_at + 5); }, left(60s)));
  start_follower({0, 1, 2, 3});
  const std::uint64_t target = height(0) + 2;
  ASSERT_TRUE(eventually([&] { return all_at_least(all, target); }, left(60s)));
  expect_same_final_blocks(all, target);
  EXPECT_GE(follower->metric("devchain_height").value_or(0), static_cast<double>(target));
  // And the runners, reading through it again, run another job.
  auto three = submit(1);
  ASSERT_TRUE(three);
  ASSERT_TRUE(eventually([&] { return completed_at(kFollower, *three); }, left(60s)));
  expect_job_at_both(*three, chain::JobState::kCompleted);
}

// Choice 174: a forged block posted to the follower is refused as the
// validators refuse it (their test: Cip11Validators.AForgedBlockIsRefusedByTheOtherThree),
// counted by reason on its /metrics, and changes nothing: it goes on
// holding the validators' blocks.
TEST_F(Cip11Follower, AForgedBlockPostedToTheFollowerIsRefusedCountedAndNotApplied) {
  start_follower({0, 1, 2, 3});
  const std::vector<std::size_t> all{0, 1, 2, 3, kFollower};
  ASSERT_TRUE(eventually([&] { return all_at_least(all, 3); }, left(60s)));
  crypto::Ed25519Seed stranger;
  stranger.fill(0x5a);  // no validator's key
  // The validators' forgeries, and one sealed by a key no validator holds.
  auto cases = forgeries();
  cases.push_back({"BadSignature", [&stranger](devchain::SignedBlock& b, const crypto::Ed25519Seed&) {
                     b = devchain::seal_block(b.block, stranger);
                   }});
  for (const auto& c : cases) {
    const std::string refused = refusal_of(kFollower, c);
    EXPECT_TRUE(refused.starts_with(std::string(c.reason) + ":")) << refused;
    EXPECT_EQ(follower->metric("devchain_blocks_refused_total{reason=\"" + std::string(c.reason) + "\"}"), 1.0)
        << c.reason;
  }
  const std::uint64_t h = std::max({height(0), height(1), height(2), height(3)}) + 3;
  ASSERT_TRUE(eventually([&] { return all_at_least(all, h); }, left(60s)));
  expect_same_final_blocks(all, h);
}

// Choice 173: a transaction sent to the follower is not kept there but sent
// at once to a validator it asks, whose answer is the client's. With none
// reachable the client is told (kUnavailable) and its resend, once one is
// back, lands; a validator's refusal reaches it too. Meanwhile the follower
// shows that no peer answers (devchain_follow_peer_head_age_seconds, D14).
TEST_F(Cip11Follower, ATransactionSentToTheFollowerGetsAValidatorsAnswerAndItsResendLands) {
  start_follower({3});
  const std::vector<std::size_t> all{0, 1, 2, 3, kFollower};
  ASSERT_TRUE(eventually([&] { return all_at_least(all, 3); }, left(60s)));
  EXPECT_TRUE(eventually([&] { return follower->metric("devchain_follow_peer_head_age_seconds").has_value(); }, left(10s)));
  auto api = chain(kFollower);
  auto id = api.chain_instance_id();
  auto info = api.account_info(*crypto::secp256k1_address(submitter));
  ASSERT_TRUE(id.ok() && info.ok());
  Address to{};
  to[19] = 0x42;
  devchain::Transaction tx{*id, info->next_nonce, devchain::Transfer{to, 1}, {}};
  ASSERT_TRUE(devchain::sign_tx(tx, submitter));

  processes[3]->kill9();
  auto lost = api.submit(tx);
  ASSERT_FALSE(lost.ok()) << "the follower answered for a transaction no validator it asks took";
  EXPECT_EQ(lost.error().code, devchain::ApiErrorCode::kUnavailable) << lost.error().message;
  EXPECT_TRUE(eventually([&] { return follower->metric("devchain_follow_peer_head_age_seconds").value_or(0) > 2; },
                         left(10s)));

  processes[3] = start(3);
  ASSERT_TRUE(processes[3]->up());
  const std::uint64_t now = height(0);  // read once
  ASSERT_TRUE(eventually([&] { return all_at_least({3, kFollower}, now); }, left(60s)));
  auto sent = api.submit(tx);
  ASSERT_TRUE(sent.ok()) << sent.error().message;
  auto receipt = devchain::wait_for_receipt(api, *sent, left(30s));
  ASSERT_TRUE(receipt.ok()) << receipt.error().message;
  EXPECT_TRUE(receipt->ok()) << receipt->error.value_or("");
  EXPECT_LT(follower->metric("devchain_follow_peer_head_age_seconds").value_or(99), 2);

  // Another transaction on the nonce now used: the validator's refusal, as it gave it.
  devchain::Transaction twin{*id, tx.nonce, devchain::Transfer{to, 2}, {}};
  ASSERT_TRUE(devchain::sign_tx(twin, submitter));
  auto refused = api.submit(twin);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, devchain::ApiErrorCode::kBadNonce) << refused.error().message;
}

// Choice 175: the runner's §10.1 check runs against the follower's view. The
// follower asks only validator 3, which is SIGKILLed: the other three go on,
// assign a job to the runner, finalize it and push it, while the follower
// (and so the runner's view) stays below the assignment. The push is held -
// no ack, nothing run, nothing refused - until validator 3 is back and the
// follower has the block final; then the job runs and completes.
TEST_F(Cip11FollowerRunners, APushTheFollowerHasNotAppliedIsHeldNotRunUntilItHasIt) {
  start_follower({3});
  ASSERT_TRUE(eventually([&] { return all_at_least({0, 1, 2, 3, kFollower}, 3); }, left(60s)));
  // Both runners, so the job reaches a running one whichever the draw takes.
  std::vector<std::unique_ptr<RunnerProcess>> runners;
  for (std::size_t r = 0; r < kRunners; ++r) runners.push_back(start_runner_via_follower(r));
  for (std::size_t r = 0; r < kRunners; ++r)
    ASSERT_TRUE(runners[r]->wait_count("event=connected", kValidators - 1, left(60s))) << "runner " << r;
  processes[3]->kill9();
  auto id = submit(1);
  ASSERT_TRUE(id);
  // The committee as a final block holds it (a tip may still change, D11).
  auto job = chain(0).job(*id);
  ASSERT_TRUE(eventually([&] {
    job = chain(0).job(*id);
    return job.ok() && height(0) >= job->assignment_height.value + kFinalityDepth;
  }, left(60s)));
  ASSERT_TRUE(job.ok() && job->committee.size() == 1);
  const std::uint64_t assigned_at = job->assignment_height.value;
  std::size_t chosen = kRunners;
  for (std::size_t r = 0; r < kRunners; ++r)
    if (crypto::secp256k1_address(keys[r]) == job->committee[0].runner) chosen = r;
  ASSERT_LT(chosen, kRunners);
  RunnerProcess& runner = *runners[chosen];
  // Pushed: the three finalized the block and one sent it (its line comes when the push arrives).
  ASSERT_TRUE(runner.wait_for({"event=assigned", to_hex0x(id->value), "via=push"}, left(60s)));
  // Settled by now (a follow() under way when validator 3 died may have
  // applied the blocks it had fetched): with its only peer down it stays.
  const std::uint64_t stuck = height(kFollower);
  std::this_thread::sleep_for(500ms);
  EXPECT_LT(height(kFollower), assigned_at) << "the follower took the block: the test shows nothing";
  EXPECT_EQ(height(kFollower), stuck) << "the follower moved with its only peer down";
  EXPECT_GE(height(0), assigned_at + kFinalityDepth);
  EXPECT_FALSE(runner.saw({"event=accepted", to_hex0x(id->value)}, 100ms)) << "run before the follower had its block";
  EXPECT_FALSE(runner.saw({"event=rejected", to_hex0x(id->value)}));
  auto meanwhile = chain(0).job(*id);
  ASSERT_TRUE(meanwhile.ok()) << meanwhile.error().message;
  EXPECT_EQ(meanwhile->state, chain::JobState::kAssigned);
  // Back: validator 3 catches up, the follower from it, and the held push runs.
  processes[3] = start(3);
  ASSERT_TRUE(processes[3]->up());
  auto accepted = runner.wait_for({"event=accepted", to_hex0x(id->value)}, left(60s));
  ASSERT_TRUE(accepted);
  EXPECT_GE(RunnerProcess::height_of(*accepted), assigned_at + kFinalityDepth) << *accepted;
  ASSERT_TRUE(eventually([&] { return completed_at(kFollower, *id); }, left(60s)));
  expect_job_at_both(*id, chain::JobState::kCompleted);
  EXPECT_FALSE(runner.saw({"event=rejected", to_hex0x(id->value)}));
}

// Choice 173: a follower refuses the flags of a validator it would ignore,
// exit status 2 before it opens anything, as it refuses --key (the control).
TEST(Cip11FollowerFlags, TheFlagsOfAValidatorAreRefusedWithFollow) {
  cowboy::testing::TempDir dir;
  const std::vector<std::vector<std::string>> flags = {
      {"--signature-threads", "2"}, {"--view-timeout-ms", "500"},     {"--dev-runners", "1"},
      {"--dev-validators", "2"},    {"--dev-listen", "127.0.0.1:0"}, {"--dev-max-concurrent", "2"},
      {"--test-hold-ms", "10"},     {"--key", "k"}};
  for (const auto& flag : flags) {
    std::vector<std::string> argv{std::string(COWBOY_BIN_DIR) + "/cip11d", "--follow",
                                  "--genesis", (dir.path() / "absent-genesis.json").string(),
                                  "--peers", "http://127.0.0.1:1",
                                  "--data-dir", (dir.path() / "d").string()};
    argv.insert(argv.end(), flag.begin(), flag.end());
    cowboy::testing::ChildProcess cip11d(argv);
    std::optional<int> status;
    ASSERT_TRUE(eventually([&] { return (status = cip11d.exited()).has_value(); }, 20s)) << flag[0];
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 2) << flag[0] << ": wait status " << *status;
  }
}

}  // namespace
}  // namespace cowboy::cip11
