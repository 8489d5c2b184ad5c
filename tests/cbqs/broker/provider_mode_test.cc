// The production shape: a devchain process, a provider registered on it over
// HTTP, and `cbqsd` started with provider flags (no --dev), read through the
// devchain HTTP API; a client opens a session and appends durably.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "../../devchain/scenario.h"
#include "../../support/process.h"
#include "../../support/temp_dir.h"
#include "net/dev_cert.h"
#include "cbqs/client/wss_connection.h"
#include "cbqs/testbed/local_deployment.h"
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

TEST(ProviderMode, CbqsdServesAStreamOfAChainItReadsOverHttp) {
  cowboy::testing::TempDir dir;
  auto genesis_file = dir.path() / "genesis.json";
  std::ofstream(genesis_file) << devchain::genesis_to_json(devchain::testing::genesis_for(secret(1))).dump();
  cowboy::testing::ChildProcess devchain_proc({std::string(COWBOY_BIN_DIR) + "/devchain", "--data-dir",
                                               (dir.path() / "chain").string(), "--listen", "127.0.0.1:0",
                                               "--block-ms", "20", "--genesis", genesis_file.string()});
  std::uint16_t chain_port = port_in(devchain_proc.wait_for_line("listening on"), R"(127\.0\.0\.1:(\d+))");
  ASSERT_NE(chain_port, 0);
  devchain::HttpClient chain("127.0.0.1", chain_port);
  devchain::Wallet admin(chain, secret(1));
  auto deployment = devchain::testing::deploy(chain, admin);  // provider key 0x0b, owner 0x0a, Ed25519 seed 0x51

  // The provider's files: its Ed25519 signing seed (the one registered) and a TLS certificate.
  crypto::Ed25519Seed signing{};
  signing[0] = 0x51;
  auto key_file = dir.path() / "provider-signing-key";
  std::ofstream(key_file) << to_hex(signing) << "\n";
  auto cert = *net::ensure_dev_certificate(dir.path() / "tls");
  cowboy::testing::ChildProcess cbqsd({std::string(COWBOY_BIN_DIR) + "/cbqsd", "--store", (dir.path() / "store").string(),
                                       "--tls-cert", cert.certificate.string(), "--tls-key", cert.private_key.string(),
                                       "--provider-key", key_file.string(), "--provider-address",
                                       devchain::json::hex0x(deployment.provider), "--chain-url",
                                       "http://127.0.0.1:" + std::to_string(chain_port), "--chain-block-ms", "20",
                                       "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"});
  std::uint16_t wss_port = port_in(cbqsd.wait_for_line("cbqsd listening"), R"(wss://127\.0\.0\.1:(\d+))");
  ASSERT_NE(wss_port, 0);

  client::ConnectOptions o;
  o.port = wss_port;
  o.ca_file = cert.certificate;
  o.allow_private_destinations = true;
  auto c = client::WssConnection::connect(o);
  ASSERT_TRUE(c.ok()) << c.error();
  // A grant from the stream's admin key (seed 0x52 in the scenario).
  crypto::Ed25519Seed admin_seed{}, holder{};
  admin_seed[0] = 0x52;
  holder[0] = 0x41;
  StreamGrantV2 g;
  g.chain_instance_id = *chain.chain_instance_id();
  g.stream_id = deployment.stream_id;
  g.holder_signing_key = ed25519_public_key(holder);
  g.verbs = 0x003f;
  g.lane_scope = LaneScopeAny{};
  g.group_scope = GroupScopeAny{};
  g.not_before_ms = SystemClock().now_ms() - 1'000;
  g.expires_at_ms = g.not_before_ms + 600'000;
  g.max_message_bytes = 1'024;
  g.max_append_bytes_per_sec = 1'048'576;
  sign_grant(g, admin_seed);
  ASSERT_TRUE((*c)->send(OpenSession{Bytes32{1}, g}).ok());
  auto challenge = (*c)->receive(std::chrono::seconds(5));
  ASSERT_TRUE(challenge.ok() && std::holds_alternative<SessionChallenge>(*challenge));
  const auto& ch = std::get<SessionChallenge>(*challenge);
  SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), ch.session_id, ch.challenge, {}};
  sign_proof(proof, holder);
  ASSERT_TRUE((*c)->send(CompleteSession{Bytes32{2}, proof}).ok());
  ASSERT_TRUE(std::holds_alternative<SessionOpened>(*(*c)->receive(std::chrono::seconds(5))));
  ASSERT_TRUE((*c)->send(Request{Bytes32{3}, ch.session_id, req::CreateLane{}}).ok());
  auto lane = (*c)->receive(std::chrono::seconds(5));
  ASSERT_TRUE(lane.ok() && std::holds_alternative<Response>(*lane));
  std::uint64_t lane_id = std::get<resp::LaneCreated>(std::get<Response>(*lane).body).lane_id;
  ASSERT_TRUE((*c)->send(Request{Bytes32{4}, ch.session_id, req::Append{{lane_id, Bytes{'h', 'i'}}}}).ok());
  auto appended = (*c)->receive(std::chrono::seconds(5));
  ASSERT_TRUE(appended.ok() && std::holds_alternative<Response>(*appended));
  EXPECT_EQ(std::get<resp::Appended>(std::get<Response>(*appended).body).sequence, 1u);
  EXPECT_EQ(cbqsd.kill(SIGTERM), 0);  // a clean shutdown exits 0
}

}  // namespace
}  // namespace cowboy::cbqs::broker
