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

Res<crypto::Ed25519Public> check_view(const ViewContext& ctx, const PresenceView& view, Height head) {
  const EpochPair pair{view.subset_epoch, view.validator_set_hash};
  auto named = std::find_if(ctx.snapshots.begin(), ctx.snapshots.end(), [&](const ViewSnapshot& s) { return s.pair == pair; });
  if (named == ctx.snapshots.end()) return Err{Errc::kWrongValidatorSet};
  if (view.validator_pubkey.scheme() != Scheme::kEd25519) return Err{Errc::kRoleSchemeMismatch};
  crypto::Ed25519Public sender;
  std::copy(view.validator_pubkey.raw().begin(), view.validator_pubkey.raw().end(), sender.begin());
  // Membership in the snapshot the pair names and no other (epoch-paired, as admission and receipts).
  if (std::find(named->validators.begin(), named->validators.end(), sender) == named->validators.end())
    return Err{Errc::kUnknownValidator};
  if (sender == ctx.me) return Err{Errc::kViewFromSelf};
  if (view.height > head + kViewMaxAgeBlocks) return Err{Errc::kViewFromTheFuture};
  if (auto ok = verify(presence_view_preimage(ctx.chain_id, view), view.validator_pubkey, view.validator_signed); !ok)
    return Err{Errc::kBadSignature};  // another key's signature is as bad as none
  return sender;
}

bool PresenceAggregator::offer(const crypto::Ed25519Public& sender, const PresenceView& view) {
  auto held = views_.find(sender);
  if (held != views_.end() && view.height <= held->second.height) return false;  // a replayed or reordered older view changes nothing
  auto set = view_set(view);
  if (!set) return false;
  views_[sender] = Held{view.height, EpochPair{view.subset_epoch, view.validator_set_hash}, set->indices()};
  return true;
}

namespace {
// A view taken at `at` counts for block `height` while `at` is within kViewMaxAgeBlocks of height-1, either side.
bool young(Height at, Height height) {
  const Height parent = height > Height{0} ? height - 1 : Height{0};
  return at + kViewMaxAgeBlocks >= parent && at <= parent + kViewMaxAgeBlocks;
}
}  // namespace

bool PresenceAggregator::fresh(const crypto::Ed25519Public& sender, Height height) const {
  auto held = views_.find(sender);
  return held != views_.end() && young(held->second.height, height);
}

bool PresenceAggregator::counts(const Held& held, Height height, const std::vector<EpochPair>& current) {
  return young(held.height, height) && std::find(current.begin(), current.end(), held.pair) != current.end();
}

PresentSet PresenceAggregator::aggregate(const PresentSet& own, Height height, const std::vector<EpochPair>& current,
                                         const Sees& sees) const {
  PresentSet out = own;
  for (const auto& [sender, held] : views_) {
    if (!counts(held, height, current)) continue;
    for (std::uint32_t i : held.indices) {
      if (i >= out.registry_size()) break;  // indices are ascending: the rest are later registrations
      if (sees(sender, held.pair, i)) out.add(i);
    }
  }
  return out;
}

std::size_t PresenceAggregator::fresh_count(Height height, const std::vector<EpochPair>& current) const {
  return static_cast<std::size_t>(
      std::count_if(views_.begin(), views_.end(), [&](const auto& v) { return counts(v.second, height, current); }));
}

}  // namespace cowboy::cip11
