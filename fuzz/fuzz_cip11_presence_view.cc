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
  (void)check_view(ctx, *view, 0);
  PresenceAggregator agg(1);
  (void)agg.offer(0, *view);
  (void)agg.aggregate(PresentSet(16), view->height + 1);
  return 0;
}
