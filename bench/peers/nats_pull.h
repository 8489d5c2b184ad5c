// One competing worker of a JetStream pull consumer, through nats.c's core API.
//
// Not natsSubscription_Fetch: in nats.c before 3.10 (Debian ships 3.4.1) it
// writes past its batch-sized array when the subscription already holds more
// than half a batch of late deliveries (of an earlier fetch that timed out
// while the server still had its request) and more arrive during the fetch
// (nats.c #749, "Fix heap buffer overflow in _fetch"). That damaged the bench's
// heap in the 8-worker drain on a loaded machine. This is the same pull
// protocol (a MSG.NEXT request with a batch and an expiry, answered on a
// private inbox) with the batch bounded here, and the same ack as natsMsg_Ack's
// ("+ACK" published to the message's reply subject, not confirmed).
#pragma once

#include <nats/nats.h>

#include <chrono>
#include <string>

namespace cowboy::bench::peers {

class NatsPull {
 public:
  NatsPull() = default;
  NatsPull(const NatsPull&) = delete;
  NatsPull& operator=(const NatsPull&) = delete;
  ~NatsPull();

  /// Subscribes a fresh inbox on `nc` (which must outlive this) for pulls
  /// from the durable pull consumer `consumer` of `stream`.
  bool open(natsConnection* nc, const std::string& stream, const std::string& consumer);
  /// Asks for up to `batch` messages (less what the inbox already holds) and
  /// acks each one received until `batch`, an end-of-request status or
  /// `timeout`; how many it acked, never more than `batch`. Deliveries beyond
  /// `batch` stay in the inbox for the next pull.
  int pull_and_ack(int batch, std::chrono::milliseconds timeout);
  /// Messages in the inbox not yet taken by a pull.
  int pending() const;
  /// The inbox the server answers pulls on.
  const std::string& inbox() const { return inbox_; }

 private:
  natsConnection* nc_ = nullptr;
  natsSubscription* sub_ = nullptr;
  std::string inbox_, next_;
};

}  // namespace cowboy::bench::peers
