#include "cip11/chain/port.h"

namespace cowboy::cip11::chain {

std::vector<crypto::Ed25519Public> ChainSetup::validator_keys() const {
  std::vector<crypto::Ed25519Public> out;
  out.reserve(validators.size());
  for (const auto& v : validators) out.push_back(v.peer_key);
  return out;
}

}  // namespace cowboy::cip11::chain
