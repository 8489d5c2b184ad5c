// The rules a well-formed request or query obeys beyond its types, checked
// before signing (the client) and before any signature is looked at (the
// node): distinct mutation keys and block names, the block byte budgets,
// read_entries' contiguous prefix of distinct keys, and a key lookup never
// combined with a continuation.
#pragma once

#include "transit/contract/errors.h"
#include "transit/contract/types.h"

namespace cowboy::transit {

std::optional<DecodeError> check_rules(const Command& op);
std::optional<DecodeError> check_rules(const QueryOp& op);

}  // namespace cowboy::transit
