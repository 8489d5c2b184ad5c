// An in-memory Store for tests, with crash and fault injection: unsynced
// writes live in a volatile layer that crash() drops; fail_syncs() makes every
// later synced write fail (nothing of it becomes durable) until heal().
#pragma once

#include <map>
#include <mutex>

#include "cbqs/store/store.h"

namespace cowboy::cbqs::store {

class MemoryStore final : public Store {
 public:
  Result<Unit, StoreError> write(const WriteBatch& batch, Sync sync) override;
  Result<std::optional<std::string>, StoreError> get(std::string_view key) override;
  Result<Unit, StoreError> scan(std::string_view begin, std::string_view end,
                                const std::function<bool(std::string_view, std::string_view)>& visit) override;

  /// Simulates a process crash: every write not yet synced is lost.
  void crash();
  void fail_syncs(bool fail);
  std::size_t synced_writes() const;

 private:
  static void apply(std::map<std::string, std::optional<std::string>, std::less<>>& layer, const WriteBatch& batch,
                    const std::map<std::string, std::string, std::less<>>& below);
  std::map<std::string, std::string, std::less<>> view() const;

  mutable std::mutex mu_;
  std::map<std::string, std::string, std::less<>> durable_;
  // Unsynced changes: a value, or nullopt for a deletion.
  std::map<std::string, std::optional<std::string>, std::less<>> volatile_;
  bool fail_syncs_ = false;
  std::size_t synced_writes_ = 0;
};

}  // namespace cowboy::cbqs::store
