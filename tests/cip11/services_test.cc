// cip11d and cip11-runner end to end: real processes on 127.0.0.1, real QUIC,
// a real devchain (100 ms blocks). Where a test needs a party that misbehaves
// - a validator that pushes differing fields or withholds results, a runner
// that stays silent - that party runs in this process on the same libraries.
#include <fstream>

#include "channel_end.h"
#include "samples.h"
#include "cip11/runner/ledger.h"
#include "cip11/subset.h"
#include "cip11/validator/runner_directory.h"
#include "common/ecvrf.h"
#include "devchain/cip11_port.h"
#include "net/host_port.h"
#include "service_world.h"

namespace cowboy::cip11 {
namespace {

using cowboy::testing::Cip11dProcess;
using testing::DevWorld;
using testing::eventually;
using testing::hex;
using testing::IoThread;
using testing::RunnerProcess;
using testing::testing_seed;

TEST(Cip11Services, AJobIsPushedToItsRunnerAndItsResultIsIncluded) {
  DevWorld w;
  auto& r = w.runner(0);
  ASSERT_TRUE(r.wait_for({"event=connected"}));
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"echo":"hello push"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=included", hex(*id)}));
  EXPECT_TRUE(r.saw({"event=accepted", hex(*id), "via=push"}));
  auto sent = r.wait_for({"event=result_sent", hex(*id), "reveal on the accepted stream"}, std::chrono::seconds(0));
  ASSERT_TRUE(sent);
  // cip11d forwards it (results_forwarded below). The runner resends its own
  // transaction only if, RESULT_TX_INCLUSION_GRACE_BLOCKS after the height it
  // knew when sending, it sees no inclusion (§10.3): its view of the height
  // lags its chain reads, so on a loaded machine that can happen. The rule is
  // checked, not that it never fires. (Other retained transactions, say a
  // heartbeat, may be resent too.)
  const std::string result_tx = sent->substr(sent->find(", tx ") + 5, 66);
  for (const auto& line : r.lines_with("event=rebroadcast")) {
    if (line.find(result_tx) == std::string::npos) continue;
    EXPECT_GE(RunnerProcess::height_of(line), RunnerProcess::height_of(*sent) + kResultTxInclusionGraceBlocks) << line;
  }
  auto job = w.job(*id);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, chain::JobState::kCompleted);
  EXPECT_EQ(std::string(job->result.begin(), job->result.end()), "hello push");
  auto m = w.validator->metrics();
  EXPECT_EQ(m["cip11d_pushes_total"], 1);
  EXPECT_EQ(m["cip11d_results_forwarded_total"], 1);
  EXPECT_EQ(m["cip11d_push_latency_seconds_count"], 1);
  EXPECT_NE(w.validator->metrics_text().find("cip11d_acks_total{status=\"accepted\"} 1"), std::string::npos);
  // Both ends ended the job stream (the runner after its JobResult, cip11d at
  // the completion), so QUIC closed it and gave the stream credit back.
  EXPECT_TRUE(eventually([&] { return w.validator->metric("cip11d_job_streams_open") == 0; }))
      << w.validator->metric("cip11d_job_streams_open");
}

// What `cip11d --dev` writes for runners and tools (docs/cip11.md, "The dev
// directory"): cip11-dev.json with exactly these fields, and key files of one
// line of 64 lower-case hex digits, mode 0600, in a 0700 directory.
TEST(Cip11Services, TheDevDirectoryHoldsTheDocumentedManifestAndKeyFiles) {
  DevWorld w({"--dev-runners", "2", "--dev-validators", "2"});
  const nlohmann::json& m = w.validator->manifest();
  std::vector<std::string> keys;
  for (const auto& [k, v] : m.items()) keys.push_back(k);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"block_ms", "chain_id", "chain_url", "runners", "submitter_key_file", "validators"}));
  EXPECT_EQ(m["block_ms"], 100);  // the --block-ms the test process gives it
  EXPECT_EQ(m["chain_id"], 31337);
  EXPECT_EQ(m["chain_url"].get<std::string>().rfind("http://127.0.0.1:", 0), 0u);
  EXPECT_EQ(m["submitter_key_file"], (w.data() / "keys" / "submitter.key").string());
  auto key_file_ok = [](const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const bool hex = text.size() == 65 && text.back() == '\n' &&
                     std::all_of(text.begin(), text.end() - 1, [](char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); });
    const auto perms = std::filesystem::status(path).permissions() & std::filesystem::perms::all;
    return hex && perms == (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  };
  // Entry i of a manifest list: its field count and key file; the secret the file holds.
  auto entry_secret = [&](const char* list, const std::string& name, std::size_t i, std::size_t fields) {
    const auto& e = m[list][i];
    EXPECT_EQ(e.size(), fields) << list << i;
    const std::filesystem::path file = e["key_file"].get<std::string>();
    EXPECT_EQ(file, w.data() / "keys" / (name + "-" + std::to_string(i) + ".key"));
    EXPECT_TRUE(key_file_ok(file)) << file;
    auto secret = devchain::load_secret(file);
    return secret ? std::optional<Bytes32>(*secret) : std::nullopt;
  };
  ASSERT_EQ(m["validators"].size(), 2u);
  ASSERT_EQ(m["runners"].size(), 2u);
  const auto genesis = nlohmann::json::parse(std::ifstream(w.data() / "genesis.json"));
  for (std::size_t i = 0; i < 2; ++i) {
    auto seed = entry_secret("validators", "validator", i, 4);
    ASSERT_TRUE(seed);
    EXPECT_EQ(m["validators"][i]["peer_key"], devchain::json::hex0x(crypto::ed25519_from_seed(*seed).public_key));
    // Its ECVRF secret apart (docs/cip11.md choice 100): 0600, and the genesis names its public key.
    const std::filesystem::path vrf_file = m["validators"][i]["vrf_key_file"].get<std::string>();
    EXPECT_EQ(vrf_file, w.data() / "keys" / ("vrf-" + std::to_string(i) + ".key"));
    EXPECT_TRUE(key_file_ok(vrf_file)) << vrf_file;
    auto vrf = devchain::load_secret(vrf_file);
    ASSERT_TRUE(vrf);
    EXPECT_NE(*vrf, *seed);
    EXPECT_EQ(genesis["cip11"]["validators"][i]["vrf_key"],
              devchain::json::hex0x(crypto::ecvrf::keypair_from_seed(*vrf).public_key));
    EXPECT_TRUE(net::parse_host_port(m["validators"][i]["endpoint"].get<std::string>()).has_value());
    auto key = entry_secret("runners", "runner", i, 2);
    ASSERT_TRUE(key);
    EXPECT_EQ(m["runners"][i]["address"], devchain::json::hex0x(*crypto::secp256k1_address(*key)));
  }
  EXPECT_TRUE(key_file_ok(w.data() / "keys" / "submitter.key"));
  EXPECT_EQ(std::filesystem::status(w.data() / "keys").permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
}

