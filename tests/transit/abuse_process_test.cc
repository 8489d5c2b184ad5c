// transitd as a real process under hostile peers on loopback (127.0.0.0/8:
// each source address is another peer), the bar cbqsd's listener meets
// (tests/cbqs/broker/abuse_test.cc): declared sizes refused before anything is
// allocated, idle and slow connections closed at the header timeout without
// shutting out an honest client, descriptor exhaustion without a spinning
// thread, and bounded memory per connection. Each test prints the figures
// docs/operations.md quotes.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <regex>
#include <thread>

#include "../support/poll.h"
#include "../support/proc_stats.h"
#include "../support/raw_tcp.h"
#include "common/crypto.h"
#include "net/http_connection.h"
#include "net/prometheus_text.h"
#include "process_fixture.h"

namespace cowboy::transit {
namespace {

using cowboy::testing::RawTcp;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

class AbuseProcessTest : public ProcessTest {
 protected:
  /// transitd from the sample genesis on free ports, `prefix` before it
  /// (prlimit); false if it did not come up, or if `logged` is given and no
  /// log line (stderr) before the ready line (stdout) had it.
  bool start(std::vector<std::string> prefix = {}, const std::string& logged = {}) {
    write_sample_genesis();
    std::vector<std::string> argv = std::move(prefix);
    for (std::string a : {kBin + "/transitd", std::string("--genesis"), (dir_ / "genesis.json").string(),
                          std::string("--data"), (dir_ / "journal").string(), std::string("--listen"),
                          std::string("127.0.0.1:0"), std::string("--admin-listen"), std::string("127.0.0.1:0")})
      argv.push_back(std::move(a));
    const auto log_file = dir_ / "transitd.stderr";  // log lines go to stderr, the ready line to stdout
    node_ = std::make_unique<cowboy::testing::ChildProcess>(argv, log_file.string());
    const auto line = node_->wait_for_line("transitd_ready");
    if (!line) return false;
    if (!logged.empty()) {
      std::ifstream in(log_file);
      const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (log.find(logged) == std::string::npos) return false;
    }
    port_ = ready_port_of(*line);
    std::smatch m;
    if (std::regex_search(*line, m, std::regex(R"(admin=127\.0\.0\.1:(\d+))")))
      admin_port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
    if (std::regex_search(*line, m, std::regex(R"(payloads=127\.0\.0\.1:(\d+))")))
      payload_port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
    return port_ != 0 && admin_port_ != 0;
  }
  pid_t pid() const { return node_->pid(); }

  /// An honest client's signed request (the identity query, on a new
  /// connection from 127.0.0.1): its seconds, or -1 if it was not answered.
  double honest_request() {
    const auto start = Clock::now();
    Client c(kill_options(port_, 1, 0));
    return c.identity().ok() ? seconds_since(start) : -1;
  }
  /// GET /healthz on the admin listener from 127.0.0.1, a new connection: its seconds, or -1.
  double honest_healthz() {
    const auto start = Clock::now();
    net::HttpConnection admin("127.0.0.1", admin_port_, std::chrono::seconds(2));
    auto answer = admin.get("/healthz");
    return answer.ok() && answer->status == 200 ? seconds_since(start) : -1;
  }
  std::map<std::string, double> metrics() {
    net::HttpConnection admin("127.0.0.1", admin_port_, std::chrono::seconds(2));
    auto text = admin.get("/metrics");
    return text.ok() ? net::sum_series(text->body) : std::map<std::string, double>{};
  }
  /// `per_address` connections from each of 127.0.0.2 .. 127.0.0.(1+addresses) to `port`.
  static std::vector<std::unique_ptr<RawTcp>> connections(std::uint16_t port, int addresses, int per_address) {
    std::vector<std::unique_ptr<RawTcp>> out;
    for (int a = 2; a < 2 + addresses; ++a)
      for (int i = 0; i < per_address; ++i)
        if (auto c = RawTcp::open(port, "127.0.0." + std::to_string(a))) out.push_back(std::move(c));
    return out;
  }

