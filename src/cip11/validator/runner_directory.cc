#include "cip11/validator/runner_directory.h"

#include "cip11/subset.h"

namespace cowboy::cip11 {

bool RunnerDirectory::refresh() {
  auto runners = chain_.runners();
  if (!runners) return false;
  std::map<Address, Entry> fresh;
  for (std::uint32_t i = 0; i < runners->size(); ++i) {
    const auto& r = (*runners)[i];
    fresh[r.address] = Entry{r.key, i, r.health};
  }
  std::lock_guard lock(mu_);
  entries_ = std::move(fresh);
  return true;
}

std::optional<RunnerDirectory::Entry> RunnerDirectory::find(const Address& runner) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(runner);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

std::optional<RunnerDirectory::Entry> RunnerDirectory::find_or_refresh(const Address& runner) {
  if (auto e = find(runner)) return e;
  refresh();
  return find(runner);
}

std::size_t RunnerDirectory::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

PresentSet RunnerDirectory::present_set(const std::vector<Address>& runners, std::uint32_t registry_size) const {
  PresentSet set(registry_size);
  std::lock_guard lock(mu_);
  for (const auto& runner : runners)
    if (auto it = entries_.find(runner); it != entries_.end() && it->second.index < registry_size) set.add(it->second.index);
  return set;
}

std::optional<GoodbyeReason> RegistryAdmission::admit(const Hello& peer) {
  auto address = runner_address(peer.party_pubkey);
  if (!address) return GoodbyeReason::kAuthFailed;
  auto entry = directory_.find_or_refresh(*address);
  if (!entry || entry->health == HealthStatus::kDeregistered) return GoodbyeReason::kAuthFailed;
  if (!in_subset(entry->key, validators_, me_)) return GoodbyeReason::kNotInSubset;
  return std::nullopt;
}

}  // namespace cowboy::cip11
