// The production shape: a devchain process, a provider registered on it over
// HTTP, and `cbqsd` started with provider flags (no --dev), read through the
// devchain HTTP API; a client opens a session and appends durably.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>
#include <variant>

#include "../../devchain/scenario.h"
#include "../../support/process.h"
#include "../../support/temp_dir.h"
#include "net/dev_cert.h"
#include "cbqs/client/wss_connection.h"
#include "support/local_deployment.h"
#include "cbqs/wire/ids.h"
#include "devchain/genesis.h"
#include "devchain/http_client.h"
#include "devchain/json.h"

namespace cowboy::cbqs::broker {
namespace {

using devchain::testing::secret;

std::uint16_t port_in(const std::optional<std::string>& line, const char* pattern) {
  std::smatch m;
  if (line && std::regex_search(*line, m, std::regex(pattern))) return static_cast<std::uint16_t>(std::stoi(m[1]));
  return 0;
}

// A devchain process with a registered provider and a stream, and cbqsd
// processes started with provider flags against it.
class ProviderModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto genesis_file = dir.path() / "genesis.json";
    std::ofstream(genesis_file) << devchain::genesis_to_json(devchain::testing::genesis_for(secret(1))).dump();
    devchain_proc = std::make_unique<cowboy::testing::ChildProcess>(std::vector<std::string>{
        std::string(COWBOY_BIN_DIR) + "/devchain", "--data-dir", (dir.path() / "chain").string(), "--listen",
        "127.0.0.1:0", "--block-ms", "20", "--genesis", genesis_file.string()});
    chain_port = port_in(devchain_proc->wait_for_line("listening on"), R"(127\.0\.0\.1:(\d+))");
    ASSERT_NE(chain_port, 0);
    chain = std::make_unique<devchain::HttpClient>("127.0.0.1", chain_port);
    admin = std::make_unique<devchain::Wallet>(*chain, secret(1));
    deployment = devchain::testing::deploy(*chain, *admin);  // provider key 0x0b, owner 0x0a, Ed25519 seed 0x51
    // The provider's files: its Ed25519 signing seed (the one registered) and a TLS certificate.
    crypto::Ed25519Seed signing{};
    signing[0] = 0x51;
    key_file = dir.path() / "provider-signing-key";
    std::ofstream(key_file) << to_hex(signing) << "\n";
    cert = *net::ensure_dev_certificate(dir.path() / "tls");
  }

