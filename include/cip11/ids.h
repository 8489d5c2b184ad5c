// CIP-11's numbers and handles as types of their own (common/strong_id.h). On
// the wire a job id is 32 bytes like any hash; in the code it is its own type,
// built explicitly from the wire value and read back with `.value`, so that a
// job id passed where a hash is expected does not compile
// (tests/cip11/ids_test.cc). The codecs write each by its value alone: the
// bytes on the wire are those of the raw type.
#pragma once

#include <cstdint>

#include "common/bytes.h"
#include "common/strong_id.h"

namespace cowboy::cip11 {

/// A job's id: keccak256("cowboy/cip11-job-id/v1" || submitting tx hash) (chain/machine.h job_id_of).
using JobId = StrongId<struct JobIdTag, Bytes32>;

// Counted points (common/strong_id.h): a height moves by a count of blocks and
// two heights differ by one; an epoch, a view and a round epoch likewise. One
// where another is expected, or any where a plain count is, does not compile
// (tests/cip11/strong_ids_test.cc). On the wire each is its u64.
struct HeightTag {
  static constexpr bool kCounted = true;
};
struct EpochTag {
  static constexpr bool kCounted = true;
};
struct ViewTag {
  static constexpr bool kCounted = true;
};
struct RoundEpochTag {
  static constexpr bool kCounted = true;
};

/// A block's height on the chain CIP-11 runs on (the devchain's, decision 137).
using Height = StrongId<HeightTag, std::uint64_t>;
/// A validator-set epoch: a snapshot's number, the subset_epoch of the frames.
using Epoch = StrongId<EpochTag, std::uint64_t>;
/// A consensus view: the turn a block is proposed in (its leader leads it),
/// and with a round epoch a §9.2 seed round, Round(epoch, view) (docs/cip11.md choice 138).
/// Never below its block's height; read as one only explicitly.
using View = StrongId<ViewTag, std::uint64_t>;
/// A seed round's epoch, the axis round arithmetic carries over (§9.2's
/// Round(E, v), chain/rounds.h EpochSchedule). Not the validator-set Epoch:
/// a lone producer's rounds are all in round epoch 0, and rotating validators
/// make one from the other explicitly (choices 127, 138, 140).
using RoundEpoch = StrongId<RoundEpochTag, std::uint64_t>;

}  // namespace cowboy::cip11
