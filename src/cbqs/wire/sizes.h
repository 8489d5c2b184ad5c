// Encoded sizes the seed's arithmetic depends on (§6, §13; cbqs-wire-facts §1).
// Tests check each against the codec's real output.
#pragma once

#include <cstdint>

namespace cowboy::cbqs::sizes {

/// canonical(AppendRequestV2): lane_id u64 + payload length u32 + n.
constexpr std::uint64_t append_request_bytes(std::uint64_t n) { return 12 + n; }
/// Delivery frame: 2 + session 32 + subscription 32 + lease option (1 or 33)
/// + RecordHeaderV2 41 + sequence 8 + payload (4 + n).
constexpr std::uint64_t delivery_frame_bytes(std::uint64_t n, bool leased) { return (leased ? 152 : 120) + n; }
/// Response { body: Ok }, the answer to Ack/Nack/Extend/Reject.
constexpr std::uint64_t ok_response_bytes = 35;
/// Response { body: Appended { sequence } }.
constexpr std::uint64_t appended_response_bytes = 43;

/// §13: the delivered-byte rate a stream needs so that G groups can each
/// receive, and ack, every append of n payload bytes arriving at A bytes/s
/// (A counts canonical(AppendRequestV2) bytes):
///   D >= (G x (152 + 35 + n) + 43) / (12 + n) x A       (rounded up)
constexpr std::uint64_t required_delivered_bytes_per_sec(std::uint64_t groups, std::uint64_t n,
                                                         std::uint64_t append_bytes_per_sec) {
  unsigned __int128 per_append = groups * (delivery_frame_bytes(n, true) + ok_response_bytes) + appended_response_bytes;
  unsigned __int128 numerator = per_append * append_bytes_per_sec;
  unsigned __int128 denominator = append_request_bytes(n);
  return static_cast<std::uint64_t>((numerator + denominator - 1) / denominator);
}

/// §6: leases a stream can hold at most because of its delivered rate: every
/// lease is a 152-byte-plus delivery outstanding for at most max_visibility_ms.
constexpr std::uint64_t rate_derived_lease_bound(std::uint64_t delivered_bytes_per_sec,
                                                 std::uint64_t max_visibility_ms) {
  unsigned __int128 bytes_in_window = static_cast<unsigned __int128>(delivered_bytes_per_sec) * max_visibility_ms / 1000;
  return static_cast<std::uint64_t>(bytes_in_window / delivery_frame_bytes(0, true));
}

}  // namespace cowboy::cbqs::sizes
