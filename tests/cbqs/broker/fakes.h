// Fakes for broker tests without a socket: a fixed snapshot, counting
// entropy, and a chain view in which one stream's account is solvent.
#pragma once

#include "cbqs/broker/chain_view.h"
#include "common/clock.h"

namespace cowboy::cbqs::testing {

class FixedViews final : public broker::ViewSource {
 public:
  broker::ChainViewPtr current() const override { return view; }
  bool fresh() const override { return view != nullptr; }
  std::shared_ptr<broker::ChainView> view = std::make_shared<broker::ChainView>();
};

class CountingEntropy final : public Entropy {
 public:
  void fill(std::span<std::uint8_t> out) override {
    for (auto& b : out) b = static_cast<std::uint8_t>(++n);
  }
  std::uint64_t n = 0;
};

/// A recognisable Ed25519 seed: `b` then zeros.
inline crypto::Ed25519Seed seed(std::uint8_t b) {
  crypto::Ed25519Seed s{};
  s[0] = b;
  return s;
}

/// Adds `stream` to the view (height 100), with a solvent account for its owner.
inline void add_solvent_stream(broker::ChainView& view, StreamRecordV2 stream) {
  view.height = 100;
  stream.chain_instance_id = view.chain_instance_id;
  stream.owner[0] = 0x0a;
  view.accounts[stream.owner] = CbqsAccountV2{stream.owner, view.provider.provider, 1'000'000'000, 1, 1, 100, false};
  view.streams[stream.stream_id] = stream;
}

}  // namespace cowboy::cbqs::testing
