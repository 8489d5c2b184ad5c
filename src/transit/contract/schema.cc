#include "transit/contract/schema.h"

#include "common/bytes.h"
#include "common/crypto.h"
#include "transit/contract/codec.h"
#include "transit/contract/signing.h"

namespace cowboy::transit {
namespace {

using Schema = nlohmann::ordered_json;

Schema integer_schema(std::uint64_t max = kMaxSafeInteger) {
  return Schema{{"type", "integer"}, {"minimum", 0}, {"maximum", max}};
}

template <typename T> Schema schema_of();

struct PropertyWriter {
  Schema properties = Schema::object();
  Schema required = Schema::array();
  template <typename T> PropertyWriter& operator()(std::string_view name, const T&) {
    properties[std::string(name)] = schema_of<T>();
    required.push_back(name);
    return *this;
  }
};

template <typename T> struct SchemaOf;

template <> struct SchemaOf<std::uint64_t> {
  static Schema get() { return integer_schema(); }
};
template <typename Tag, typename Rep> struct SchemaOf<StrongId<Tag, Rep>> {
  static Schema get() { return schema_of<Rep>(); }  // a strong id is its wire value
};
template <> struct SchemaOf<bool> {
  static Schema get() { return Schema{{"type", "boolean"}}; }
};
template <> struct SchemaOf<Version> {
  static Schema get() { return Schema{{"const", kVersion}}; }
};
template <> struct SchemaOf<Definition> {
  static Schema get() { return Schema{{"type", "string"}, {"x-transit-definition", true}}; }
};
template <> struct SchemaOf<Permissions> {
  static Schema get() {
    auto s = integer_schema(kAllPermissions);
    s["x-transit-bits"] = Schema::array();
    for (auto name : kPermissionNames) s["x-transit-bits"].push_back(name);
    return s;
  }
};
template <std::size_t Lo, std::size_t Hi> struct SchemaOf<Text<Lo, Hi>> {
  static Schema get() { return Schema{{"type", "string"}, {"x-transit-min-bytes", Lo}, {"x-transit-max-bytes", Hi}}; }
};
template <std::size_t N, std::size_t M> struct SchemaOf<Hex<N, M>> {
  static Schema get() {
    return Schema{{"type", "string"}, {"pattern", "^([0-9a-f]{2})*$"}, {"minLength", 2 * M}, {"maxLength", 2 * N}};
  }
};
template <typename T, std::size_t N> struct SchemaOf<Slots<T, N>> {
  static Schema get() {
    return Schema{{"type", "array"}, {"items", schema_of<std::optional<T>>()}, {"minItems", N}, {"maxItems", N}};
  }
};
template <std::size_t N> struct SchemaOf<Fixed<N>> {
  static Schema get() {
    return Schema{{"type", "array"}, {"items", integer_schema(255)}, {"minItems", N}, {"maxItems", N}};
  }
};
template <typename E> requires requires { EnumTraits<E>::kNames; } struct SchemaOf<E> {
  static Schema get() {
    Schema names = Schema::array();
    for (auto n : EnumTraits<E>::kNames) names.push_back(n);
    return Schema{{"enum", names}};
  }
};
template <typename T> struct SchemaOf<std::optional<T>> {
  static Schema get() { return Schema{{"oneOf", Schema::array({schema_of<T>(), Schema{{"type", "null"}}})}}; }
};
template <typename T, std::size_t N> struct SchemaOf<List<T, N>> {
  static Schema get() { return Schema{{"type", "array"}, {"items", schema_of<T>()}, {"maxItems", N}}; }
};
template <typename... A> struct SchemaOf<std::variant<A...>> {
  static Schema get() {
    Schema options = Schema::array();
    (options.push_back(Schema{{"type", "object"},
                              {"properties", Schema{{std::string(A::kName), schema_of<A>()}}},
                              {"required", Schema::array({A::kName})},
                              {"additionalProperties", false}}),
     ...);
    return Schema{{"oneOf", options}};
  }
};
template <Record T> struct SchemaOf<T> {
  static Schema get() {
    PropertyWriter w;
    T value{};
    fields(w, value);
    return Schema{{"type", "object"},
                  {"properties", w.properties},
                  {"required", w.required},
                  {"additionalProperties", false}};
  }
};

template <typename T> Schema schema_of() { return SchemaOf<T>::get(); }

template <typename... T> Schema definitions() {
  Schema defs = Schema::object();
  ((defs[std::string(T::kName)] = schema_of<T>()), ...);
  return defs;
}

std::string render(const std::string& definition_id) {
  Schema s;
  s["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  s["$id"] = "transit-v1.schema.json";
  s["title"] = "Transit native protocol v1";
  s["x-transit"] = Schema{
      {"definition", definition_id},
      {"version", kVersion},
      {"signing", Schema{{"request", std::string(kRequestDomain)}, {"query", std::string(kQueryDomain)},
                         {"digest", "SHA-256(domain || 0x00 || canonical JSON)"}, {"signature", "Ed25519"}}},
      {"max_request_bytes", kMaxRequestBytes},
      {"routes", Schema{{"POST /v1/command", Schema{{"request", "SignedRequest"}, {"response", "Receipt"}}},
                        {"POST /v1/query", Schema{{"request", "SignedQuery"}, {"response", "Response"}}},
                        // The payload listener's routes (decisions 87-90): X-Transit-Query is a SignedQuery of payload.
                        {"PUT /v1/payloads/{id}", Schema{{"header", "X-Transit-Query: SignedQuery"}, {"request", "bytes"}, {"response", "Response"}}},
                        {"GET /v1/payloads/{id}", Schema{{"header", "X-Transit-Query: SignedQuery"}, {"response", "bytes"}}},
                        {"DELETE /v1/payloads/{id}", Schema{{"header", "X-Transit-Query: SignedQuery"}, {"response", "Response"}}},
                        {"rejection", "Rejection"}}}};
  s["$defs"] = definitions<SignedRequest, Request, SignedQuery, Query, Receipt, Response, Rejection, Genesis>();
  return s.dump(2) + "\n";
}

}  // namespace

std::string schema_text_without_definition() { return render(""); }

std::string schema_text() { return render(definition()); }

const std::string& definition() {
  static const std::string id = [] {
    const std::string blank = schema_text_without_definition();
    return "transit.v1:" + to_hex(crypto::sha256(as_bytes(blank)));
  }();
  return id;
}

}  // namespace cowboy::transit
