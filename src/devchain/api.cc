#include "devchain/api.h"

namespace cowboy::devchain {

std::string_view api_error_name(ApiErrorCode code) {
  switch (code) {
#define X(name, status, text) \
  case ApiErrorCode::k##name: return #name;
    DEVCHAIN_API_ERRORS(X)
#undef X
  }
  return "Internal";
}

int api_error_http_status(ApiErrorCode code) {
  switch (code) {
#define X(name, status, text) \
  case ApiErrorCode::k##name: return status;
    DEVCHAIN_API_ERRORS(X)
#undef X
  }
  return 500;
}

std::optional<ApiErrorCode> api_error_from_name(std::string_view name) {
#define X(n, status, text) \
  if (name == #n) return ApiErrorCode::k##n;
  DEVCHAIN_API_ERRORS(X)
#undef X
  return std::nullopt;
}

Result<ProviderSnapshot, std::string> ChainApi::read_snapshot(const Address& provider) {
  auto snapshot = provider_snapshot(provider);
  if (!snapshot) return Err{snapshot.error().message};
  return std::move(*snapshot);
}

}  // namespace cowboy::devchain
