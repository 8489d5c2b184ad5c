// What the devchain's HTTP routes share: the reply type and the small parsers
// (http_server.cc serves the CIP-39 routes, cip11_routes.cc the CIP-11 ones).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "devchain/api.h"
#include "devchain/blocks_api.h"
#include "devchain/cip11_api.h"

namespace cowboy::devchain::http {

struct Reply {
  int status = 200;
  nlohmann::json body;
};

Reply error_reply(const ApiError& e);
Reply bad_request(std::string message);

template <typename T, typename ToJson>
Reply reply_from(const ApiResult<T>& r, ToJson&& to_json) {
  if (!r) return error_reply(r.error());
  return Reply{200, to_json(*r)};
}

std::vector<std::string_view> split_path(std::string_view path);
/// Decimal digits only, at most 19 of them (so no overflow).
std::optional<std::uint64_t> parse_u64(std::string_view digits);
std::optional<std::uint64_t> query_u64(std::string_view query, std::string_view key);

/// The CIP-11 routes (docs/devchain.md); nullopt when `parts` names none of them.
/// The validators' routes (chain_routes.cc); nullopt when `parts` names none of them.
std::optional<Reply> route_blocks(BlocksApi& api, std::string_view method, const std::vector<std::string_view>& parts,
                                  const std::string& body);

/// POST /v1/chain/presence; nullopt when `parts` names another route.
std::optional<Reply> route_presence_views(PresenceViewsApi& api, std::string_view method,
                                          const std::vector<std::string_view>& parts, const std::string& body);

std::optional<Reply> route_cip11(Cip11Api& api, std::string_view method, const std::vector<std::string_view>& parts);

}  // namespace cowboy::devchain::http
