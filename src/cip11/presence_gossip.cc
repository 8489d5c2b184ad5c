#include "cip11/presence_gossip.h"

#include <algorithm>

#include "cip11/body_codec.h"
#include "cip11/preimages.h"

namespace cowboy::cip11 {

Bytes encode_view(const PresenceView& view) { return body::encode(view); }

Res<PresenceView> decode_view(ByteView bytes) {
  if (bytes.size() > kMaxViewBytes) return Err{Errc::kViewTooLarge};
  auto view = body::decode<PresenceView>(bytes);
  if (!view) return Err{view.error()};
  if (auto ok = check_role(view->validator_pubkey, Role::kValidator); !ok) return Err{ok.error()};
  // Bounded before the set is allocated.
  if (view->registry_size > kMaxViewRegistry) return Err{Errc::kOutOfRange};
  if (auto set = view_set(*view); !set) return Err{set.error()};
  return view;
}

Res<PresentSet> view_set(const PresenceView& view) {
  if (view.registry_size > kMaxViewRegistry) return Err{Errc::kOutOfRange};
  return decode_presence(view.presence, view.registry_size);
}

PresenceView sign_view(const Signer& validator, std::uint64_t chain_id, PresenceView view) {
  view.validator_pubkey = validator.pubkey();
  const Bytes sig = validator.sign(presence_view_preimage(chain_id, view));
  std::copy(sig.begin(), sig.end(), view.validator_signed.begin());
  return view;
}

Res<std::uint32_t> check_view(const ViewContext& ctx, const PresenceView& view, std::uint64_t head) {
  if (view.subset_epoch != ctx.subset_epoch || view.validator_set_hash != ctx.validator_set_hash)
    return Err{Errc::kWrongValidatorSet};
  if (view.validator_pubkey.scheme() != Scheme::kEd25519) return Err{Errc::kRoleSchemeMismatch};
  crypto::Ed25519Public sender;
  std::copy(view.validator_pubkey.raw().begin(), view.validator_pubkey.raw().end(), sender.begin());
  auto at = std::find(ctx.validators.begin(), ctx.validators.end(), sender);
  if (at == ctx.validators.end()) return Err{Errc::kUnknownValidator};
  if (sender == ctx.me) return Err{Errc::kViewFromSelf};
  if (view.height > head + kViewMaxAgeBlocks) return Err{Errc::kViewFromTheFuture};
  if (auto ok = verify(presence_view_preimage(ctx.chain_id, view), view.validator_pubkey, view.validator_signed); !ok)
    return Err{Errc::kBadSignature};  // another key's signature is as bad as none
  return static_cast<std::uint32_t>(at - ctx.validators.begin());
}

bool PresenceAggregator::offer(std::uint32_t sender, const PresenceView& view) {
  if (sender >= views_.size()) return false;
  auto& held = views_[sender];
  if (held && view.height <= held->height) return false;  // a replayed or reordered older view changes nothing
  auto set = view_set(view);
  if (!set) return false;
  held = Held{view.height, set->indices()};
  return true;
}

bool PresenceAggregator::fresh(std::uint32_t sender, std::uint64_t height) const {
  if (sender >= views_.size() || !views_[sender]) return false;
  const std::uint64_t parent = height > 0 ? height - 1 : 0;
  const std::uint64_t at = views_[sender]->height;
  return at + kViewMaxAgeBlocks >= parent && at <= parent + kViewMaxAgeBlocks;
}

PresentSet PresenceAggregator::aggregate(const PresentSet& own, std::uint64_t height) const {
  PresentSet out = own;
  for (std::uint32_t v = 0; v < views_.size(); ++v) {
    if (!fresh(v, height)) continue;
    for (std::uint32_t i : views_[v]->indices)
      if (i < out.registry_size()) out.add(i);  // indices are ascending: the rest are later registrations
      else break;
  }
  return out;
}

}  // namespace cowboy::cip11
