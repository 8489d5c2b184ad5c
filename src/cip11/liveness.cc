#include "cip11/liveness.h"

namespace cowboy::cip11 {

void LocalPresence::on_ping(const Address& runner, Height height) {
  if (held_out_.contains(runner)) return;
  auto& last = last_ping_[runner];
  last = std::max(last, height);
}

void LocalPresence::on_backpressure(const Address& runner, bool accepting_new) {
  if (accepting_new) {
    held_out_.erase(runner);
    return;
  }
  held_out_.insert(runner);
  last_ping_.erase(runner);
}

void LocalPresence::on_admitted(const Address& runner) { held_out_.erase(runner); }

void LocalPresence::drop(const Address& runner) { last_ping_.erase(runner); }

std::vector<Address> LocalPresence::expire(Height height) {
  std::vector<Address> gone;
  for (auto it = last_ping_.begin(); it != last_ping_.end();) {
    if (height > it->second && height - it->second >= timeout_) {
      gone.push_back(it->first);
      it = last_ping_.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

std::vector<Address> LocalPresence::present_runners() const {
  std::vector<Address> out;
  out.reserve(last_ping_.size());
  for (const auto& [runner, height] : last_ping_) out.push_back(runner);
  return out;
}

}  // namespace cowboy::cip11
