// The one thing cbqsd reads from the chain: its provider's snapshot at the
// latest finalized height (docs/protocol.md §E). devchain::ChainApi provides
// it (in process or over HTTP); a real Cowboy node's client would too.
#pragma once

#include <string>
#include <vector>

#include "cbqs/chain/params.h"
#include "cbqs/wire/types.h"
#include "common/result.h"

namespace cowboy::cbqs {

/// Everything one provider's broker needs, at one finalized height.
struct ProviderSnapshot {
  std::uint64_t height = 0;
  Bytes32 chain_instance_id{};
  ProviderRecordV2 provider;
  std::vector<StreamRecordV2> streams;  // every stream assigned to it, Closed included
  std::vector<CbqsAccountV2> accounts;  // the accounts of those streams that exist
  Params params;
};

class SnapshotProvider {
 public:
  virtual ~SnapshotProvider() = default;
  /// The snapshot of `provider`, or why it cannot be read now.
  virtual Result<ProviderSnapshot, std::string> read_snapshot(const Address& provider) = 0;
};

}  // namespace cowboy::cbqs
