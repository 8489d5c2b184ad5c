// What the decoder reports: the rule broken (a snake_case reason that tests and
// clients match on) and where (a dotted field path).
#pragma once

#include <string>

#include "common/result.h"

namespace cowboy::transit {

struct DecodeError {
  std::string reason;  // e.g. "unknown_field", "foreign_definition", "too_large"
  std::string path;    // e.g. "request.op.create_principal.public_key"
  std::string detail;

  std::string message() const {
    std::string m = reason;
    if (!path.empty()) m += " at " + path;
    if (!detail.empty()) m += ": " + detail;
    return m;
  }
};

}  // namespace cowboy::transit
