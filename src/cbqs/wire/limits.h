// Decode caps. Each is the Maximum column of the §15 parameter that bounds the
// field (docs/protocol.md §F); Codec-class rows have Maximum == Default, so a
// decoder accepts the same byte strings on every deployment.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cowboy::cbqs::limits {

inline constexpr std::uint8_t kVersion = 2;                       // every object, frame and payload
inline constexpr std::size_t kMaxProviderEndpoints = 8;           // cbqs.max_provider_endpoints (Codec)
inline constexpr std::size_t kMaxProviderEndpointUriBytes = 256;  // cbqs.max_provider_endpoint_uri_bytes (Codec)
inline constexpr std::size_t kMaxLaneIdsPerGrant = 256;           // cbqs.max_lane_ids_per_grant (Codec)
inline constexpr std::size_t kMaxFrameBytes = 16'778'240;         // cbqs.max_frame_bytes (Codec): 16 MiB + 1 KiB
// Until a session is open on a connection, its frames are OpenSession and
// CompleteSession, the largest about 2.3 KiB (a grant with 256 lane ids); the
// broker caps them here, so an unauthenticated peer cannot make it buffer more.
inline constexpr std::size_t kMaxPreSessionFrameBytes = 16 * 1024;
inline constexpr std::size_t kMaxErrorMessageBytes = 1'024;       // cbqs.max_error_message_bytes (Codec)
inline constexpr std::size_t kMaxErrorDetailsBytes = 4'096;       // cbqs.max_error_details_bytes (Codec)
inline constexpr std::size_t kMaxMessageBytes = 16'777'216;       // Maximum of cbqs.max_message_bytes
inline constexpr std::size_t kMaxLaneListPage = 10'000;           // Maximum of cbqs.max_lane_list_page

}  // namespace cowboy::cbqs::limits
