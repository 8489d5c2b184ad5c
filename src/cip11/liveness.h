// §6.3, §6.4 and §7.4 as the two ends keep them, free of the transport:
// the heartbeat nonces of one connection, and a validator's local presence.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "cip11/ids.h"
#include "common/bytes.h"

namespace cowboy::cip11 {

/// §13 PRESENCE_TIMEOUT_BLOCKS.
constexpr std::uint64_t kPresenceTimeoutBlocks = 15;

/// The nonces of one connection's heartbeats; a new connection starts a new one at 0.
class HeartbeatNonces {
 public:
  /// Runner: the nonce of its next HeartbeatPing, which becomes the one outstanding.
  std::uint64_t next_ping() {
    outstanding_ = next_;
    return next_++;
  }
  /// Runner: a HeartbeatPong must echo the most recent Ping's nonce.
  bool pong_matches(std::uint64_t nonce_echo) const { return outstanding_ && *outstanding_ == nonce_echo; }
  /// Validator: a Ping's nonce must be above every earlier one on this connection; it is then recorded.
  bool accept_ping(std::uint64_t nonce) {
    if (last_seen_ && nonce <= *last_seen_) return false;
    last_seen_ = nonce;
    return true;
  }

 private:
  std::uint64_t next_ = 0;
  std::optional<std::uint64_t> outstanding_, last_seen_;
};

/// A validator's local presence (§7.4): which runners it holds a healthy,
/// authenticated connection to and may push to. Keyed by runner address.
class LocalPresence {
 public:
  explicit LocalPresence(std::uint64_t timeout_blocks = kPresenceTimeoutBlocks) : timeout_(timeout_blocks) {}

  /// A valid HeartbeatPing at `height`: present from now, unless the runner
  /// said it is not accepting new work (§6.4) and has not re-asserted it.
  void on_ping(const Address& runner, Height height);
  /// BackpressureSignal: false removes the runner and holds it out; true lifts
  /// the hold (the next valid Ping restores the entry).
  void on_backpressure(const Address& runner, bool accepting_new);
  /// A fresh handshake lifts a backpressure hold too (§6.4).
  void on_admitted(const Address& runner);
  /// The connection is gone, or the user reported a hard failure (§10.6):
  /// out of presence until its next valid Ping.
  void drop(const Address& runner);
  /// Removes the runners silent for the timeout as of `height`; returns them.
  std::vector<Address> expire(Height height);

  bool present(const Address& runner) const { return last_ping_.contains(runner); }
  /// What this validator's HeartbeatPong says (§6.4).
  bool accepting_new(const Address& runner) const { return !held_out_.contains(runner); }
  /// The present runners in address order (the §8.1 PresenceInput basis).
  std::vector<Address> present_runners() const;

 private:
  std::uint64_t timeout_;
  std::map<Address, Height> last_ping_;         // present runners and the height of their last valid Ping
  std::set<Address> held_out_;                  // said accepting_new = false, not re-asserted
};

}  // namespace cowboy::cip11