  /// cbqsd on `store`; its wss port (0 if it did not come up) and its last words.
  std::uint16_t start_cbqsd(const std::filesystem::path& store) {
    cbqsd = std::make_unique<cowboy::testing::ChildProcess>(std::vector<std::string>{
        std::string(COWBOY_BIN_DIR) + "/cbqsd", "--store", store.string(), "--tls-cert", cert.certificate.string(),
        "--tls-key", cert.private_key.string(), "--provider-key", key_file.string(), "--provider-address",
        devchain::json::hex0x(deployment.provider), "--chain-url", "http://127.0.0.1:" + std::to_string(chain_port),
        "--chain-block-ms", "20", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"});
    return port_in(cbqsd->wait_for_line("cbqsd listening"), R"(wss://127\.0\.0\.1:(\d+))");
  }

  /// A connection with an open session under an all-verbs grant of the stream's admin key (seed 0x52).
  std::pair<std::unique_ptr<client::WssConnection>, Bytes32> session(std::uint16_t wss_port) {
    client::ConnectOptions o;
    o.port = wss_port;
    o.ca_file = cert.certificate;
    o.allow_private_destinations = true;
    auto c = client::WssConnection::connect(o);
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error());
    if (!c.ok()) return {};
    crypto::Ed25519Seed admin_seed{}, holder{};
    admin_seed[0] = 0x52;
    holder[0] = 0x41;
    StreamGrantV2 g;
    g.chain_instance_id = *chain->chain_instance_id();
    g.stream_id = deployment.stream_id;
    g.holder_signing_key = ed25519_public_key(holder);
    g.verbs = 0x003f;
    g.lane_scope = LaneScopeAny{};
    g.group_scope = GroupScopeAny{};
    g.not_before_ms = SystemClock().now_ms() - 1'000;
    g.expires_at_ms = g.not_before_ms + 600'000;
    g.max_message_bytes = 1'048'576;
    g.max_append_bytes_per_sec = 268'435'456;
    sign_grant(g, admin_seed);
    EXPECT_TRUE((*c)->send(OpenSession{Bytes32{1}, g}).ok());
    auto challenge = (*c)->receive(std::chrono::seconds(5));
    EXPECT_TRUE(challenge.ok() && std::holds_alternative<SessionChallenge>(*challenge));
    if (!challenge.ok() || !std::holds_alternative<SessionChallenge>(*challenge)) return {};
    const auto& ch = std::get<SessionChallenge>(*challenge);
    SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), ch.session_id, ch.challenge, {}};
    sign_proof(proof, holder);
    EXPECT_TRUE((*c)->send(CompleteSession{Bytes32{2}, proof}).ok());
    auto opened = (*c)->receive(std::chrono::seconds(5));
    EXPECT_TRUE(opened.ok() && std::holds_alternative<SessionOpened>(*opened));
    return {std::move(*c), ch.session_id};
  }

  /// One request's answer: the Response body, or the Error code.
  static std::variant<CbqsResponseBodyV2, std::uint16_t> ask(client::WssConnection& c, const Bytes32& session,
                                                              std::uint64_t id, CbqsRequestBodyV2 body) {
    EXPECT_TRUE(c.send(Request{client::request_id(id), session, std::move(body)}).ok());
    auto f = c.receive(std::chrono::seconds(10));
    if (!f.ok()) return std::uint16_t{0};
    if (const auto* r = std::get_if<Response>(&*f)) return r->body;
    if (const auto* e = std::get_if<ErrorFrame>(&*f)) return e->code;
    return std::uint16_t{0};
  }

  cowboy::testing::TempDir dir;
  std::unique_ptr<cowboy::testing::ChildProcess> devchain_proc, cbqsd;
  std::uint16_t chain_port = 0;
  std::unique_ptr<devchain::HttpClient> chain;
  std::unique_ptr<devchain::Wallet> admin;
  devchain::testing::Deployment deployment;
  std::filesystem::path key_file;
  net::CertFiles cert;
};

TEST_F(ProviderModeTest, CbqsdServesAStreamOfAChainItReadsOverHttp) {
  std::uint16_t wss_port = start_cbqsd(dir.path() / "store");
  ASSERT_NE(wss_port, 0);
  auto [c, session_id] = session(wss_port);
  ASSERT_NE(c, nullptr);
  auto lane = ask(*c, session_id, 3, req::CreateLane{});
  ASSERT_TRUE(std::holds_alternative<CbqsResponseBodyV2>(lane));
  LaneId lane_id = std::get<resp::LaneCreated>(std::get<CbqsResponseBodyV2>(lane)).lane_id;
  auto appended = ask(*c, session_id, 4, req::Append{{lane_id, Bytes{'h', 'i'}}});
  ASSERT_TRUE(std::holds_alternative<CbqsResponseBodyV2>(appended));
  EXPECT_EQ(std::get<resp::Appended>(std::get<CbqsResponseBodyV2>(appended)).sequence, Sequence{1});
  EXPECT_EQ(cbqsd->kill(SIGTERM), 0);  // a clean shutdown exits 0
}

