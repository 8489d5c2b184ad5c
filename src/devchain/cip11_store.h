// The CIP-11 plane in the devchain's store: every record under its own key,
// so a block writes exactly the records it changed (one synced WriteBatch
// with the rest of the block, node.h), and the reads the API serves, taken
// at the snapshot of the last published block.
//
//   c11/runner/<address 20>               encode_runner
//   c11/index/<u32 BE>                    the address at that ACTIVE_RUNNERS_KEY position
//   c11/job/<job_id 32>                   encode_job
//   c11/mru/<submitter 20><kind u8>       encode_mru
//   c11/presence/<runner 20>              encode_presence_proof: Mode A's presence_anchor
//                                         and presence_proven_until (§8.3)
//   c11/jobs_submitted                    u64 BE
//   c11/assigned/<runner 20><job_id 32>   empty: the poll view (§14), a job in state
//                                         Assigned whose current committee holds the runner
//
// The assigned keys are derived: stage() puts and deletes them from each
// changed job's committee before and after the block.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "cip11/chain/state.h"
#include "devchain/api.h"

namespace cowboy::devchain::cip11_store {

/// Adds everything `state` changed since its last commit to `batch`.
void stage(const cip11::chain::State& state, rocksdb::WriteBatch& batch);

/// The stored plane, committed; an error names what is unreadable.
Result<cip11::chain::State, std::string> load(rocksdb::DB& db);

/// Reads at `at` (a snapshot of a written block).
ApiResult<cip11::chain::RunnerRecord> runner(rocksdb::DB& db, const rocksdb::ReadOptions& at, const Address& runner);
/// Every runner in registry index order.
ApiResult<std::vector<cip11::chain::RunnerRecord>> runners(rocksdb::DB& db, const rocksdb::ReadOptions& at);
ApiResult<cip11::chain::JobRecord> job(rocksdb::DB& db, const rocksdb::ReadOptions& at, const cip11::JobId& job_id);
/// A runner's Mode A presence proof (§8.3); kNotFound before its first certificate.
ApiResult<cip11::chain::PresenceProof> presence(rocksdb::DB& db, const rocksdb::ReadOptions& at, const Address& runner);
/// The poll view: the jobs in state Assigned whose current committee holds `runner`.
ApiResult<std::vector<cip11::chain::JobRecord>> runner_jobs(rocksdb::DB& db, const rocksdb::ReadOptions& at,
                                                            const Address& runner);

}  // namespace cowboy::devchain::cip11_store
