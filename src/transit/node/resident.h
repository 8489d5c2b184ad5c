// A bounded cache of stored records by id (decisions 158, 170): the records
// read or changed lately, the least recently used first out, and the ones the
// decision under way removed, known absent until its write is staged. Keyed
// by id (an integer or a strong id), or by another ordered key (a route's
// (source, destination)).
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>

namespace cowboy::transit::node {

template <typename T, typename Key = std::uint64_t> class Resident {
 public:
  using Id = Key;
  /// Null: not resident. A null record: removed (known absent).
  const std::optional<T>* find(Id id) {
    auto it = records_.find(id);
    if (it == records_.end()) return nullptr;
    touch(id);
    return &it->second;
  }
  T& put(Id id, T record) {
    touch(id);
    return *(records_[id] = std::move(record));
  }
  void remove(Id id) {
    touch(id);
    records_[id].reset();
  }
  /// Forgets `id`: neither resident nor known absent.
  void forget(const Id& id) {
    if (auto at = at_.find(id); at != at_.end()) {
      recency_.erase(at->second);
      at_.erase(at);
    }
    records_.erase(id);
  }
  /// Drops the least recently used down to `limit`.
  void bound(std::size_t limit) {
    while (records_.size() > limit && !recency_.empty()) {
      const Id id = recency_.back();
      recency_.pop_back();
      at_.erase(id);
      records_.erase(id);
    }
  }
  void clear() {
    records_.clear();
    recency_.clear();
    at_.clear();
  }
  std::size_t size() const { return records_.size(); }
  /// Every present record after `after` in id order, until `visit` returns
  /// false (a cache that is never bounded holds every record).
  template <typename Visit> void each_after(Id after, Visit visit) const {
    for (auto it = records_.upper_bound(after); it != records_.end(); ++it)
      if (it->second && !visit(*it->second)) return;
  }

 private:
  void touch(Id id) {  // to the front
    if (auto at = at_.find(id); at != at_.end()) {
      recency_.splice(recency_.begin(), recency_, at->second);
      return;
    }
    recency_.push_front(id);
    at_.emplace(id, recency_.begin());
  }
  std::map<Id, std::optional<T>> records_;
  std::list<Id> recency_;  // most recently used first
  using Position = typename std::list<Id>::iterator;
  // Hashed where the key hashes (an integer, a strong id); a pair does not.
  std::conditional_t<std::is_default_constructible_v<std::hash<Id>>, std::unordered_map<Id, Position>,
                     std::map<Id, Position>>
      at_;
};

}  // namespace cowboy::transit::node
