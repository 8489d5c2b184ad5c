// Block heights, validator-set epochs, views and round epochs are u64 on the
// wire and counted points of their own in the code (cip11/ids.h,
// common/strong_id.h): a height moves by a count of blocks and two heights
// differ by one, and an epoch or a view passed where a height is expected, a
// validator-set epoch where a round's epoch is, or a plain integer where any
// is, does not compile (docs/cip11.md choices 137, 138). The static assertions
// are the test; the TESTs show the wire value is what each carries. (Job ids:
// ids_test.cc.)
#include <gtest/gtest.h>

#include <algorithm>
#include <type_traits>

#include "cip11/chain/consumed_seeds.h"
#include "cip11/chain/seed.h"
#include "cip11/chain/snapshots.h"
#include "cip11/frames.h"
#include "cip11/ids.h"
#include "cip11/preimages.h"
#include "cip11/pending.h"
#include "cip11/presence_gossip.h"
#include "devchain/block.h"
#include "samples.h"
#include "support/distinct_ids.h"

namespace cowboy::cip11 {
namespace {

static_assert(cowboy::testing::kDistinctIds<Height, Epoch, View, RoundEpoch, JobId>);
static_assert(cowboy::testing::kCountedPoint<Height>);
static_assert(cowboy::testing::kCountedPoint<Epoch>);
static_assert(cowboy::testing::kCountedPoint<View>);
static_assert(cowboy::testing::kCountedPoint<RoundEpoch>);
static_assert(cowboy::testing::kNoArithmetic<JobId>);

// Points of one axis only: no height moved by an epoch, no height minus an epoch.
template <typename A, typename B>
concept Adds = requires(A a, B b) { a + b; };
template <typename A, typename B>
concept Subtracts = requires(A a, B b) { a - b; };
template <typename A, typename B>
concept Compares = requires(A a, B b) { a < b; };
static_assert(Adds<Height, std::uint64_t> && !Adds<Height, Epoch> && !Adds<Epoch, Height>);
static_assert(Subtracts<Height, Height> && !Subtracts<Height, Epoch>);
static_assert(Compares<Height, Height> && !Compares<Height, Epoch> && !Compares<Height, std::uint64_t>);
static_assert(Adds<View, std::uint64_t> && !Adds<View, Height> && !Adds<Height, View> && !Adds<View, View>);
static_assert(Subtracts<View, View> && !Subtracts<View, Height> && !Subtracts<Height, View>);
static_assert(Compares<View, View> && !Compares<View, Height> && !Compares<View, std::uint64_t>);
static_assert(!Compares<RoundEpoch, Epoch> && !Adds<RoundEpoch, Epoch> && !Compares<RoundEpoch, View>);

// The wire objects take only their own kind.
using cowboy::testing::kTakes;
static_assert(kTakes<decltype(HeartbeatPing::block_height), Height>);
static_assert(!kTakes<decltype(HeartbeatPing::block_height), Epoch>);
static_assert(!kTakes<decltype(HeartbeatPing::block_height), std::uint64_t>);
static_assert(kTakes<decltype(Hello::subset_epoch), Epoch>);
static_assert(!kTakes<decltype(Hello::subset_epoch), Height>);
static_assert(!kTakes<decltype(Hello::block_height), Epoch>);
static_assert(!kTakes<decltype(PresenceReceipt::subset_epoch), Height>);
static_assert(!kTakes<decltype(PresenceReceipt::block_height), Epoch>);
static_assert(!kTakes<decltype(JobAssignment::assignment_height), Epoch>);
static_assert(!kTakes<decltype(JobAssignment::deadline_block), std::uint64_t>);
static_assert(!kTakes<decltype(PresenceView::height), Epoch>);
static_assert(!kTakes<decltype(PresenceView::subset_epoch), Height>);
static_assert(!kTakes<decltype(EpochPair::subset_epoch), Height>);
static_assert(!kTakes<decltype(LocalOffer::block_height), Epoch>);
static_assert(!kTakes<decltype(chain::ValidatorSnapshot::epoch), Height>);
static_assert(!kTakes<decltype(chain::ValidatorSnapshot::activation_height), Epoch>);
static_assert(!kTakes<decltype(chain::ValidatorSetChange::activation_height), std::uint64_t>);

// A round is a round epoch and a view; a pending selection's and a consumed
// seed's rounds, a beacon's and a devchain block's view take only those.
static_assert(kTakes<decltype(chain::Round::view), View> && !kTakes<decltype(chain::Round::view), Height>);
static_assert(!kTakes<decltype(chain::Round::view), std::uint64_t>);
static_assert(kTakes<decltype(chain::Round::epoch), RoundEpoch> && !kTakes<decltype(chain::Round::epoch), Epoch>);
static_assert(!kTakes<decltype(chain::Round::epoch), View>);
static_assert(!kTakes<decltype(PendingSelectionV1::seed_view), Height>);
static_assert(!kTakes<decltype(PendingSelectionV1::submission_view), Height>);
static_assert(!kTakes<decltype(PendingSelectionV1::seed_epoch), Epoch>);
static_assert(!kTakes<decltype(PendingSelectionV1::submitted_at), View>);
static_assert(!kTakes<decltype(Beacon::view), Height> && !kTakes<decltype(Beacon::epoch), Epoch>);
static_assert(!kTakes<decltype(chain::ConsumedSeed::view), std::uint64_t>);
static_assert(!kTakes<decltype(JobAssignment::deadline_block), View>);
static_assert(!kTakes<decltype(devchain::Block::view), std::uint64_t>);
static_assert(kTakes<decltype(devchain::ChainHead::view), View>);

// The calls: an epoch where a height is expected is ill-formed, and the other way round.
template <typename H>
concept ActiveAt = requires(const chain::ValidatorSnapshots& s, H h) { s.active(h); };
static_assert(ActiveAt<Height>);
static_assert(!ActiveAt<Epoch>);
static_assert(!ActiveAt<std::uint64_t>);

template <typename E, typename H>
concept Selects = requires(const chain::ValidatorSnapshots& s, E e, H h) { s.select(e, Bytes32{}, h); };
static_assert(Selects<Epoch, Height>);
static_assert(!Selects<Height, Epoch>);  // the two swapped
static_assert(!Selects<Height, Height>);
static_assert(!Selects<Epoch, Epoch>);

template <typename E>
concept CutsOff = requires(const chain::ValidatorSnapshots& s, E e) { s.cutoff(e); };
static_assert(CutsOff<Epoch>);
static_assert(!CutsOff<Height>);
static_assert(std::is_same_v<decltype(std::declval<chain::ValidatorSnapshots>().cutoff(Epoch{})), std::optional<Height>>);

template <typename H>
concept CountsViewFresh = requires(const PresenceAggregator& v, H h) { v.fresh(crypto::Ed25519Public{}, h); };
static_assert(CountsViewFresh<Height>);
static_assert(!CountsViewFresh<Epoch>);

// A view where a height is expected does not compile, nor a height where a
// view is: the places that read one as the other say so (choice 138).
static_assert(!ActiveAt<View>);
template <typename H>
concept DueBy = requires(const chain::DueIndex& d, H h) { d.due_by(h); };
static_assert(DueBy<Height>);
static_assert(!DueBy<View>);  // machine.cc reads the index up to the block's height only (choice 140)
static_assert(std::is_constructible_v<chain::DevBeacon, Bytes32, Height>);
static_assert(!std::is_constructible_v<chain::DevBeacon, Bytes32, View>);
template <typename E, typename V>
concept SeedOf = requires(const chain::BeaconSource& b, E e, V v) { b.seed(e, v); };
static_assert(SeedOf<RoundEpoch, View>);
static_assert(!SeedOf<Epoch, View>);  // a validator-set epoch is not a round's (choice 127)
static_assert(!SeedOf<View, RoundEpoch>);
static_assert(!SeedOf<RoundEpoch, Height>);
static_assert(!SeedOf<std::uint64_t, std::uint64_t>);
template <typename V>
concept PendingBefore = requires(const chain::ShadowBook& b, V v) { b.pending_before(v); };
static_assert(PendingBefore<chain::Round> && !PendingBefore<View> && !PendingBefore<Height>);  // a round (choice 140)
template <typename V>
concept LeaderOf = requires(V v) { devchain::leader_of(v, std::size_t{4}); };
static_assert(LeaderOf<View> && !LeaderOf<Height> && !LeaderOf<std::uint64_t>);
static_assert(std::is_same_v<decltype(chain::devchain_round(View{})), chain::Round>);
static_assert(!std::is_invocable_v<decltype(chain::devchain_round), Height>);

template <typename A, typename D>
concept PreimagesAssignment = requires(A a, D d) {
  job_assignment_preimage(0, JobId{}, Bytes32{}, a, d, PubKey{}, PubKey{});
};
static_assert(PreimagesAssignment<Height, Height>);
static_assert(!PreimagesAssignment<Epoch, Height>);
static_assert(!PreimagesAssignment<Height, std::uint64_t>);

TEST(Cip11StrongIds, AHeightIsItsIntegerOnTheWire) {
  // HeartbeatPing's body: {0: block_height, 1: nonce, 2: signed (65 bytes)}.
  const HeartbeatPing ping{Height{0x1234}, 7, RunnerSig{}};
  Bytes expected{0xa3, 0x00, 0x19, 0x12, 0x34, 0x01, 0x07, 0x02, 0x58, 0x41};
  expected.insert(expected.end(), 65, 0x00);
  EXPECT_EQ(encode_body(ping), expected);
  auto back = decode_body(FrameType::kHeartbeatPing, expected);
  ASSERT_TRUE(back);
  EXPECT_EQ(std::get<HeartbeatPing>(*back).block_height, Height{0x1234});
}

TEST(Cip11StrongIds, AnEpochIsItsIntegerOnTheWire) {
  // Hello's body begins {0: version, 1: chain_id, 2: validator_set_hash, 3: subset_epoch, ...}.
  Hello hello = testing::hello();  // version 0x0100, chain 7, hash filled(0x40)
  hello.subset_epoch = Epoch{0x2a};
  hello.block_height = Height{300};
  const Bytes body = encode_body(hello);
  Bytes prefix{0xa8, 0x00, 0x19, 0x01, 0x00, 0x01, 0x07, 0x02, 0x58, 0x20};
  for (std::uint8_t b : testing::filled(0x40)) prefix.push_back(b);
  prefix.insert(prefix.end(), {0x03, 0x18, 0x2a});
  ASSERT_GE(body.size(), prefix.size());
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), body.begin()));
  // ... and 6: block_height, 300 as a two-byte uint.
  const Bytes height{0x06, 0x19, 0x01, 0x2c};
  EXPECT_NE(std::search(body.begin(), body.end(), height.begin(), height.end()), body.end());
  auto back = decode_body(FrameType::kHello, body);
  ASSERT_TRUE(back);
  EXPECT_EQ(std::get<Hello>(*back).subset_epoch, Epoch{0x2a});
  EXPECT_EQ(std::get<Hello>(*back).block_height, Height{300});
}

