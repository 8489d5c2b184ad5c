#include "cip11/chain/consumed_seeds.h"

#include "cip11/cbor.h"

namespace cowboy::cip11::chain {

Bytes encode_consumed_seeds(const std::vector<ConsumedSeed>& seeds) {
  cbor::Writer w;
  w.array(seeds.size());
  for (const auto& s : seeds) {
    w.array(3);
    w.uint(s.epoch.value);
    w.uint(s.view.value);
    w.bytes(s.signature);
  }
  return w.take();
}

Res<std::vector<ConsumedSeed>> decode_consumed_seeds(ByteView bytes) {
  cbor::Reader r(bytes);
  std::uint64_t n = r.array();  // checked against the bytes left
  if (r.ok() && n > kMaxConsumedSeeds) return Err{Errc::kTooManyItems};
  std::vector<ConsumedSeed> out;
  for (std::uint64_t i = 0; i < n && r.ok(); ++i) {
    if (r.array() != 3) r.fail(Errc::kWrongFieldCount);
    ConsumedSeed s;
    s.epoch = RoundEpoch{r.uint()};
    s.view = View{r.uint()};
    ByteView sig = r.bytes();
    if (!r.ok()) break;
    if (sig.size() != kSeedSignatureBytes && sig.size() != kDevchainSeedBytes) return Err{Errc::kWrongLength};
    if (!out.empty() && std::pair(out.back().epoch, out.back().view) >= std::pair(s.epoch, s.view))
      return Err{Errc::kSeedsNotAscending};
    s.signature.assign(sig.begin(), sig.end());
    out.push_back(std::move(s));
  }
  r.expect_end();
  if (!r.ok()) return Err{r.error()};
  return out;
}

}  // namespace cowboy::cip11::chain
