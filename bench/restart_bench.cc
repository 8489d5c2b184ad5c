// Ready time against stream size (issue 46): fills a `cbqsd --dev` stream with
// N records through the wire, then restarts it R times (SIGKILL each time) and
// measures, from the fork, when it listens and when the first request to the
// filled stream (GetCheckpoint, latest) is answered - the stream's first load.
// With --baseline, a second cbqsd binary gets its own store of the same size,
// and the runs alternate: baseline, this build, baseline, ...
// --idle-ms N keeps each cbqsd (the fill's and every restart's) up N ms idle
// before its SIGKILL: 0, the default, is a crash under load, whose restart
// replays the WAL not yet flushed (up to a memtable); a few seconds is a store
// that was idle when it stopped (cbqsd flushes after 2 s without writes).
//
//   cbqs_restart_bench --records 10000,1000000 --runs 3 --baseline /path/to/old/cbqsd
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <thread>

#include "../tests/support/process.h"
#include "cbqs/client/wss_connection.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "common/crypto.h"
#include "devchain/keyfile.h"

namespace {

using namespace cowboy;
using namespace cowboy::cbqs;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

Bytes32 rid(std::uint64_t n) {
  Bytes32 id{};
  for (int i = 0; i < 8; ++i) id[24 + i] = static_cast<std::uint8_t>(n >> (56 - 8 * i));
  id[0] = 0xbe;
  return id;
}

struct Broker {
  cowboy::testing::ChildProcess child;
  std::filesystem::path data;
  std::uint16_t port = 0;
  double listening_ms = 0;

  Broker(const std::string& binary, const std::filesystem::path& dir, Clock::time_point started)
      : child([&] {
          ::setenv("CBQS_HOME", (dir / "home").c_str(), 1);
          return std::vector<std::string>{binary, "--dev", "--data-dir", (dir / "data").string(), "--listen",
                                          "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--chain-listen",
                                          "127.0.0.1:0"};
        }(), (dir / "cbqsd.stderr").string()),
        data(dir / "data") {
    auto line = child.wait_for_line("cbqsd listening on wss://", std::chrono::seconds(600));
    std::smatch m;
    if (line && std::regex_search(*line, m, std::regex(R"(wss://127\.0\.0\.1:(\d+))")))
      port = static_cast<std::uint16_t>(std::stoi(m[1]));
    listening_ms = ms_since(started);
  }

