// The refusals of cip11d and cip11-runner, each driven by a misbehaving party
// in this process against the real other end: admission (§5.2, §6.2), a
// JobAck for another assignment (§10.2), result transactions that fail the
// §10.3 checks, and a JobCancel for another assignment (§10.5).
#include <fstream>
#include <regex>

#include "cip11/validator/runner_directory.h"
#include "devchain/wallet.h"
#include "net/host_port.h"
#include "service_world.h"

namespace cowboy::cip11 {
namespace {

using testing::DevWorld;
using testing::eventually;
using testing::hex;
using testing::InProcessRunner;
using testing::InProcessValidator;
using testing::LocalChain;

crypto::Secp256k1Secret secret(std::uint8_t n) {
  crypto::Secp256k1Secret s{};
  s[0] = 0x3c;
  s[31] = n;
  return s;
}

Hello hello_from(const crypto::Secp256k1Secret& runner) {
  Hello h;
  h.party_pubkey = PubKey::runner(*crypto::secp256k1_public_key(runner));
  return h;
}

// §5.2 / §6.2 on a real chain: a key the registry does not hold, a runner
// deregistered since, and a registered runner at a validator outside its
// Sub(R) (|V| = 4, so k = 3) are refused, each with its reason.
// An M = 1 echo job sent from the local chain's submitter, as block 1 will
// assign it to the one registered runner (machine.cc: deadline = 1 + timeout).
chain::JobRecord send_echo_job(testing::LocalChain& local, const std::string& echo) {
  chain::JobRecord job;
  auto key = devchain::load_key(local.submitter_file());
  EXPECT_TRUE(key);
  if (!key) return job;
  devchain::Wallet wallet(*local.node, *key);
  job.kind = JobKind::kCustom;
  const std::string spec = R"({"echo":")" + echo + R"("})";
  job.spec = Bytes(spec.begin(), spec.end());
  job.timeout_blocks = 50;
  job.runners = 1;
  job.submitter = *crypto::secp256k1_address(*key);
  auto hash = wallet.send(devchain::Cip11Call{chain::encode_instruction(
      chain::SubmitJob{job.kind, job.spec, job.timeout_blocks, job.runners, job.max_price})});
  EXPECT_TRUE(hash.ok()) << (hash.ok() ? "" : hash.error().message);
  if (!hash.ok()) return job;
  job.job_id = chain::job_id_of(*hash);
  job.assignment_height = Height{1};
  job.deadline_block = Height{1 + job.timeout_blocks};
  return job;
}

TEST(Cip11Refusals, RegistryAdmissionRefusesUnknownDeregisteredAndOutOfSubsetRunners) {
  cowboy::testing::TempDir dir;
  const auto a = secret(1), b = secret(2), unknown = secret(3);
  devchain::Cip11Genesis g;
  g.params.chain_id = 5;
  g.params.multi_validator = true;  // as the stored genesis reads back (four validators): Node::open compares the two
  g.finality_depth = 4;  // K = F + 1: the genesis §9.2 invariant (docs/cip11.md choice 157)
  g.params.selection_seed_delay_views = 5;
  std::vector<crypto::Ed25519Public> peers;
  for (std::uint8_t i = 0; i < 4; ++i) {
    crypto::Ed25519Seed seed;
    seed.fill(static_cast<std::uint8_t>(0x40 + i));
    peers.push_back(crypto::ed25519_from_seed(seed).public_key);
    g.validators.push_back({peers.back(), "127.0.0.1:" + std::to_string(7000 + i)});
  }
  for (const auto& k : {a, b}) g.runners.push_back({*crypto::secp256k1_public_key(k), 1000, 1u << 3, {}, 4, 0});
  const Address funded = *crypto::secp256k1_address(b);
  devchain::NodeConfig config;
  config.data_dir = dir.path() / "chain";
  auto node = devchain::Node::open(config, devchain::GenesisSpec{"admission", funded, {{funded, 1'000'000}}, {}, g});
  ASSERT_TRUE(node) << node.error();
  devchain::Cip11Port port(**node, **node);
  RunnerDirectory directory(port);
  ASSERT_TRUE(directory.refresh());
  ASSERT_EQ(subset_size(peers.size()), 3u);

  const auto a_key = *crypto::secp256k1_public_key(a);
  int admitted = 0, not_in_subset = 0;
  for (const auto& v : peers) {
    RegistryAdmission admission(directory, peers, v);
    const auto verdict = admission.admit(hello_from(a));
    EXPECT_EQ(verdict.has_value(), !in_subset(a_key, peers, v));
    admitted += !verdict;
    not_in_subset += verdict == GoodbyeReason::kNotInSubset;
    EXPECT_EQ(admission.admit(hello_from(unknown)), GoodbyeReason::kAuthFailed);
    Hello validator_key = hello_from(a);
    validator_key.party_pubkey = PubKey::validator(v);  // no runner address derives from it
    EXPECT_EQ(admission.admit(validator_key), GoodbyeReason::kAuthFailed);
  }
  EXPECT_EQ(admitted, 3);
  EXPECT_EQ(not_in_subset, 1);

  // b leaves the registry; once the directory has read that, b is refused everywhere.
  devchain::Wallet wallet(**node, b);
  ASSERT_TRUE(wallet.send(devchain::Cip11Call{chain::encode_instruction(chain::DeregisterRunner{})}));
  ASSERT_TRUE((*node)->produce_block());
  ASSERT_EQ((*node)->runner(*crypto::secp256k1_address(b))->health, HealthStatus::kDeregistered);
  ASSERT_TRUE(directory.refresh());
  for (const auto& v : peers) EXPECT_EQ(RegistryAdmission(directory, peers, v).admit(hello_from(b)), GoodbyeReason::kAuthFailed);
}

// Over QUIC: cip11d tells an unregistered key Goodbye{AuthFailed} and never admits it.
TEST(Cip11Refusals, AnUnregisteredRunnerIsToldAuthFailedAndNeverAdmitted) {
  cowboy::testing::TempDir dir;
  const auto log = dir.path() / "cip11d.log";
  cowboy::testing::Cip11dProcess validator(dir.path() / "data", {"--dev-runners", "1"}, 0, 0, log.string());
  ASSERT_TRUE(validator.up());
  auto chain = validator.chain();
  auto genesis = chain.cip11_genesis();
  ASSERT_TRUE(genesis);
  // The last height read: a read that fails under load (its error dereferenced
  // threw on the runner's clock thread, ending the test process) keeps it.
  InProcessRunner stranger(*Signer::runner(secret(9)), *genesis, validator.quic_port(),
                           [&, last = std::uint64_t{0}]() mutable {
                             if (auto h = chain.height(); h.ok()) last = *h;
                             return last;
                           });
  ASSERT_TRUE(eventually([&] {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    return text.find("goodbye_sent reason=AuthFailed") != std::string::npos;
  }));
  EXPECT_FALSE(stranger.admitted());
  EXPECT_EQ(validator.metric("cip11d_connected_runners"), 0);
  // The refusal is counted by its reason, as the dashboard reads it (docs/operations.md).
  const auto text = validator.metrics_text();
  std::smatch m;  // at least this one (the stranger may try again meanwhile)
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(\ncip11d_admission_refusals_total\{reason="AuthFailed"\} (\d+)\n)")))
      << text;
  EXPECT_GE(std::stoi(m[1]), 1);
  EXPECT_NE(text.find("\ncip11d_admission_refusals_total{reason=\"NotInSubset\"} 0\n"), std::string::npos) << text;
  EXPECT_EQ(validator.metric("cip11d_admissions_total"), 0);
}

// §6.2 on the runner's side: a validator whose key is not in
// ValidatorSetSnapshot(0) - an impostor on validator 1's endpoint, offering
// the right validator_set_hash - is never admitted, while the real validator 0 is.
TEST(Cip11Refusals, ARunnerRefusesAValidatorOutsideTheSnapshot) {
  DevWorld w({"--dev-runners", "1", "--dev-validators", "2"});
  auto genesis = w.chain().cip11_genesis();
  ASSERT_TRUE(genesis);
  crypto::Ed25519Seed impostor_seed;
  impostor_seed.fill(0x66);
  InProcessValidator impostor(impostor_seed, *genesis, net::parse_host_port(genesis->validators[1].endpoint)->second,
                              w.dir.path() / "tls");
  auto& r = w.runner(0);
  ASSERT_TRUE(r.wait_for({"event=connected"}));  // validator 0, the real one
  ASSERT_TRUE(w.present(1));
  // The runner has tried the impostor meanwhile (both links start together, and retry within 200 ms).
  EXPECT_FALSE(r.saw({"event=connected", genesis->validators[1].endpoint}, std::chrono::milliseconds(1500)));
  EXPECT_EQ(impostor.admitted.load(), 0);
  EXPECT_EQ(r.count("event=connected"), 1u);
}

// §10.2: "a validator MUST reject a JobAck whose assignment_hash does not
// match a JobAssignment it sent for job_id on that connection".
TEST(Cip11Refusals, AJobAckForAnotherAssignmentIsABadFrameNotAnAck) {
  DevWorld w;
  auto genesis = w.chain().cip11_genesis();
  auto key = devchain::load_key(w.data() / "keys" / "runner-0.key");
  ASSERT_TRUE(genesis && key);
  InProcessRunner runner(*Signer::runner(*key), *genesis, w.validator->quic_port(), [&] { return w.height(); });
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"echo":"ack"})");
  ASSERT_TRUE(id);
  auto push = runner.frames.received<JobAssignment>();
  ASSERT_TRUE(push);
  const auto& [stream, a] = *push;
  Bytes32 other_hash = a.assignment_hash;
  other_hash[0] ^= 1;
  JobId other_job = a.job_id;
  other_job.value[0] ^= 1;
  ASSERT_TRUE(runner.send(stream, JobAck{a.job_id, other_hash, AckStatus::accepted(), std::nullopt, {}}));
  ASSERT_TRUE(runner.send(stream, JobAck{other_job, a.assignment_hash, AckStatus::accepted(), std::nullopt, {}}));
  ASSERT_TRUE(eventually([&] { return w.validator->metric("cip11d_bad_frames_total") == 2; }));
  EXPECT_EQ(w.validator->metric("cip11d_acks_total"), 0);
  // The ack that names it is still taken: the stream was not ended by the bad ones.
  ASSERT_TRUE(runner.send(stream, JobAck{a.job_id, a.assignment_hash, AckStatus::accepted(), std::nullopt, {}}));
  ASSERT_TRUE(eventually([&] {
    return w.validator->metrics_text().find("cip11d_acks_total{status=\"accepted\"} 1") != std::string::npos;
  }));
  EXPECT_EQ(w.validator->metric("cip11d_bad_frames_total"), 2);
}

