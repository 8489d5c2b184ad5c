#include "cbqs/store/memory_store.h"

namespace cowboy::cbqs::store {

std::map<std::string, std::string, std::less<>> MemoryStore::view() const {
  auto out = durable_;
  for (const auto& [k, v] : volatile_) {
    if (v)
      out[k] = *v;
    else
      out.erase(k);
  }
  return out;
}

void MemoryStore::apply(std::map<std::string, std::optional<std::string>, std::less<>>& layer,
                        const WriteBatch& batch, const std::map<std::string, std::string, std::less<>>& below) {
  for (const auto& op : batch.ops()) {
    switch (op.kind) {
      case WriteBatch::Op::kPut: layer[op.key] = op.value; break;
      case WriteBatch::Op::kDelete: layer[op.key] = std::nullopt; break;
      case WriteBatch::Op::kDeleteRange:
        for (auto it = below.lower_bound(op.key); it != below.end() && it->first < op.value; ++it)
          layer[it->first] = std::nullopt;
        for (auto it = layer.lower_bound(op.key); it != layer.end() && it->first < op.value; ++it)
          it->second = std::nullopt;
        break;
    }
  }
}

Result<Unit, StoreError> MemoryStore::write(const WriteBatch& batch, Sync sync) {
  std::lock_guard lock(mu_);
  if (sync == Sync::kYes && fail_syncs_) return Err{StoreError::kIo};
  auto current = view();
  apply(volatile_, batch, current);
  if (sync == Sync::kYes) {  // a sync makes everything written so far durable
    durable_ = view();
    volatile_.clear();
    ++synced_writes_;
  }
  return Unit{};
}

Result<std::optional<std::string>, StoreError> MemoryStore::get(std::string_view key) {
  std::lock_guard lock(mu_);
  if (auto it = volatile_.find(key); it != volatile_.end()) return it->second;
  if (auto it = durable_.find(key); it != durable_.end()) return std::optional<std::string>(it->second);
  return std::optional<std::string>{};
}

Result<Unit, StoreError> MemoryStore::scan(std::string_view begin, std::string_view end,
                                           const std::function<bool(std::string_view, std::string_view)>& visit) {
  std::map<std::string, std::string, std::less<>> snapshot;
  {
    std::lock_guard lock(mu_);
    snapshot = view();
  }
  for (auto it = snapshot.lower_bound(begin); it != snapshot.end() && it->first < end; ++it)
    if (!visit(it->first, it->second)) break;
  return Unit{};
}

void MemoryStore::crash() {
  std::lock_guard lock(mu_);
  volatile_.clear();
}

void MemoryStore::fail_syncs(bool fail) {
  std::lock_guard lock(mu_);
  fail_syncs_ = fail;
}

std::size_t MemoryStore::synced_writes() const {
  std::lock_guard lock(mu_);
  return synced_writes_;
}

}  // namespace cowboy::cbqs::store