TEST(Cip11Services, ACommitteeOfTwoCommitsThenRevealsAndTheJobCompletes) {
  DevWorld w({"--dev-runners", "2"});
  auto& a = w.runner(0);
  auto& b = w.runner(1);
  ASSERT_TRUE(w.present(2));
  auto c = w.chain();
  auto id = cowboy::testing::submit_job(c, w.data() / "keys" / "submitter.key", R"({"sha256":"committee"})", 20, 2);
  ASSERT_TRUE(id);
  for (auto* r : {&a, &b}) {
    ASSERT_TRUE(r->wait_for({"event=included", hex(*id)}));
    EXPECT_TRUE(r->saw({"event=result_sent", hex(*id), "commit on the accepted stream"}));
    EXPECT_TRUE(r->saw({"event=result_sent", hex(*id), "reveal"}));
  }
  auto job = w.job(*id);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, chain::JobState::kCompleted);
  EXPECT_EQ(std::string(job->result.begin(), job->result.end()), to_hex(crypto::sha256(as_bytes("committee"))));
  EXPECT_EQ(w.validator->metric("cip11d_results_forwarded_total"), 4);  // two commitments, two reveals
}

TEST(Cip11Services, WithNoValidatorReachableTheRunnerPollsAndStillCompletesTheJob) {
  DevWorld w;
  auto& r = w.runner(0, {"--poll-only", "--poll-ms", "200"});
  auto id = w.submit(R"({"echo":"polled"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=included", hex(*id)}));
  EXPECT_TRUE(r.saw({"event=accepted", hex(*id), "via=poll"}));
  EXPECT_TRUE(r.saw({"event=result_sent", hex(*id), "reveal to the chain"}));
  EXPECT_EQ(w.validator->metric("cip11d_pushes_total"), 0);
  auto job = w.job(*id);
  ASSERT_TRUE(job);
  EXPECT_EQ(std::string(job->result.begin(), job->result.end()), "polled");
}