// Disk full while appends are unflushed in the WAL, then 16 MiB freed: cbqsd
// restarts (it needed about the WAL's size free before) and every
// acknowledged record is there. The store is on a 192 MiB tmpfs of its own
// (64 MiB of it the store's reserve, in the store's directory).
TEST_F(ProviderModeTest, AfterAFullDiskSixteenMiBFreeAreEnoughToRestartAndServe) {
  auto disk = dir.path() / "disk";
  std::filesystem::create_directory(disk);
  if (std::system(("mount -t tmpfs -o size=192m tmpfs " + disk.string() + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "mounting a tmpfs needs root";
  struct Unmount {
    std::filesystem::path at;
    ~Unmount() { (void)std::system(("umount -l " + at.string()).c_str()); }
  } unmount{disk};
  ASSERT_TRUE(admin->send_and_wait(devchain::ParameterWrite{"cbqs.max_append_bytes_per_sec", 268'435'456}));
  std::uint16_t wss_port = start_cbqsd(disk / "store");
  ASSERT_NE(wss_port, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2'500));  // a snapshot refresh carries the new rate
  auto [c, session_id] = session(wss_port);
  ASSERT_NE(c, nullptr);
  LaneId lane_id =
      std::get<resp::LaneCreated>(std::get<CbqsResponseBodyV2>(ask(*c, session_id, 3, req::CreateLane{}))).lane_id;
  // 40 MiB of records: in the WAL and the memtable, not yet in a table file.
  std::uint64_t acked = 0, id = 10;
  Bytes payload(1'048'000, 0x5a);
  for (int i = 0; i < 40; ++i) {
    auto r = ask(*c, session_id, id++, req::Append{{lane_id, payload}});
    ASSERT_TRUE(std::holds_alternative<CbqsResponseBodyV2>(r)) << "append " << i << ": " << std::get<std::uint16_t>(r);
    acked = std::get<resp::Appended>(std::get<CbqsResponseBodyV2>(r)).sequence.value;
  }
  // Fill the disk to the last byte; the next appends fail cleanly.
  auto ballast = disk / "ballast";
  {
    std::ofstream out(ballast, std::ios::binary);
    std::vector<char> mib(1 << 20, 'b');
    while (out.write(mib.data(), static_cast<std::streamsize>(mib.size()))) out.flush();
  }
  std::uint16_t refusal = 0;
  for (int i = 0; i < 200 && refusal == 0; ++i) {  // into the WAL's preallocated room, then none
    auto r = ask(*c, session_id, id++, req::Append{{lane_id, payload}});
    if (auto* code = std::get_if<std::uint16_t>(&r)) refusal = *code;
    else acked = std::get<resp::Appended>(std::get<CbqsResponseBodyV2>(r)).sequence.value;
  }
  ASSERT_EQ(refusal, static_cast<std::uint16_t>(ErrorCode::kUnavailable));
  EXPECT_TRUE(std::filesystem::exists(disk / "store" / "cbqsd.reserve"));  // on the store's filesystem, inside its directory
  c.reset();
  EXPECT_TRUE(WIFSIGNALED(cbqsd->kill(SIGKILL)));  // it was still running: the full disk did not end it

  std::filesystem::resize_file(ballast, std::filesystem::file_size(ballast) - (16u << 20));  // the operator frees 16 MiB
  wss_port = start_cbqsd(disk / "store");
  ASSERT_NE(wss_port, 0) << "cbqsd did not restart with 16 MiB free";
  EXPECT_FALSE(std::filesystem::exists(disk / "store" / "cbqsd.reserve"));  // released to recover
  auto [reader, reader_session] = session(wss_port);
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(std::holds_alternative<CbqsResponseBodyV2>(
      ask(*reader, reader_session, 5, req::Subscribe{SourceCursor{LaneScopeAny{}, StartAt{Sequence{1}}}, 1u << 30})));
  std::uint64_t seen = 0;
  while (seen < acked) {
    auto f = reader->receive(std::chrono::seconds(10));
    ASSERT_TRUE(f.ok()) << "after #" << seen << ": " << f.error();
    if (const auto* d = std::get_if<Delivery>(&*f)) {
      EXPECT_EQ(d->sequence, Sequence{seen + 1});
      EXPECT_EQ(d->payload, payload);
      seen = d->sequence.value;
    }
  }
  std::printf("figure: %llu acknowledged records (about %llu MiB) all read back after a full disk and 16 MiB freed\n",
              static_cast<unsigned long long>(acked), static_cast<unsigned long long>(acked));
}

}  // namespace
}  // namespace cowboy::cbqs::broker
