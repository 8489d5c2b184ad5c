// The runner library's pure parts: the job kinds it runs, push
// deduplication, the retained-transaction schedule and heartbeat staggering.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "../support/hex_fixture.h"
#include "cip11/chain/instructions.h"
#include "cip11/runner/heartbeat.h"
#include "cip11/runner/job_book.h"
#include "cip11/runner/ledger.h"
#include "cip11/runner/task.h"
#include "cip11/selection.h"
#include "common/crypto.h"
#include "devchain/cip11_port.h"
#include "devchain/tx.h"
#include "net/http_server.h"
#include "samples.h"

namespace cowboy::cip11 {
namespace {

std::string run(std::string_view spec, const TaskLimits& limits = {}, const CancelFlag& cancel = nullptr) {
  auto out = run_task(as_bytes(spec), limits, cancel);
  return out ? std::string(out->begin(), out->end()) : "<cancelled>";
}

TEST(Cip11Task, EchoSha256AndSleepReturnTheirResults) {
  EXPECT_EQ(run(R"({"echo":"hi there"})"), "hi there");
  EXPECT_EQ(run(R"({"sha256":"abc"})"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(run(R"({"sleep_ms":5})"), "slept 5 ms");
}

TEST(Cip11Task, AnythingElseIsAnErrorResultThatNamesWhy) {
  EXPECT_EQ(run(R"({"shell":"rm -rf /"})"), "error: unknown task \"shell\": echo, sha256, sleep_ms or get");
  EXPECT_EQ(run(R"({"echo":"a","sha256":"b"})"),
            "error: the spec must be a JSON object with one key: echo, sha256, sleep_ms or get");
  EXPECT_EQ(run("not json"), "error: the spec must be a JSON object with one key: echo, sha256, sleep_ms or get");
  EXPECT_EQ(run(R"({"echo":7})"), "error: \"echo\" takes a string");
  EXPECT_EQ(run(R"({"sleep_ms":60001})"), "error: \"sleep_ms\" takes an integer from 0 to 60000");
  EXPECT_EQ(run(R"({"sleep_ms":-1})"), "error: \"sleep_ms\" takes an integer from 0 to 60000");
}

TEST(Cip11Task, ACancelStopsASleepWithinItsSlice) {
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    cancel->store(true);
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run(R"({"sleep_ms":60000})", {}, cancel), "<cancelled>");
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));  // not the minute it asked for
}

TEST(Cip11Task, AGetFetchesOnlyAllowListedLoopbackUrls) {
  net::HttpServer server([](const net::HttpRequest& r) { return net::HttpReply{200, "text/plain", "body of " + r.target}; },
                         "127.0.0.1", 0);
  server.start();
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  TaskLimits limits{{base + "/allowed/"}};
  EXPECT_EQ(run(R"({"get":")" + base + R"(/allowed/x"})", limits), "body of /allowed/x");
  EXPECT_EQ(run(R"({"get":")" + base + R"(/other"})", limits), "error: url not allow-listed");
  TaskLimits remote{{"http://10.0.0.1/"}};
  EXPECT_EQ(run(R"({"get":"http://10.0.0.1/x"})", remote), "error: only http:// URLs on 127.0.0.1 or localhost are fetched");
  TaskLimits tiny{{base + "/"}, 4};
  EXPECT_EQ(run(R"({"get":")" + base + R"(/allowed/x"})", tiny), "error: the result exceeds 4 bytes");
  server.stop();
}

// §10.4 beyond the sleep task (docs/cip11.md choice 125): a get reports each
// quarter of the Content-Length once, in order, however the body arrives; an
// echo or a sha256 is done at once and reports nothing; a get over the limit
// reports nothing and ends in its error.
TEST(Cip11Task, AGetReportsEachQuarterOfItsBodyAndInstantKindsReportNothing) {
  const std::string big(20'000, 'x');
  net::HttpServer server([&](const net::HttpRequest&) { return net::HttpReply{200, "text/plain", big}; }, "127.0.0.1", 0);
  server.start();
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  auto run_with_progress = [&](const std::string& spec, const TaskLimits& limits) {
    std::vector<int> reported;
    auto result = run_task(as_bytes(spec), limits, nullptr, [&](std::uint8_t f) { reported.push_back(f); });
    return std::pair(result ? std::string(result->begin(), result->end()) : std::string("(cancelled)"), reported);
  };
  const std::string get = R"({"get":")" + base + R"(/big"})";
  auto [body, quarters] = run_with_progress(get, TaskLimits{{base + "/"}});
  EXPECT_EQ(body, big);
  EXPECT_EQ(quarters, (std::vector<int>{25, 50, 75}));
  EXPECT_EQ(run_with_progress(R"({"echo":"hi"})", {}).second, std::vector<int>{});
  EXPECT_EQ(run_with_progress(R"({"sha256":"abc"})", {}).second, std::vector<int>{});
  auto [refused, none] = run_with_progress(get, TaskLimits{{base + "/"}, 1000});
  EXPECT_EQ(refused.rfind("error: ", 0), 0u) << refused;
  EXPECT_EQ(none, std::vector<int>{});
  server.stop();
}

TEST(Cip11JobBook, OneAssignmentPerJobThenDuplicatesOrDifferences) {
  JobBook book;
  JobAssignment a = testing::job_assignment();
  EXPECT_EQ(book.classify(a), PushVerdict::kNew);
  book.take(a);
  JobAssignment other_validator = a;  // another validator's push: its own key, signature and hash
  other_validator.validator_pubkey = PubKey::validator(testing::filled(0x77));
  other_validator.validator_signed.fill(0x11);
  other_validator.assignment_hash = testing::filled(0x12);
  EXPECT_EQ(book.classify(other_validator), PushVerdict::kDuplicate);
  JobAssignment later = a;
  later.deadline_block += 1;
  EXPECT_EQ(book.classify(later), PushVerdict::kDiffers);
  JobAssignment spec = a;
  spec.job_spec.push_back(0);
  EXPECT_EQ(book.classify(spec), PushVerdict::kDiffers);
  book.forget_ended(a.deadline_block);  // still due at its deadline
  EXPECT_TRUE(book.holds(a.job_id));
  book.forget_ended(a.deadline_block + 1);
  EXPECT_FALSE(book.holds(a.job_id));
}

TEST(Cip11TxLedger, NoncesInOrderAndSelfSubmissionsAfterTheGraceThenEveryInterval) {
  const crypto::Secp256k1Secret secret = testing::filled(0x21);
  const devchain::Cip11TxFormat format(testing::filled(0xc1));
  TxLedger ledger(format, secret, 7);
  auto a = ledger.sign({1}, Height{10});
  auto b = ledger.sign({2}, Height{10});
  auto opened = format.open(a.bytes);
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->nonce, 7u);
  EXPECT_EQ(a.nonce, 7u);
  EXPECT_EQ(format.open(b.bytes)->nonce, 8u);
  EXPECT_EQ(opened->sender, crypto::secp256k1_address(secret));
  EXPECT_EQ(opened->cip11_payload, Bytes{1});
  EXPECT_EQ(devchain::tx_hash(devchain::decode_tx(a.bytes).value()), a.hash);
  EXPECT_FALSE(ledger.due(a.hash, Height{12}));  // not yet in the journal: it may not leave the runner
  ledger.durable(a.hash);
  ledger.durable(b.hash);
  EXPECT_FALSE(ledger.due(a.hash, Height{11}));  // RESULT_TX_INCLUSION_GRACE_BLOCKS = 2
  EXPECT_TRUE(ledger.due(a.hash, Height{12}));
  EXPECT_TRUE(ledger.due(b.hash, Height{12}));
  EXPECT_FALSE(ledger.due(a.hash, Height{13}));  // RESULT_TX_REBROADCAST_INTERVAL_BLOCKS = 2
  ledger.included(a.hash);
  EXPECT_FALSE(ledger.due(a.hash, Height{14}));  // a receipt ends it
  auto again = ledger.due(b.hash, Height{14});
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, b.bytes);  // the same signed bytes, never a new transaction
  EXPECT_EQ(ledger.retained_hashes(), std::vector<Bytes32>{b.hash});

  // After a restart: a transaction from the journal is due at once, and no nonce is signed twice.
  TxLedger restarted(format, secret, 7);  // the chain had seen neither
  restarted.restore(b, Height{20});
  EXPECT_TRUE(restarted.due(b.hash, Height{20}));
  EXPECT_EQ(restarted.sign({3}, Height{20}).nonce, 9u);
}

// A retained transaction without a receipt whose nonce the chain already
// counts can never be included: it leaves, and no nonce below the chain's is
// signed again. One with a receipt unread (not named) stays.
TEST(Cip11TxLedger, ATransactionWhoseNonceTheChainGaveAnotherIsSuperseded) {
  const devchain::Cip11TxFormat format(testing::filled(0xc1));
  TxLedger ledger(format, testing::filled(0x21), 3);
  auto a = ledger.sign({1}, Height{10});
  auto b = ledger.sign({2}, Height{10});
  EXPECT_EQ(ledger.superseded(4, {a.hash, b.hash}), std::vector<Bytes32>{a.hash});
  EXPECT_FALSE(ledger.retained(a.hash));
  EXPECT_TRUE(ledger.retained(b.hash));
  EXPECT_TRUE(ledger.superseded(9, {}).empty());
  EXPECT_TRUE(ledger.retained(b.hash));
  EXPECT_EQ(ledger.sign({3}, Height{10}).nonce, 9u);
}

// A JobResult's tx_bytes (and a JobResultCommit's, with its instruction) is
// the devchain's transaction encoding of a Cip11Call carrying the CIP-11
// instruction, signed by the runner (docs/cip11.md, "The dev job spec and
// result transactions"). Assembled here by hand, then the whole signed byte
// string against tests/fixtures/cip11/job_result_tx_bytes.hex (RFC 6979:
// the signature is deterministic).
TEST(Cip11TxLedger, AJobResultsTxBytesArePinnedByteForByte) {
  const crypto::Secp256k1Secret secret = testing::filled(0x21);
  const devchain::Cip11TxFormat format(testing::filled(0xc1));
  TxLedger ledger(format, secret, 7);
  const chain::JobResultSubmit reveal{JobId{testing::filled(0xaa)}, Bytes{'o', 'k'}, testing::filled(0x55)};
  auto signed_tx = ledger.sign(chain::encode_instruction(reveal), Height{1});

  const Bytes32 job_id = reveal.job_id.value, salt = reveal.salt, chain_instance = testing::filled(0xc1);
  Bytes payload{0x01, 0x07};                                      // instruction version 1, JobResultSubmit = 7
  payload.insert(payload.end(), job_id.begin(), job_id.end());    // job_id
  for (std::uint8_t b : {0x00, 0x00, 0x00, 0x02}) payload.push_back(b);  // result: u32 length, then its bytes
  payload.push_back('o'), payload.push_back('k');
  payload.insert(payload.end(), salt.begin(), salt.end());        // salt
  ASSERT_EQ(payload.size(), 72u);
  Bytes unsigned_tx{0x01};                                                   // DevchainTxV1 version
  unsigned_tx.insert(unsigned_tx.end(), chain_instance.begin(), chain_instance.end());
  for (std::uint8_t b : {0, 0, 0, 0, 0, 0, 0, 7}) unsigned_tx.push_back(b);  // nonce, u64 BE
  unsigned_tx.push_back(0x04);                                               // body: Cip11 = 4
  for (std::uint8_t b : {0x00, 0x00, 0x00, 0x48}) unsigned_tx.push_back(b);  // payload: u32 length 72
  unsigned_tx.insert(unsigned_tx.end(), payload.begin(), payload.end());
  ASSERT_EQ(signed_tx.bytes.size(), unsigned_tx.size() + 65);  // then r || s || recovery id
  EXPECT_TRUE(std::equal(unsigned_tx.begin(), unsigned_tx.end(), signed_tx.bytes.begin()));
  EXPECT_EQ(devchain::signing_digest(*devchain::decode_tx(signed_tx.bytes)),
            crypto::keccak256({as_bytes("cowboy/devchain-tx/v1"), unsigned_tx}));
  EXPECT_EQ(signed_tx.hash, crypto::keccak256(signed_tx.bytes));
  EXPECT_LE(signed_tx.bytes.back(), 3);  // recovery id 0..3

  const std::string path = std::string(COWBOY_FIXTURE_DIR) + "/cip11/job_result_tx_bytes.hex";
  if (std::getenv("COWBOY_WRITE_FIXTURES"))
    cowboy::testing::write_hex_fixture(path, "JobResult.tx_bytes: DevchainTxV1 { Cip11Call { JobResultSubmit } }, signed", signed_tx.bytes);
  auto fixture = cowboy::testing::read_hex_fixture(path);
  ASSERT_TRUE(fixture) << "missing fixture " << path;
  EXPECT_EQ(to_hex(signed_tx.bytes), to_hex(*fixture));
}

TEST(Cip11HeartbeatSchedule, ARunnerSpecificPhaseInsideTheCadenceAndAnEmergencyRefresh) {
  Address one{}, two{};
  one.fill(1);
  two.fill(2);
  HeartbeatSchedule a(31337, one, 100, 10), b(31337, two, 100, 10);
  EXPECT_EQ(a.cadence(), 90u);
  EXPECT_LT(a.phase(), 90u);
  EXPECT_NE(a.phase(), b.phase());  // these two addresses land in different buckets
  const Height on_phase{900 + a.phase()};
  EXPECT_TRUE(a.due(on_phase, on_phase - 90));
  EXPECT_FALSE(a.due(on_phase + 1, on_phase));
  EXPECT_FALSE(a.due(on_phase, on_phase));  // never twice for one height
  // Missed its phase: once a whole cadence has passed, at once (before the floor lapses at 100).
  EXPECT_TRUE(a.due(on_phase + 1 + 90, on_phase + 1));
  EXPECT_TRUE(a.overdue(on_phase + 1 + 90, on_phase + 1));
  EXPECT_FALSE(a.overdue(on_phase + 89, on_phase));
}

// The runner's phase is choice 28's formula, selection.h's heartbeat_phase:
// keccak256(chain_id_be8 || address) as a 256-bit big-endian integer, mod
// the cadence - the whole hash, not a prefix of it.
TEST(Cip11HeartbeatSchedule, ThePhaseIsTheLibrarysHeartbeatPhase) {
  for (int i = 0; i < 64; ++i) {
    Address runner{};
    runner.fill(static_cast<std::uint8_t>(i));
    runner[0] = static_cast<std::uint8_t>(i * 37);
    EXPECT_EQ(HeartbeatSchedule(31337, runner, 100, 10).phase(), heartbeat_phase(31337, runner, 90)) << i;
  }
}

}  // namespace
}  // namespace cowboy::cip11
