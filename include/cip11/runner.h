// An embeddable CIP-11 runner (docs/cip11.md, "Services"): what the
// `cip11-runner` program is, as a library.
//
//   auto runner = cip11::Runner::start({.key = secret, .state_dir = "runner-state"},
//                                      devchain::Cip11Port::over_http("http://127.0.0.1:7546"));
//
// It sees the chain only through the port it is given (src/cip11/chain/port.h;
// the devchain's is devchain/cip11_port.h). It reads the chain's CIP-11
// genesis; when its on-chain heartbeat is a whole cadence old it sends one
// and waits for it to be included, so a started runner is above the
// eligibility floor (§7.1). It connects to each validator of its Sub(R) (§5)
// and keeps those connections (§6, §11.3), pings each block, sends its
// staggered on-chain heartbeats (§6.6), takes pushed assignments -
// deduplicated by job_id and verified against the chain before it acks
// (§10.1, §10.2) - runs them (cip11/runner/task.h: echo, sha256, sleep, a
// loopback GET; no shell), and returns each result as a transaction it signs,
// on the accepted stream, kept on disk and rebroadcast until included, across
// its own restarts too (§10.3). It
// signals backpressure at max_concurrent (§6.4), tells its validators the job
// kinds it does not serve now (a CapabilityDelta, §6.5), stops at a JobCancel
// (§10.5) and polls the chain (§14) while no validator is reachable.
//
// Everything runs on threads the Runner owns; destroying it says Goodbye and stops.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cip11/ids.h"
#include "common/crypto.h"
#include "common/result.h"

namespace cowboy::cip11 {

namespace chain {
class ChainPort;
}

/// What a runner did, for logs and measurements (called on the runner's thread: keep it short).
struct RunnerEvent {
  enum class Kind : std::uint8_t {
    kConnected,     // a validator admitted this runner
    kDisconnected,  // a validator connection was lost (detail says why)
    kAssigned,      // an assignment arrived (via "push" or "poll"), before any check
    kAccepted,      // verified and taken: it runs now
    kDuplicate,     // the same assignment again, from another validator
    kRejected,      // refused (detail says why)
    kCancelled,     // a JobCancel stopped it
    kResultSent,    // a result-phase transaction signed and sent (detail: "commit" or "reveal", and how)
    kRebroadcast,   // a retained transaction submitted again (§10.3)
    kIncluded,      // the job's final transaction is in a block
    kHeartbeat,     // an on-chain heartbeat sent
    kResumed,       // a job owed from before a restart, taken up again from the journal (detail: where it stood)
    kSuperseded,    // a signed transaction whose nonce the chain gave another: dropped, its content signed again (detail: hash)
    kStorageFailed, // a signed transaction could not be made durable, so it was not sent (detail says why)
    kCertificate,   // a Mode A presence certificate sent (detail: the anchor it proves)
    kValidatorSet,  // the chain holds a newer validator-set snapshot (detail: its epoch and activation)
  };
  Kind kind = Kind::kAssigned;
  JobId job_id{};
  std::string via;     // "push" or "poll" (job events)
  std::string detail;
  Height height{};               // the chain height the runner had seen
  std::uint64_t at_unix_us = 0;  // wall clock, so two processes on one machine compare
};
std::string_view runner_event_name(RunnerEvent::Kind kind);

struct RunnerOptions {
  crypto::Secp256k1Secret key{};
  /// Required: where the runner keeps every transaction it signs until its
  /// receipt, and the result and salt each commitment binds it to, so that a
  /// restart resumes an owed reveal (cip11/runner/journal.h). One per runner key;
  /// absent or empty at first (a directory holding other files is refused).
  std::filesystem::path state_dir;
  std::uint32_t max_concurrent = 4;                 // should match the registration's
  std::vector<std::string> allowed_url_prefixes;    // what {"get": url} may fetch
  bool push = true;                                 // false: poll only, never connect (a comparison)
  std::chrono::milliseconds poll_interval{1000};    // §14, while no validator has admitted it
  std::chrono::milliseconds height_poll{50};        // how often the chain height is read (an HTTP GET each)
  std::chrono::milliseconds block_time{1000};       // turns a Goodbye's retry_after_blocks into a wait
  std::uint64_t heartbeat_margin_blocks = 10;       // §6.6 safety_margin_blocks
  std::chrono::seconds startup_timeout{30};         // how long start() waits for the chain
  /// Job kinds (bit i = JobKind i) its registration lists but it does not
  /// serve now: after each admission a CapabilityDelta removes their keys
  /// ("job_types/<Name>", §6.5, advisory), so validators do not push them.
  std::uint32_t paused_job_kinds = 0;
  std::function<void(const RunnerEvent&)> on_event;
};

struct RunnerStatus {
  Height height{};
  std::size_t validators = 0, admitted = 0;  // linked (Sub(R), or Sub_E ∪ Sub_{E+1} in a §5.3 overlap), and admitted now
  std::uint32_t running = 0;
  std::uint64_t accepted = 0, completed = 0, rejected = 0, duplicates = 0, cancelled = 0;
  std::uint64_t heartbeats = 0, rebroadcasts = 0, polls = 0, resumed = 0;
  std::uint64_t failed = 0;  // jobs whose task ended without a result (not cancelled): nothing was committed
  std::uint64_t acks_accepted = 0, acks_duplicate = 0, acks_rejected = 0;  // JobAcks sent, by status
  std::uint64_t reconnects = 0;  // connection attempts to a validator after each one's first
  std::uint64_t heartbeat_phase = 0, heartbeat_cadence = 0;  // §6.6: on-chain heartbeats at height % cadence == phase
  Height last_heartbeat{};  // the height of the last one the chain included (the floor counts from it)
  // Mode A (§8.3): receipts held now, certificates the chain accepted, and the presence they prove.
  std::uint64_t receipts = 0, certificates = 0;
  Height presence_proven_until{};
};

class Runner {
 public:
  /// Reads the genesis, this runner's registration and nonce, brings its
  /// heartbeat up to date, then connects. Fails when the chain cannot be read
  /// within startup_timeout or the key is not a registered runner.
  static Result<std::unique_ptr<Runner>, std::string> start(RunnerOptions options,
                                                            std::unique_ptr<chain::ChainPort> chain);
  ~Runner();
  RunnerStatus status() const;
  /// Replaces paused_job_kinds: each admitted connection is told the change
  /// in one CapabilityDelta (kinds resumed added, kinds paused removed).
  void pause_job_kinds(std::uint32_t mask);
  const std::array<std::uint8_t, 20>& address() const;

  struct Impl;

 private:
  explicit Runner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cowboy::cip11