TEST(Cip11StrongIds, ARoundIsItsIntegersOnTheWireAndInTheAlpha) {
  // ConsumedSeedsV1: [[seed_epoch, seed_view, signature (64 bytes)]].
  const chain::ConsumedSeed seed{RoundEpoch{1}, View{0x1234}, Bytes(64, 0x00)};
  Bytes expected{0x81, 0x83, 0x01, 0x19, 0x12, 0x34, 0x58, 0x40};
  expected.insert(expected.end(), 64, 0x00);
  EXPECT_EQ(chain::encode_consumed_seeds({seed}), expected);
  auto back = chain::decode_consumed_seeds(expected);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].epoch, RoundEpoch{1});
  EXPECT_EQ((*back)[0].view, View{0x1234});
  // The seed alpha: domain ‖ chain ‖ epoch_be8 ‖ view_be8 ‖ previous output.
  const chain::SeedOutput previous{};
  const Bytes alpha = chain::seed_alpha(Bytes32{}, chain::Round{RoundEpoch{2}, View{0x0304}}, previous);
  const std::string_view domain = "cowboy/devchain-seed/v1";
  ASSERT_EQ(alpha.size(), domain.size() + 32 + 8 + 8 + 64);
  const Bytes round(alpha.begin() + static_cast<std::ptrdiff_t>(domain.size() + 32),
                    alpha.begin() + static_cast<std::ptrdiff_t>(domain.size() + 48));
  EXPECT_EQ(round, (Bytes{0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0x03, 0x04}));
}

}  // namespace
}  // namespace cowboy::cip11
