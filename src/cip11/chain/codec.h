// The stored form of the CIP-11 chain state, of each of its records, and of
// its parameters (common/codec.h rules). Decoding is strict and bounded: every
// count and length is checked against the remaining input before anything is
// allocated. A decoded state is committed (state.h).
#pragma once

#include "cip11/chain/state.h"
#include "common/codec.h"

namespace cowboy::cip11::chain {

void put_state(codec::Writer& w, const State& state);
State get_state(codec::Reader& r);

void put_params(codec::Writer& w, const ChainParams& params);
ChainParams get_params(codec::Reader& r);

/// The dev JobSpec (docs/cip11.md choice 45), what a JobAssignment carries as
/// `job_spec` and job_spec_hash() hashes:
///   DevJobSpecV1 { version u8 = 1, job_id [32], kind u8, timeout_blocks u64,
///                  runners u32, max_price u128, submitter [20], payload Bytes }
Bytes job_spec_bytes(const JobRecord& job);

/// One runner record alone: the unit the devchain stores per runner.
Bytes encode_runner(const RunnerRecord& runner);
Result<RunnerRecord, codec::DecodeError> decode_runner(ByteView bytes);
/// One job record alone.
Bytes encode_job(const JobRecord& job);
Result<JobRecord, codec::DecodeError> decode_job(ByteView bytes);
/// One MRU record alone (its key, submitter and job kind, is the store's).
Bytes encode_mru(const MruRecord& mru);
Result<MruRecord, codec::DecodeError> decode_mru(ByteView bytes);
/// One runner's Mode A presence proof (its key, the runner's address, is the store's).
Bytes encode_presence_proof(const PresenceProof& proof);
Result<PresenceProof, codec::DecodeError> decode_presence_proof(ByteView bytes);
/// A job kind byte as the codec accepts it (the §9.4 table).
std::optional<JobKind> job_kind_from_byte(std::uint8_t byte);

}  // namespace cowboy::cip11::chain
