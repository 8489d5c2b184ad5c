// §8.2 Mode B presence gossip (cip11/presence_gossip.h): the PresenceViewV1
// encoding pinned byte for byte (tests/fixtures/cip11/presence_view.hex),
// every decoder refusal, every check a receiving validator makes in its
// order, and the aggregation rules a proposer applies (docs/cip11.md choices 84-87).
// Regenerate the fixture deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/cip11_tests --gtest_filter='Cip11PresenceGossip.*'
#include <gtest/gtest.h>

#include <cstdlib>

#include "../support/hex_fixture.h"
#include "cip11/chain/snapshots.h"
#include "cip11/presence_gossip.h"
#include "cip11/subset.h"
#include "samples.h"

namespace cowboy::cip11 {
namespace {

using testing::filled;

constexpr std::uint64_t kChain = 7;

crypto::Ed25519Seed validator_seed(std::uint8_t n) {
  crypto::Ed25519Seed s{};
  s.fill(static_cast<std::uint8_t>(0x50 + n));
  return s;
}

struct Cip11PresenceGossip : ::testing::Test {
  std::vector<Signer> signers;
  std::vector<crypto::Ed25519Public> keys;  // snapshot order
  EpochPair epoch0;
  ViewContext ctx;  // as validator 0 receives, one snapshot current

  Cip11PresenceGossip() {
    crypto::init();
    for (std::uint8_t i = 0; i < 4; ++i) {
      signers.push_back(Signer::validator(validator_seed(i)));
      keys.push_back(crypto::ed25519_from_seed(validator_seed(i)).public_key);
    }
    epoch0 = EpochPair{Epoch{0}, validator_set_hash(keys)};
    ctx.chain_id = kChain;
    ctx.snapshots = {ViewSnapshot{epoch0, keys}};
    ctx.me = keys[0];
  }

