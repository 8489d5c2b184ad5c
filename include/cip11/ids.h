// CIP-11's numbers and handles as types of their own (common/strong_id.h). On
// the wire a job id is 32 bytes like any hash; in the code it is its own type,
// built explicitly from the wire value and read back with `.value`, so that a
// job id passed where a hash is expected does not compile
// (tests/cip11/ids_test.cc). The codecs write each by its value alone: the
// bytes on the wire are those of the raw type.
#pragma once

#include "common/bytes.h"
#include "common/strong_id.h"

namespace cowboy::cip11 {

/// A job's id: keccak256("cowboy/cip11-job-id/v1" || submitting tx hash) (chain/machine.h job_id_of).
using JobId = StrongId<struct JobIdTag, Bytes32>;

}  // namespace cowboy::cip11
