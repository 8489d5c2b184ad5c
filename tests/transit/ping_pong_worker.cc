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
// With --effect-every K --executor E, the turn consuming a multiple of K also
// declares an effect intent executed by principal E (an external API call);
// the result entering the mailbox is consumed by a turn recording it under
// "api", and the worker exits only once none of its effects is unresolved.
//
// With --execute it is that executor instead (ProcessTest.TwoActorsCalling...):
// it lists the unresolved effects it executes, attempts each authorized one,
// calls the HTTP API at --api-port for each attempted one and observes the
// answer as the final result. It too keeps nothing of its own: after a
// SIGKILL the listing says which step each effect is at (an attempt whose
// answer it had not recorded calls the API again: at least once, decision 43).
//
//   transit_ping_pong_worker --port P --principal N --key FILE --pid X --peer Y --resource R --last L
//                            [--effect-every K --executor E]
//   transit_ping_pong_worker --port P --principal E --key FILE --execute --api-port A
#include <CLI/CLI.hpp>

#include <thread>

#include "common/clock.h"
#include "common/keyfile.h"
#include "net/http_connection.h"
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
std::optional<Id> last_recorded(Client& c, ResourceId resource) {
  Slots<EntryKey, 8> keys;
  keys.items[0] = kLast;
  auto read = c.query(ReadEntries{resource, std::nullopt, std::nullopt, keys});
  if (!read.ok()) return std::nullopt;
  const auto& entry = std::get<EntryBatch>(read->result).entries.items[0];
  return entry ? std::stoull(text_of(entry->value.value)) : 0;
}

/// Whether `pid` has an effect not closed yet; nullopt when the node does not answer.
std::optional<bool> effects_open(Client& c, Pid pid) {
  auto page = c.query(ListEffects{pid, EffectFilter::kUnresolved, std::nullopt});
  if (!page.ok()) return std::nullopt;
  return !std::get<EffectPage>(page->result).items.items.empty();
}

/// The executor's loop (--execute): never returns.
int execute(Client& c, PrincipalId me, std::uint16_t api_port) {
  for (;;) {
    bool acted = false;
    std::optional<Cursor> cursor;
    do {
      auto read = c.query(ListEffects{std::nullopt, EffectFilter::kUnresolved, cursor});
      if (!read.ok()) break;  // a stale cut after our own act, or the node away: list again
      const auto& page = std::get<EffectPage>(read->result);
      for (const auto& e : page.items.items) {
        if (e.intent.executor != me) continue;
        acted = true;
        if (e.phase == EffectPhase::kAuthorized) {
          (void)c.submit(AttemptEffect{e.effect});  // the next listing says what became of it
          continue;
        }
        auto answer = net::HttpConnection("127.0.0.1", api_port).get("/charge/" + text_of(e.intent.intent.value));
        if (!answer.ok() || answer->status != 200) continue;
        (void)c.submit(ObserveEffect{e.effect, InputValue{{answer->body.begin(), answer->body.end()}}, true});
      }
      cursor = page.cursor;
    } while (cursor);
    if (!acted) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"transit_ping_pong_worker: one actor of the ping-pong test"};
  std::uint16_t port = 0;
  Id principal_n = 0, pid_n = 0, peer_n = 0, resource_n = 0, last = 0, effect_every = 0, executor_n = 0;
  std::string key_file;
  bool executes = false;
  std::uint16_t api_port = 0;
  app.add_option("--port", port)->required();
  app.add_option("--principal", principal_n)->required();
  app.add_option("--key", key_file)->required();
  app.add_option("--pid", pid_n);
  app.add_option("--peer", peer_n);
  app.add_option("--resource", resource_n);
  app.add_option("--last", last);
  app.add_option("--effect-every", effect_every);
  app.add_option("--executor", executor_n);
  app.add_flag("--execute", executes);
  app.add_option("--api-port", api_port);
  CLI11_PARSE(app, argc, argv);
  const PrincipalId principal{principal_n}, executor{executor_n};
  const Pid pid{pid_n}, peer{peer_n};
  const ResourceId resource{resource_n};
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
  std::printf("transit_ping_pong_worker_ready pid=%llu\n", static_cast<unsigned long long>(pid.value));
  std::fflush(stdout);
  if (executes) return execute(c, principal, api_port);
  const SystemClock clock;
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
      std::fprintf(stderr, "transit_ping_pong_worker: process %llu is %s\n", static_cast<unsigned long long>(pid.value),
                   std::string(EnumTraits<ProcessState>::kNames[static_cast<int>(info.state)]).c_str());
      return 1;
    }
    if (!info.input) {  // an empty mailbox: done, or waiting for the courier (or an effect's result)
      if (auto recorded = last_recorded(c, resource); recorded && last > 0 && *recorded >= last - 1) {
        // A closed effect's result is in the mailbox already (one decision), so read it once more.
        if (const auto open = effects_open(c, pid); open && !*open) {
          auto again = c.query(ProcessRead{pid});
          if (again.ok() && !std::get<ProcessInfo>(again->result).input) return 0;
        }
      }
      pause();
      continue;
    }
    Turn t{pid, info.generation, info.input->input, resource, std::nullopt, {}, {}, {}, {}, std::nullopt};
    if (info.input->origin.effect) {  // the API's answer to one of this actor's effects
      t.mutations.items.push_back({EntryKey{{'a', 'p', 'i'}}, EntryValue{info.input->value.value}});
      (void)c.submit(t);
      continue;
    }
    const Id k = std::stoull(text_of(info.input->value.value));
    t.mutations.items.push_back({kLast, EntryValue{number(k).value}});
    if (k < last) t.outputs.items.push_back({peer, number(k + 1)});
    if (effect_every && k % effect_every == 0)  // call the API: "k", answered within ten minutes
      t.effect = EffectIntent{executor, TrustedMs{clock.now_ms()} + Millis{600'000}, Hex<256>{number(k).value}, 1};
    (void)c.submit(t);  // accepted, refused or uncertain: the next read says which
  }
}
