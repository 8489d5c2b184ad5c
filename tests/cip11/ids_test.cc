// CIP-11's ids are types of their own (cip11/ids.h): a job id is 32 bytes on
// the wire like any hash, and in the code one passed where a plain hash is
// expected, or a hash where a job id is, does not compile. The static
// assertions are the test; the TESTs show the wire value is what each carries.
#include <gtest/gtest.h>

#include <type_traits>

#include "cip11/chain/instructions.h"
#include "cip11/chain/machine.h"
#include "cip11/frames.h"
#include "cip11/ids.h"
#include "cip11/runner/job_cycle.h"
#include "cip11/selection.h"

namespace cowboy::cip11 {
namespace {

// No implicit way between a job id and its bytes; explicitly from the wire value.
static_assert(!std::is_convertible_v<JobId, Bytes32>);
static_assert(!std::is_convertible_v<Bytes32, JobId>);
static_assert(std::is_constructible_v<JobId, Bytes32>);

// The wire objects take only their own kind.
template <typename Field, typename Value>
constexpr bool kTakes = std::is_assignable_v<Field&, Value>;
static_assert(kTakes<decltype(JobAssignment::job_id), JobId>);
static_assert(!kTakes<decltype(JobAssignment::job_id), Bytes32>);
static_assert(!kTakes<decltype(JobAssignment::assignment_hash), JobId>);
static_assert(!kTakes<decltype(JobCancel::job_id), Bytes32>);
static_assert(!kTakes<decltype(chain::JobResultSubmit::job_id), Bytes32>);
static_assert(!kTakes<decltype(chain::JobResultSubmit::salt), JobId>);

// The calls: a job id where a hash is expected is ill-formed, and the other way round.
template <typename Beacon, typename Job>
concept SeedsV3 = requires(Beacon beacon, Job job) { selection_seed_v3(SelectionMode::kImmediate, beacon, job, 0); };
static_assert(SeedsV3<Bytes32, JobId>);
static_assert(!SeedsV3<JobId, JobId>);    // a job id as the beacon hash
static_assert(!SeedsV3<Bytes32, Bytes32>);  // a hash as the job id

template <typename Job, typename Salt>
concept Commits = requires(Job job, Salt salt) { chain::result_commitment(job, Address{}, ByteView{}, salt); };
static_assert(Commits<JobId, Bytes32>);
static_assert(!Commits<Bytes32, Bytes32>);
static_assert(!Commits<JobId, JobId>);

template <typename Id>
concept CancelsInCycle = requires(JobCycle& c, Id id) { c.cancel(id); };
static_assert(CancelsInCycle<JobId>);
static_assert(!CancelsInCycle<Bytes32>);

static_assert(std::is_same_v<decltype(chain::job_id_of(Bytes32{})), JobId>);

Bytes32 counting(std::uint8_t first) {
  Bytes32 out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(first + i);
  return out;
}

TEST(Cip11Ids, AJobIdIsItsBytesOnTheWire) {
  // A frame body: {0: job_id as a 32-byte string, 1: tx_bytes}.
  const JobResult frame{JobId{counting(1)}, Bytes{9}};
  Bytes expected{0xa2, 0x00, 0x58, 0x20};
  for (std::uint8_t b : counting(1)) expected.push_back(b);
  expected.insert(expected.end(), {0x01, 0x41, 0x09});
  EXPECT_EQ(encode_body(frame), expected);
  auto back = decode_body(FrameType::kJobResult, expected);
  ASSERT_TRUE(back);
  EXPECT_EQ(std::get<JobResult>(*back).job_id, JobId{counting(1)});

  // A chain instruction: the same 32 bytes, raw, after the tag.
  const Bytes ins = chain::encode_instruction(chain::JobResultCommit{JobId{counting(1)}, counting(0x40)});
  ASSERT_GE(ins.size(), 64u);
  EXPECT_TRUE(std::equal(ins.end() - 64, ins.end() - 32, counting(1).begin()));
}

}  // namespace
}  // namespace cowboy::cip11