TEST(Cip11Services, WithTwoValidatorsTheRunnerAcceptsOnePushAndAnswersTheOtherDuplicate) {
  DevWorld w({"--dev-runners", "1", "--dev-validators", "2"});
  Cip11dProcess second(w.dir.path() / "second",
                       {"--chain-url", w.validator->chain_url(), "--key", (w.data() / "keys" / "validator-1.key").string()});
  ASSERT_TRUE(second.up());
  auto& r = w.runner(0);
  ASSERT_TRUE(r.wait_count("event=connected", 2));  // Sub(R) holds both (k = 2)
  ASSERT_TRUE(eventually([&] {
    return w.validator->metric("cip11d_present_runners") == 1 && second.metric("cip11d_present_runners") == 1;
  }, std::chrono::seconds(20)));
  auto id = w.submit(R"({"sha256":"two validators"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=included", hex(*id)}));
  ASSERT_TRUE(r.wait_for({"event=duplicate", hex(*id)}, std::chrono::seconds(5)));
  EXPECT_EQ(r.count("event=accepted"), 1u);
  ASSERT_TRUE(eventually([&] {
    auto a = w.validator->metrics_text(), b = second.metrics_text();
    auto has = [](const std::string& t, const std::string& s) { return t.find(s) != std::string::npos; };
    return (has(a, "cip11d_acks_total{status=\"accepted\"} 1") && has(b, "cip11d_acks_total{status=\"duplicate\"} 1")) ||
           (has(b, "cip11d_acks_total{status=\"accepted\"} 1") && has(a, "cip11d_acks_total{status=\"duplicate\"} 1"));
  }));
}

TEST(Cip11Services, BackpressureTakesTheRunnerOutOfTheNextPresenceInput) {
  DevWorld w({"--dev-runners", "1", "--dev-max-concurrent", "1"});
  auto& r = w.runner(0, {"--max-concurrent", "1"});
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"sleep_ms":2000})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=accepted", hex(*id)}));
  ASSERT_TRUE(w.present(0));  // out of local presence while full
  // §10.4: the sleep reports its quarters, and cip11d surfaces the latest to RPC clients.
  devchain::HttpClient admin("127.0.0.1", w.validator->admin_port());
  ASSERT_TRUE(eventually([&] {
    auto p = admin.get_json("/v1/progress/" + hex(*id));
    return p && p->value("fraction", 0) >= 25;
  }));
  {  // the answer's form (docs/cip11.md): the id as 0x-hex or bare hex, three fields
    auto p = admin.get_json("/v1/progress/" + to_hex(id->value));
    ASSERT_TRUE(p);
    std::vector<std::string> keys;
    for (const auto& [k, v] : p->items()) keys.push_back(k);
    EXPECT_EQ(keys, (std::vector<std::string>{"detail", "fraction", "job_id"}));
    EXPECT_EQ((*p)["job_id"], hex(*id));
    EXPECT_TRUE((*p)["detail"].is_null());
    auto unknown = admin.get_text("/v1/progress/" + hex(JobId{}));
    ASSERT_TRUE(unknown);
    EXPECT_EQ(unknown->status, 404);
    EXPECT_EQ(unknown->body, "{\"error\":\"no progress for that job here\"}\n");
    auto malformed = admin.get_text("/v1/progress/0x1234");
    ASSERT_TRUE(malformed);
    EXPECT_EQ(malformed->status, 400);
  }
  const std::uint64_t h = w.height() + 1;
  ASSERT_TRUE(eventually([&] { return w.height() > h; }));
  auto c = w.chain();
  auto block = c.block_presence(h);
  ASSERT_TRUE(block);
  EXPECT_TRUE(block->field.has_value());           // present-first on: a valid (empty) set, stated
  EXPECT_TRUE(block->present.empty()) << h;        // registry index 0 is not in it
  ASSERT_TRUE(r.wait_for({"event=included", hex(*id)}));
  ASSERT_TRUE(w.present(1));  // capacity re-asserted, then the next Ping
}

