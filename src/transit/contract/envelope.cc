#include "transit/contract/envelope.h"

#include "transit/contract/signing.h"

namespace cowboy::transit {
namespace {

// A decoded body is canonical, {"<field>":<inner>,"signature":[...]}, and the
// signature's digits and commas hold no '"', so the inner text is what lies
// between the first key and the last "signature" key.
std::string_view inner_text(std::string_view body, std::string_view field) {
  const std::size_t start = field.size() + 4;  // {"field":
  const std::size_t end = body.rfind(R"(,"signature":[)");
  return body.substr(start, end - start);
}

std::optional<DecodeError> check_inner(std::string_view body, std::string_view field, std::string_view domain,
                                       Digest* digest) {
  const std::string_view inner = inner_text(body, field);
  if (inner.size() > kMaxRequestBytes)
    return DecodeError{"too_large", "", "canonical " + std::string(field) + " of " + std::to_string(inner.size()) + " bytes"};
  if (digest) *digest = domain_digest(domain, inner);
  return std::nullopt;
}

}  // namespace

Result<SignedRequest, DecodeError> decode_signed_request(std::string_view body, Digest* digest) {
  auto signed_request = from_json<SignedRequest>(body, kMaxEnvelopeBytes);
  if (!signed_request.ok()) return signed_request;
  if (signed_request->request.sequence == 0)
    return Err{DecodeError{"zero_sequence", "request.sequence", "sequence 0 is invalid for mutations"}};
  if (auto e = check_inner(body, "request", kRequestDomain, digest)) return Err{*e};
  return signed_request;
}

Result<SignedQuery, DecodeError> decode_signed_query(std::string_view body, Digest* digest) {
  auto signed_query = from_json<SignedQuery>(body, kMaxEnvelopeBytes);
  if (!signed_query.ok()) return signed_query;
  if (auto e = check_inner(body, "query", kQueryDomain, digest)) return Err{*e};
  return signed_query;
}

}  // namespace cowboy::transit
