// cbqsd --dev as a real process under hostile peers on loopback (127.0.0.0/8:
// each source address is another peer): memory and slots before a session,
// one address's flood, bad-signature handshakes, descriptor exhaustion.
// Each test prints the figures docs/operations.md quotes.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "../../support/cbqsd_process.h"
#include "../../support/poll.h"
#include "../../support/proc_stats.h"
#include "../../support/raw_wss.h"
#include "../../support/temp_dir.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "cbqs/wire/limits.h"
#include "devchain/http_client.h"
#include "net/prometheus_text.h"

namespace cowboy::cbqs {
namespace {

using cowboy::testing::RawWss;
using cowboy::testing::rss_kib;
using cowboy::testing::thread_cpu;

std::map<std::string, double> metrics(const cowboy::testing::CbqsdProcess& p) {
  auto http = devchain::HttpClient::from_url("http://127.0.0.1:" + std::to_string(p.admin_port()));
  auto text = http ? http->get_text("/metrics") : devchain::ApiResult<devchain::HttpText>(Err{devchain::ApiError{}});
  return text ? net::sum_series(text->body) : std::map<std::string, double>{};
}

// The close frame a server sends with `code`, as the last bytes before it hangs up.
bool ends_with_close(const Bytes& got, std::uint16_t code) {
  return got.size() >= 4 && got[got.size() - 4] == 0x88 && got[got.size() - 3] == 0x02 &&
         got[got.size() - 2] == (code >> 8) && got[got.size() - 1] == (code & 0xff);
}

TEST(CbqsdAbuse, ConnectionsWithoutASessionCostBoundedMemoryAndAreClosedAtTheHandshakeTimeout) {
  cowboy::testing::TempDir dir;
  cowboy::testing::CbqsdProcess cbqsd(dir.path(), 0, {"--max-connections-per-address", "1024"});
  ASSERT_TRUE(cbqsd.up());
  // One declared frame at the whole cap: refused from its header (it took 16 MiB each before).
  auto big = RawWss::open(cbqsd.port(), "127.0.0.2");
  ASSERT_NE(big, nullptr);
  ASSERT_TRUE(big->write(RawWss::frame_header(limits::kMaxFrameBytes)));
  auto refused = big->read_until_closed(std::chrono::seconds(5));
  ASSERT_TRUE(refused);
  EXPECT_TRUE(ends_with_close(*refused, 1009));

  std::uint64_t before = rss_kib(cbqsd.pid());
  constexpr int kHostile = 300;
  std::vector<std::unique_ptr<RawWss>> hostile;
  for (int i = 0; i < kHostile; ++i) {
    auto c = RawWss::open(cbqsd.port(), "127.0.0.2");
    ASSERT_NE(c, nullptr) << i;
    // Just under the pre-session cap, and half of it sent: the most one may make the broker hold.
    Bytes partial = RawWss::frame_header(limits::kMaxPreSessionFrameBytes - 64);
    partial.resize(partial.size() + limits::kMaxPreSessionFrameBytes / 2, 0x5a);
    ASSERT_TRUE(c->write(partial));
    hostile.push_back(std::move(c));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::uint64_t after = rss_kib(cbqsd.pid());
  double per_connection_kib = static_cast<double>(after > before ? after - before : 0) / kHostile;
  std::printf("figure: %d hostile connections before a session: RSS %llu -> %llu KiB, %.1f KiB each\n", kHostile,
              static_cast<unsigned long long>(before), static_cast<unsigned long long>(after), per_connection_kib);
  EXPECT_LE(per_connection_kib, 256.0);
  auto m = metrics(cbqsd);
  EXPECT_GE(m["cbqs_connections"], kHostile);
  EXPECT_GE(m["cbqs_connections_without_session"], kHostile);

  // cbqs.session_handshake_timeout_ms (10 s) after the upgrade, each is closed with 1008.
  auto start = std::chrono::steady_clock::now();
  int closed = 0;
  for (auto& c : hostile) {
    auto got = c->read_until_closed(std::chrono::seconds(20));
    closed += got && ends_with_close(*got, 1008);
  }
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("figure: %d of %d closed with 1008 within %.1f s of the measurement\n", closed, kHostile, waited);
  EXPECT_EQ(closed, kHostile);
  EXPECT_TRUE(cowboy::testing::eventually([&] { return metrics(cbqsd)["cbqs_connections_without_session"] == 0; }));
  EXPECT_GE(metrics(cbqsd)["cbqs_connections_sessionless_closed_total"], kHostile);
}

TEST(CbqsdAbuse, AnHonestClientIsServedWhileOneAddressFloodsAndAnotherSendsBadSignatures) {
  cowboy::testing::TempDir dir;
  cowboy::testing::CbqsdProcess cbqsd(dir.path());
  ASSERT_TRUE(cbqsd.up());
  // One address takes every connection it can get.
  std::vector<std::unique_ptr<RawWss>> flood;
  for (int i = 0; i < 400; ++i)
    if (auto c = RawWss::open(cbqsd.port(), "127.0.0.2")) flood.push_back(std::move(c));
  std::printf("figure: one address holds %zu connections (cap 128)\n", flood.size());
  EXPECT_EQ(flood.size(), 128u);
  // Another sends OpenSession with a forged grant signature, as fast as it is answered, from 8 connections.
  StreamGrantV2 forged = cbqsd.grant();
  forged.signature.bytes[5] ^= 1;
  Bytes open_frame = RawWss::frame(encode(CbqsClientFrameV2{OpenSession{Bytes32{7}, forged}}));
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> forged_sent{0};
  std::vector<std::thread> forgers;
  for (int i = 0; i < 8; ++i)
    forgers.emplace_back([&] {
      auto c = RawWss::open(cbqsd.port(), "127.0.0.3");
      if (!c) return;
      while (!stop && c->write(open_frame)) {
        ++forged_sent;
        if (c->read_some(std::chrono::seconds(2)).empty()) break;
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  auto start = std::chrono::steady_clock::now();
  auto honest = cbqsd.connect();
  ASSERT_NE(honest, nullptr);
  StreamGrantV2 g = cbqsd.grant();
  ASSERT_TRUE(honest->send(OpenSession{Bytes32{1}, g}).ok());
  auto ch = honest->receive(std::chrono::seconds(5));
  ASSERT_TRUE(ch.ok() && std::holds_alternative<SessionChallenge>(*ch));
  crypto::Ed25519Seed holder = *fixed_from_hex<32>([&] {
    std::ifstream in(cbqsd.data() / "dev-holder-key");
    std::string hex;
    in >> hex;
    return hex;
  }());
  const auto& challenge = std::get<SessionChallenge>(*ch);
  SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), challenge.session_id, challenge.challenge, {}};
  sign_proof(proof, holder);
  ASSERT_TRUE(honest->send(CompleteSession{Bytes32{2}, proof}).ok());
  auto opened = honest->receive(std::chrono::seconds(5));
  ASSERT_TRUE(opened.ok() && std::holds_alternative<SessionOpened>(*opened));
  ASSERT_TRUE(honest->send(Request{Bytes32{3}, challenge.session_id, req::CreateLane{}}).ok());
  auto lane = honest->receive(std::chrono::seconds(5));
  ASSERT_TRUE(lane.ok());
  const auto* created = std::get_if<Response>(&*lane);
  ASSERT_NE(created, nullptr);
  LaneId lane_id = std::get<resp::LaneCreated>(created->body).lane_id;
  ASSERT_TRUE(honest->send(Request{Bytes32{4}, challenge.session_id, req::Append{{lane_id, Bytes{1, 2, 3}}}}).ok());
  auto appended = honest->receive(std::chrono::seconds(5));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stop = true;
  for (auto& t : forgers) t.join();
  ASSERT_TRUE(appended.ok());
  const auto* r = std::get_if<Response>(&*appended);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(std::holds_alternative<resp::Appended>(r->body));
  std::printf("figure: honest connect + session + lane + append in %.3f s during the flood (%llu forged OpenSessions)\n",
              seconds, static_cast<unsigned long long>(forged_sent.load()));
  EXPECT_LT(seconds, 5.0);  // the target is 1 s; this bound only catches a hang
  EXPECT_GE(metrics(cbqsd)["cbqs_connections_refused_total"], 1);
}

TEST(CbqsdAbuse, DescriptorExhaustionBacksOffInsteadOfSpinning) {
  cowboy::testing::TempDir dir;
  cowboy::testing::CbqsdProcess cbqsd(dir.path(), 0, {}, {"/usr/bin/prlimit", "--nofile=256:256", "--"});
  ASSERT_TRUE(cbqsd.up());
  // Plain TCP from four addresses: more than the descriptors left.
  std::vector<std::unique_ptr<RawWss>> idle;
  for (int a = 2; a <= 5; ++a)
    for (int i = 0; i < 100; ++i)
      if (auto c = RawWss::open(cbqsd.port(), "127.0.0." + std::to_string(a), false)) idle.push_back(std::move(c));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto before = thread_cpu(cbqsd.pid());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto after = thread_cpu(cbqsd.pid());
  double busiest = cowboy::testing::busiest_thread(before, after, 2.0);
  std::printf("figure: %zu idle connections at RLIMIT_NOFILE 256: busiest thread %.1f%% CPU\n", idle.size(),
              100 * busiest);
  EXPECT_LT(busiest, 0.10);
  idle.clear();  // descriptors come back: the listener accepts again
  EXPECT_TRUE(cowboy::testing::eventually([&] { return metrics(cbqsd)["cbqs_accept_errors_total"] >= 1; },
                                          std::chrono::seconds(10)));
  EXPECT_TRUE(cowboy::testing::eventually([&] { return cbqsd.connect() != nullptr; }, std::chrono::seconds(10)));
}

}  // namespace
}  // namespace cowboy::cbqs