TEST(Cip11Services, AKilledRunnerLeavesPresenceWithinThePresenceTimeout) {
  DevWorld w;
  auto& r = w.runner(0);
  ASSERT_TRUE(w.present(1));
  const std::uint64_t killed_at = w.height();
  r.kill9();
  ASSERT_TRUE(w.present(0));
  const std::uint64_t gone_at = w.height();
  EXPECT_LE(gone_at - killed_at, kPresenceTimeoutBlocks + 2);  // + the block in flight and the one being read
  EXPECT_GE(gone_at - killed_at, kPresenceTimeoutBlocks - 2);  // by the timeout, not by a connection close
}

TEST(Cip11Services, AfterAValidatorSigkillAndRestartRunnersReturnAndNewJobsArePushed) {
  cowboy::testing::TempDir dir;
  auto data = dir.path() / "data";
  auto first = std::make_unique<Cip11dProcess>(data, std::vector<std::string>{"--dev-runners", "1"});
  ASSERT_TRUE(first->up());
  const std::uint16_t chain_port = first->chain_port(), admin_port = first->admin_port();
  RunnerProcess r(data, 0);
  ASSERT_TRUE(r.wait_for({"event=connected"}));
  first->kill9();
  first.reset();
  Cip11dProcess again(data, {"--dev-runners", "1"}, chain_port, admin_port);
  ASSERT_TRUE(again.up());
  ASSERT_TRUE(r.wait_count("event=connected", 2, std::chrono::seconds(30)));
  ASSERT_TRUE(eventually([&] { return again.metric("cip11d_present_runners") == 1; }, std::chrono::seconds(20)));
  auto c = again.chain();
  auto id = cowboy::testing::submit_job(c, data / "keys" / "submitter.key", R"({"echo":"after restart"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=included", hex(*id)}));
  EXPECT_TRUE(r.saw({"event=accepted", hex(*id), "via=push"}));
}

// §10.3: a runner SIGKILLed between its commitment and its reveal reveals
// after a restart, from its journal, and the job settles. Runner 1 starts only
// after the kill, so the reveal window (every commitment in) cannot open before.
TEST(Cip11Services, ARunnerKilledBetweenCommitAndRevealRevealsAfterARestart) {
  DevWorld w({"--dev-runners", "2"});
  auto a = std::make_unique<RunnerProcess>(w.data(), 0);
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"sha256":"restart"})", 300, 2);
  ASSERT_TRUE(id);
  ASSERT_TRUE(a->wait_for({"event=result_sent", hex(*id), "commit"}, std::chrono::seconds(30)));
  a->kill9();
  a.reset();
  const Height deadline = w.job(*id)->deadline_block;
  auto& b = w.runner(1);
  RunnerProcess again(w.data(), 0);
  ASSERT_TRUE(again.wait_for({"event=resumed", hex(*id)}));
  ASSERT_TRUE(again.wait_for({"event=included", hex(*id)}, std::chrono::seconds(60)));
  EXPECT_EQ(again.count("event=result_sent"), 1u);  // the reveal; its commitment was not signed again
  EXPECT_TRUE(again.saw({"event=result_sent", hex(*id), "reveal"}));
  ASSERT_TRUE(b.wait_for({"event=included", hex(*id)}, std::chrono::seconds(30)));
  auto job = w.job(*id);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, chain::JobState::kCompleted);
  EXPECT_LE(job->finished_at, deadline);  // settled by this committee, not by a re-selection
  EXPECT_EQ(std::string(job->result.begin(), job->result.end()), to_hex(crypto::sha256(as_bytes("restart"))));
  for (const auto& member : job->committee) EXPECT_TRUE(member.result_hash) << "both revealed";
}

// The duplicate case: killed right after its reveal left, a restarted runner
// resends those same signed bytes and signs no second reveal.
TEST(Cip11Services, ARunnerKilledAfterItsRevealResendsItAndSignsNoOther) {
  DevWorld w;
  auto a = std::make_unique<RunnerProcess>(w.data(), 0);
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"echo":"once"})");  // M = 1: the result goes without a commitment
  ASSERT_TRUE(id);
  ASSERT_TRUE(a->wait_for({"event=result_sent", hex(*id), "reveal"}));
  a->kill9();
  a.reset();
  RunnerProcess again(w.data(), 0);
  ASSERT_TRUE(again.wait_for({"event=resumed", hex(*id), "reveal sent"}));
  ASSERT_TRUE(again.wait_for({"event=included", hex(*id)}));
  EXPECT_EQ(again.count("event=result_sent"), 0u);
  auto job = w.job(*id);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, chain::JobState::kCompleted);
  EXPECT_EQ(std::string(job->result.begin(), job->result.end()), "once");
}

