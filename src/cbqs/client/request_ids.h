// Request ids that carry a counter: the client picks request_id (§11.1), and
// numbering requests lets it match answers to what it sent.
#pragma once

#include "common/bytes.h"

namespace cowboy::cbqs::client {

/// A request id holding `n` big-endian in its last 8 bytes.
inline Bytes32 request_id(std::uint64_t n) {
  Bytes32 b{};
  for (int i = 0; i < 8; ++i) b[24 + i] = static_cast<std::uint8_t>(n >> (56 - 8 * i));
  return b;
}

/// The counter request_id() put into `id`.
inline std::uint64_t request_number(const Bytes32& id) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | id[24 + i];
  return v;
}

}  // namespace cowboy::cbqs::client
