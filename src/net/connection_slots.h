// Who holds a listener's connection slots: at most `total` connections, and
// at most `per_address` from one peer address, so that one host flooding the
// listener leaves the other slots to everyone else. Thread-safe: a listener
// with several io threads gives slots back from any of them.
#pragma once

#include <boost/asio/ip/address.hpp>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace cowboy::net {

class ConnectionSlots {
 public:
  ConnectionSlots(std::size_t total, std::size_t per_address) : total_(total), per_address_(per_address) {}

  /// false (and counted as refused) when either bound is reached.
  bool take(const boost::asio::ip::address& peer) {
    std::lock_guard lock(mutex_);
    std::size_t& mine = held_[peer];
    if (live_.load() >= total_ || mine >= per_address_) {
      if (mine == 0) held_.erase(peer);
      ++refused_;
      return false;
    }
    ++mine;
    ++live_;
    return true;
  }
  void give_back(const boost::asio::ip::address& peer) {
    std::lock_guard lock(mutex_);
    if (auto it = held_.find(peer); it != held_.end() && --it->second == 0) held_.erase(it);
    --live_;
  }
  std::size_t live() const { return live_.load(); }
  std::uint64_t refused() const { return refused_.load(); }

 private:
  const std::size_t total_, per_address_;
  std::mutex mutex_;
  std::map<boost::asio::ip::address, std::size_t> held_;
  std::atomic<std::size_t> live_{0};
  std::atomic<std::uint64_t> refused_{0};
};

}  // namespace cowboy::net