// §10.3 checks 1-3 on a result frame's tx_bytes: the runner's signature, the
// instruction the frame names, the frame's job_id; and bytes that are no
// transaction. None is forwarded; the good one after them settles the job.
TEST(Cip11Refusals, ResultTransactionsThatFailTheSection103ChecksAreNotForwarded) {
  DevWorld w;
  auto chain = w.chain();
  auto genesis = chain.cip11_genesis();
  auto key = devchain::load_key(w.data() / "keys" / "runner-0.key");
  auto other = devchain::load_key(w.data() / "keys" / "submitter.key");
  ASSERT_TRUE(genesis && key && other);
  InProcessRunner runner(*Signer::runner(*key), *genesis, w.validator->quic_port(), [&] { return w.height(); });
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"echo":"checked"})");
  ASSERT_TRUE(id);
  auto push = runner.frames.received<JobAssignment>();
  ASSERT_TRUE(push);
  const auto& [stream, a] = *push;
  ASSERT_TRUE(runner.send(stream, JobAck{a.job_id, a.assignment_hash, AckStatus::accepted(), std::nullopt, {}}));
  ASSERT_TRUE(eventually([&] { return w.validator->metric("cip11d_acks_total") == 1; }));

  const Bytes32 chain_id = *chain.chain_instance_id();
  const Address me = *crypto::secp256k1_address(*key);
  const std::uint64_t nonce = chain.account_info(me)->next_nonce;
  auto tx = [&](const crypto::Secp256k1Secret& signer, const chain::Instruction& i) {
    devchain::Transaction t{chain_id, nonce, devchain::Cip11Call{chain::encode_instruction(i)}, {}};
    EXPECT_TRUE(devchain::sign_tx(t, signer));
    return devchain::encode_tx(t);
  };
  const Bytes result{'o', 'k'};
  JobId another_job = *id;
  another_job.value[31] ^= 1;
  const chain::JobResultSubmit reveal{*id, result, Bytes32{}};
  ASSERT_TRUE(runner.send(stream, JobResult{*id, tx(*other, reveal)}));                            // 1: another signer
  ASSERT_TRUE(runner.send(stream, JobResult{*id, tx(*key, chain::JobResultCommit{*id, Bytes32{}})}));  // 2: a commit in a JobResult
  ASSERT_TRUE(runner.send(stream, JobResultCommit{*id, tx(*key, reveal)}));                         // 2: a reveal in a JobResultCommit
  ASSERT_TRUE(runner.send(stream, JobResult{*id, tx(*key, chain::JobResultSubmit{another_job, result, Bytes32{}})}));  // 3
  ASSERT_TRUE(runner.send(stream, JobResult{*id, Bytes{0xde, 0xad}}));                            // no transaction at all
  ASSERT_TRUE(eventually([&] { return w.validator->metric("cip11d_results_refused_total") == 5; }));
  EXPECT_EQ(w.validator->metric("cip11d_results_forwarded_total"), 0);
  EXPECT_EQ(w.job(*id)->state, chain::JobState::kAssigned);

  ASSERT_TRUE(runner.send(stream, JobResult{*id, tx(*key, reveal)}));
  ASSERT_TRUE(eventually([&] { return w.job(*id)->state == chain::JobState::kCompleted; }));
  EXPECT_EQ(w.validator->metric("cip11d_results_forwarded_total"), 1);
  EXPECT_EQ(w.job(*id)->result, result);
}

