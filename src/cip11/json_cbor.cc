#include "cip11/json_cbor.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace cowboy::cip11::cbor {
namespace {

constexpr double kTwo64 = 18446744073709551616.0;

Value scalar(Value::Kind kind, std::uint64_t number = 0) { return Value{kind, number, 0, {}, {}}; }

Res<Value> text(const std::string& s) {
  if (!valid_utf8(as_bytes(s))) return Err{Errc::kInvalidUtf8};
  return Value{Value::Kind::kText, 0, 0, Bytes(s.begin(), s.end()), {}};
}

Res<Value> number(double x) {
  if (!std::isfinite(x)) return Err{Errc::kNonFiniteFloat};
  if (std::trunc(x) == x) {
    if (x >= 0 && x < kTwo64) return scalar(Value::Kind::kUnsigned, static_cast<std::uint64_t>(x));
    if (x < 0 && -x <= kTwo64) {  // -1 - n = x  =>  n = -x - 1
      const double m = -x;
      return scalar(Value::Kind::kNegative, m == kTwo64 ? UINT64_MAX : static_cast<std::uint64_t>(m) - 1);
    }
  }
  return Value{Value::Kind::kFloat, 0, x, {}, {}};
}

Res<Value> convert(const nlohmann::json& j, unsigned depth_left) {
  using T = nlohmann::json::value_t;
  switch (j.type()) {
    case T::null: return scalar(Value::Kind::kNull);
    case T::boolean: return scalar(j.get<bool>() ? Value::Kind::kTrue : Value::Kind::kFalse);
    case T::number_unsigned: return scalar(Value::Kind::kUnsigned, j.get<std::uint64_t>());
    case T::number_integer: {
      const auto v = j.get<std::int64_t>();
      if (v >= 0) return scalar(Value::Kind::kUnsigned, static_cast<std::uint64_t>(v));
      return scalar(Value::Kind::kNegative, static_cast<std::uint64_t>(-(v + 1)));
    }
    case T::number_float: return number(j.get<double>());
    case T::string: return text(j.get_ref<const std::string&>());
    case T::binary: {
      const auto& b = j.get_binary();
      return Value{Value::Kind::kBytes, 0, 0, Bytes(b.begin(), b.end()), {}};
    }
    case T::array:
    case T::object: {
      if (depth_left == 0) return Err{Errc::kTooDeep};
      const bool object = j.is_object();
      Value out{object ? Value::Kind::kMap : Value::Kind::kArray, 0, 0, {}, {}};
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (object) {
          auto key = text(it.key());
          if (!key) return key;
          out.items.push_back(std::move(*key));
        }
        auto item = convert(*it, depth_left - 1);
        if (!item) return item;
        out.items.push_back(std::move(*item));
      }
      return out;
    }
    case T::discarded: break;
  }
  return Err{Errc::kUnexpectedType};
}

}  // namespace

Res<Value> from_json(const nlohmann::json& json, unsigned max_depth) { return convert(json, max_depth); }

}  // namespace cowboy::cip11::cbor
