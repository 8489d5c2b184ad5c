#include "cbqs/wire/errors.h"

namespace cowboy::cbqs {

std::string_view error_name(ErrorCode code) {
  switch (code) {
#define X(num, name, text) \
  case ErrorCode::k##name: return #name;
    CBQS_ERROR_CODES(X)
#undef X
  }
  return "Unknown";
}

std::string_view error_description(ErrorCode code) {
  switch (code) {
#define X(num, name, text) \
  case ErrorCode::k##name: return text;
    CBQS_ERROR_CODES(X)
#undef X
  }
  return "unknown error";
}

std::optional<ErrorCode> error_from_u16(std::uint16_t value) {
  switch (value) {
#define X(num, name, text) \
  case num: return ErrorCode::k##name;
    CBQS_ERROR_CODES(X)
#undef X
  }
  return std::nullopt;
}

}  // namespace cowboy::cbqs