  std::unique_ptr<client::WssConnection> connect() const {
    client::ConnectOptions o;
    o.port = port;
    o.ca_file = data / "tls" / "dev-cert.pem";
    o.allow_private_destinations = true;
    auto c = client::WssConnection::connect(o);
    return c ? std::move(*c) : nullptr;
  }
  StreamGrantV2 grant() const {
    std::ifstream in(data / "dev-grant.hex");
    std::string hex;
    in >> hex;
    return *decode<StreamGrantV2>(*from_hex(hex));
  }
  crypto::Ed25519Seed holder() const { return *devchain::load_secret(data / "dev-holder-key"); }
};

std::optional<Bytes32> open_session(client::WssConnection& c, const Broker& b) {
  StreamGrantV2 g = b.grant();
  if (!c.send(OpenSession{rid(1), g})) return std::nullopt;
  auto ch = c.receive(std::chrono::seconds(30));
  if (!ch || !std::holds_alternative<SessionChallenge>(*ch)) return std::nullopt;
  const auto& challenge = std::get<SessionChallenge>(*ch);
  SessionProofV2 proof{g.chain_instance_id, g.stream_id, grant_id(g), challenge.session_id, challenge.challenge, {}};
  sign_proof(proof, b.holder());
  if (!c.send(CompleteSession{rid(2), proof})) return std::nullopt;
  auto opened = c.receive(std::chrono::seconds(30));
  if (!opened || !std::holds_alternative<SessionOpened>(*opened)) return std::nullopt;
  return challenge.session_id;
}

// Appends `records` 16-byte records to one new lane, `window` in flight.
bool fill(const std::string& binary, const std::filesystem::path& dir, std::uint64_t records,
          std::chrono::milliseconds idle) {
  Broker b(binary, dir, Clock::now());
  auto c = b.connect();
  auto session = c ? open_session(*c, b) : std::nullopt;
  if (!session) return false;
  if (!c->send(Request{rid(3), *session, req::CreateLane{}})) return false;
  auto created = c->receive(std::chrono::seconds(30));
  if (!created || !std::holds_alternative<Response>(*created)) return false;
  LaneId lane = std::get<resp::LaneCreated>(std::get<Response>(*created).body).lane_id;
  constexpr std::uint64_t kWindow = 2'048;
  std::uint64_t sent = 0, acked = 0;
  auto started = Clock::now();
  while (acked < records) {
    while (sent < records && sent - acked < kWindow) {
      Bytes payload(16, static_cast<std::uint8_t>(sent));
      if (!c->send(Request{rid(1'000 + sent), *session, req::Append{{lane, std::move(payload)}}})) return false;
      ++sent;
    }
    auto f = c->receive(std::chrono::seconds(60));
    if (!f) return false;
    const auto* r = std::get_if<Response>(&*f);
    if (!r || !std::holds_alternative<resp::Appended>(r->body)) {
      std::cerr << "fill: an append was refused\n";
      return false;
    }
    ++acked;
  }
  std::cerr << "filled " << records << " records in " << ms_since(started) / 1'000 << " s (" << dir << ")\n";
  std::this_thread::sleep_for(idle);
  b.child.kill(SIGKILL);
  return true;
}

struct Run {
  double listening_ms = 0;
  double ready_ms = 0;  // the first request to the filled stream answered
  std::uint64_t head = 0;
};

std::optional<Run> restart(const std::string& binary, const std::filesystem::path& dir,
                           std::chrono::milliseconds idle) {
  auto started = Clock::now();
  Broker b(binary, dir, started);
  if (b.port == 0) return std::nullopt;
  auto c = b.connect();
  auto session = c ? open_session(*c, b) : std::nullopt;
  if (!session) return std::nullopt;
  if (!c->send(Request{rid(4), *session, req::GetCheckpoint{std::nullopt}})) return std::nullopt;
  auto answer = c->receive(std::chrono::seconds(600));
  Run run{b.listening_ms, ms_since(started), 0};
  if (!answer || !std::holds_alternative<Response>(*answer)) return std::nullopt;
  const auto* cp = std::get_if<resp::Checkpoint>(&std::get<Response>(*answer).body);
  if (!cp) return std::nullopt;
  run.head = cp->receipt.last_sequence.value;
  std::this_thread::sleep_for(idle);
  b.child.kill(SIGKILL);
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cbqsd ready time against stream size"};
  std::vector<std::uint64_t> sizes{10'000, 1'000'000};
  int runs = 3;
  std::string binary = std::string(COWBOY_BIN_DIR) + "/cbqsd", baseline, dir = "restart-bench";
  bool keep = false;
  std::uint64_t idle_ms = 0;
  app.add_option("--records", sizes, "stream sizes to fill and restart")->delimiter(',');
  app.add_option("--runs", runs, "restarts per size and binary");
  app.add_option("--cbqsd", binary, "the cbqsd under test");
  app.add_option("--baseline", baseline, "another cbqsd, alternated with it (e.g. main's)");
  app.add_option("--dir", dir, "where the stores go (reused when --keep left them)");
  app.add_flag("--keep", keep, "keep the filled stores, and reuse them");
  app.add_option("--idle-ms", idle_ms, "each cbqsd stays up this long idle before its SIGKILL (0: a crash under load)");
  CLI11_PARSE(app, argc, argv);

  std::vector<std::pair<std::string, std::string>> binaries{{"this", binary}};
  if (!baseline.empty()) binaries.insert(binaries.begin(), {"baseline", baseline});
  std::cout << "records,binary,run,listening_ms,ready_ms,head\n";
  for (std::uint64_t n : sizes) {
    for (const auto& [name, path] : binaries) {
      auto store = std::filesystem::path(dir) / (name + "-" + std::to_string(n));
      if (std::filesystem::exists(store / "filled")) continue;
      std::filesystem::remove_all(store);
      std::filesystem::create_directories(store);
      if (!fill(path, store, n, std::chrono::milliseconds(idle_ms))) {
        std::cerr << "filling " << store << " failed\n";
        return 1;
      }
      std::ofstream(store / "filled") << n << "\n";
    }
    for (int r = 0; r < runs; ++r)
      for (const auto& [name, path] : binaries) {
        auto run = restart(path, std::filesystem::path(dir) / (name + "-" + std::to_string(n)),
                           std::chrono::milliseconds(idle_ms));
        if (!run) {
          std::cerr << name << " at " << n << " records: the restart did not answer\n";
          return 1;
        }
        std::cout << n << "," << name << "," << r + 1 << "," << run->listening_ms << "," << run->ready_ms << ","
                  << run->head << std::endl;
      }
    if (!keep)
      for (const auto& [name, path] : binaries)
        std::filesystem::remove_all(std::filesystem::path(dir) / (name + "-" + std::to_string(n)));
  }
  return 0;
}
