// §15 governance parameters: the full table (docs/protocol.md §F). The X-macro
// is the single source for names, classes, defaults, maxima and minima; the
// genesis rule (§18 rule 1) and the governance-write validator both read it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cowboy::cbqs {

enum class ParamClass : std::uint8_t { kAdmission, kCeiling, kRuntime, kCodec };
std::string_view to_string(ParamClass c);

// X(name, class, default, maximum, minimum)
// A minimum of 1 is the refusal of a zero-value hazard (§15); Codec rows accept
// only their default.
#define CBQS_PARAMS(X)                                                                  \
  X(max_snapshot_age_blocks, kAdmission, 600, 86'400, 1)                                \
  X(max_grant_ttl_ms, kAdmission, 86'400'000, 2'592'000'000, 1)                         \
  X(max_clock_skew_ms, kAdmission, 5'000, 300'000, 0)                                   \
  X(max_lane_ids_per_grant, kCodec, 256, 256, 256)                                      \
  X(max_provider_endpoints, kCodec, 8, 8, 8)                                            \
  X(max_provider_endpoint_uri_bytes, kCodec, 256, 256, 256)                             \
  X(max_frame_bytes, kCodec, 16'778'240, 16'778'240, 16'778'240)                        \
  X(max_error_message_bytes, kCodec, 1'024, 1'024, 1'024)                               \
  X(max_error_details_bytes, kCodec, 4'096, 4'096, 4'096)                               \
  X(max_sessions_per_connection, kRuntime, 16, 1'024, 1)                                \
  X(session_handshake_timeout_ms, kRuntime, 10'000, 120'000, 1)                         \
  X(max_lanes_per_stream, kAdmission, 65'536, 16'777'216, 1)                            \
  X(max_groups_per_stream, kAdmission, 64, 1'024, 1)                                    \
  X(visibility_ms, kCeiling, 30'000, 43'200'000, 1)                                     \
  X(max_attempts, kCeiling, 16, 65'535, 1)                                              \
  X(max_in_flight_per_group, kCeiling, 262'144, 1'048'576, 1)                           \
  X(retention_ms, kCeiling, 604'800'000, 31'536'000'000, 1)                             \
  X(max_message_bytes, kCeiling, 1'048'576, 16'777'216, 1)                              \
  X(max_retained_bytes_per_stream, kCeiling, 1'073'741'824, 1'099'511'627'776, 1)       \
  X(max_append_bytes_per_sec, kCeiling, 1'048'576, 268'435'456, 1)                      \
  X(max_delivered_bytes_per_sec, kCeiling, 4'194'304, 1'073'741'824, 1)                 \
  X(max_lane_list_page, kAdmission, 1'000, 10'000, 1)                                   \
  X(snapshot_refresh_ms, kRuntime, 2'000, 600'000, 1)                                   \
  X(slow_consumer_timeout_ms, kRuntime, 30'000, 600'000, 1)                             \
  X(commit_batch_max_ms, kRuntime, 5, 1'000, 1)                                         \
  X(commit_batch_max_records, kRuntime, 1'024, 65'536, 1)                               \
  X(stream_rate_per_block, kAdmission, 1'000, 1'000'000'000'000, 1)

struct ParamSpec {
  std::string_view name;  // without the "cbqs." prefix
  ParamClass param_class;
  std::uint64_t default_value;
  std::uint64_t maximum;
  std::uint64_t minimum;
};

/// Every row of the table, in table order.
std::span<const ParamSpec> param_table();
/// Looks a name up with or without its "cbqs." prefix.
const ParamSpec* find_param(std::string_view name);

/// The current value of every parameter; constructed at the defaults.
struct Params {
#define X(name, cls, def, max, min) std::uint64_t name = def;
  CBQS_PARAMS(X)
#undef X
  bool operator==(const Params&) const = default;

  std::optional<std::uint64_t> get(std::string_view name) const;
  /// Sets without validation; callers validate with validate_param_write first.
  bool set(std::string_view name, std::uint64_t value);
};

enum class ParamWriteError : std::uint8_t {
  kUnknownParameter,  // not a row of §15
  kBelowMinimum,      // includes every §15 zero-value hazard
  kAboveMaximum,
  kCodecImmovable,    // a Codec row written with anything but its default
};
std::string_view to_string(ParamWriteError e);

/// The governance-write rule of §15; nullopt when the write is admissible.
std::optional<ParamWriteError> validate_param_write(std::string_view name, std::uint64_t value);

}  // namespace cowboy::cbqs
