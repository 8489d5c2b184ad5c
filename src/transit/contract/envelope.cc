#include "transit/contract/envelope.h"

#include "common/crypto.h"
#include "transit/contract/rules.h"
#include "transit/contract/signing.h"

namespace cowboy::transit {
namespace {

// A canonical body is {"<field>":<inner>,"signature":[...]}, and the
// signature's digits and commas hold no '"', so the inner text is what lies
// between the first key and the last "signature" key. Null when the body is
// not so shaped: then it is not canonical, and the decoder says why.
std::optional<std::string_view> inner_text(std::string_view body, std::string_view field) {
  const std::size_t start = field.size() + 4;  // {"field":
  if (body.size() < start || body.substr(0, 2) != "{\"" || body.substr(2, field.size()) != field ||
      body.substr(2 + field.size(), 2) != "\":")
    return std::nullopt;
  const std::size_t end = body.rfind(R"(,"signature":[)");
  if (end == std::string_view::npos || end < start) return std::nullopt;
  return body.substr(start, end - start);
}

// The canonical inner request (or query) is bounded on the raw body, before
// anything is parsed (decision 22); once decoded, its own text is what is hashed.
template <typename T>
Result<T, DecodeError> decode_envelope(std::string_view body, std::string_view field, std::string_view domain,
                                       Digest* digest) {
  if (body.size() > kMaxEnvelopeBytes)
    return Err{DecodeError{Reason::kTooLarge, "", "an envelope of " + std::to_string(body.size()) + " bytes"}};
  if (const auto inner = inner_text(body, field); inner && inner->size() > kMaxRequestBytes)
    return Err{DecodeError{Reason::kTooLarge, std::string(field),
                           "a canonical " + std::string(field) + " of " + std::to_string(inner->size()) + " bytes"}};
  auto value = from_json<T>(body, kMaxEnvelopeBytes);
  if (value.ok() && digest) *digest = domain_digest(domain, *inner_text(body, field));
  return value;
}

}  // namespace

Rejection make_rejection(const Text<1, 64>& realm, Reason reason, std::string_view message) {
  return Rejection{Version{}, Definition{}, realm, code_of(reason), reason, {json::valid_utf8(message, 512)}};
}

Result<SignedRequest, DecodeError> decode_signed_request(std::string_view body, Digest* digest) {
  auto signed_request = decode_envelope<SignedRequest>(body, "request", kRequestDomain, digest);
  if (!signed_request.ok()) return signed_request;
  if (signed_request->request.sequence == 0)
    return Err{DecodeError{Reason::kZeroSequence, "request.sequence", "sequence 0 is invalid for mutations"}};
  if (auto e = check_rules(signed_request->request.op)) return Err{*e};
  return signed_request;
}

Result<SignedQuery, DecodeError> decode_signed_query(std::string_view body, Digest* digest) {
  auto signed_query = decode_envelope<SignedQuery>(body, "query", kQueryDomain, digest);
  if (!signed_query.ok()) return signed_query;
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
  if (const auto* prepared = std::get_if<PreparedTurn>(&out.request.request.op)) turn = &prepared->turn;
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
