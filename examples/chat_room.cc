// A chat room on CBQS room lanes (§11.1): everyone derives the same lane ids
// from the room's name, so nobody hands them out. The room's message lane
// carries what is said to all; each seat's inbox lane carries "@name ..."
// direct messages. Lines typed on stdin are sent; the room is printed as it
// arrives, history first.
//
//   build/bin/example_chat_room --dev cbqsd-dev --room lobby --name alice
#include <CLI/CLI.hpp>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <thread>

#include "cbqs/client.h"
#include "cbqs/rooms.h"
#include "common/crypto.h"

using namespace cowboy;
using namespace cowboy::cbqs;
using namespace std::chrono_literals;

namespace {

Bytes32 id_of(const std::string& kind, const std::string& name) { return crypto::keccak256(as_bytes(kind + ":" + name)); }

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a chat room on room lanes: stdin lines are said, the room is printed"};
  std::string dev = "cbqsd-dev", room_name = "lobby", name;
  int linger_ms = 500;
  app.add_option("--dev", dev, "the data directory of a running cbqsd --dev")->capture_default_str();
  app.add_option("--room", room_name)->capture_default_str();
  app.add_option("--name", name, "your seat in the room")->required();
  app.add_option("--linger-ms", linger_ms, "after stdin ends, keep listening this long")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  auto options = sdk::ClientOptions::from_dev_dir(dev);
  if (!options) return std::fprintf(stderr, "%s\n", options.error().describe().c_str()), 1;
  auto client = sdk::Client::connect(*options);
  if (!client) return std::fprintf(stderr, "%s\n", client.error().describe().c_str()), 1;
  auto& c = **client;

  Bytes32 room = id_of("room", room_name);
  auto messages = c.open_room_lane(sdk::room_messages(room));  // idempotent: whoever comes first creates it
  auto inbox = c.open_room_lane(sdk::room_inbox(room, id_of("seat", name)));
  if (!messages || !inbox)
    return std::fprintf(stderr, "%s\n", (!messages ? messages : inbox).error().describe().c_str()), 1;

  std::vector<LaneId> both{std::min(*messages, *inbox), std::max(*messages, *inbox)};
  auto reader = c.read({LaneScopeSet{both}, StartAt{Sequence{1}}});
  if (!reader) return std::fprintf(stderr, "%s\n", reader.error().describe().c_str()), 1;
  std::atomic<bool> stop{false};
  std::thread printer([&] {
    while (!stop) {
      auto r = (*reader)->next(100ms);
      if (!r) return;
      if (!*r) continue;
      std::string line((*r)->payload.begin(), (*r)->payload.end());
      std::printf("%s%s\n", (*r)->lane_id == *inbox ? "(to you) " : "", line.c_str());
      std::fflush(stdout);
    }
  });

  Sequence last_said;
  for (std::string line; std::getline(std::cin, line);) {
    if (line.empty()) continue;
    if (line[0] == '@' && line.find(' ') != std::string::npos) {  // "@bob hi": into bob's inbox
      std::string to = line.substr(1, line.find(' ') - 1);
      auto lane = c.open_room_lane(sdk::room_inbox(room, id_of("seat", to)));
      if (lane) (void)c.append(*lane, text(name + ": " + line.substr(line.find(' ') + 1))).get();
      continue;
    }
    auto said = c.append(*messages, text(name + ": " + line)).get();
    if (!said) std::fprintf(stderr, "not sent: %s\n", said.error().describe().c_str());
    if (said) last_said = *said;
  }
  // Show the history and our own last line before lingering.
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       std::chrono::steady_clock::now() < deadline && !((*reader)->caught_up() && (*reader)->last_sequence() >= last_said);)
    std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(std::chrono::milliseconds(linger_ms));
  stop = true;
  printer.join();
  return 0;
}
