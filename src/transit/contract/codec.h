// The canonical JSON writer and the strict decoder, both walking the field
// lists of types.h. to_json(x) is the only spelling of x; from_json accepts
// exactly that spelling (any other, even of the same value, is refused with
// the rule it breaks), so what was signed is what is decoded.
#pragma once

#include <algorithm>
#include <span>

#include "transit/contract/json.h"
#include "transit/contract/types.h"

namespace cowboy::transit {

/// The exact identifier of this build's contract: "transit.v1:" + the hex
/// SHA-256 of transit-v1.schema.json with its x-transit.definition blanked.
const std::string& definition();

template <typename T> concept Record = requires { T::kName; };
template <typename T> struct IsVariant : std::false_type {};
template <typename... A> struct IsVariant<std::variant<A...>> : std::true_type {};

namespace codec {

template <typename T> void write(std::string& out, const T& value);

class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_.push_back('{'); }
  template <typename T> ObjectWriter& operator()(std::string_view name, const T& value) {
    if (!first_) out_.push_back(',');
    first_ = false;
    json::write_string(out_, name);
    out_.push_back(':');
    write(out_, value);
    return *this;
  }
  void finish() { out_.push_back('}'); }

 private:
  std::string& out_;
  bool first_ = true;
};

inline void write_value(std::string& out, std::uint64_t v) { json::write_uint(out, v); }
// A strong id is its wire value alone (values.h).
template <typename Tag, typename Rep> void write_value(std::string& out, const StrongId<Tag, Rep>& v) {
  write_value(out, v.value);
}
inline void write_value(std::string& out, bool v) { out += v ? "true" : "false"; }
inline void write_value(std::string& out, const Version& v) { json::write_uint(out, v.value); }
inline void write_value(std::string& out, const Definition& v) {
  json::write_string(out, v.value.empty() ? definition() : v.value);
}
inline void write_value(std::string& out, const Permissions& v) { json::write_uint(out, v.bits); }
template <std::size_t Lo, std::size_t Hi> void write_value(std::string& out, const Text<Lo, Hi>& v) {
  json::write_string(out, v.value);
}
template <std::size_t N, std::size_t M> void write_value(std::string& out, const Hex<N, M>& v) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::size_t at = out.size();
  out.resize(at + 2 + 2 * v.value.size());  // one allocation, not one per digit
  char* p = out.data() + at;
  *p++ = '"';
  for (auto b : v.value) *p++ = kHex[b >> 4], *p++ = kHex[b & 0xf];
  *p = '"';
}
template <std::size_t N> void write_value(std::string& out, const Fixed<N>& v) {
  out.push_back('[');
  for (std::size_t i = 0; i < N; ++i) {
    if (i) out.push_back(',');
    json::write_uint(out, v[i]);
  }
  out.push_back(']');
}
template <typename E> requires requires { EnumTraits<E>::kNames; }
void write_value(std::string& out, E v) {
  json::write_string(out, EnumTraits<E>::kNames[static_cast<std::size_t>(v)]);
}
template <typename T> void write_value(std::string& out, const std::optional<T>& v) {
  if (v) return write(out, *v);
  out += "null";
}
template <typename T, std::size_t N> void write_value(std::string& out, const List<T, N>& v) {
  out.push_back('[');
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    if (i) out.push_back(',');
    write(out, v.items[i]);
  }
  out.push_back(']');
}
template <typename T, std::size_t N> void write_value(std::string& out, const Slots<T, N>& v) {
  out.push_back('[');
  for (std::size_t i = 0; i < N; ++i) {
    if (i) out.push_back(',');
    write_value(out, v.items[i]);
  }
  out.push_back(']');
}
template <typename... A> void write_value(std::string& out, const std::variant<A...>& v) {
  std::visit(
      [&](const auto& alt) {
        out.push_back('{');
        json::write_string(out, std::decay_t<decltype(alt)>::kName);
        out.push_back(':');
        write(out, alt);
        out.push_back('}');
      },
      v);
}
template <Record T> void write_value(std::string& out, const T& v) {
  ObjectWriter w(out);
  fields(w, const_cast<T&>(v));  // the list is shared with the decoder; the writer only reads
  w.finish();
}

template <typename T> void write(std::string& out, const T& value) { write_value(out, value); }

