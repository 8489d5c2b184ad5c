#include "cbqs/broker/snapshot.h"

namespace cowboy::cbqs::broker {

SnapshotSource::SnapshotSource(SnapshotProvider& chain, const Address& provider, const Clock& clock,
                               std::uint64_t block_interval_ms)
    : chain_(chain), provider_(provider), clock_(clock), block_interval_ms_(std::max<std::uint64_t>(1, block_interval_ms)) {}

Result<ChainViewPtr, std::string> SnapshotSource::refresh() {
  auto snapshot = chain_.read_snapshot(provider_);
  if (!snapshot) return Err{snapshot.error()};
  auto view = std::make_shared<ChainView>();
  view->height = snapshot->height;
  view->chain_instance_id = snapshot->chain_instance_id;
  view->provider = std::move(snapshot->provider);
  view->params = snapshot->params;
  for (auto& s : snapshot->streams) view->streams.emplace(s.stream_id, std::move(s));
  for (auto& a : snapshot->accounts) view->accounts.emplace(a.owner, std::move(a));
  std::lock_guard lock(mu_);
  if (view_ && view->height < view_->height) return view_;  // never step back to an older height
  view_ = view;
  fetched_at_ms_ = clock_.now_ms();
  return ChainViewPtr(view_);
}

ChainViewPtr SnapshotSource::current() const {
  std::lock_guard lock(mu_);
  return view_;
}

std::uint64_t SnapshotSource::age_blocks() const {
  std::uint64_t age = age_ms();
  return age == UINT64_MAX ? age : age / block_interval_ms_;
}

std::uint64_t SnapshotSource::age_ms() const {
  std::lock_guard lock(mu_);
  if (!view_) return UINT64_MAX;
  std::uint64_t now = clock_.now_ms();
  return now <= fetched_at_ms_ ? 0 : now - fetched_at_ms_;
}

bool SnapshotSource::fresh() const {
  auto view = current();
  return view && age_blocks() <= view->params.max_snapshot_age_blocks;
}

}  // namespace cowboy::cbqs::broker
