// transit-v1.schema.json, generated from the field lists of types.h. The
// checked-in copy is schema/transit-v1.schema.json; a ctest fails when they
// differ (tests/transit/schema_test.cc).
#pragma once

#include <string>

namespace cowboy::transit {

/// The schema text (JSON Schema 2020-12, two-space indented, trailing newline),
/// its x-transit.definition filled in.
std::string schema_text();

/// The same with x-transit.definition "", which definition() hashes.
std::string schema_text_without_definition();

}  // namespace cowboy::transit
