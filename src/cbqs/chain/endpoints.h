// §4.1 provider endpoint rules, applied to RegisterProviderV2 and UpdateProviderV2.
#pragma once

#include <optional>
#include <vector>

#include "common/bytes.h"

namespace cowboy::cbqs {

enum class EndpointError : std::uint8_t {
  kEmptyList,      // rule 1
  kTooMany,        // rule 1: more than cbqs.max_provider_endpoints
  kTooLong,        // rule 2: more than cbqs.max_provider_endpoint_uri_bytes
  kBadScheme,      // rule 2: does not begin with the bytes "wss://"
  kBadByte,        // rule 3: a byte outside 0x21..0x7E
};

/// nullopt when a single URI satisfies rules 2 and 3.
std::optional<EndpointError> check_endpoint(ByteView uri, std::size_t max_uri_bytes);
/// nullopt when the list satisfies rules 1-3.
std::optional<EndpointError> check_endpoints(const std::vector<Bytes>& endpoints, std::size_t max_endpoints,
                                             std::size_t max_uri_bytes);

}  // namespace cowboy::cbqs
