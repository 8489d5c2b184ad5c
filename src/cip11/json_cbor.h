// JSON values under the §12.6 deterministic CBOR profile: objects become maps
// (text keys, sorted by encoded bytes when encoded), arrays arrays, strings
// text, booleans and null themselves, and a number the shortest integer when
// it is integral and fits CBOR's integer range (-2^64 .. 2^64-1), else float64.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "cip11/cbor.h"

namespace cowboy::cip11::cbor {

/// kNonFiniteFloat for NaN/Inf, kInvalidUtf8 for a string or key that is not UTF-8,
/// kTooDeep past the limit's depth.
Res<Value> from_json(const nlohmann::json& json, unsigned max_depth = 16);

}  // namespace cowboy::cip11::cbor
