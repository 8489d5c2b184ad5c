// The devchain HTTP API's JSON forms, used by both the server and the client.
// Conventions: byte strings and addresses are "0x"-prefixed lower-case hex;
// u128 amounts are decimal strings; chain records travel as the hex of their
// canonical CIP-39 encoding (field "…_hex") so the receiver decodes them with
// the one codec, plus readable fields for people.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "devchain/api.h"

namespace cowboy::devchain::json {

using nlohmann::json;

std::string hex0x(ByteView bytes);
/// Parses "0x…" or bare hex of exactly N bytes.
template <std::size_t N>
std::optional<std::array<std::uint8_t, N>> parse_fixed(const std::string& text) {
  return fixed_from_hex<N>(text);
}

json event_to_json(const cbqs::ChainEvent& e);
std::optional<cbqs::ChainEvent> event_from_json(const json& j);

json receipt_to_json(const TxReceipt& r);
std::optional<TxReceipt> receipt_from_json(const json& j);

json params_to_json(const cbqs::Params& p);
std::optional<cbqs::Params> params_from_json(const json& j);

json snapshot_to_json(const ProviderSnapshot& s);
std::optional<ProviderSnapshot> snapshot_from_json(const json& j);

json provider_to_json(const cbqs::ProviderRecordV2& p);
json stream_to_json(const cbqs::StreamRecordV2& s);
json account_to_json(const cbqs::CbqsAccountV2& a);
/// Reads a record back from its "hex" field.
template <typename Record>
std::optional<Record> record_from_json(const json& j);

json error_to_json(const ApiError& e);
ApiError error_from_json(const json& j, int http_status);

}  // namespace cowboy::devchain::json