  std::unique_ptr<cowboy::testing::ChildProcess> node_;
  std::uint16_t port_ = 0, admin_port_ = 0, payload_port_ = 0;
};

// Content-Length 10^12 fails at the header (413, the body limit is
// kMaxCommandBodyBytes, about 145 KiB; 128 KiB on the admin listener), a 1 MiB
// header line at 8 KiB (431); 16 clients at once of each kind on each
// listener, and the peak RSS hardly moves (16 MiB if the lines were kept).
TEST_F(AbuseProcessTest, ADeclaredHugeBodyOrHeaderIsRefusedWithItsStatusBeforeItIsAllocated) {
  ASSERT_TRUE(start());
  ASSERT_GE(honest_request(), 0);  // warm: the routes' first answers are not counted as the attack's
  const std::string huge_body =
      "POST /v1/command HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 1000000000000\r\n\r\n{\"request\":";
  const std::string huge_header = "POST /v1/command HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: " +
                                  std::string(1 << 20, 'a') + "\r\nContent-Length: 2\r\n\r\n{}";
  ASSERT_TRUE(cowboy::testing::reset_peak_rss(pid()));
  const std::uint64_t before = cowboy::testing::rss_kib(pid());
  constexpr int kClients = 16;
  for (const std::uint16_t port : {port_, admin_port_}) {
    const bool command = port == port_;
    std::atomic<int> refused_413{0}, refused_431{0}, with_reason{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < kClients; ++i)
      clients.emplace_back([&, i] {
        auto c = RawTcp::open(port, "127.0.0." + std::to_string(2 + i % 4));
        if (!c) return;
        auto body = c->exchange(huge_body, std::chrono::seconds(5));
        refused_413 += body && body->rfind("HTTP/1.1 413", 0) == 0;
        with_reason += body && body->find("\"too_large\"") != std::string::npos;
        auto header = RawTcp::open(port, "127.0.0." + std::to_string(2 + i % 4));
        if (!header) return;
        auto answer = header->exchange(huge_header, std::chrono::seconds(5));
        refused_431 += answer && answer->rfind("HTTP/1.1 431", 0) == 0;
        with_reason += answer && answer->find("\"too_large\"") != std::string::npos;
      });
    for (auto& t : clients) t.join();
    EXPECT_EQ(refused_413, kClients) << (command ? "command" : "admin") << " listener";
    EXPECT_EQ(refused_431, kClients) << (command ? "command" : "admin") << " listener";
    if (command) {
      EXPECT_EQ(with_reason, 2 * kClients);  // the catalogued reason, as the routes refuse
    }
  }
  const std::uint64_t peak = cowboy::testing::peak_rss_kib(pid());
  std::printf("figure: %d x 2 listeners declared 10^12-byte bodies (413) and sent 1 MiB header lines (431): "
              "RSS %llu KiB before, peak %llu KiB (+%lld KiB)\n",
              kClients, static_cast<unsigned long long>(before), static_cast<unsigned long long>(peak),
              static_cast<long long>(peak) - static_cast<long long>(before));
  EXPECT_LE(peak, before + 4 * 1024);  // 4 MiB; 16 kept lines alone would be 16 MiB
  EXPECT_GE(honest_request(), 0);      // and the node serves on
}

// 500 idle and 500 slowloris connections (one header byte a second) from four
// addresses, below the per-address cap (256) and together below the slot table
// (1,024), so the server holds every one: it answers an honest signed request
// within 1 s beside them, each costs a few KiB, and the header timeout (5 s
// from the connection) closes them all. transitd starts with a soft
// RLIMIT_NOFILE of 1,024, as from a login shell, and raises it to the hard one.
TEST_F(AbuseProcessTest, AThousandIdleAndSlowConnectionsCostBoundedMemoryLeaveAnHonestRequestAnsweredAndAreClosedAtTheHeaderTimeout) {
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max < 4096 || !std::filesystem::exists("/usr/bin/prlimit"))
    GTEST_SKIP() << "needs a hard RLIMIT_NOFILE of 4,096 and prlimit";
  if (limit.rlim_cur < 4096) {  // this process holds about 1,300 connections
    limit.rlim_cur = 4096;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &limit), 0);
  }
  ASSERT_TRUE(start({"/usr/bin/prlimit", "--nofile=1024:4096", "--"}));
  ASSERT_GE(honest_request(), 0);
  ASSERT_GE(honest_healthz(), 0);
  const std::uint64_t idle_rss = cowboy::testing::rss_kib(pid());

  constexpr int kAddresses = 4, kPerAddress = 250, kHostile = kAddresses * kPerAddress;
  const auto opened = Clock::now();
  auto hostile = connections(port_, kAddresses, kPerAddress);
  ASSERT_EQ(hostile.size(), static_cast<std::size_t>(kHostile));
  // Every second one is a slowloris: a header begun, then one byte a second.
  const std::string slow_header = "POST /v1/command HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(64, 'z');
  std::atomic<bool> stop{false};
  std::thread drip([&] {
    for (std::size_t sent = 0; sent < slow_header.size() && !stop && seconds_since(opened) < 12; ++sent) {
      for (std::size_t i = 1; i < hostile.size(); i += 2) hostile[i]->send(slow_header.substr(sent, 1));
      for (int tick = 0; tick < 20 && !stop; ++tick) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  // The admin listener too: 4 x 50 from the same addresses, of which it holds its 4 x 32.
  auto admin_hostile = connections(admin_port_, kAddresses, 50);
  EXPECT_TRUE(cowboy::testing::eventually([&] { return metrics()["transitd_open_connections"] >= kHostile; },
                                          std::chrono::seconds(3)));
  const std::uint64_t held_rss = cowboy::testing::rss_kib(pid());

  const double honest = honest_request();
  const double healthz = honest_healthz();
  const auto m = metrics();
  std::printf("figure: beside %d held hostile connections (%d idle, %d slowloris; %.0f open on the command listener) "
              "an honest signed identity query was answered in %.1f ms, the admin /healthz in %.1f ms\n",
              kHostile, kHostile / 2, kHostile / 2, m.at("transitd_open_connections"), 1000 * honest, 1000 * healthz);
  EXPECT_GE(honest, 0);
  EXPECT_LT(honest, 1.0);
  EXPECT_GE(healthz, 0);
  EXPECT_LT(healthz, 1.0);
  EXPECT_GE(m.at("transitd_open_connections"), kHostile);  // still held while the honest client was served

  const double per_connection = static_cast<double>(held_rss > idle_rss ? held_rss - idle_rss : 0) / kHostile;
  std::printf("figure: RSS %llu KiB with 0 hostile connections, %llu KiB with %d held: %.1f KiB each\n",
              static_cast<unsigned long long>(idle_rss), static_cast<unsigned long long>(held_rss), kHostile,
              per_connection);
  EXPECT_LE(per_connection, 64.0);

  // The header timeout: 5 s from the connection for idle and slow alike.
  int closed = 0;
  for (auto& c : hostile) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(opened + std::chrono::seconds(9) - Clock::now());
    closed += c->closed_within(std::max(left, std::chrono::milliseconds(1)));
  }
  const double waited = seconds_since(opened);
  stop = true;
  drip.join();
  int admin_closed = 0;
  for (auto& c : admin_hostile) admin_closed += c->closed_within(std::chrono::milliseconds(2000));
  std::printf("figure: %d of %d hostile connections closed by the server %.1f s after they opened (header timeout 5 s); "
              "all %zu on the admin listener closed\n",
              closed, kHostile, waited, admin_hostile.size());
  EXPECT_EQ(closed, kHostile);
  EXPECT_EQ(admin_closed, static_cast<int>(admin_hostile.size()));
  EXPECT_TRUE(cowboy::testing::eventually([&] { return metrics()["transitd_open_connections"] == 0; }));
}

// The payload listener holds max_transfers + 4 connections (8), at most 2 from
// one address (decision 89). 1,000 idle connections from two addresses (500
// each): it holds 2 of each until the header timeout and closes the rest at
// accept, and an honest signed GET of a ready payload from 127.0.0.1 is served
// within 1 s beside them. Without the per-address bound one address held all 8
// and the honest connection was closed at accept.
TEST_F(AbuseProcessTest, AThousandIdleConnectionsFromTwoAddressesLeaveAnHonestPayloadDownloadServed) {
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max < 2048) GTEST_SKIP() << "needs a hard RLIMIT_NOFILE of 2,048";
  if (limit.rlim_cur < 2048) {  // this process holds the 1,000 connections (most closed by the server)
    limit.rlim_cur = 2048;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &limit), 0);
  }
  ASSERT_TRUE(start());
  ASSERT_NE(payload_port_, 0);
  auto options = kill_options(port_, 1, 0);
  options.payload_port = payload_port_;
  Client client(options);
  std::vector<std::uint8_t> bytes(64 * 1024);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 131 ^ (i >> 9));
  ASSERT_TRUE(client.submit(CreateProcess{Pid{7}, {}, false}).ok());
  auto declared = client.submit(DeclarePayload{Pid{7}, bytes.size(), crypto::sha256(ByteView(bytes.data(), bytes.size())), false});
  ASSERT_TRUE(declared.ok()) << declared.error().message;
  const Id id = std::get<PayloadChanged>(declared->outcome).payload;
  std::size_t sent = 0;
  auto put = client.put_payload(id, [&](std::span<std::uint8_t> out) {
    const std::size_t n = std::min(out.size(), bytes.size() - sent);
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(sent), n, out.begin());
    sent += n;
    return n;
  });
  ASSERT_TRUE(put.ok()) << put.error().message;
  ASSERT_TRUE(client.submit(PayloadReady{id}).ok());

  constexpr int kAddresses = 2, kPerAddress = 500;
  const auto opened = Clock::now();
  auto hostile = connections(payload_port_, kAddresses, kPerAddress);
  ASSERT_EQ(hostile.size(), static_cast<std::size_t>(kAddresses * kPerAddress));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the listener has taken (or closed) every one

  const auto start = Clock::now();
  Client honest_client(options);  // new connections, as an uploader's would be
  std::vector<std::uint8_t> got;
  auto get = honest_client.get_payload(id, [&](std::span<const std::uint8_t> chunk) {
    got.insert(got.end(), chunk.begin(), chunk.end());
    return true;
  });
  const double honest = seconds_since(start);
  const double since_opened = seconds_since(opened);
  int held = 0;
  for (auto& c : hostile) held += !c->closed_within(std::chrono::milliseconds(100));
  std::printf("figure: beside %d idle payload connections from %d addresses (%d still held by the server %.1f s "
              "after they opened) an honest signed GET of %zu bytes was served in %.1f ms\n",
              kAddresses * kPerAddress, kAddresses, held, since_opened, bytes.size(), 1000 * honest);
  ASSERT_TRUE(get.ok()) << get.error().message;
  EXPECT_EQ(got, bytes);
  EXPECT_LT(honest, 1.0);
  EXPECT_EQ(held, kAddresses * 2);  // two from each address, the rest closed at accept
}

