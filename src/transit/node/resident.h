// A bounded cache of stored records by id (decisions 158, 170): the records
// read or changed lately, the least recently used first out, and the ones the
// decision under way removed, known absent until its write is staged.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <unordered_map>

namespace cowboy::transit::node {

template <typename T> class Resident {
 public:
  using Id = std::uint64_t;
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
  std::unordered_map<Id, std::list<Id>::iterator> at_;
};

}  // namespace cowboy::transit::node
