// The broker's view of the chain: one finalized provider snapshot, immutable
// once built and shared by every request evaluated against it (§19 C: one
// request, one snapshot).
#pragma once

#include <map>
#include <memory>

#include "cbqs/chain/params.h"
#include "cbqs/wire/types.h"

namespace cowboy::cbqs::broker {

struct ChainView {
  std::uint64_t height = 0;
  Bytes32 chain_instance_id{};
  ProviderRecordV2 provider;
  std::map<Bytes32, StreamRecordV2> streams;  // every stream assigned to this provider
  std::map<Address, CbqsAccountV2> accounts;  // by owner (the provider is this one)
  Params params;

  const StreamRecordV2* stream(const Bytes32& id) const {
    auto it = streams.find(id);
    return it == streams.end() ? nullptr : &it->second;
  }
  const CbqsAccountV2* account_of(const StreamRecordV2& s) const {
    auto it = accounts.find(s.owner);
    return it == accounts.end() ? nullptr : &it->second;
  }
};

using ChainViewPtr = std::shared_ptr<const ChainView>;

/// Where the broker's parts read the snapshot in force.
class ViewSource {
 public:
  virtual ~ViewSource() = default;
  /// The current view, or null before the first.
  virtual ChainViewPtr current() const = 0;
  /// A view exists and its age is within cbqs.max_snapshot_age_blocks.
  virtual bool fresh() const = 0;
};

}  // namespace cowboy::cbqs::broker
