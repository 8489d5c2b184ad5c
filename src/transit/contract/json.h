// Strict JSON parsing (nlohmann's lexer, which validates UTF-8 and escapes)
// into an order-preserving tree, refusing what the canonical form never has:
// duplicate keys, non-integer numbers, negative or oversized integers, nesting
// deeper than kMaxDepth. Plus the canonical writers for the scalar spellings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "transit/contract/errors.h"

namespace cowboy::transit::json {

using Tree = nlohmann::ordered_json;
inline constexpr int kMaxDepth = 16;

/// A tree, or the first rule the text breaks (reason duplicate_key,
/// not_integer, negative_integer, integer_too_large, too_deep or syntax).
Result<Tree, DecodeError> parse_strict(std::string_view text);

/// "..." with only `"`, `\` and U+0000..U+001F escaped (\b \f \n \r \t, else \u00xx).
void write_string(std::string& out, std::string_view utf8);
void write_uint(std::string& out, std::uint64_t value);

/// `bytes` as valid UTF-8 of at most `max_bytes`: each byte that is not part
/// of a well-formed sequence becomes the text \xNN, and the cut falls between
/// characters. For messages that quote what a peer sent.
std::string valid_utf8(std::string_view bytes, std::size_t max_bytes);

}  // namespace cowboy::transit::json