// At RLIMIT_NOFILE 256 (the start warns: it wants max-connections + 384),
// 400 connections: accept(2) fails EMFILE with the rest in the listen queue,
// and the listener backs off (10 ms doubling to 1 s) instead of retrying in a
// spin; once they go it accepts and serves.
TEST_F(AbuseProcessTest, RunningOutOfDescriptorsSpinsNoThreadAndTheNodeServesOnceTheFloodGoes) {
  if (!std::filesystem::exists("/usr/bin/prlimit")) GTEST_SKIP() << "needs prlimit";
  ASSERT_TRUE(start({"/usr/bin/prlimit", "--nofile=256:256", "--"}, "event=descriptor_limit_low soft=256 wanted=1408"));
  ASSERT_GE(honest_request(), 0);
  auto flood = connections(port_, 4, 100);
  ASSERT_EQ(flood.size(), 400u);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // within the 5 s header timeout of the held ones
  const auto before = cowboy::testing::thread_cpu(pid());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto after = cowboy::testing::thread_cpu(pid());
  double total = 0;
  for (const auto& [tid, cpu] : after) total += cpu - (before.count(tid) ? before.at(tid) : 0.0);
  const double busiest = cowboy::testing::busiest_thread(before, after, 2.0);
  std::printf("figure: %zu connections at RLIMIT_NOFILE 256: busiest thread %.1f%% of a core, the process %.1f%% over 2 s\n",
              flood.size(), 100 * busiest, 100 * total / 2.0);
  EXPECT_LT(busiest, 0.10);

  flood.clear();  // descriptors come back: the listener accepts again
  const auto gone = Clock::now();
  EXPECT_TRUE(cowboy::testing::eventually([&] { return honest_request() >= 0; }, std::chrono::seconds(10)));
  std::printf("figure: an honest signed request answered %.2f s after the flood went\n", seconds_since(gone));
  EXPECT_GE(metrics()["transitd_accept_errors_total"], 1);
}

}  // namespace
}  // namespace cowboy::transit