// §10.5: "the runner MUST reject a JobCancel whose assignment_hash does not
// match an in-flight assignment for job_id on that connection". The
// validator is this test; the runner is cip11-runner.
TEST(Cip11Refusals, ARunnerIgnoresAJobCancelForAnotherAssignment) {
  testing::LocalChainOptions options;
  options.service = false;
  LocalChain local(options);
  InProcessValidator validator(local.validator_seed, local.genesis, local.quic_port, local.dir.path() / "tls");
  auto runner = local.runner(0);
  ASSERT_TRUE(runner->wait_for({"event=connected"}));
  ASSERT_TRUE(eventually([&] { return validator.admitted.load() == 1; }));
  auto id = local.submit(R"({"sleep_ms":3000})");
  ASSERT_TRUE(id);
  auto job = local.node->job(*id);
  ASSERT_TRUE(job);
  const Address me = job->committee.at(0).runner;
  auto pushed = validator.push(me, testing::assignment_of(*job));
  ASSERT_TRUE(pushed);
  auto ack = validator.frames.received<JobAck>();
  ASSERT_TRUE(ack);
  ASSERT_EQ(ack->second.status, AckStatus::accepted());
  ASSERT_TRUE(runner->wait_for({"event=accepted", hex(*id)}));
  Bytes32 other = pushed->assignment_hash;
  other[0] ^= 1;
  ASSERT_TRUE(validator.send(me, pushed->stream, JobCancel{*id, other, CancelReason::kExpired, {}}));
  EXPECT_FALSE(runner->saw({"event=cancelled"}, std::chrono::milliseconds(1000)));  // still running
  ASSERT_TRUE(validator.send(me, pushed->stream, JobCancel{*id, pushed->assignment_hash, CancelReason::kExpired, {}}));
  ASSERT_TRUE(runner->wait_for({"event=cancelled", hex(*id)}));
  EXPECT_FALSE(runner->saw({"event=result_sent", hex(*id)}, std::chrono::milliseconds(2500)));
}

