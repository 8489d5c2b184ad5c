// Round trips of every object and frame, and a mutation property: any input a
// decoder accepts is canonical (re-encoding it gives back the same bytes).
#include <gtest/gtest.h>

#include <random>

#include "samples.h"

namespace cowboy::cbqs {
namespace {

TEST(RoundTrip, EverySampleDecodesToItself) {
  for (const auto& s : testing::all_samples()) {
    EXPECT_TRUE(s.decodes_to_sample(s.encoded)) << s.name;
    EXPECT_EQ(s.reencode(s.encoded), s.encoded) << s.name;
  }
}

TEST(RoundTrip, AcceptedMutationsAreCanonical) {
  std::mt19937_64 rng(20261130);
  int accepted = 0;
  for (const auto& s : testing::all_samples()) {
    for (int round = 0; round < 300; ++round) {
      Bytes m = s.encoded;
      switch (rng() % 4) {
        case 0: m[rng() % m.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
        case 1: m[rng() % m.size()] = static_cast<std::uint8_t>(rng()); break;
        case 2: m.resize(rng() % m.size()); break;
        case 3: m.push_back(static_cast<std::uint8_t>(rng())); break;
      }
      auto re = s.reencode(m);
      if (re) {
        ++accepted;
        EXPECT_EQ(*re, m) << s.name << ": a decoder accepted a non-canonical input";
      }
    }
  }
  EXPECT_GT(accepted, 0);  // the property was exercised, not vacuous
}

// Generated grants over the scope variants and field extremes.
TEST(RoundTrip, GeneratedGrantsAndFrames) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    StreamGrantV2 g = testing::sample_grant();
    g.authorization_generation = rng();
    g.verbs = static_cast<std::uint16_t>(rng());
    switch (rng() % 3) {
      case 0: g.lane_scope = LaneScopeAny{}; break;
      case 1: g.lane_scope = LaneScopeExact{LaneId{rng()}}; break;
      default: {
        LaneScopeSet set;
        set.lane_ids.resize(rng() % 257);
        for (auto& id : set.lane_ids) id = LaneId{rng()};
        g.lane_scope = set;
      }
    }
    g.group_scope = rng() % 2 ? GroupScope{GroupScopeAny{}} : GroupScope{GroupScopeExact{GroupId{rng()}}};
    g.not_before_ms = rng();
    g.expires_at_ms = rng();
    g.max_message_bytes = static_cast<std::uint32_t>(rng());
    CbqsClientFrameV2 frame{OpenSession{testing::filled32(static_cast<std::uint8_t>(i)), g}};
    auto decoded = decode<CbqsClientFrameV2>(encode(frame));
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, frame);

    Delivery d{testing::filled32(1), testing::filled32(2), std::nullopt, RecordHeaderV2{testing::filled32(3), LaneId{rng()}},
               Sequence{rng()}, Bytes(rng() % 2048, static_cast<std::uint8_t>(i))};
    if (rng() % 2) d.lease = testing::filled32(static_cast<std::uint8_t>(rng()));
    auto dd = decode<CbqsServerFrameV2>(encode(CbqsServerFrameV2{d}));
    ASSERT_TRUE(dd.ok());
    EXPECT_EQ(*dd, CbqsServerFrameV2{d});
  }
}

}  // namespace
}  // namespace cowboy::cbqs
