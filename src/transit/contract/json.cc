#include "transit/contract/json.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <vector>

#include "transit/contract/values.h"

namespace cowboy::transit::json {
namespace {

// Builds the tree by hand so that every rule is checked as the lexer meets it.
class StrictSax {
 public:
  bool null() { return add(Tree(nullptr)); }
  bool boolean(bool v) { return add(Tree(v)); }
  bool number_integer(std::int64_t) { return fail(Reason::kNegativeInteger); }  // only negatives arrive here
  bool number_unsigned(std::uint64_t v) {
    if (v > kMaxSafeInteger) return fail(Reason::kIntegerTooLarge);
    return add(Tree(v));
  }
  bool number_float(double, const std::string& text) {
    // 2^64 and above arrive as floats; tell them from fractions and exponents.
    const bool digits_only = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    return fail(digits_only            ? Reason::kIntegerTooLarge
                : text.starts_with('-') ? Reason::kNegativeInteger
                                        : Reason::kNotInteger);
  }
  bool string(std::string& v) { return add(Tree(std::move(v))); }
  bool binary(Tree::binary_t&) { return fail(Reason::kSyntax); }
  bool start_object(std::size_t) { return open(Tree::object()); }
  bool key(std::string& k) {
    // Objects here hold a dozen keys at most: the object itself is the set of keys seen.
    if (stack_.back()->contains(k)) return fail(Reason::kDuplicateKey, k);
    key_ = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(Tree::array()); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    if (!failed_) error_ = DecodeError{Reason::kSyntax, "", e.what()}, failed_ = true;
    return false;
  }

  Result<Tree, DecodeError> take() {
    if (failed_) return Err{error_};
    return std::move(root_);
  }

 private:
  bool fail(Reason reason, std::string detail = {}) {
    if (!failed_) error_ = DecodeError{reason, "", std::move(detail)}, failed_ = true;
    return false;
  }
  bool add(Tree value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return true;
    }
    Tree& parent = *stack_.back();
    if (parent.is_object()) {
      Tree& slot = parent[key_];
      slot = std::move(value);
      last_ = &slot;
    } else {
      parent.push_back(std::move(value));
      last_ = &parent.back();
    }
    return true;
  }
  bool open(Tree container) {
    if (stack_.size() >= static_cast<std::size_t>(kMaxDepth)) return fail(Reason::kTooDeep);
    if (stack_.empty()) {
      root_ = std::move(container);
      stack_.push_back(&root_);
    } else {
      add(std::move(container));
      stack_.push_back(last_);
    }
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  Tree root_;
  std::vector<Tree*> stack_;
  std::string key_;
  Tree* last_ = nullptr;
  DecodeError error_;
  bool failed_ = false;
};

}  // namespace

Result<Tree, DecodeError> parse_strict(std::string_view text) {
  StrictSax sax;
  const bool ok = Tree::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json, true);
  auto tree = sax.take();
  if (!tree.ok()) return tree;
  if (!ok) return Err{DecodeError{Reason::kSyntax, "", "not one JSON value"}};
  return tree;
}

void write_string(std::string& out, std::string_view utf8) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  // Most text needs no escape: copy it whole.
  if (std::none_of(utf8.begin(), utf8.end(), [](char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; })) {
    out.append(utf8);
    out.push_back('"');
    return;
  }
  for (const char c : utf8) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out.push_back(kHex[u >> 4]);
          out.push_back(kHex[u & 0xf]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

namespace {

// The length of the well-formed UTF-8 sequence at the start of `s`
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or 0.
std::size_t sequence_length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto tail = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xbf) {
    return i < s.size() && b(i) >= lo && b(i) <= hi;
  };
  const unsigned c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return tail(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    return tail(1, lo, hi) && tail(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    return tail(1, lo, hi) && tail(2) && tail(3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

std::string valid_utf8(std::string_view bytes, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  while (!bytes.empty()) {
    const std::size_t n = sequence_length(bytes);
    const std::size_t width = n ? n : 4;  // an ill-formed byte becomes \xNN
    if (out.size() + width > max_bytes) break;
    if (n) {
      out.append(bytes.substr(0, n));
    } else {
      const auto u = static_cast<unsigned char>(bytes[0]);
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xf]);
    }
    bytes.remove_prefix(n ? n : 1);
  }
  return out;
}

void write_uint(std::string& out, std::uint64_t value) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  out.append(buf, end);
}

}  // namespace cowboy::transit::json
