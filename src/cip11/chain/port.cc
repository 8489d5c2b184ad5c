#include "cip11/chain/port.h"

namespace cowboy::cip11::chain {

std::vector<crypto::Ed25519Public> ChainSetup::validator_keys() const {
  std::vector<crypto::Ed25519Public> out;
  out.reserve(validators.size());
  for (const auto& v : validators) out.push_back(v.peer_key);
  return out;
}

ValidatorSnapshots ChainSetup::snapshots() const { return snapshots(changes); }

ValidatorSnapshots ChainSetup::snapshots(const std::vector<ValidatorSetChange>& later) const {
  return ValidatorSnapshots::scheduled(validator_keys(), later, overlap_blocks);
}

PortResult<std::vector<ValidatorSetChange>> ChainPort::validator_set_changes() {
  auto s = setup();
  if (!s) return Err{s.error()};
  return std::move(s->changes);
}

PortResult<std::vector<ValidatorEntry>> ChainPort::validators() {
  auto s = setup();
  if (!s) return Err{s.error()};
  return std::move(s->validators);
}

}  // namespace cowboy::cip11::chain
