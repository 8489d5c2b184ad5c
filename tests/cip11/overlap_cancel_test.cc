// §11.5 across a §5.3 overlap with real processes (docs/cip11.md choice 135):
// four `cip11d --genesis` validators whose genesis schedules
// ValidatorSetSnapshot(1) without genesis validator 3, and one `cip11-runner`
// whose Sub_0(R) leaves validator 3 out, so every validator it holds in epoch
// 0 is in epoch 1 too and its runner reconnects to each under epoch 1 at the
// activation. Two jobs go out just before it: one reassigned by its deadline
// inside the window, one that finishes inside it. The validator that pushed
// each keeps the epoch-0 connection its stream is on while that stream is
// open, so the cancel reaches the runner and the result comes back on its
// accepted stream; once drained, the connection ends as superseded.
#include <gtest/gtest.h>

#include "validator_processes.h"

namespace cowboy::cip11 {
namespace {

using namespace std::chrono_literals;
using namespace cip11::testing;

struct Cip11CancelAcrossEpochs : Cip11Validators {
  static constexpr std::uint64_t kActivation = 100, kOverlap = 100, kCutoff = kActivation + kOverlap;
  static constexpr std::size_t kLeaving = 3;
  Cip11CancelAcrossEpochs() { runner_count = kValidators; }  // one runner leaving out each validator

  void configure(devchain::Cip11Genesis& c) override { schedule_without(c, kLeaving, kActivation, kOverlap); }

  std::optional<JobId> submit(const std::string& spec, std::uint64_t timeout_blocks) {
    auto api = chain(0);
    devchain::Wallet wallet(api, submitter);
    chain::SubmitJob job{JobKind::kCustom, Bytes(spec.begin(), spec.end()), timeout_blocks, 1, 0};
    auto receipt = wallet.send_and_wait(devchain::Cip11Call{chain::encode_instruction(job)});
    if (!receipt || !receipt->ok()) return std::nullopt;
    return receipt->job_id;
  }
  static std::uint64_t field_of(const std::string& line, const std::string& name) {
    const auto at = line.find(name);
    return at == std::string::npos ? 0 : std::stoull(line.substr(at + name.size()));
  }
};

TEST_F(Cip11CancelAcrossEpochs, ACancelAndAResultReachTheRunnerOnTheEpochZeroStreamsAfterItReconnectsUnderEpochOne) {
  // The runner whose Sub_0(R) leaves out the leaving validator: its three are in both epochs.
  std::size_t subject = runner_keys.size();
  for (std::size_t r = 0; r < runner_keys.size(); ++r)
    if (excluded[r] == kLeaving) subject = r;
  ASSERT_LT(subject, runner_keys.size());
  auto runner = start_runner(subject);  // the only runner up: present-first draws it
  ASSERT_TRUE(runner->wait_count("event=connected", 3, 60s));
  ASSERT_TRUE(eventually([&] { return height(0) >= 10; }, 30s));
  ASSERT_LT(height(0), kActivation - 12) << "the runner came up after the change; raise kActivation";

  ASSERT_TRUE(eventually([&] { return height(0) >= kActivation - 12; }, 60s));
  // Reassigned by its deadline inside the window, while its task still sleeps.
  auto cancelled = submit(R"({"sleep_ms":40000})", 28);
  // Finishes inside the window, after the runner's epoch-1 connections.
  auto drained = submit(R"({"sleep_ms":5000})", 150);
  ASSERT_TRUE(cancelled && drained);
  for (const auto& id : {*cancelled, *drained})
    ASSERT_TRUE(runner->wait_for({"event=accepted", to_hex0x(id.value)}, 20s)) << to_hex0x(id.value);
  const auto job = chain(0).job(*cancelled);
  ASSERT_TRUE(job.ok());
  const std::uint64_t deadline = job->deadline_block.value;
  ASSERT_GT(deadline, kActivation + 5) << "the deadline must fall after the runner's epoch-1 admissions";
  ASSERT_LT(height(0), kActivation) << "both jobs must have been accepted under epoch 0";

  // At the activation the runner holds its three validators under epoch 1;
  // each epoch-0 link is retired.
  std::uint64_t last_connected_us = 0;
  for (std::size_t v = 0; v < kValidators; ++v) {
    if (v == kLeaving) continue;
    auto line = runner->wait_for({"event=connected", endpoints.at(v) + " epoch 1"}, 30s);
    ASSERT_TRUE(line) << "validator " << v;
    last_connected_us = std::max(last_connected_us, field_of(*line, " at_us="));
    ASSERT_TRUE(runner->wait_for({"event=disconnected", "retired:", endpoints.at(v) + " epoch 0"}, 10s)) << v;
  }

  // The chain reassigns the first job at deadline + 1, inside the window: the
  // cancel comes over the epoch-0 stream it was pushed on, after the epoch-1
  // connections replaced that link for anything new.
  auto cancel = runner->wait_for({"event=cancelled", to_hex0x(cancelled->value)}, 30s);
  ASSERT_TRUE(cancel) << "no JobCancel reached the runner for the job reassigned inside the overlap";
  EXPECT_GT(field_of(*cancel, " at_us="), last_connected_us);
  EXPECT_LT(field_of(*cancel, " height="), kCutoff);
  EXPECT_NE(chain(0).job(*cancelled)->state, chain::JobState::kCompleted);

  // The second job's reveal goes back on its accepted stream, not around it.
  auto reveal = runner->wait_for({"event=result_sent", to_hex0x(drained->value), "reveal"}, 30s);
  ASSERT_TRUE(reveal);
  EXPECT_NE(reveal->find("on the accepted stream"), std::string::npos) << *reveal;
  EXPECT_GT(field_of(*reveal, " at_us="), last_connected_us);
  ASSERT_TRUE(eventually(
      [&] {
        auto j = chain(0).job(*drained);
        return j.ok() && j->state == chain::JobState::kCompleted;
      },
      30s));

  // Drained, each epoch-0 connection ends as superseded (§5.2), before the
  // cutoff; the one that carried the drained job only after its reveal.
  std::uint64_t last_superseded_us = 0;
  for (std::size_t v = 0; v < kValidators; ++v) {
    if (v == kLeaving) continue;
    auto bye = runner->wait_for({"event=disconnected", "Goodbye RateLimited", endpoints.at(v) + " epoch 0"}, 20s);
    ASSERT_TRUE(bye) << "validator " << v;
    EXPECT_LT(field_of(*bye, " height="), kCutoff) << *bye;
    last_superseded_us = std::max(last_superseded_us, field_of(*bye, " at_us="));
  }
  EXPECT_GT(last_superseded_us, field_of(*reveal, " at_us="));
}

}  // namespace
}  // namespace cowboy::cip11
