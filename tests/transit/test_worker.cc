// transit_test_worker: a real worker loop for the failover test
// (ProcessTest.AReplacementWorkerFinishesTheMailboxOfASigkilledOne). It runs
// one process as one principal: owns it when idle, and for each mailbox head
// reads `count` and `sum` from its resource and publishes one turn that
// consumes the input and writes count + 1 and sum + the input's number, at
// the exact resource revision it read. It prints "consumed N" per turn and
// exits 0 once input `--until` is consumed; any refusal ends it with 1.
//
//   transit_test_worker --port P --principal 10 --key worker.key --pid 7 --resource 1 --until 60
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "common/keyfile.h"
#include "transit/client.h"

using namespace cowboy;
using namespace cowboy::transit;

namespace {

std::string text(const std::vector<std::uint8_t>& v) { return std::string(v.begin(), v.end()); }
std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

int fail(const std::string& what, const ClientError& e) {
  std::fprintf(stderr, "transit_test_worker: %s: %s\n", what.c_str(), e.message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  ClientOptions options;
  options.realm = "dev";
  std::string key_file;
  Pid pid{};
  ResourceId resource{};
  Id until = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], arg = argv[i + 1];
    if (flag == "--port") options.port = static_cast<std::uint16_t>(std::stoul(arg));
    else if (flag == "--principal") options.principal = PrincipalId{std::stoull(arg)};
    else if (flag == "--key") key_file = arg;
    else if (flag == "--pid") pid = Pid{std::stoull(arg)};
    else if (flag == "--resource") resource = ResourceId{std::stoull(arg)};
    else if (flag == "--until") until = std::stoull(arg);
    else return std::fprintf(stderr, "unknown flag %s\n", flag.c_str()), 2;
  }
  auto seed = load_secret(key_file);
  if (!seed.ok()) return std::fprintf(stderr, "%s\n", seed.error().c_str()), 2;
  options.seed = *seed;
  crypto::init();
  Client client(options);
  Slots<EntryKey, kPageRecords> keys;
  keys.items[0] = EntryKey{bytes("count")};
  keys.items[1] = EntryKey{bytes("sum")};

  for (;;) {
    auto read = client.query(ProcessRead{pid});
    if (!read.ok()) return fail("process read", read.error());
    const auto& process = std::get<ProcessInfo>(read->result);
    if (process.state == ProcessState::kIdle) {
      auto owned = client.submit(Own{pid, process.generation});
      if (!owned.ok()) return fail("own", owned.error());
      continue;
    }
    if (process.state != ProcessState::kOwned || process.owner != options.principal)
      return std::fprintf(stderr, "transit_test_worker: process %llu is not mine\n", static_cast<unsigned long long>(pid.value)), 1;
    if (!process.input) {
      if (process.head > until) return std::printf("done\n"), std::fflush(stdout), 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // an empty mailbox: poll it
      continue;
    }
    auto state = client.query(ReadEntries{resource, std::nullopt, std::nullopt, keys});
    if (!state.ok()) return fail("read", state.error());
    const auto& batch = std::get<EntryBatch>(state->result);
    const auto number = [&](std::size_t slot) -> Id {
      return batch.entries.items[slot] ? std::stoull(text(batch.entries.items[slot]->value.value)) : 0;
    };
    const Id n = process.input->input;
    Turn turn{pid, process.generation, n, resource, batch.revision, {}, {}, {}, {}, std::nullopt};
    turn.mutations.items.push_back({keys.items[0].value(), EntryValue{bytes(std::to_string(number(0) + 1))}});
    turn.mutations.items.push_back(
        {keys.items[1].value(), EntryValue{bytes(std::to_string(number(1) + std::stoull(text(process.input->value.value))))}});
    auto published = client.submit(turn);
    if (!published.ok()) return fail("turn", published.error());
    std::printf("consumed %llu\n", static_cast<unsigned long long>(n));
    std::fflush(stdout);
  }
}
