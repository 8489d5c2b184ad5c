#include "cip11/validator/runner_directory.h"

#include "cip11/subset.h"

namespace cowboy::cip11 {

bool RunnerDirectory::refresh() {
  auto runners = chain_.runners();
  if (!runners) return false;
  std::map<Address, std::uint32_t> fresh;
  std::vector<crypto::Secp256k1Compressed> keys;
  keys.reserve(runners->size());
  for (std::uint32_t i = 0; i < runners->size(); ++i) {
    fresh[(*runners)[i].address] = i;
    keys.push_back((*runners)[i].key);
  }
  std::lock_guard lock(mu_);
  index_ = std::move(fresh);
  keys_ = std::move(keys);
  return true;
}

std::optional<std::uint32_t> RunnerDirectory::index_of(const Address& runner) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    {
      std::lock_guard lock(mu_);
      if (auto it = index_.find(runner); it != index_.end()) return it->second;
    }
    if (attempt == 0 && !refresh()) break;
  }
  return std::nullopt;
}

std::optional<chain::RunnerRecord> RunnerDirectory::current(const Address& runner) {
  auto record = chain_.runner(runner);
  if (!record) return std::nullopt;
  std::lock_guard lock(mu_);
  if (record->health == HealthStatus::kDeregistered) deregistered_.insert(runner);
  else deregistered_.erase(runner);  // registered again since
  return std::move(*record);
}

void RunnerDirectory::on_deregistered(const std::vector<Address>& runners) {
  std::lock_guard lock(mu_);
  deregistered_.insert(runners.begin(), runners.end());
}

bool RunnerDirectory::deregistered(const Address& runner) const {
  std::lock_guard lock(mu_);
  return deregistered_.contains(runner);
}

PresentSet RunnerDirectory::present_set(const std::vector<Address>& runners, std::uint32_t registry_size) const {
  PresentSet set(registry_size);
  std::lock_guard lock(mu_);
  for (const auto& runner : runners)
    if (auto it = index_.find(runner); it != index_.end() && it->second < registry_size) set.add(it->second);
  return set;
}

std::uint32_t RunnerDirectory::size() const {
  std::lock_guard lock(mu_);
  return static_cast<std::uint32_t>(index_.size());
}

void RunnerDirectory::know(std::uint32_t registry_size) {
  if (size() < registry_size) refresh();
}

std::optional<crypto::Secp256k1Compressed> RunnerDirectory::key_at(std::uint32_t index) const {
  std::lock_guard lock(mu_);
  if (index >= keys_.size()) return std::nullopt;
  return keys_[index];
}

std::optional<GoodbyeReason> RegistryAdmission::admit(const Hello& peer) {
  auto address = runner_address(peer.party_pubkey);
  if (!address) return GoodbyeReason::kAuthFailed;
  auto record = directory_.current(*address);
  if (!record || record->health == HealthStatus::kDeregistered) return GoodbyeReason::kAuthFailed;
  if (snapshots_) {
    const EpochPair offered{peer.subset_epoch, peer.validator_set_hash};
    if (auto refused = chain::admit_epoch_paired(*snapshots_->get(), me_, record->key, offered, height_->load(), subset_))
      return refused;
  } else if (!in_subset(record->key, validators_, me_, subset_)) {
    return GoodbyeReason::kNotInSubset;
  }
  if (!directory_.index_of(*address)) return GoodbyeReason::kAuthFailed;  // registered, yet not in the registry read
  return std::nullopt;
}

}  // namespace cowboy::cip11
