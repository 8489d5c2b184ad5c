// State::due: begin_block looks only at the jobs due by its block - a pending
// selection from the block after S on (it maps its seed round at each block,
// docs/cip11.md choice 140), an assignment after its deadline - and an ended
// job is never looked at again.
#include <gtest/gtest.h>

#include "chain_harness.h"

namespace cowboy::cip11::chain {
namespace {

using testing::key;

TEST(Cip11ChainDue, OnlyJobsDueByTheBlockAreLookedAtAndEndedOnesLeaveTheIndex) {
  testing::Chain c;
  c.params.max_selections = 2;
  c.params.present_first_enabled = true;  // M > 1 goes through a pending selection (§13)
  const std::vector<testing::Key> ks{key(1), key(2), key(3)};
  c.register_all(ks);
  const cip11::JobId single = *c.ok(ks[0].address, testing::job(1, 10)).job_id;
  const Height s1 = c.height;
  const cip11::JobId pair = *c.ok(ks[1].address, testing::job(2, 12)).job_id;
  const Height s2 = c.height;
  const cip11::JobId lost = *c.ok(ks[2].address, testing::job(1, 4)).job_id;
  const Height s3 = c.height;
  c.begin();  // the index takes in the jobs the last blocks changed

  const auto due_by = [&](Height h) { return c.state.due.due_by(h); };
  EXPECT_EQ(c.state.due.size(), 3u);
  EXPECT_EQ(next_due(c.job_of(single)), s1 + 10 + 1);  // after its deadline
  // From the block after S: views restart per round epoch, so none read as a
  // height bounds the block its seed round passes at (choice 140).
  EXPECT_EQ(next_due(c.job_of(pair)), s2 + 1);
  EXPECT_EQ(next_due(c.job_of(lost)), s3 + 4 + 1);
  EXPECT_TRUE(due_by(s2).empty());
  EXPECT_EQ(due_by(c.height), std::vector<JobId>{pair});  // looked at, its round not passed yet
  EXPECT_EQ(c.job_of(pair).state, JobState::kPendingSelection);

  // The single job completes: it leaves the index at the next block.
  const Address runner = c.committee_of(single).at(0);
  c.ok(runner, JobResultSubmit{single, Bytes{'o', 'k'}, Bytes32{}});
  c.begin();
  EXPECT_FALSE(next_due(c.job_of(single)));
  EXPECT_EQ(c.state.due.size(), 2u);

  // The other M = 1 job is looked at once its deadline passed, re-selected, and
  // after its last committee times out it is gone from the index too.
  while (c.job_of(lost).selections < 2) c.begin();
  EXPECT_EQ(c.job_of(lost).state, JobState::kAssigned);
  while (c.job_of(lost).state == JobState::kAssigned) c.begin();
  EXPECT_EQ(c.job_of(lost).state, JobState::kTimedOut);
  c.begin();
  EXPECT_EQ(c.state.due.size(), 1u);  // the pair, assigned by now and due at its deadline
  EXPECT_EQ(c.job_of(pair).state, JobState::kAssigned);
  EXPECT_EQ(next_due(c.job_of(pair)), c.job_of(pair).deadline_block + 1);
}

}  // namespace
}  // namespace cowboy::cip11::chain
