#include "cbqs/chain/endpoints.h"

#include <algorithm>
#include <string_view>

namespace cowboy::cbqs {

std::optional<EndpointError> check_endpoint(ByteView uri, std::size_t max_uri_bytes) {
  if (uri.size() > max_uri_bytes) return EndpointError::kTooLong;
  constexpr std::string_view kScheme = "wss://";
  if (uri.size() < kScheme.size() || !std::equal(kScheme.begin(), kScheme.end(), uri.begin()))
    return EndpointError::kBadScheme;
  if (!std::all_of(uri.begin(), uri.end(), [](std::uint8_t b) { return b >= 0x21 && b <= 0x7E; }))
    return EndpointError::kBadByte;
  return std::nullopt;
}

std::optional<EndpointError> check_endpoints(const std::vector<Bytes>& endpoints, std::size_t max_endpoints,
                                             std::size_t max_uri_bytes) {
  if (endpoints.empty()) return EndpointError::kEmptyList;
  if (endpoints.size() > max_endpoints) return EndpointError::kTooMany;
  for (const auto& uri : endpoints)
    if (auto e = check_endpoint(uri, max_uri_bytes)) return e;
  return std::nullopt;
}

}  // namespace cowboy::cbqs
