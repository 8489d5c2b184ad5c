// The one way the broker spells an Error frame: "<Name>: <detail>", the
// detail defaulting to the code's description, cut to the frame's limit.
#pragma once

#include "cbqs/wire/frames.h"
#include "cbqs/wire/limits.h"

namespace cowboy::cbqs::broker {

inline ErrorFrame error_frame(std::optional<Bytes32> request_id, ErrorCode code, std::string_view detail = {},
                              Bytes details = {}) {
  std::string message(error_name(code));
  message += ": ";
  message += detail.empty() ? error_description(code) : detail;
  if (message.size() > limits::kMaxErrorMessageBytes) message.resize(limits::kMaxErrorMessageBytes);
  return ErrorFrame{request_id, static_cast<std::uint16_t>(code), Bytes(message.begin(), message.end()),
                    std::move(details)};
}

}  // namespace cowboy::cbqs::broker
