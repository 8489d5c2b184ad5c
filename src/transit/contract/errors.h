// What the decoder reports: the rule broken (a catalogued Reason, reasons.h)
// and where (a dotted field path).
#pragma once

#include <string>

#include "common/result.h"
#include "transit/contract/reasons.h"

namespace cowboy::transit {

struct DecodeError {
  Reason reason = Reason::kSyntax;  // e.g. unknown_field, foreign_definition, too_large
  std::string path;                 // e.g. "request.op.create_principal.public_key"
  std::string detail;

  std::string message() const {
    std::string m(name_of(reason));
    if (!path.empty()) m += " at " + path;
    if (!detail.empty()) m += ": " + detail;
    return m;
  }
};

}  // namespace cowboy::transit
