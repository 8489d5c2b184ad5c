// ECVRF proof decoding and verification (common/ecvrf.h): what a node does with
// a block's seed proof from anyone. Input: a 32-byte public key, an 80-byte
// proof, then alpha. Nothing may crash; whatever verifies hashes as
// proof_to_hash says, and a decodable proof decodes to itself.
#include <cstdlib>

#include "common/ecvrf.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy;
  namespace vrf = crypto::ecvrf;
  if (size < 32) return 0;
  vrf::PublicKey key;
  std::copy_n(data, key.size(), key.begin());
  const ByteView rest(data + 32, size - 32);
  const ByteView proof_bytes = rest.first(std::min(rest.size(), vrf::kProofSize));
  auto proof = vrf::decode_proof(proof_bytes);
  if (!proof) {
    if (proof_bytes.size() != vrf::kProofSize && proof.error() != vrf::Error::kProofSize) std::abort();
    return 0;
  }
  if (!std::equal(proof->begin(), proof->end(), proof_bytes.begin())) std::abort();
  auto beta = vrf::proof_to_hash(*proof);
  if (!beta) std::abort();  // decode_proof accepted Gamma and s
  auto verified = vrf::verify(key, *proof, rest.subspan(proof_bytes.size()));
  if (verified && *verified != *beta) std::abort();
  return 0;
}
