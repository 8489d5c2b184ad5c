// A real devchain process on a free loopback port, driven through the HTTP
// client: every rejection kind, the provider snapshot, and SIGKILL during
// block production followed by a restart with continuous height and state.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <regex>

#include "../support/silent_listener.h"
#include "../support/poll.h"
#include "../support/process.h"
#include "../support/temp_dir.h"
#include "cip11/chain/instructions.h"
#include "devchain/http_client.h"
#include "devchain/json.h"
#include "scenario.h"

namespace cowboy::devchain {
namespace {

using testing::secret;

class DevchainProcess {
 public:
  DevchainProcess(const std::filesystem::path& data_dir, const std::filesystem::path& genesis_file)
      : child_({std::string(COWBOY_BIN_DIR) + "/devchain", "--data-dir", data_dir.string(), "--listen",
                "127.0.0.1:0", "--block-ms", "20", "--genesis", genesis_file.string()}) {
    auto line = child_.wait_for_line("listening on");
    std::smatch m;
    if (line && std::regex_search(*line, m, std::regex(R"(127\.0\.0\.1:(\d+))")))
      port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
  }
  bool up() const { return port_ != 0; }
  HttpClient client() const { return HttpClient("127.0.0.1", port_); }
  void kill9() { child_.kill(SIGKILL); }

 private:
  cowboy::testing::ChildProcess child_;
  std::uint16_t port_ = 0;
};

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    genesis_file = dir.path() / "genesis.json";
    std::ofstream(genesis_file) << genesis_to_json(testing::genesis_for(secret(1))).dump();
  }
  cowboy::testing::TempDir dir;
  std::filesystem::path genesis_file;
};

TEST_F(ProcessTest, SignedInstructionsStateEventsAndEveryRejection) {
  DevchainProcess chain(dir.path() / "data", genesis_file);
  ASSERT_TRUE(chain.up());
  HttpClient api = chain.client();
  Wallet admin(api, secret(1));
  auto d = testing::deploy(api, admin);

  // State and events through the API.
  EXPECT_EQ(api.stream(d.stream_id)->provider, d.provider);
  EXPECT_EQ(api.account(d.owner, d.provider)->active_streams, 1u);
  EXPECT_EQ(api.provider(d.provider)->assigned_streams, 1u);
  auto events = api.events(1, *api.height());
  ASSERT_TRUE(events.ok());
  bool stream_created = false;
  for (const auto& b : *events)
    for (const auto& e : b.events)
      if (auto* sc = std::get_if<cbqs::event::StreamCreated>(&e)) stream_created |= sc->stream_id == d.stream_id;
  EXPECT_TRUE(stream_created);

  // Wrong nonce and bad signature: refused at submission with typed errors.
  Transaction tx{*api.chain_instance_id(), 99, Transfer{Address{}, 1}, {}};  // far ahead of the next nonce
  ASSERT_TRUE(sign_tx(tx, secret(1)));
  auto wrong_nonce = api.submit(tx);
  ASSERT_FALSE(wrong_nonce.ok());
  EXPECT_EQ(wrong_nonce.error().code, ApiErrorCode::kBadNonce);
  tx.signature.fill(0);
  EXPECT_EQ(api.submit(tx).error().code, ApiErrorCode::kBadSignature);

  // Insufficient balance, invalid endpoint, unknown provider: typed rejections in receipts.
  Wallet poor(api, secret(0x77));
  ASSERT_TRUE(admin.send_and_wait(Transfer{poor.address(), 10})->ok());
  EXPECT_EQ(poor.send_instruction(testing::registration())->error, "InsufficientFunds");
  EXPECT_EQ(admin.send_instruction(testing::registration("wss://bad host/"))->error, "InvalidEndpoints");
  EXPECT_EQ(admin.send_instruction(cbqs::CreateStreamV2{5, Address{0x42}, {}})->error, "UnknownProvider");

  // The provider snapshot.
  auto snapshot = api.provider_snapshot(d.provider);
  ASSERT_TRUE(snapshot.ok());
  ASSERT_EQ(snapshot->streams.size(), 1u);
  EXPECT_EQ(snapshot->streams[0].stream_id, d.stream_id);
  EXPECT_EQ(snapshot->accounts.at(0).owner, d.owner);
  EXPECT_EQ(snapshot->params, cbqs::Params{});
  EXPECT_EQ(api.provider_snapshot(Address{0x42}).error().code, ApiErrorCode::kNotFound);
}

