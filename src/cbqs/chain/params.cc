#include "cbqs/chain/params.h"

#include <array>

namespace cowboy::cbqs {

namespace {
constexpr std::array kTable = {
#define X(name, cls, def, max, min) ParamSpec{#name, ParamClass::cls, def, max, min},
    CBQS_PARAMS(X)
#undef X
};

std::string_view strip_prefix(std::string_view name) {
  if (name.starts_with("cbqs.")) name.remove_prefix(5);
  return name;
}
}  // namespace

std::string_view to_string(ParamClass c) {
  switch (c) {
    case ParamClass::kAdmission: return "Admission";
    case ParamClass::kCeiling: return "Ceiling";
    case ParamClass::kRuntime: return "Runtime";
    case ParamClass::kCodec: return "Codec";
  }
  return "?";
}

std::string_view to_string(ParamWriteError e) {
  switch (e) {
    case ParamWriteError::kUnknownParameter: return "unknown parameter";
    case ParamWriteError::kBelowMinimum: return "value below the parameter's minimum";
    case ParamWriteError::kAboveMaximum: return "value above the parameter's maximum";
    case ParamWriteError::kCodecImmovable: return "a Codec parameter accepts only its default";
  }
  return "?";
}

std::span<const ParamSpec> param_table() { return kTable; }

const ParamSpec* find_param(std::string_view name) {
  name = strip_prefix(name);
  for (const auto& spec : kTable)
    if (spec.name == name) return &spec;
  return nullptr;
}

std::optional<std::uint64_t> Params::get(std::string_view name) const {
  name = strip_prefix(name);
#define X(field, cls, def, max, min) \
  if (name == #field) return field;
  CBQS_PARAMS(X)
#undef X
  return std::nullopt;
}

bool Params::set(std::string_view name, std::uint64_t value) {
  name = strip_prefix(name);
#define X(field, cls, def, max, min) \
  if (name == #field) {              \
    field = value;                   \
    return true;                     \
  }
  CBQS_PARAMS(X)
#undef X
  return false;
}

std::optional<ParamWriteError> validate_param_write(std::string_view name, std::uint64_t value) {
  const ParamSpec* spec = find_param(name);
  if (!spec) return ParamWriteError::kUnknownParameter;
  if (spec->param_class == ParamClass::kCodec && value != spec->default_value)
    return ParamWriteError::kCodecImmovable;
  if (value < spec->minimum) return ParamWriteError::kBelowMinimum;
  if (value > spec->maximum) return ParamWriteError::kAboveMaximum;
  return std::nullopt;
}

}  // namespace cowboy::cbqs
