// The client's checks of query results (checks.cc); outcome_matches is in transit/client.h.
#pragma once

#include <optional>
#include <string>

#include "transit/contract/types.h"

namespace cowboy::transit {

/// Why `result`, read at `position`, does not answer `op`, if it does not.
std::optional<std::string> result_problem(const QueryOp& op, const QueryResult& result, Position position);

}  // namespace cowboy::transit