TEST_F(ProcessTest, BadRequestsGetTypedErrorsAndTheServerKeepsServing) {
  DevchainProcess chain(dir.path() / "data", genesis_file);
  ASSERT_TRUE(chain.up());
  HttpClient api = chain.client();
  EXPECT_EQ(api.stream(Bytes32{}).error().code, ApiErrorCode::kNotFound);
  EXPECT_EQ(api.events(10, 5).error().code, ApiErrorCode::kBadRequest);
  Transaction huge{*api.chain_instance_id(), 0, CbqsCall{Bytes(70'000, 1)}, {}};
  ASSERT_TRUE(sign_tx(huge, secret(1)));
  auto r = api.submit(huge);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().code == ApiErrorCode::kTxTooLarge) << api_error_name(r.error().code);
  EXPECT_TRUE(api.height().ok());
}

TEST_F(ProcessTest, KilledDuringBlockProductionResumesWithContinuousHeightAndState) {
  auto data = dir.path() / "data";
  const Address sink{0x5a};
  const Address sender = *crypto::secp256k1_address(secret(1));
  std::vector<Bytes32> seen;  // receipts observed before some kill
  std::uint64_t height_before = 0;
  for (int cycle = 0; cycle < 4; ++cycle) {
    DevchainProcess chain(data, genesis_file);
    ASSERT_TRUE(chain.up()) << "cycle " << cycle;
    HttpClient api = chain.client();
    EXPECT_GE(*api.height(), height_before) << "a finalized block was lost in cycle " << cycle;
    for (const auto& h : seen) ASSERT_TRUE(api.receipt(h)->has_value()) << "a seen receipt was lost";
    // Applied exactly once: nonce, sink balance and total supply agree.
    auto info = *api.account_info(sender);
    EXPECT_EQ(api.account_info(sink)->balance, u128{1'000} * info.next_nonce);
    EXPECT_EQ(info.balance + api.account_info(sink)->balance, testing::kGenesisFunds);

    Wallet admin(api, secret(1));  // reads the next nonce from the chain: pending txs died with the process
    std::vector<Bytes32> sent;
    for (int i = 0; i < 40; ++i) {
      auto h = admin.send(Transfer{sink, 1'000});
      ASSERT_TRUE(h.ok());
      sent.push_back(*h);
    }
    ASSERT_TRUE(cowboy::testing::eventually([&] {
      auto r = api.receipt(sent[5]);
      return r.ok() && r->has_value();
    }));
    for (const auto& h : sent)
      if (auto r = api.receipt(h); r.ok() && *r) seen.push_back(h);
    height_before = *api.height();
    chain.kill9();  // blocks come every 20 ms, each a synced write: the kill lands mid-production
  }
  DevchainProcess last(data, genesis_file);
  ASSERT_TRUE(last.up());
  HttpClient api = last.client();
  std::uint64_t h = *api.height();
  EXPECT_GE(h, height_before);
  EXPECT_TRUE(cowboy::testing::eventually([&] { return *api.height() > h; }));  // and the chain goes on
}

// The CIP-11 plane of a devchain process through HttpClient's Cip11Api: the
// walkthrough of docs/devchain.md ("CIP-11 with curl") without curl.
TEST_F(ProcessTest, Cip11RunnerJobAndResultOverHttp) {
  GenesisSpec genesis = testing::genesis_for(secret(1));
  Cip11Genesis cip11;
  cip11.params.chain_id = 7;
  cip11.params.present_first_enabled = true;
  genesis.cip11 = cip11;
  std::ofstream(genesis_file) << genesis_to_json(genesis).dump();
  DevchainProcess chain(dir.path() / "cip11", genesis_file);
  ASSERT_TRUE(chain.up());
  HttpClient api = chain.client();
  Wallet admin(api, secret(1));
  namespace c11 = cip11::chain;
  auto call = [&](const c11::Instruction& i) { return admin.send_and_wait(Cip11Call{c11::encode_instruction(i)}); };

  EXPECT_EQ(api.cip11_genesis()->params.chain_id, 7u);
  c11::RegisterRunner reg;
  reg.key = *crypto::secp256k1_public_key(secret(1));
  reg.stake = 1'000;
  reg.job_kinds = 0x3f;
  reg.max_concurrent = 2;
  ASSERT_TRUE(call(reg)->ok());
  auto runners = api.runners();
  ASSERT_TRUE(runners.ok()) << runners.error().message;
  ASSERT_EQ(runners->size(), 1u);
  EXPECT_EQ((*runners)[0].address, admin.address());
  EXPECT_EQ((*runners)[0].stake, 1'000u);
  EXPECT_EQ(*api.runner(admin.address()), (*runners)[0]);

  auto submitted = call(c11::SubmitJob{cip11::JobKind::kLlm, Bytes{'h', 'i'}, 50, 1, 0});
  ASSERT_TRUE(submitted->ok());
  ASSERT_TRUE(submitted->job_id);
  const cip11::JobId id = *submitted->job_id;
  auto polled = api.runner_jobs(admin.address());
  ASSERT_TRUE(polled.ok()) << polled.error().message;
  ASSERT_EQ(polled->size(), 1u);
  EXPECT_EQ((*polled)[0].job_id, id);
  auto presence = api.block_presence(submitted->height);
  ASSERT_TRUE(presence.ok());
  EXPECT_EQ(presence->field, cip11::encode_presence(cip11::PresentSet(1)));  // no provider: a valid empty set

  auto refused = call(c11::JobResultSubmit{cip11::JobId{}, Bytes{1}, Bytes32{}});
  EXPECT_EQ(refused->error, "UnknownJob");
  ASSERT_TRUE(call(c11::JobResultSubmit{id, Bytes{'o', 'k'}, Bytes32{}})->ok());
  auto job = api.job(id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, c11::JobState::kCompleted);
  EXPECT_EQ(job->result, (Bytes{'o', 'k'}));
  EXPECT_TRUE(api.runner_jobs(admin.address())->empty());
  EXPECT_EQ(api.job(cip11::JobId{}).error().code, ApiErrorCode::kNotFound);
}

// §14 Phase 3: with CIP11_POLL_DISABLED the poll endpoint answers 410 Gone
// (the job itself stays readable); without it, the same request lists the job.
TEST_F(ProcessTest, Cip11PollEndpointAnswers410GoneOncePollDisabled) {
  for (bool disabled : {false, true}) {
    GenesisSpec genesis = testing::genesis_for(secret(1));
    Cip11Genesis cip11;
    cip11.params.chain_id = 7;
    cip11.params.poll_disabled = disabled;
    cip11.runners.push_back(cip11::chain::RegisterRunner{*crypto::secp256k1_public_key(secret(2)), 1'000, 0x3f, {}, 2, 0});
    genesis.cip11 = cip11;
    std::ofstream(genesis_file, std::ios::trunc) << genesis_to_json(genesis).dump();
    DevchainProcess chain(dir.path() / (disabled ? "disabled" : "enabled"), genesis_file);
    ASSERT_TRUE(chain.up());
    HttpClient api = chain.client();
    EXPECT_EQ(api.cip11_genesis()->params.poll_disabled, disabled);
    Wallet submitter(api, secret(1));
    auto submitted = submitter.send_and_wait(
        Cip11Call{cip11::chain::encode_instruction(cip11::chain::SubmitJob{cip11::JobKind::kLlm, Bytes{'x'}, 50, 1, 0})});
    ASSERT_TRUE(submitted && submitted->ok() && submitted->job_id);
    const Address runner = *crypto::secp256k1_address(secret(2));
    auto raw = api.get_text("/runner/" + json::hex0x(runner) + "/jobs");
    ASSERT_TRUE(raw.ok());
    auto polled = api.runner_jobs(runner);
    if (disabled) {
      EXPECT_EQ(raw->status, 410) << raw->body;
      EXPECT_NE(raw->body.find("CIP11_POLL_DISABLED"), std::string::npos) << raw->body;
      ASSERT_FALSE(polled.ok());
      EXPECT_EQ(polled.error().code, ApiErrorCode::kGone);
    } else {
      EXPECT_EQ(raw->status, 200) << raw->body;
      ASSERT_TRUE(polled.ok());
      ASSERT_EQ(polled->size(), 1u);
      EXPECT_EQ((*polled)[0].job_id, *submitted->job_id);
    }
    EXPECT_EQ(api.job(*submitted->job_id)->committee.at(0).runner, runner);  // assigned either way
  }
}

}  // namespace
}  // namespace cowboy::devchain

namespace cowboy::testing {
namespace {

bool dead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, comm, state;
  if (!(stat >> pid_field >> comm >> state)) return true;  // reaped
  return state == "Z";                                     // exited, not yet reaped by its new parent
}

// A parent that dies without running ChildProcess's destructor (a crash, or
// SIGKILL) still takes its children with it.
TEST(ChildProcessTest, ChildDiesWithAParentThatCrashes) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    auto* child = new ChildProcess({"/bin/sleep", "30"});  // never destroyed: the parent "crashes"
    const pid_t pid = child->pid();
    (void)!::write(fds[1], &pid, sizeof pid);
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t sleeper = 0;
  ASSERT_EQ(::read(fds[0], &sleeper, sizeof sleeper), static_cast<ssize_t>(sizeof sleeper));
  ::close(fds[0]);
  ::waitpid(parent, nullptr, 0);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(eventually([&] { return dead(sleeper); }, std::chrono::seconds(5)));
}

}  // namespace
}  // namespace cowboy::testing

namespace cowboy::devchain {
namespace {

// A chain that accepts the connection and never answers (a stopped process,
// a wedged peer) is Unavailable after the client's timeout, not a call that
// never returns: a validator's rotation calls its peers with it.
TEST(HttpClientTest, APeerThatAcceptsAndNeverAnswersIsUnavailableAfterTheTimeout) {
  cowboy::testing::SilentListener listener;
  ASSERT_NE(listener.port(), 0);
  HttpClient client("127.0.0.1", listener.port(), std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  auto answer = std::async(std::launch::async, [&] { return client.height(); });
  const bool returned = answer.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  listener.close();
  ASSERT_TRUE(returned) << "the call outlived its 300 ms timeout by 20 s";
  auto r = answer.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ApiErrorCode::kUnavailable);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
}

}  // namespace
}  // namespace cowboy::devchain
