// PresenceViewV1 (cip11/presence_gossip.h): the bytes one validator's
// presence gossip sends another (§8.2). An accepted input is at most
// kMaxViewBytes, names an Ed25519 key, a registry of at most
// kMaxViewRegistry whose presence field decodes, and re-encodes to exactly
// itself; checking and aggregating it never crashes.
#include <cstdint>
#include <cstring>

#include "cip11/presence_gossip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy::cip11;
  auto view = decode_view(cowboy::ByteView(data, size));
  if (!view.ok()) return 0;
  if (size > kMaxViewBytes || view->registry_size > kMaxViewRegistry) __builtin_trap();
  if (view->validator_pubkey.scheme() != Scheme::kEd25519) __builtin_trap();
  auto set = view_set(*view);
  if (!set.ok() || set->registry_size() != view->registry_size) __builtin_trap();
  const cowboy::Bytes again = encode_view(*view);
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) __builtin_trap();
  ViewContext ctx;  // any bytes: a refusal, never a crash
  ctx.chain_id = 7;
  (void)check_view(ctx, *view, Height{0});
  // Under the pair it names, with its own key in the snapshot: every check runs, to the signature.
  const EpochPair pair{view->subset_epoch, view->validator_set_hash};
  cowboy::crypto::Ed25519Public sender{};
  std::memcpy(sender.data(), view->validator_pubkey.raw().data(), sender.size());
  ctx.snapshots.push_back(ViewSnapshot{pair, {sender}});
  (void)check_view(ctx, *view, view->height);
  PresenceAggregator agg;
  (void)agg.offer(sender, *view);
  // A sender vouching for every other runner: both sides of the subset rule.
  (void)agg.aggregate(PresentSet(16), view->height + 1, {pair},
                      [](const cowboy::crypto::Ed25519Public&, const EpochPair&, std::uint32_t i) { return i % 2 == 0; });
  (void)agg.fresh_count(view->height + 1, {pair});
  return 0;
}
