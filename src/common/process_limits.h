// Process-wide limits a server sets once at start.
#pragma once

#include <cstdint>

namespace cowboy {

/// Raises the soft RLIMIT_NOFILE to the hard limit (every connection is a
/// descriptor, docs/operations.md) and logs both; returns the soft limit in force.
std::uint64_t raise_descriptor_limit();

}  // namespace cowboy