TEST(Cip11Services, AJobCancelStopsExecutionAndNoResultFollows) {
  DevWorld w;
  auto& r = w.runner(0);
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"sleep_ms":30000})", 5);  // times out after 5 blocks: Reassigned, and cancelled
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=accepted", hex(*id)}));
  ASSERT_TRUE(r.wait_for({"event=cancelled", hex(*id)}, std::chrono::seconds(10)));
  EXPECT_GE(w.validator->metric("cip11d_cancels_total"), 1);
  EXPECT_FALSE(r.saw({"event=result_sent", hex(*id)}, std::chrono::milliseconds(1500)));
}

TEST(Cip11Services, ASignedGoodbyeIsHonouredAtOnce) {
  DevWorld w;
  auto& r = w.runner(0);
  ASSERT_TRUE(w.present(1));  // admitted at both ends: before that a Goodbye goes unsigned (§12.5)
  const auto start = std::chrono::steady_clock::now();
  w.validator->terminate();  // SIGTERM: Goodbye{Shutdown} to every runner
  auto line = r.wait_for({"event=disconnected"}, std::chrono::seconds(10));
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("Goodbye Shutdown"), std::string::npos) << *line;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));  // not the 30 s idle timeout
}

}  // namespace
}  // namespace cowboy::cip11

