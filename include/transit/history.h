// History trimming, the maintenance side (docs/transit.md, decisions 64-69).
// A realm whose genesis opts in (allow_history_trim) checkpoints with the
// signed command `checkpoint`; trimming is a separate step that a trusted
// maintainer holding realm_control runs, for example on each pass of
// `transitd --maintain` or once with `transit history trim`:
//
//   transit::Client maintainer(options);               // realm_control at realm scope
//   auto step = transit::trim_history(maintainer);     // one step; call it again later
//
// It reads the realm's checkpoint status (a query, so only durable state) and,
// when the latest checkpoint is above the floor, submits `advance_floor` with
// that checkpoint's position and roots. The node checks the checkpoint's
// committed entry and roots itself before it moves the floor, deletes the
// journal's requests below it in the same synced write, then compacts them
// away; receipts, records, values, inputs and blocks are never deleted.
#pragma once

#include "transit/client.h"

namespace cowboy::transit {

struct TrimStep {
  Position floor_before{};
  Position floor{};               // the floor after this step
  std::optional<Receipt> receipt;  // the advance_floor receipt; null: nothing was submitted
};

/// One trim step. Nothing to do (no checkpoint above the floor - a realm
/// without the opt-in never has one - or another maintainer advanced it
/// first) is a success without a receipt, so a maintenance loop may call it
/// on every pass: its interval authorizes nothing, only a checkpoint does.
ClientResult<TrimStep> trim_history(Client& client);

}  // namespace cowboy::transit
