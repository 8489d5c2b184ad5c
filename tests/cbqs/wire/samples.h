// One deterministic instance of every CIP-39 object and frame, shared by the
// fixture, round-trip and size tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cbqs/wire/codec.h"

namespace cowboy::cbqs::testing {

struct Sample {
  std::string name;  // also the fixture file name
  Bytes encoded;
  /// Decodes `bytes` as the sample's type; true when it equals the sample.
  std::function<bool(ByteView)> decodes_to_sample;
  /// Decodes `bytes` as the sample's type and re-encodes it; nullopt on decode failure.
  std::function<std::optional<Bytes>(ByteView)> reencode;
  /// The same, with the decoder's typed error on failure.
  std::function<Result<Bytes, DecodeError>(ByteView)> roundtrip;
};

template <typename T>
Sample make_sample(std::string name, const T& value) {
  return Sample{std::move(name), encode(value),
                [value](ByteView b) {
                  auto d = decode<T>(b);
                  return d.ok() && *d == value;
                },
                [](ByteView b) -> std::optional<Bytes> {
                  auto d = decode<T>(b);
                  if (!d) return std::nullopt;
                  return encode(*d);
                },
                [](ByteView b) -> Result<Bytes, DecodeError> {
                  auto d = decode<T>(b);
                  if (!d) return Err{d.error()};
                  return encode(*d);
                }};
}

Bytes32 filled32(std::uint8_t base);
Address filled20(std::uint8_t base);
StreamGrantV2 sample_grant();
CheckpointReceiptV2 sample_checkpoint();
GroupConfigV2 sample_group_config();
StreamSettingsV2 sample_settings();
ProviderRecordV2 sample_provider();

std::vector<Sample> all_samples();

}  // namespace cowboy::cbqs::testing
