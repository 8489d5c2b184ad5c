// The routes validators of one devchain use between them (docs/devchain.md
// "Several validators"), served only by a validator (HttpServer given a BlocksApi):
//   POST /v1/chain/blocks {"block": "0x…"}   a proposed block: {"height"} or BlockRefused (422)
//   GET  /v1/chain/blocks/{height}           a committed block as proposed: {"block": "0x…"}
//   GET  /v1/chain/head                      {"height", "view", "digest"}
//   POST /v1/chain/presence {"view": "0x…"}  a validator's signed presence view (§8.2):
//                                            {"kept"} or ViewRefused (422)
#include <nlohmann/json.hpp>

#include "devchain/http_routes.h"
#include "devchain/json.h"

namespace cowboy::devchain::http {

using Json = nlohmann::json;

std::optional<Reply> route_blocks(BlocksApi& api, std::string_view method, const std::vector<std::string_view>& parts,
                                  const std::string& body) {
  if (parts.size() < 3 || parts[0] != "v1" || parts[1] != "chain") return std::nullopt;
  if (method == "POST" && parts.size() == 3 && parts[2] == "blocks") {
    auto j = Json::parse(body, nullptr, false);
    if (!j.is_object() || !j.contains("block") || !j["block"].is_string())
      return bad_request("body must be {\"block\": \"0x…\"}");
    auto bytes = from_hex(j["block"].get<std::string>());
    if (!bytes) return bad_request("block is not hex");
    auto block = decode_signed_block(*bytes);
    if (!block) return bad_request("the block fails strict decoding: " + std::string(codec::to_string(block.error())));
    return reply_from(api.accept_block(*block), [](std::uint64_t h) { return Json{{"height", h}}; });
  }
  if (method != "GET") return error_reply(ApiError{ApiErrorCode::kBadRequest, "method not allowed"});
  if (parts.size() == 4 && parts[2] == "blocks") {
    auto height = parse_u64(parts[3]);
    if (!height) return bad_request("height must be a decimal u64");
    return reply_from(api.block_at(*height),
                      [](const SignedBlock& b) { return Json{{"block", json::hex0x(encode_signed_block(b))}}; });
  }
  if (parts.size() == 3 && parts[2] == "head")
    return reply_from(api.chain_head(), [](const ChainHead& h) {
      return Json{{"height", h.height}, {"view", h.view.value}, {"digest", json::hex0x(h.digest)}};
    });
  return error_reply(ApiError{ApiErrorCode::kNotFound, "no such route"});
}

std::optional<Reply> route_presence_views(PresenceViewsApi& api, std::string_view method,
                                          const std::vector<std::string_view>& parts, const std::string& body) {
  if (parts.size() != 3 || parts[0] != "v1" || parts[1] != "chain" || parts[2] != "presence") return std::nullopt;
  if (method != "POST") return error_reply(ApiError{ApiErrorCode::kBadRequest, "method not allowed"});
  auto j = Json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("view") || !j["view"].is_string()) return bad_request("body must be {\"view\": \"0x…\"}");
  auto bytes = from_hex(j["view"].get<std::string>());  // the request body bounds it (net::HttpServer)
  if (!bytes) return bad_request("view is not hex");
  return reply_from(api.post_presence_view(*bytes), [](bool kept) { return Json{{"kept", kept}}; });
}

}  // namespace cowboy::devchain::http
