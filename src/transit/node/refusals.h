// How the process rules spell their refusals (internal to src/transit/node):
// processes.cc and workers.cc share them.
#pragma once

#include "transit/node/authority.h"

namespace cowboy::transit::node {

inline Err<Refusal> refuse(Reason reason, std::string message) { return Err{Refusal{reason, std::move(message)}}; }

inline Err<Refusal> stale_generation(Id expected, Id current) {
  return refuse(Reason::kStaleGeneration,
                "expected generation " + std::to_string(expected) + ", the process is at " + std::to_string(current));
}

}  // namespace cowboy::transit::node
