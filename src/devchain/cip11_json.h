// JSON forms of the CIP-11 chain plane for the devchain HTTP API and its block
// records (devchain/json.h conventions: 0x hex, u128 as decimal strings).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "cip11/chain/machine.h"
#include "devchain/cip11_api.h"

namespace cowboy::devchain::json {

/// A job-kind mask as the list of its §9.4 names.
nlohmann::json job_kinds_to_json(std::uint32_t mask);
/// Readable fields plus "hex", the canonical record (cip11/chain/codec.h), which
/// is what a client decodes.
nlohmann::json runner_to_json(const cip11::chain::RunnerRecord& r, std::optional<std::uint32_t> index);
nlohmann::json job_to_json(const cip11::chain::JobRecord& job);
std::optional<cip11::chain::RunnerRecord> runner_from_json(const nlohmann::json& j);
std::optional<cip11::chain::JobRecord> job_from_json(const nlohmann::json& j);
/// Mode A's stored proof of a runner (§8.3): anchor, proven_until and "hex",
/// the 16-byte record (encode_presence_proof), which is what a client decodes.
nlohmann::json presence_proof_to_json(const Address& runner, const cip11::chain::PresenceProof& p);
std::optional<cip11::chain::PresenceProof> presence_proof_from_json(const nlohmann::json& j);
/// The presence route's answer, both ways.
nlohmann::json block_presence_to_json(const BlockPresence& p);
std::optional<BlockPresence> block_presence_from_json(const nlohmann::json& j);

/// A block record's CIP-11 part: its presence field, |registry(H-1)|, the
/// consumed seeds and the assignments made and ended.
void put_cip11_block(nlohmann::json& block, const std::optional<Bytes>& presence, std::uint32_t registry_size,
                     const cip11::chain::Effects& effects);
/// The "assigned", "ended" and "deregistered" lists of a block record, which
/// the assignments route answers with too; read back with the block's height
/// (assignments are made at it).
void put_assignments(nlohmann::json& block, const cip11::chain::Effects& effects);
std::optional<cip11::chain::Effects> assignments_from_json(const nlohmann::json& block, std::uint64_t height);
/// Reads the presence part back (the height is the caller's).
std::optional<BlockPresence> cip11_block_presence(const nlohmann::json& block);

}  // namespace cowboy::devchain::json
