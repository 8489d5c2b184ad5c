// RecordMap: a std::map of state records that journals the changes made to
// it since its last commit(), for a store that writes only what changed and
// a caller that must be able to undo a block whose write failed.
//
// Every way to change a record - a mutable find() or at(), operator[],
// emplace() - first saves the record as the last commit() left it (or that
// it did not exist). Reading through the const overloads saves nothing; so
// mutation is possible only through calls that journal it, and the compiler
// keeps it that way: there is no mutable iteration.
//
//   changes(f)  f(key, before, now) for each record whose value now differs
//               from its committed one (a record fetched mutably and left as
//               it was is not a change); before / now are nullptr for "absent"
//   commit()    the current values become the committed ones
//   rollback()  every record goes back to its committed value
//   take_touched()  the keys fetched for writing since the last
//               take_touched(), for a derived index its owner keeps up to date
//   touched()   the same keys, left in place
//
// Equality compares the records only, never the journal.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

namespace cowboy {

template <typename K, typename V>
class RecordMap {
 public:
  using Map = std::map<K, V>;
  using iterator = typename Map::iterator;
  using const_iterator = typename Map::const_iterator;

  // ---- reads ---------------------------------------------------------------
  const_iterator find(const K& key) const { return map_.find(key); }
  const_iterator begin() const { return map_.begin(); }
  const_iterator end() const { return map_.end(); }
  iterator end() { return map_.end(); }  // to compare a mutable find() with
  const V& at(const K& key) const { return map_.at(key); }
  const V* get(const K& key) const {
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second;
  }
  bool contains(const K& key) const { return map_.contains(key); }
  std::size_t size() const { return map_.size(); }
  bool empty() const { return map_.empty(); }

  // ---- writes, each journaled ----------------------------------------------
  iterator find(const K& key) {
    auto it = map_.find(key);
    if (it != map_.end()) save(key, &it->second);
    return it;
  }
  V& at(const K& key) {
    auto it = find(key);
    if (it == map_.end()) throw std::out_of_range("RecordMap::at");
    return it->second;
  }
  V& operator[](const K& key) {
    auto it = map_.find(key);
    save(key, it == map_.end() ? nullptr : &it->second);
    return it == map_.end() ? map_[key] : it->second;
  }
  std::pair<iterator, bool> emplace(const K& key, V value) {
    auto it = map_.find(key);
    if (it != map_.end()) return {it, false};
    save(key, nullptr);
    return map_.emplace(key, std::move(value));
  }

  // ---- the journal ---------------------------------------------------------
  template <typename F>
  void changes(F&& f) const {
    for (const auto& [key, before] : saved_) {
      const V* now = get(key);
      const V* was = before ? &*before : nullptr;
      if ((was == nullptr) != (now == nullptr) || (was && !(*was == *now))) f(key, was, now);
    }
  }
  bool journaling() const { return !saved_.empty(); }
  void commit() { saved_.clear(); }
  void rollback() {
    for (auto& [key, before] : saved_) {
      if (before) map_.insert_or_assign(key, std::move(*before));
      else map_.erase(key);
      touched_.insert(key);
    }
    saved_.clear();
  }
  const std::set<K>& touched() const { return touched_; }
  std::vector<K> take_touched() {
    std::vector<K> out(touched_.begin(), touched_.end());
    touched_.clear();
    return out;
  }

  bool operator==(const RecordMap& other) const { return map_ == other.map_; }

 private:
  void save(const K& key, const V* current) {
    saved_.try_emplace(key, current ? std::optional<V>(*current) : std::nullopt);
    touched_.insert(key);
  }

  Map map_;
  std::map<K, std::optional<V>> saved_;  // committed values of the records changed since commit()
  std::set<K> touched_;                  // keys fetched for writing since take_touched()
};

}  // namespace cowboy
