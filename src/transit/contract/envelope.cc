#include "transit/contract/envelope.h"

#include "common/crypto.h"
#include "transit/contract/rules.h"
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
    return DecodeError{Reason::kTooLarge, "", "canonical " + std::string(field) + " of " + std::to_string(inner.size()) + " bytes"};
  if (digest) *digest = domain_digest(domain, inner);
  return std::nullopt;
}

}  // namespace

Rejection make_rejection(const Text<1, 64>& realm, Reason reason, std::string_view message) {
  return Rejection{Version{}, Definition{}, realm, code_of(reason), reason, {json::valid_utf8(message, 512)}};
}

Result<SignedRequest, DecodeError> decode_signed_request(std::string_view body, Digest* digest) {
  auto signed_request = from_json<SignedRequest>(body, kMaxEnvelopeBytes);
  if (!signed_request.ok()) return signed_request;
  if (signed_request->request.sequence == 0)
    return Err{DecodeError{Reason::kZeroSequence, "request.sequence", "sequence 0 is invalid for mutations"}};
  if (auto e = check_inner(body, "request", kRequestDomain, digest)) return Err{*e};
  if (auto e = check_rules(signed_request->request.op)) return Err{*e};
  return signed_request;
}

Result<SignedQuery, DecodeError> decode_signed_query(std::string_view body, Digest* digest) {
  auto signed_query = from_json<SignedQuery>(body, kMaxEnvelopeBytes);
  if (!signed_query.ok()) return signed_query;
  if (auto e = check_inner(body, "query", kQueryDomain, digest)) return Err{*e};
  if (auto e = check_rules(signed_query->query.op)) return Err{*e};
  return signed_query;
}

Result<CommandBody, DecodeError> decode_command_body(std::string_view body, Digest* digest) {
  const std::size_t newline = body.find('\n');
  auto request = decode_signed_request(body.substr(0, newline), digest);
  if (!request.ok()) return Err{request.error()};
  CommandBody out{std::move(*request), {}, std::string(body.substr(0, newline))};
  std::string_view rest = newline == std::string_view::npos ? std::string_view{} : body.substr(newline + 1);
  const auto* turn = std::get_if<Turn>(&out.request.request.op);
  const std::size_t descriptors = turn ? turn->blocks.items.size() : 0;
  if (newline != std::string_view::npos && descriptors == 0)
    return Err{DecodeError{Reason::kUnexpectedBlocks, "", "only a turn with block descriptors carries bodies"}};
  for (std::size_t i = 0; i < descriptors; ++i) {
    const auto& d = turn->blocks.items[i];
    if (rest.size() < d.length)
      return Err{DecodeError{Reason::kBlockMismatch, "request.op.turn.blocks", "block " + std::to_string(i) + " is short"}};
    const auto* data = reinterpret_cast<const std::uint8_t*>(rest.data());
    if (crypto::sha256(ByteView(data, d.length)) != d.sha256)
      return Err{DecodeError{Reason::kBlockMismatch, "request.op.turn.blocks", "block " + std::to_string(i) + "'s SHA-256 differs"}};
    out.blocks.emplace_back(data, data + d.length);
    rest.remove_prefix(d.length);
  }
  if (!rest.empty()) return Err{DecodeError{Reason::kBlockMismatch, "request.op.turn.blocks", "bytes after the last block"}};
  return out;
}

std::string command_body(std::string envelope, const std::vector<std::vector<std::uint8_t>>& blocks) {
  if (blocks.empty()) return envelope;
  envelope.push_back('\n');
  for (const auto& b : blocks) envelope.append(reinterpret_cast<const char*>(b.data()), b.size());
  return envelope;
}

}  // namespace cowboy::transit
