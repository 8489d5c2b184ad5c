#include "transit/contract/payloads.h"

namespace cowboy::transit {
namespace {
constexpr std::string_view kPrefix = "/v1/payloads/";
}

std::optional<Id> payload_of_target(std::string_view target) {
  if (!target.starts_with(kPrefix)) return std::nullopt;
  const std::string_view digits = target.substr(kPrefix.size());
  // One spelling per id, as in the JSON codec: at most 16 digits (2^53-1 has 16), no leading zero.
  if (digits.empty() || digits.size() > 16 || digits[0] == '0') return std::nullopt;
  Id id = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + static_cast<Id>(c - '0');
  }
  if (id > kMaxSafeInteger) return std::nullopt;
  return id;
}

std::string payload_target(Id payload) { return std::string(kPrefix) + std::to_string(payload); }

}  // namespace cowboy::transit