// §10.1 with several validators: a push can come from a validator that
// applied the assignment's block before the one this runner reads the chain
// through. The runner holds it - no ack, nothing run - and verifies it again
// once its own view applies assignment_height, instead of refusing a valid
// assignment "the chain has no such job" and costing the job its timeout
// (docs/cip11.md choice 111). Here the chain makes no block until the push is in.
TEST(Cip11Refusals, APushAheadOfTheRunnersViewIsHeldUntilItsBlockIsAppliedNotRefused) {
  testing::LocalChainOptions options;
  options.service = false;
  options.start = false;  // height 0 until the test starts the blocks
  LocalChain local(options);
  InProcessValidator validator(local.validator_seed, local.genesis, local.quic_port, local.dir.path() / "tls");
  auto runner = local.runner(0, {"--height-poll-ms", "20"});
  ASSERT_TRUE(runner->wait_for({"event=connected"}));
  ASSERT_TRUE(eventually([&] { return validator.admitted.load() == 1; }));
  // The job waits in the mempool: block 1 includes it and, M = 1, assigns it
  // there to the one registered runner (machine.cc: deadline = 1 + timeout).
  const chain::JobRecord job = send_echo_job(local, "held");
  ASSERT_FALSE(::testing::Test::HasFailure());
  const Address me = *crypto::secp256k1_address(local.runner_keys[0]);
  auto pushed = validator.push(me, testing::assignment_of(job));
  ASSERT_TRUE(pushed);
  ASSERT_TRUE(runner->wait_for({"event=assigned", hex(job.job_id), "via=push"}));
  // Its view is at height 0: held, neither refused nor started.
  EXPECT_FALSE(runner->saw({"event=rejected"}, std::chrono::milliseconds(1000)));
  EXPECT_FALSE(runner->saw({"event=accepted"}));
  // Block 1: the same assignment on the chain; the runner accepts it on the
  // stream it came on, runs it and answers there.
  local.node->start();
  auto ack = validator.frames.received<JobAck>();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->first, pushed->stream);
  EXPECT_EQ(ack->second.status, AckStatus::accepted());
  ASSERT_TRUE(runner->wait_for({"event=accepted", hex(job.job_id), "via=push"}));
  auto result = validator.frames.received<JobResult>();
  ASSERT_TRUE(result);
  EXPECT_EQ(result->second.job_id, job.job_id);
  EXPECT_FALSE(runner->saw({"event=rejected"}));
}