namespace cowboy::cip11 {
namespace {

// A second validator of the genesis, in this process: it pushes what the test tells it to.
TEST(Cip11Services, APushWhoseAssignmentFieldsDifferIsRejectedAndAnIdenticalOneIsADuplicate) {
  DevWorld w({"--dev-runners", "1", "--dev-validators", "2"});
  auto chain = w.chain();
  auto genesis = chain.cip11_genesis();
  ASSERT_TRUE(genesis);
  auto seed = devchain::load_secret(w.data() / "keys" / "validator-1.key");
  ASSERT_TRUE(seed);
  devchain::Cip11Port port(chain, chain);
  RunnerDirectory directory(port);
  ASSERT_TRUE(directory.refresh());
  RegistryAdmission admission(directory, devchain::validator_peer_keys(*genesis), crypto::ed25519_from_seed(*seed).public_key);
  testing::InProcessValidator second(*seed, *genesis, net::parse_host_port(genesis->validators[1].endpoint)->second,
                                     w.dir.path() / "tls", &admission);

  auto& r = w.runner(0);
  ASSERT_TRUE(r.wait_count("event=connected", 2));
  ASSERT_TRUE(w.present(1));
  auto id = w.submit(R"({"sleep_ms":3000})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(r.wait_for({"event=accepted", hex(*id)}));  // cip11d's push, taken
  auto record = chain.job(*id);
  ASSERT_TRUE(record);
  const Address runner = record->committee.at(0).runner;
  const JobAssignment same = testing::assignment_of(*record);
  JobAssignment later = same;
  later.deadline_block += 1;  // validators must not move the chain-derived deadline
  ASSERT_TRUE(second.push(runner, same));
  ASSERT_TRUE(second.push(runner, later));
  auto first_ack = second.frames.received<JobAck>(0), second_ack = second.frames.received<JobAck>(1);
  ASSERT_TRUE(first_ack && second_ack);
  std::vector<JobAck> acks{first_ack->second, second_ack->second};
  std::sort(acks.begin(), acks.end(), [](const JobAck& a, const JobAck& b) { return a.status.kind < b.status.kind; });
  EXPECT_EQ(acks[0].status, AckStatus::duplicate());
  EXPECT_EQ(acks[1].status, AckStatus::reject(RejectReason::kUnverifiableAssignment));
  EXPECT_EQ(acks[1].reason, "its fields differ from the assignment already taken");
  EXPECT_EQ(r.count("event=accepted"), 1u);
}

// A runner that keeps pinging but never answers a push, in this process.
TEST(Cip11Services, APresentButSilentRunnerIsAHardFailureUntilItsNextValidPing) {
  DevWorld w;
  auto genesis = w.chain().cip11_genesis();
  ASSERT_TRUE(genesis);
  testing::InProcessRunner runner(w.runner_signer(0), *genesis, w.validator->quic_port(), [&] { return w.height(); });
  ASSERT_TRUE(w.present(1));
  const double exits_before = w.validator->metric("cip11d_presence_exits_total");
  auto id = w.submit(R"({"echo":"nobody answers"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(runner.frames.received<JobAssignment>());  // and no answer
  const std::uint64_t pushed_at = w.height();
  ASSERT_TRUE(eventually([&] { return w.validator->metric("cip11d_hard_failures_total") == 1; }, std::chrono::seconds(10)));
  EXPECT_GE(w.height() - pushed_at, kAckTimeoutBlocks - 2);  // ACK_TIMEOUT_BLOCKS after the push
  EXPECT_GT(w.validator->metric("cip11d_presence_exits_total"), exits_before);  // local presence cleared...
  ASSERT_TRUE(w.present(1));                                                    // ...and the next Ping restores it
}

// /metrics shows what the links drop: a Ping whose nonce is not above its
// connection's last one, and frames whose seal fails (a forged Ping, a
// CapabilityDelta signed by another key), from a dev runner in this process.
TEST(Cip11Services, StaleNoncesAndBadSealsAreCountedInMetrics) {
  DevWorld w;
  const Signer me = w.runner_signer(0);
  const Signer stranger = cip11::testing::runner_key(9);
  const LocalOffer offer = w.offer();
  IoThread io;
  auto end = io.on_io([&] { return std::make_unique<cip11::testing::End>(io.io, me, offer, nullptr); });
  ASSERT_TRUE(io.on_io([&] { return end->endpoint->connect("127.0.0.1", w.validator->quic_port()).ok(); }));
  ASSERT_TRUE(eventually([&] { return io.on_io([&] { return end->admitted; }) == 1; }));
  EXPECT_EQ(w.validator->metric("cip11d_stale_nonces_total"), 0);
  EXPECT_EQ(w.validator->metric("cip11d_bad_seals_total"), 0);
  io.on_io([&] {
    Channel& ch = end->only();
    ch.send(kControlStream, HeartbeatPing{Height{1}, 3, {}});
    ch.send(kControlStream, HeartbeatPing{Height{1}, 3, {}});  // stale: not above 3
    ch.connection().send(kControlStream, encode_frame(HeartbeatPing{Height{1}, 4, {}}));  // unsigned: a forged Ping
    Frame delta{CapabilityDelta{Height{1}, {"gpu"}, {}, {}, {}, {}}};
    seal(delta, stranger, BoundConnection(ch.binding()));  // another key's signature
    ch.connection().send(kControlStream, encode_frame(delta));
    return 0;
  });
  EXPECT_TRUE(eventually([&] {
    return w.validator->metric("cip11d_stale_nonces_total") == 1 && w.validator->metric("cip11d_bad_seals_total") == 2;
  })) << w.validator->metrics_text();
  io.on_io([&] { return (end.reset(), 0); });
}

// A validator in this process whose results go nowhere: the runner's own rebroadcast settles the job.
class DropResults final : public ResultSink {
 public:
  void forward(Bytes, const Address&, const JobId&, bool) override { ++dropped; }
  std::atomic<int> dropped{0};
};

TEST(Cip11Services, AResultTheValidatorWithholdsIsRebroadcastByTheRunnerAndIncluded) {
  DropResults drop;
  testing::LocalChainOptions options;
  options.results = &drop;
  testing::LocalChain local(options);
  auto runner = local.runner(0);
  ASSERT_TRUE(runner->wait_for({"event=connected"}));
  ASSERT_TRUE(eventually([&] { return local.node->height().value() > 2; }));
  ASSERT_TRUE(local.metric_is("cip11d_present_runners 1"));
  auto id = local.submit(R"({"echo":"withheld"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(runner->wait_for({"event=rebroadcast"}));  // not included within RESULT_TX_INCLUSION_GRACE_BLOCKS
  ASSERT_TRUE(runner->wait_for({"event=included", hex(*id)}));
  EXPECT_EQ(drop.dropped.load(), 1);  // the one result frame went to the withholding validator
  auto job = local.node->job(*id);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, chain::JobState::kCompleted);
  EXPECT_EQ(std::string(job->result.begin(), job->result.end()), "withheld");
}

}  // namespace
}  // namespace cowboy::cip11

namespace cowboy::cip11 {
namespace {

// §6.3/§7.4/§8.1, block by block: a runner whose last valid Ping the
// validator stamped at height h leaves local presence when the validator
// applies block h + PRESENCE_TIMEOUT_BLOCKS (silent through h+1..h+15). A
// block's PresenceInput is the producer's local presence as it proposes it,
// after its parent was applied, so blocks h+1..h+15 list the runner and block
// h+16 is the first without it.
TEST(Cip11Services, ALastPingAtHKeepsTheRunnerInThePresenceInputThroughHPlus15) {
  cowboy::testing::TempDir dir;
  crypto::Secp256k1Secret runner_key{}, submitter{};
  runner_key.fill(0x0a), submitter.fill(0x0c);
  const std::uint16_t quic_port = cowboy::testing::free_port();
  devchain::Cip11Genesis g;
  g.params.chain_id = 5;
  g.params.transport_enabled = true;
  g.params.present_first_enabled = true;
  g.validators.push_back({crypto::ed25519_from_seed(testing_seed()).public_key, "127.0.0.1:" + std::to_string(quic_port)});
  g.runners.push_back({*crypto::secp256k1_public_key(runner_key), 1000, 1u << 3, {}, 4, 0});
  const Address funded = *crypto::secp256k1_address(submitter);
  devchain::NodeConfig node_config;
  node_config.data_dir = dir.path() / "chain";
  auto node = devchain::Node::open(node_config, devchain::GenesisSpec{"presence-timing", funded, {{funded, 1'000'000}}, {}, g});
  ASSERT_TRUE(node) << node.error();
  devchain::Node& chain = **node;
  auto cert = net::ensure_dev_certificate(dir.path() / "tls");
  ASSERT_TRUE(cert);
  ValidatorServiceConfig config;
  config.key = testing_seed();
  config.endpoint.port = quic_port;
  config.endpoint.certificate = cert->certificate;
  config.endpoint.private_key = cert->private_key;
  devchain::Cip11Port port(chain, chain);
  auto service = ValidatorService::open(config, port);
  ASSERT_TRUE(service) << service.error();
  ValidatorService* s = service->get();
  chain.set_presence_provider([s](std::uint64_t h, std::uint32_t n) { return s->presence_field(Height{h}, n); });
  chain.set_block_observer([s](const devchain::CommittedBlock& b) { s->on_block({Height{b.height}, b.effects}); });

  const Signer me = *Signer::runner(runner_key);
  IoThread io;
  SignatureWorker worker(io.io, 1);
  net::ReadBudget budget(1 << 20);
  SystemEntropy entropy;
  cip11::testing::AdmitAll any_validator;
  auto endpoint = io.on_io([&] { return RunnerEndpoint::open(io.io, worker, budget, {}); });
  ASSERT_TRUE(endpoint);
  RunnerLinkConfig link_config;
  link_config.port = quic_port;
  link_config.offer = LocalOffer{5, kProtocolVersion, validator_set_hash(devchain::validator_peer_keys(g)), Epoch{0}, Height{0}};
  std::atomic<std::uint64_t> pongs{0};
  RunnerLink::Callbacks cb;
  cb.on_pong = [&](const HeartbeatPong&) { ++pongs; };
  auto link = io.on_io([&] {
    auto l = std::make_unique<RunnerLink>(**endpoint, me, any_validator, entropy, link_config, cb);
    l->start();
    return l;
  });
  ASSERT_TRUE(eventually([&] { return pongs.load() == 1; }));  // admitted; its admission Ping answered

  for (int i = 0; i < 3; ++i) ASSERT_TRUE(chain.produce_block());
  const std::uint64_t h = *chain.height();
  // The block's dispatch was posted to the validator's io thread before this
  // Ping is sent, so the Ping is stamped h.
  io.on_io([&] { return (link->on_block(Height{h}), 0); });
  ASSERT_TRUE(eventually([&] { return pongs.load() == 2; }));
  for (std::uint64_t b = h + 1; b <= h + kPresenceTimeoutBlocks + 2; ++b) {
    ASSERT_TRUE(chain.produce_block());
    auto presence = chain.block_presence(b);
    ASSERT_TRUE(presence);
    const bool listed = presence->present == std::vector<std::uint32_t>{0};
    EXPECT_EQ(listed, b <= h + kPresenceTimeoutBlocks) << "block h+" << b - h;
  }
  io.on_io([&] {
    link.reset();
    endpoint->reset();
    return 0;
  });
  service->reset();
}

// §10.3: a reveal that reaches the validator before its commitment is
// included is held - never submitted early - and goes once the next block can
// include it. The chain is driven block by block here.
TEST(Cip11Services, AnEarlyRevealIsHeldUntilTheChainWouldIncludeIt) {
  cowboy::testing::TempDir dir;
  crypto::Secp256k1Secret a{}, b{}, submitter{};
  a.fill(0x0a), b.fill(0x0b), submitter.fill(0x0c);
  devchain::Cip11Genesis g;
  g.params.chain_id = 5;
  g.validators.push_back({crypto::ed25519_from_seed(testing_seed()).public_key, "127.0.0.1:1"});
  for (const auto& k : {a, b}) g.runners.push_back({*crypto::secp256k1_public_key(k), 1000, 1u << 3, {}, 4, 0});
  const Address funded = *crypto::secp256k1_address(submitter);
  devchain::NodeConfig config;
  config.data_dir = dir.path() / "chain";
  auto node = devchain::Node::open(config, devchain::GenesisSpec{"early-reveal", funded, {{funded, 1'000'000}}, {}, g});
  ASSERT_TRUE(node) << node.error();
  devchain::Node& chain = **node;
  devchain::Wallet wallet(chain, submitter);
  chain::SubmitJob submit{JobKind::kCustom, {'x'}, 20, 2, 0};
  auto submitted = wallet.send(devchain::Cip11Call{chain::encode_instruction(submit)});
  ASSERT_TRUE(submitted);
  const cip11::JobId id = chain::job_id_of(*submitted);
  ASSERT_TRUE(chain.produce_block());  // the SubmitJob: a pending selection
  for (int i = 0; i < 8 && chain.job(id)->state != chain::JobState::kAssigned; ++i) ASSERT_TRUE(chain.produce_block());
  ASSERT_EQ(chain.job(id)->state, chain::JobState::kAssigned);  // the M = 2 committee, after its seed round

  const Bytes result{'r'};
  Bytes32 salt{};
  salt.fill(0x55);
  auto tx = [&](const crypto::Secp256k1Secret& key, std::uint64_t nonce, const chain::Instruction& i) {
    devchain::Transaction t{*chain.chain_instance_id(), nonce, devchain::Cip11Call{chain::encode_instruction(i)}, {}};
    EXPECT_TRUE(devchain::sign_tx(t, key));
    return t;
  };
  const Address runner_a = *crypto::secp256k1_address(a), runner_b = *crypto::secp256k1_address(b);
  auto reveal = tx(a, 1, chain::JobResultSubmit{id, result, salt});
  devchain::Cip11Port port(chain, chain);
  ChainForwarder forwarder(port);
  forwarder.forward(devchain::encode_tx(reveal), runner_a, id, true);  // before either commitment
  ASSERT_TRUE(eventually([&] { return forwarder.held() == 1; }));
  EXPECT_EQ(forwarder.submitted(), 0u);
  forwarder.on_block(Height{*chain.height()});
  ASSERT_TRUE(chain.produce_block());
  EXPECT_FALSE(*chain.receipt(devchain::tx_hash(reveal)));  // still held: nothing reached the chain

  ASSERT_TRUE(chain.submit(tx(a, 0, chain::JobResultCommit{id, chain::result_commitment(id, runner_a, result, salt)})));
  ASSERT_TRUE(chain.submit(tx(b, 0, chain::JobResultCommit{id, chain::result_commitment(id, runner_b, result, salt)})));
  ASSERT_TRUE(chain.produce_block());  // both commitments included: the next block may take reveals
  forwarder.on_block(Height{*chain.height()});
  ASSERT_TRUE(eventually([&] { return forwarder.submitted() == 1; }));
  ASSERT_TRUE(chain.produce_block());
  auto receipt = *chain.receipt(devchain::tx_hash(reveal));
  ASSERT_TRUE(receipt);
  EXPECT_TRUE(receipt->ok()) << receipt->error.value_or("");
}

}  // namespace
}  // namespace cowboy::cip11