// ---- the decoder -----------------------------------------------------------------

struct NameList {
  std::vector<std::string_view> names;
  template <typename T> NameList& operator()(std::string_view name, const T&) {
    names.push_back(name);
    return *this;
  }
};

class Reader {
  static int nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  }

 public:
  template <typename T> bool read(const json::Tree& j, T& out) { return get(j, out); }
  const DecodeError& error() const { return error_; }
  bool failed() const { return failed_; }

  bool fail(Reason reason, std::string detail = {}) {
    if (!failed_) error_ = DecodeError{reason, path(), std::move(detail)}, failed_ = true;
    return false;
  }

  // Walks one object's fields in declaration order.
  class Fields {
   public:
    Fields(Reader& r, const json::Tree& j) : r_(r), j_(j), it_(j.begin()) {}
    template <typename T> Fields& operator()(std::string_view name, T& value) {
      if (r_.failed()) return *this;
      r_.path_.push_back(name);
      if (it_ == j_.end() || it_.key() != name) {
        if (j_.contains(name)) r_.fail(Reason::kFieldOrder);
        else r_.fail(std::is_same_v<T, Definition> ? Reason::kMissingDefinition : Reason::kMissingField);
      } else {
        r_.get(*it_, value);
        ++it_;
      }
      if (!r_.failed()) r_.path_.pop_back();
      return *this;
    }

   private:
    Reader& r_;
    const json::Tree& j_;
    json::Tree::const_iterator it_;
  };

  bool get(const json::Tree& j, std::uint64_t& v) {
    if (!j.is_number_unsigned()) return fail(Reason::kWrongType, "expected an integer");
    v = j.get<std::uint64_t>();  // parse_strict bounded it
    return true;
  }
  template <typename Tag, typename Rep> bool get(const json::Tree& j, StrongId<Tag, Rep>& v) { return get(j, v.value); }
  bool get(const json::Tree& j, bool& v) {
    if (!j.is_boolean()) return fail(Reason::kWrongType, "expected true or false");
    v = j.get<bool>();
    return true;
  }
  bool get(const json::Tree& j, Version& v) {
    if (!j.is_number_unsigned() || j.get<std::uint64_t>() != kVersion) return fail(Reason::kUnknownVersion);
    v.value = kVersion;
    return true;
  }
  bool get(const json::Tree& j, Definition& v) {
    if (!j.is_string() || j.get_ref<const std::string&>() != definition()) return fail(Reason::kForeignDefinition);
    v.value = definition();
    return true;
  }
  bool get(const json::Tree& j, Permissions& v) {
    if (!get(j, v.bits)) return false;
    if (v.bits & ~kAllPermissions) return fail(Reason::kUnknownPermission);
    return true;
  }
  template <std::size_t Lo, std::size_t Hi> bool get(const json::Tree& j, Text<Lo, Hi>& v) {
    if (!j.is_string()) return fail(Reason::kWrongType, "expected a string");
    const auto& s = j.get_ref<const std::string&>();
    if (s.size() < Lo || s.size() > Hi) return fail(Reason::kBadLength, "text of " + std::to_string(Lo) + ".." + std::to_string(Hi) + " bytes");
    v.value = s;
    return true;
  }
  template <std::size_t N, std::size_t M> bool get(const json::Tree& j, Hex<N, M>& v) {
    if (!j.is_string()) return fail(Reason::kWrongType, "expected a hex string");
    const auto& s = j.get_ref<const std::string&>();
    if (s.size() > 2 * N || s.size() < 2 * M)
      return fail(Reason::kBadLength, std::to_string(M) + ".." + std::to_string(N) + " bytes");
    if (s.size() % 2) return fail(Reason::kBadHex);
    v.value.resize(s.size() / 2);
    for (std::size_t i = 0; i < v.value.size(); ++i) {
      const int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
      if (hi < 0 || lo < 0) return fail(Reason::kBadHex);  // lowercase only: one spelling
      v.value[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    return true;
  }
  template <std::size_t N> bool get(const json::Tree& j, Fixed<N>& v) {
    if (!j.is_array()) return fail(Reason::kWrongType, "expected an array of " + std::to_string(N) + " bytes");
    if (j.size() != N) return fail(Reason::kBadLength, "expected " + std::to_string(N) + " bytes");
    for (std::size_t i = 0; i < N; ++i) {
      const auto& b = j[i];
      if (!b.is_number_unsigned() || b.get<std::uint64_t>() > 255) return fail(Reason::kWrongType, "expected a byte");
      v[i] = static_cast<std::uint8_t>(b.get<std::uint64_t>());
    }
    return true;
  }
  template <typename E> requires requires { EnumTraits<E>::kNames; }
  bool get(const json::Tree& j, E& v) {
    if (!j.is_string()) return fail(Reason::kWrongType, "expected a name");
    const auto& names = EnumTraits<E>::kNames;
    const auto it = std::find(names.begin(), names.end(), j.get_ref<const std::string&>());
    if (it == names.end()) return fail(Reason::kUnknownVariant);
    v = static_cast<E>(it - names.begin());
    return true;
  }
  template <typename T> bool get(const json::Tree& j, std::optional<T>& v) {
    if (j.is_null()) return v.reset(), true;
    v.emplace();
    return get(j, *v);
  }
  template <typename T, std::size_t N> bool get(const json::Tree& j, List<T, N>& v) {
    if (!j.is_array()) return fail(Reason::kWrongType, "expected an array");
    if (j.size() > N) return fail(Reason::kTooManyItems, "at most " + std::to_string(N));
    v.items.assign(j.size(), T{});
    for (std::size_t i = 0; i < j.size(); ++i)
      if (!get(j[i], v.items[i])) return false;
    return true;
  }
  template <typename T, std::size_t N> bool get(const json::Tree& j, Slots<T, N>& v) {
    if (!j.is_array()) return fail(Reason::kWrongType, "expected an array");
    if (j.size() != N) return fail(Reason::kBadLength, "exactly " + std::to_string(N) + " slots");
    for (std::size_t i = 0; i < N; ++i)
      if (!get(j[i], v.items[i])) return false;
    return true;
  }
  template <typename... A> bool get(const json::Tree& j, std::variant<A...>& v) {
    if (!j.is_object() || j.size() != 1) return fail(Reason::kWrongType, "expected a single-key union object");
    const std::string& key = j.begin().key();
    bool matched = false;
    (try_alternative<A>(key, j.begin().value(), v, matched), ...);
    if (!matched) return fail(Reason::kUnknownVariant, key);
    return !failed();
  }
  template <Record T> bool get(const json::Tree& j, T& v) {
    if (!j.is_object()) return fail(Reason::kWrongType, "expected an object");
    NameList names;
    fields(names, v);
    for (auto it = j.begin(); it != j.end(); ++it)
      if (std::find(names.names.begin(), names.names.end(), it.key()) == names.names.end())
        return fail(Reason::kUnknownField, it.key());
    Fields walker(*this, j);
    fields(walker, v);
    return !failed();
  }

 private:
  template <typename A, typename... All>
  void try_alternative(const std::string& key, const json::Tree& body, std::variant<All...>& v, bool& matched) {
    if (matched || key != A::kName) return;
    matched = true;
    path_.push_back(A::kName);
    A alt{};
    if (get(body, alt)) {
      v = std::move(alt);
      path_.pop_back();
    }
  }
  std::string path() const {
    std::string p;
    for (auto part : path_) {
      if (!p.empty()) p.push_back('.');
      p.append(part);
    }
    return p;
  }

  std::vector<std::string_view> path_;
  DecodeError error_;
  bool failed_ = false;
};

}  // namespace codec

/// The canonical spelling.
template <typename T> std::string to_json(const T& value) {
  std::string out;
  codec::write(out, value);
  return out;
}

/// Strict: at most max_bytes, one spelling (the canonical one), every rule of
/// the value kinds; the first broken rule is the error.
template <typename T> Result<T, DecodeError> from_json(std::string_view text, std::size_t max_bytes) {
  if (text.size() > max_bytes) return Err{DecodeError{Reason::kTooLarge, "", std::to_string(text.size()) + " bytes"}};
  auto tree = json::parse_strict(text);
  if (!tree.ok()) return Err{tree.error()};
  T value{};
  codec::Reader reader;
  if (!reader.read(*tree, value)) return Err{reader.error()};
  if (to_json(value) != text) return Err{DecodeError{Reason::kNonCanonical, "", "not the canonical spelling"}};
  return value;
}

}  // namespace cowboy::transit
