#include "transit/contract/envelope.h"

namespace cowboy::transit {
namespace {

template <typename Inner> std::optional<DecodeError> check_size(const Inner& inner) {
  const std::size_t n = to_json(inner).size();
  if (n > kMaxRequestBytes)
    return DecodeError{"too_large", "", "canonical " + std::string(Inner::kName) + " of " + std::to_string(n) + " bytes"};
  return std::nullopt;
}

}  // namespace

Result<SignedRequest, DecodeError> decode_signed_request(std::string_view body) {
  auto signed_request = from_json<SignedRequest>(body, kMaxEnvelopeBytes);
  if (!signed_request.ok()) return signed_request;
  if (signed_request->request.sequence == 0)
    return Err{DecodeError{"zero_sequence", "request.sequence", "sequence 0 is invalid for mutations"}};
  if (auto e = check_size(signed_request->request)) return Err{*e};
  return signed_request;
}

Result<SignedQuery, DecodeError> decode_signed_query(std::string_view body) {
  auto signed_query = from_json<SignedQuery>(body, kMaxEnvelopeBytes);
  if (!signed_query.ok()) return signed_query;
  if (auto e = check_size(signed_query->query)) return Err{*e};
  return signed_query;
}

}  // namespace cowboy::transit