// docs/cip11.md choice 159 (§10.1: no execution "unless assignment_height is
// finalized+applied in its own view"): on a chain with two genesis validators
// and F = 4 (this node produces; the other validator is only named), a push
// whose block the runner has applied but that is not yet final there is
// held - no ack, nothing run - and run once the runner's view makes it final.
TEST(Cip11Refusals, APushWhoseBlockIsAppliedButNotFinalInTheRunnersViewIsHeld) {
  constexpr std::uint64_t kF = 4;
  testing::LocalChainOptions options;
  options.service = false;
  options.start = false;
  options.genesis = [](devchain::Cip11Genesis& g) {
    crypto::Ed25519Seed other;
    other.fill(0x6b);
    g.validators.push_back({crypto::ed25519_from_seed(other).public_key, "127.0.0.1:9"});
    g.params.multi_validator = true;
    g.finality_depth = kF;
    g.params.selection_seed_delay_views = kF + 1;
  };
  LocalChain local(options);
  InProcessValidator validator(local.validator_seed, local.genesis, local.quic_port, local.dir.path() / "tls");
  auto runner = local.runner(0, {"--height-poll-ms", "20"});
  ASSERT_TRUE(runner->wait_for({"event=connected"}));
  ASSERT_TRUE(eventually([&] { return validator.admitted.load() == 1; }));
  const chain::JobRecord job = send_echo_job(local, "final");
  ASSERT_FALSE(::testing::Test::HasFailure());
  local.node->start();
  // Block 1 assigns it; pushed once the chain holds it, as a validator
  // that applied it (not yet final anywhere: final at block 1 + F).
  ASSERT_TRUE(eventually([&] { return local.node->job(job.job_id).ok(); }));
  const Address me = *crypto::secp256k1_address(local.runner_keys[0]);
  auto pushed = validator.push(me, testing::assignment_of(job));
  ASSERT_TRUE(pushed);
  ASSERT_TRUE(runner->wait_for({"event=assigned", hex(job.job_id), "via=push"}));
  // Until block 1 + F - 1 nothing is final from block 1 on in any view: held.
  ASSERT_TRUE(eventually([&] { return local.node->head().height >= kF; }));
  EXPECT_FALSE(runner->saw({"event=accepted"}));
  EXPECT_FALSE(runner->saw({"event=rejected"}));
  EXPECT_EQ(validator.frames.count<JobAck>(), 0u);
  // Then final in its view: accepted on the stream it came on, run, answered there.
  auto ack = validator.frames.received<JobAck>();
  ASSERT_TRUE(ack);
  EXPECT_GE(local.node->head().height, 1 + kF);
  EXPECT_EQ(ack->first, pushed->stream);
  EXPECT_EQ(ack->second.status, AckStatus::accepted());
  ASSERT_TRUE(runner->wait_for({"event=accepted", hex(job.job_id), "via=push"}));
  auto result = validator.frames.received<JobResult>();
  ASSERT_TRUE(result);
  EXPECT_EQ(result->second.job_id, job.job_id);
  EXPECT_FALSE(runner->saw({"event=rejected"}));
}

}  // namespace
}  // namespace cowboy::cip11
