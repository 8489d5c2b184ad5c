// The fakes the handshake tests run a Handshake with: entropy that counts (so
// each challenge differs and every run is the same) and an Admission that
// records each Hello it judges and answers as told.
#pragma once

#include <optional>
#include <vector>

#include "cip11/handshake.h"

namespace cowboy::cip11::testing {

class CountingEntropy final : public Entropy {
 public:
  void fill(std::span<std::uint8_t> out) override {
    for (auto& b : out) b = static_cast<std::uint8_t>(++n_);
  }

 private:
  std::uint64_t n_ = 0;
};

class FixedAdmission final : public Admission {
 public:
  std::optional<GoodbyeReason> refuse;
  std::vector<Hello> seen;
  std::optional<GoodbyeReason> admit(const Hello& peer) override {
    seen.push_back(peer);
    return refuse;
  }
};

}  // namespace cowboy::cip11::testing