  /// Every sender vouches for every runner (the subset rule is its own test).
  static bool sees_all(const crypto::Ed25519Public&, const EpochPair&, std::uint32_t) { return true; }
  static PresentSet set_of(std::uint32_t n, std::initializer_list<std::uint32_t> present) {
    PresentSet s(n);
    for (auto i : present) s.add(i);
    return s;
  }
  /// Validator `from`'s signed view at `height` over a registry of `n` runners.
  PresenceView view(std::uint32_t from, Height height, std::uint32_t n, std::initializer_list<std::uint32_t> present,
                    std::uint64_t chain_id = kChain) const {
    return view_under(epoch0, from, height, n, present, chain_id);
  }
  PresenceView view_under(const EpochPair& pair, std::uint32_t from, Height height, std::uint32_t n,
                          std::initializer_list<std::uint32_t> present, std::uint64_t chain_id = kChain) const {
    PresenceView v;
    v.subset_epoch = pair.subset_epoch;
    v.validator_set_hash = pair.validator_set_hash;
    v.height = height;
    v.registry_size = n;
    v.presence = encode_presence(set_of(n, present));
    return sign_view(signers[from], chain_id, v);
  }
};

std::string fixture_path(const std::string& name) { return std::string(COWBOY_FIXTURE_DIR) + "/cip11/" + name + ".hex"; }

TEST_F(Cip11PresenceGossip, TheViewMatchesItsFixtureByteForByteAndRoundTrips) {
  const PresenceView v = view(1, Height{1005}, 12, {0, 3, 11});
  const Bytes encoded = encode_view(v);
  const std::string path = fixture_path("presence_view");
  if (std::getenv("COWBOY_WRITE_FIXTURES"))
    cowboy::testing::write_hex_fixture(
        path, "presence_view: " + std::to_string(encoded.size()) + " bytes, PresenceViewV1 (CBOR map keyed 0..6, presence_gossip.h)",
        encoded);
  auto expected = cowboy::testing::read_hex_fixture(path);
  ASSERT_TRUE(expected) << "missing fixture " << path;
  EXPECT_EQ(to_hex(encoded), to_hex(*expected));
  // Built from the layout and RFC 8949, not by the encoder: a7, then each key and field.
  Bytes hand{0xa7, 0x00, 0x58, 0x21};
  for (auto b : v.validator_pubkey.wire()) hand.push_back(b);
  hand.insert(hand.end(), {0x01, 0x00, 0x02, 0x58, 0x20});
  for (auto b : epoch0.validator_set_hash) hand.push_back(b);
  hand.insert(hand.end(), {0x03, 0x19, 0x03, 0xed, 0x04, 0x0c, 0x05, 0x44, 0x01, 0x00, 0x09, 0x08, 0x06, 0x58, 0x40});
  for (auto b : v.validator_signed) hand.push_back(b);
  EXPECT_EQ(to_hex(encoded), to_hex(hand));
  auto decoded = decode_view(*expected);
  ASSERT_TRUE(decoded.ok()) << to_string(decoded.error());
  EXPECT_EQ(*decoded, v);
  EXPECT_EQ(view_set(*decoded)->indices(), (std::vector<std::uint32_t>{0, 3, 11}));
  EXPECT_EQ(check_view(ctx, *decoded, Height{1004}).value(), keys[1]);
  // The preimage starts with its own domain, the validator role and Ed25519.
  const Bytes pre = presence_view_preimage(kChain, v).bytes();
  const std::string domain = "cowboy-cip11-presence-view-v1";
  EXPECT_EQ(std::string(pre.begin(), pre.begin() + static_cast<std::ptrdiff_t>(domain.size())), domain);
  EXPECT_EQ(pre[domain.size()], 0x02);
  EXPECT_EQ(pre[domain.size() + 1], 0x02);
}

TEST_F(Cip11PresenceGossip, EveryDecoderRefusal) {
  const Bytes good = encode_view(view(1, Height{10}, 12, {3}));
  ASSERT_TRUE(decode_view(good).ok());
  // Longer than any view can be, refused before it is read.
  Bytes big(kMaxViewBytes + 1, 0);
  EXPECT_EQ(decode_view(big).error(), Errc::kViewTooLarge);
  // A field missing, one too many, trailing bytes, a truncated input.
  Bytes missing = good;
  missing[0] = 0xa6;
  EXPECT_FALSE(decode_view(missing).ok());
  Bytes extra = good;
  extra[0] = 0xa8;
  EXPECT_FALSE(decode_view(extra).ok());
  Bytes trailing = good;
  trailing.push_back(0x00);
  EXPECT_EQ(decode_view(trailing).error(), Errc::kTrailingBytes);
  for (std::size_t cut = 0; cut < good.size(); ++cut)
    EXPECT_FALSE(decode_view(ByteView(good).first(cut)).ok()) << cut;
  // A runner key where the validator's goes.
  PresenceView runner_keyed = view(1, Height{10}, 12, {3});
  runner_keyed.validator_pubkey = testing::runner_key(1).pubkey();
  EXPECT_EQ(decode_view(encode_view(runner_keyed)).error(), Errc::kRoleSchemeMismatch);
  // A registry beyond the bound, refused before a set is allocated for it.
  PresenceView huge = view(1, Height{10}, 12, {3});
  huge.registry_size = kMaxViewRegistry + 1;
  huge.presence = Bytes{0x01, 0x01, 0x00, 0x00, 0x00, 0x00};  // an empty sparse set: small, whatever n
  EXPECT_EQ(decode_view(encode_view(huge)).error(), Errc::kOutOfRange);
  huge.registry_size = kMaxViewRegistry;
  EXPECT_TRUE(decode_view(encode_view(huge)).ok());
  // A presence field that is not §7.2-valid against the view's own registry_size.
  PresenceView beyond = view(1, Height{10}, 12, {3});
  beyond.registry_size = 3;  // index 3 is now beyond it
  EXPECT_EQ(decode_view(encode_view(beyond)).error(), Errc::kBadBitmapLength);
  beyond.presence = Bytes{0x01, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03};
  EXPECT_EQ(decode_view(encode_view(beyond)).error(), Errc::kIndexBeyondRegistry);
  PresenceView versionless = view(1, Height{10}, 12, {3});
  versionless.presence = {};
  EXPECT_EQ(decode_view(encode_view(versionless)).error(), Errc::kBadPresenceVersion);
  // A registry_size above u32.
  Bytes wide = good;
  const std::size_t at = 4 + 33 + 2 + 3 + 32 + 3;  // key 4's value (0x0c)
  ASSERT_EQ(wide[at - 1], 0x04);
  ASSERT_EQ(wide[at], 0x0c);
  wide[at] = 0x1b;
  wide.insert(wide.begin() + static_cast<std::ptrdiff_t>(at + 1), {0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0c});
  EXPECT_EQ(decode_view(wide).error(), Errc::kOutOfRange);
}

TEST_F(Cip11PresenceGossip, EveryReceiverCheckInItsOrder) {
  const PresenceView good = view(2, Height{10}, 12, {3});
  EXPECT_EQ(check_view(ctx, good, Height{10}).value(), keys[2]);
  PresenceView v = good;
  v.subset_epoch = Epoch{1};
  EXPECT_EQ(check_view(ctx, v, Height{10}).error(), Errc::kWrongValidatorSet);
  v = good;
  v.validator_set_hash[0] ^= 1;
  EXPECT_EQ(check_view(ctx, v, Height{10}).error(), Errc::kWrongValidatorSet);
  // A key outside the set, even with its own valid signature.
  const Signer stranger = Signer::validator(validator_seed(9));
  v = sign_view(stranger, kChain, good);
  EXPECT_EQ(check_view(ctx, v, Height{10}).error(), Errc::kUnknownValidator);
  // The receiver's own key: nobody else may speak for it, and it never needs to hear itself.
  EXPECT_EQ(check_view(ctx, view(0, Height{10}, 12, {3}), Height{10}).error(), Errc::kViewFromSelf);
  // Up to kViewMaxAgeBlocks above the head counts (a peer a block or two ahead); more does not.
  EXPECT_TRUE(check_view(ctx, view(2, Height{10 + kViewMaxAgeBlocks}, 12, {3}), Height{10}).ok());
  EXPECT_EQ(check_view(ctx, view(2, Height{11 + kViewMaxAgeBlocks}, 12, {3}), Height{10}).error(), Errc::kViewFromTheFuture);
  // Every signed field tampered with, another chain, and another validator's signature under this one's key.
  std::vector<std::pair<const char*, std::function<void(PresenceView&)>>> tampers = {
      {"height", [](PresenceView& x) { ++x.height; }},
      {"registry_size", [](PresenceView& x) { x.registry_size = 13; }},
      {"presence", [](PresenceView& x) { x.presence = encode_presence(set_of(12, {4})); }},
      {"presence kind", [](PresenceView& x) { x.presence = encode_presence(set_of(12, {3}), PresenceKind::kSparse); }},
      {"signature", [](PresenceView& x) { x.validator_signed[5] ^= 1; }},
      {"sender", [&](PresenceView& x) { x.validator_pubkey = signers[3].pubkey(); }},
  };
  for (const auto& [name, tamper] : tampers) {
    PresenceView t = good;
    tamper(t);
    EXPECT_EQ(check_view(ctx, t, Height{10}).error(), Errc::kBadSignature) << name;
  }
  EXPECT_EQ(check_view(ctx, view(2, Height{10}, 12, {3}, kChain + 1), Height{10}).error(), Errc::kBadSignature);
}

TEST_F(Cip11PresenceGossip, TheAggregateIsTheProposersViewUnionEveryFreshPeerView) {
  PresenceAggregator agg;
  const std::vector<EpochPair> current{epoch0};
  const PresentSet own = set_of(10, {0, 1});
  // Nothing heard: the proposer's own view, exactly (§8.1 as a special case).
  EXPECT_EQ(agg.aggregate(own, Height{20}, current, sees_all), own);
  // Runners only a peer holds (their Sub(R) excludes the proposer) are present too.
  ASSERT_TRUE(agg.offer(keys[1], view(1, Height{19}, 10, {2, 3})));
  ASSERT_TRUE(agg.offer(keys[2], view(2, Height{18}, 10, {3, 9})));
  EXPECT_EQ(agg.aggregate(own, Height{20}, current, sees_all).indices(), (std::vector<std::uint32_t>{0, 1, 2, 3, 9}));
  // Indices at or above |registry(H-1)| (a peer's view of a later registry) are left out (§8.1).
  ASSERT_TRUE(agg.offer(keys[3], view(3, Height{19}, 12, {4, 10, 11})));
  EXPECT_EQ(agg.aggregate(own, Height{20}, current, sees_all).indices(), (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 9}));
  EXPECT_EQ(agg.fresh_count(Height{20}, current), 3u);
  // A silent peer's last view stops counting kViewMaxAgeBlocks blocks after
  // block H-1: view 18 counts up to block 22 (parent 21), not at 23.
  EXPECT_TRUE(agg.fresh(keys[2], Height{18 + kViewMaxAgeBlocks + 1}));
  EXPECT_FALSE(agg.fresh(keys[2], Height{18 + kViewMaxAgeBlocks + 2}));
  EXPECT_EQ(agg.aggregate(own, Height{23}, current, sees_all).indices(), (std::vector<std::uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(agg.aggregate(own, Height{30}, current, sees_all), own);
  EXPECT_EQ(agg.fresh_count(Height{30}, current), 0u);
  // Nor does a view far above the proposer's parent (it cannot have come from a live peer's head).
  PresenceAggregator ahead;
  ASSERT_TRUE(ahead.offer(keys[1], view(1, Height{40}, 10, {5})));
  EXPECT_EQ(ahead.aggregate(own, Height{20}, current, sees_all), own);
  EXPECT_TRUE(ahead.aggregate(own, Height{38}, current, sees_all).contains(5));
}

// Choice 151: a peer's view adds a runner only when the peer is in that
// runner's Sub(R) under the pair the view names - a validator vouches for the
// connections it can hold, so a false view cannot mark runners it never saw.
TEST_F(Cip11PresenceGossip, APeerVouchesOnlyForRunnersOfItsOwnSubset) {
  constexpr std::uint32_t kRunners = 12;
  std::vector<crypto::Secp256k1Compressed> runner_keys(kRunners);
  for (std::uint32_t i = 0; i < kRunners; ++i) runner_keys[i].fill(static_cast<std::uint8_t>(0x20 + i));
  const auto sees = [&](const crypto::Ed25519Public& sender, const EpochPair& pair, std::uint32_t index) {
    return pair == epoch0 && in_subset(runner_keys[index], keys, sender);
  };
  PresenceAggregator agg;
  ASSERT_TRUE(agg.offer(keys[1], view(1, Height{19}, kRunners, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})));
  std::vector<std::uint32_t> of_1;
  for (std::uint32_t i = 0; i < kRunners; ++i)
    if (in_subset(runner_keys[i], keys, keys[1])) of_1.push_back(i);
  ASSERT_GT(of_1.size(), 0u);
  ASSERT_LT(of_1.size(), kRunners);  // k = 3 of 4: some runners leave validator 1 out
  EXPECT_EQ(agg.aggregate(PresentSet(kRunners), Height{20}, {epoch0}, sees).indices(), of_1);
  // The proposer's own view is its own: the rule applies to peers' views only.
  EXPECT_EQ(agg.aggregate(set_of(kRunners, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), Height{20}, {epoch0}, sees).count(),
            kRunners);
}

TEST_F(Cip11PresenceGossip, AnOlderOrEqualViewNeverReplacesTheNewerOne) {
  PresenceAggregator agg;
  const std::vector<EpochPair> current{epoch0};
  ASSERT_TRUE(agg.offer(keys[1], view(1, Height{19}, 10, {2})));
  // A replay of an older view (or one reordered in flight) changes nothing.
  EXPECT_FALSE(agg.offer(keys[1], view(1, Height{18}, 10, {7})));
  EXPECT_FALSE(agg.offer(keys[1], view(1, Height{19}, 10, {7})));
  EXPECT_EQ(agg.aggregate(PresentSet(10), Height{20}, current, sees_all).indices(), (std::vector<std::uint32_t>{2}));
  // A newer one replaces it whole: a runner that left the peer's presence leaves the aggregate.
  EXPECT_TRUE(agg.offer(keys[1], view(1, Height{20}, 10, {8})));
  EXPECT_EQ(agg.aggregate(PresentSet(10), Height{21}, current, sees_all).indices(), (std::vector<std::uint32_t>{8}));
  // A view held under a pair that is not current at the block does not count, however fresh.
  EXPECT_EQ(agg.aggregate(PresentSet(10), Height{21}, {EpochPair{Epoch{1}, epoch0.validator_set_hash}}, sees_all), PresentSet(10));
}

// §5.3 point 3 for views (docs/cip11.md choice 90): epoch 1 at block 100
// leaves validator 3 out; the overlap runs to the cutoff at 120. A view
// names the newest snapshot current at its height that its sender is in, is
// checked against the snapshots current at that height, membership in the
// one it names, and counts for a block only while its pair is current there.
TEST_F(Cip11PresenceGossip, AcrossAReconfigurationAViewNamesTheSnapshotItsSenderIsIn) {
  constexpr Height kActivation{100};
  constexpr std::uint64_t kOverlap = 20;
  constexpr Height kCutoff = kActivation + kOverlap;
  const std::vector<crypto::Ed25519Public> next{keys[0], keys[1], keys[2]};
  const auto snapshots =
      chain::ValidatorSnapshots::scheduled(keys, {chain::ValidatorSetChange{kActivation, next}}, kOverlap);
  const EpochPair epoch1{Epoch{1}, validator_set_hash(next)};
  ASSERT_EQ(snapshots.epochs()[1].pair(), epoch1);

  // What each validator states its view under.
  EXPECT_EQ(chain::view_pair(snapshots, keys[1], kActivation - 1), epoch0);
  EXPECT_EQ(chain::view_pair(snapshots, keys[1], kActivation), epoch1);  // in both: the newest
  EXPECT_EQ(chain::view_pair(snapshots, keys[3], kActivation), epoch0);  // left: its old epoch, through the overlap
  EXPECT_EQ(chain::view_pair(snapshots, keys[3], kCutoff - 1), epoch0);
  EXPECT_EQ(chain::view_pair(snapshots, keys[3], kCutoff), std::nullopt);  // then none
  EXPECT_EQ(chain::current_pairs(snapshots, kCutoff - 1), (std::vector<EpochPair>{epoch1, epoch0}));
  EXPECT_EQ(chain::current_pairs(snapshots, kCutoff), (std::vector<EpochPair>{epoch1}));

  // What validator 0 accepts, by the snapshots current at the view's height.
  const auto check = [&](const PresenceView& v) {
    return check_view(ViewContext{kChain, chain::view_snapshots(snapshots, v.height), keys[0]}, v, v.height);
  };
  EXPECT_EQ(check(view_under(epoch0, 1, kActivation - 1, 12, {3})).value(), keys[1]);
  EXPECT_EQ(check(view_under(epoch1, 1, kActivation - 1, 12, {3})).error(), Errc::kWrongValidatorSet);  // not yet
  EXPECT_EQ(check(view_under(epoch1, 1, kActivation, 12, {3})).value(), keys[1]);
  EXPECT_EQ(check(view_under(epoch0, 1, kActivation, 12, {3})).value(), keys[1]);  // either, in the window
  EXPECT_EQ(check(view_under(epoch0, 3, kCutoff - 1, 12, {3})).value(), keys[3]);
  EXPECT_EQ(check(view_under(epoch0, 3, kCutoff, 12, {3})).error(), Errc::kWrongValidatorSet);  // past the cutoff
  EXPECT_EQ(check(view_under(epoch0, 1, kCutoff, 12, {3})).error(), Errc::kWrongValidatorSet);
  // Epoch-paired: membership in the snapshot the pair names, never the other.
  EXPECT_EQ(check(view_under(epoch1, 3, kActivation + 1, 12, {3})).error(), Errc::kUnknownValidator);
  EXPECT_EQ(check(view_under(EpochPair{Epoch{1}, epoch0.validator_set_hash}, 1, kActivation + 1, 12, {3})).error(),
            Errc::kWrongValidatorSet);
  EXPECT_EQ(check(view_under(EpochPair{Epoch{0}, epoch1.validator_set_hash}, 1, kActivation + 1, 12, {3})).error(),
            Errc::kWrongValidatorSet);
  // Relabelled to the other epoch after signing: the pair is signed.
  PresenceView relabelled = view_under(epoch0, 1, kActivation + 1, 12, {3});
  relabelled.subset_epoch = epoch1.subset_epoch;
  relabelled.validator_set_hash = epoch1.validator_set_hash;
  EXPECT_EQ(check(relabelled).error(), Errc::kBadSignature);

  // The proposer aggregates across the overlap: an epoch-1 view and the
  // leaving validator's epoch-0 view both count, until the cutoff.
  PresenceAggregator agg;
  ASSERT_TRUE(agg.offer(keys[1], view_under(epoch1, 1, kCutoff - 2, 12, {1})));
  ASSERT_TRUE(agg.offer(keys[3], view_under(epoch0, 3, kCutoff - 2, 12, {3})));
  const auto block = [&](Height h) {
    return agg.aggregate(PresentSet(12), h, chain::current_pairs(snapshots, h), sees_all).indices();
  };
  EXPECT_EQ(block(kCutoff - 1), (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ(agg.fresh_count(kCutoff - 1, chain::current_pairs(snapshots, kCutoff - 1)), 2u);
  // At the cutoff both views are still young, but only the epoch-1 one counts.
  ASSERT_TRUE(agg.fresh(keys[3], kCutoff));
  EXPECT_EQ(block(kCutoff), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(agg.fresh_count(kCutoff, chain::current_pairs(snapshots, kCutoff)), 1u);
}

}  // namespace
}  // namespace cowboy::cip11
