// transit_ping_pong_worker: one actor of the ping-pong in process_test.cc, as a
// real process. It owns its process (after a restart it finds the process
// still owned by its principal and goes on), and for the input at the head of
// its mailbox - a number k - publishes one turn that consumes it, records k
// under "last" in its resource and, while k < --last, proposes k + 1 to
// --peer. It never delivers: only the maintenance courier moves that output.
// It keeps nothing of its own: every step starts from what the node says, so
// a SIGKILL of it, or of the node, at any moment loses and repeats nothing
// (the turn names the input it consumes and the generation it holds).
// It exits 0 once "last" shows its part of the exchange done (k >= last - 1).
//
//   transit_ping_pong_worker --port P --principal N --key FILE --pid X --peer Y --resource R --last L
#include <CLI/CLI.hpp>

#include <thread>

#include "common/keyfile.h"
#include "transit/client.h"

namespace {

using namespace cowboy;
using namespace cowboy::transit;

std::string text_of(const std::vector<std::uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }
InputValue number(Id k) {
  const std::string s = std::to_string(k);
  return InputValue{{s.begin(), s.end()}};
}
const EntryKey kLast{{'l', 'a', 's', 't'}};

/// The "last" entry of `resource`, 0 when absent; nullopt when the node does not answer.
std::optional<Id> last_recorded(Client& c, Id resource) {
  Slots<EntryKey, 8> keys;
  keys.items[0] = kLast;
  auto read = c.query(ReadEntries{resource, std::nullopt, std::nullopt, keys});
  if (!read.ok()) return std::nullopt;
  const auto& entry = std::get<EntryBatch>(read->result).entries.items[0];
  return entry ? std::stoull(text_of(entry->value.value)) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"transit_ping_pong_worker: one actor of the ping-pong test"};
  std::uint16_t port = 0;
  Id principal = 0, pid = 0, peer = 0, resource = 0, last = 0;
  std::string key_file;
  app.add_option("--port", port)->required();
  app.add_option("--principal", principal)->required();
  app.add_option("--key", key_file)->required();
  app.add_option("--pid", pid)->required();
  app.add_option("--peer", peer)->required();
  app.add_option("--resource", resource)->required();
  app.add_option("--last", last)->required();
  CLI11_PARSE(app, argc, argv);
  crypto::init();
  auto seed = load_secret(key_file);
  if (!seed.ok()) {
    std::fprintf(stderr, "transit_ping_pong_worker: %s\n", seed.error().c_str());
    return 1;
  }
  ClientOptions options;
  options.port = port;
  options.realm = "dev";
  options.principal = principal;
  options.seed = *seed;
  options.timeout = std::chrono::seconds(3);
  Client c(options);
  std::printf("transit_ping_pong_worker_ready pid=%llu\n", static_cast<unsigned long long>(pid));
  std::fflush(stdout);
  const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
  for (;;) {
    auto read = c.query(ProcessRead{pid});
    if (!read.ok()) {  // the node is down or restarting
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    const auto info = std::get<ProcessInfo>(read->result);
    if (info.state == ProcessState::kIdle) {
      (void)c.submit(Own{pid, info.generation});  // whatever happened, the next read says
      continue;
    }
    if (info.state != ProcessState::kOwned || info.owner != principal) {
      std::fprintf(stderr, "transit_ping_pong_worker: process %llu is %s\n", static_cast<unsigned long long>(pid),
                   std::string(EnumTraits<ProcessState>::kNames[static_cast<int>(info.state)]).c_str());
      return 1;
    }
    if (!info.input) {  // an empty mailbox: done, or waiting for the courier
      if (auto recorded = last_recorded(c, resource); recorded && last > 0 && *recorded >= last - 1) return 0;
      pause();
      continue;
    }
    const Id k = std::stoull(text_of(info.input->value.value));
    Turn t{pid, info.generation, info.input->input, resource, std::nullopt, {}, {}, {}, {}, std::nullopt};
    t.mutations.items.push_back({kLast, EntryValue{number(k).value}});
    if (k < last) t.outputs.items.push_back({peer, number(k + 1)});
    (void)c.submit(t);  // accepted, refused or uncertain: the next read says which
  }
}
