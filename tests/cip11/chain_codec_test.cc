// Byte-exact fixtures of the CIP-11 chain plane's stored records and
// instructions: tests/fixtures/cip11/chain/<name>.hex holds each sample's
// encoding, and chain_refusals.txt the typed error the decoder answers to
// every prefix and single-byte change of it (support/refusals_fixture.h).
// The files are the contract; regenerate deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/cip11_chain_codec_tests
#include <gtest/gtest.h>

#include "../support/refusals_fixture.h"
#include "cip11/chain/codec.h"
#include "cip11/chain/instructions.h"

namespace cowboy::cip11::chain {
namespace {

template <std::size_t N>
std::array<std::uint8_t, N> filled(std::uint8_t first) {
  std::array<std::uint8_t, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = static_cast<std::uint8_t>(first + i);
  return out;
}

RunnerRecord sample_runner(std::uint8_t seed) {
  RunnerRecord r;
  r.address = filled<20>(seed);
  r.key = filled<33>(0x02);
  r.stake = (u128{1} << 70) + 5;
  r.job_kinds = 0x0b;
  r.capabilities = {"gpu", "x86-64"};
  r.max_concurrent = 4;
  r.price = 77;
  r.health = HealthStatus::kPaused;
  r.registered_at = Height{5};
  r.last_heartbeat = Height{9};
  r.active_jobs = 1;
  r.reputation_x1e9 = 900'000'000;
  RunnerRecord before = r;
  before.stake = 1'000;
  before.capabilities = {};
  before.health = HealthStatus::kHealthy;
  r.history = {{Height{7}, before}};
  return r;
}

JobRecord sample_job() {
  JobRecord j;
  j.job_id = JobId{filled<32>(0x21)};
  j.submitter = filled<20>(0x22);
  j.kind = JobKind::kHttp;
  j.spec = {1, 2, 3};
  j.timeout_blocks = 50;
  j.runners = 3;
  j.max_price = 1'000;
  j.submitted_at = Height{40};
  j.state = JobState::kPendingSelection;
  j.selections = 1;
  j.assignment_height = Height{41};
  j.deadline_block = Height{91};
  j.committee = {Assignment{filled<20>(0x31), filled<32>(0x32), Height{45}, std::nullopt},
                 Assignment{filled<20>(0x33), std::nullopt, Height{0}, filled<32>(0x34)}};
  j.excluded = {filled<20>(0x41), filled<20>(0x42)};
  PendingSelectionV1 p;
  p.job_id = j.job_id;
  p.submitted_at = Height{40};
  p.selection_state_height = Height{40};
  p.committee_size = 3;
  p.submission_epoch = RoundEpoch{1};
  p.submission_view = View{2};
  p.seed_epoch = RoundEpoch{1};
  p.seed_view = View{5};
  p.seed_delay_views = 3;
  p.candidates_snapshot_root = filled<32>(0x51);
  j.pending = p;
  j.selection_seed = filled<32>(0x61);
  j.result = {9, 8};
  j.finished_at = Height{0};
  return j;
}

ChainParams sample_params() {
  ChainParams p;
  p.chain_id = 0x0102030405060708;
  p.transport_enabled = true;
  p.presence_shadow_enabled = false;
  p.present_first_enabled = true;
  p.poll_disabled = false;
  p.presence_hard_exclude_enabled = true;
  p.multi_validator = true;
  p.heartbeat_timeout_blocks = 30;
  p.mru_activation_height = Height{100};
  p.mru_ttl_blocks = 200;
  p.selection_seed_delay_views = 3;
  p.min_stake = 10;
  p.max_selections = 3;
  p.reputation.reputation_normalizer = 7;
  p.reputation.w_min_floor_x1e6 = 1'000;
  p.subset.min_subset = 2;
  p.subset.max_subset = 5;
  p.t_hard = 2;
  return p;
}

State sample_state() {
  State s;
  for (std::uint8_t seed : {0x11, 0x71}) {
    RunnerRecord r = sample_runner(seed);
    s.runners[r.address] = r;
    s.index.register_runner(r.address);
  }
  JobRecord j = sample_job();
  s.jobs[j.job_id] = j;
  s.jobs_submitted = 1;
  s.mru[{filled<20>(0x22), JobKind::kHttp}] = MruRecord{filled<20>(0x11), Height{12}};
  s.presence[filled<20>(0x71)] = PresenceProof{Height{10}, Height{30}};
  s.commit();
  return s;
}

using cowboy::testing::codec_sample;
using cowboy::testing::CodecSample;

/// get_params / get_state read from a Reader: strict and whole here.
template <typename T, typename Get>
Result<T, codec::DecodeError> read_whole(ByteView b, Get get) {
  codec::Reader r(b);
  T value = get(r);
  r.finish();
  if (!r.ok()) return Err{r.error()};
  return value;
}

template <typename T>
Bytes written(const T& value, void (*put)(codec::Writer&, const T&)) {
  codec::Writer w;
  put(w, value);
  return std::move(w).take();
}

std::vector<CodecSample> all_samples() {
  std::vector<CodecSample> out;
  const RunnerRecord runner = sample_runner(0x11);
  out.push_back(codec_sample("runner_record", runner, encode_runner, decode_runner));
  const JobRecord job = sample_job();
  out.push_back(codec_sample("job_record", job, encode_job, decode_job));
  const MruRecord mru{filled<20>(0x11), Height{12}};
  out.push_back(codec_sample("mru_record", mru, encode_mru, decode_mru));
  const PresenceProof proof{Height{10}, Height{30}};
  out.push_back(codec_sample("presence_proof", proof, encode_presence_proof, decode_presence_proof));
  const ChainParams params = sample_params();
  out.push_back(codec_sample("chain_params", params, [](const ChainParams& p) { return written(p, put_params); },
                       [](ByteView b) { return read_whole<ChainParams>(b, get_params); }));
  const State state = sample_state();
  out.push_back(codec_sample("chain_state", state, [](const State& s) { return written(s, put_state); },
                       [](ByteView b) { return read_whole<State>(b, get_state); }));

  RegisterRunner reg;
  reg.key = filled<33>(0x03);
  reg.stake = 1'000;
  reg.job_kinds = 0x21;
  reg.capabilities = {"gpu"};
  reg.max_concurrent = 2;
  reg.price = 9;
  SubmitJob submit{JobKind::kAgent, Bytes{'s', 'p'}, 20, 2, 500};
  const std::vector<std::pair<std::string, Instruction>> instructions{
      {"ins_register_runner", reg},
      {"ins_runner_heartbeat", RunnerHeartbeat{}},
      {"ins_set_runner_health", SetRunnerHealth{HealthStatus::kPaused}},
      {"ins_deregister_runner", DeregisterRunner{}},
      {"ins_submit_job", submit},
      {"ins_job_result_commit", JobResultCommit{JobId{filled<32>(0x81)}, filled<32>(0x82)}},
      {"ins_job_result_submit", JobResultSubmit{JobId{filled<32>(0x81)}, Bytes{7, 7, 7}, filled<32>(0x83)}},
      {"ins_submit_presence_certificate",
       SubmitPresenceCertificate{filled<20>(0x91), Height{33}, 5'000, {Bytes{1, 2}, Bytes{}, Bytes{3}}}},
  };
  for (const auto& [name, ins] : instructions)
    out.push_back(codec_sample(name, ins, encode_instruction, decode_instruction));
  return out;
}

std::string fixture_dir() { return std::string(COWBOY_FIXTURE_DIR) + "/cip11/chain/"; }

TEST(Cip11ChainFixtures, EveryRecordAndInstructionMatchesItsFileByteForByte) {
  cowboy::testing::expect_fixture_files(fixture_dir(), all_samples());
}

TEST(Cip11ChainFixtures, EveryPrefixAndByteChangeIsRefusedWithTheErrorOfItsFile) {
  cowboy::testing::expect_refusals_file(fixture_dir() + "refusals.txt", all_samples());
}

}  // namespace
}  // namespace cowboy::cip11::chain
