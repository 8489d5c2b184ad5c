// A CIP-11 chain plane driven block by block, without a node: runner keys,
// a DevBeacon and one call per instruction. Shared by the chain tests.
#pragma once

#include <gtest/gtest.h>

#include "cip11/chain/codec.h"
#include "cip11/chain/machine.h"

namespace cowboy::cip11::chain::testing {

struct Key {
  crypto::Secp256k1Secret secret{};
  crypto::Secp256k1Compressed pub{};
  Address address{};
};

inline Key key(std::uint8_t n) {
  crypto::init();
  Key k;
  k.secret[31] = n;
  k.secret[0] = 0x5a;
  k.pub = *crypto::secp256k1_public_key(k.secret);
  k.address = *crypto::secp256k1_key_address(k.pub);
  return k;
}

/// `n` keys from key(first) on.
inline std::vector<Key> keys(std::uint8_t first, std::uint8_t n) {
  std::vector<Key> out;
  for (std::uint8_t i = 0; i < n; ++i) out.push_back(key(static_cast<std::uint8_t>(first + i)));
  return out;
}

/// The stored form of a state: equal bytes, equal states.
inline Bytes state_bytes(const State& s) {
  codec::Writer w;
  put_state(w, s);
  return std::move(w).take();
}

inline constexpr std::uint32_t kAllKinds = 0x3f;

inline RegisterRunner registration(const Key& k, u128 stake = 1'000, std::uint32_t max_concurrent = 8) {
  RegisterRunner r;
  r.key = k.pub;
  r.stake = stake;
  r.job_kinds = kAllKinds;
  r.max_concurrent = max_concurrent;
  return r;
}

inline SubmitJob job(std::uint32_t runners = 1, std::uint64_t timeout = 10, JobKind kind = JobKind::kLlm) {
  SubmitJob j;
  j.kind = kind;
  j.spec = Bytes{'s', 'p', 'e', 'c'};
  j.timeout_blocks = timeout;
  j.runners = runners;
  j.max_price = 0;
  return j;
}

class Chain {
 public:
  ChainParams params;
  State state;
  std::map<Address, u128> balances;
  Height height{0};
  Effects effects;  // the current block's
  ShadowBook shadow;  // as a node keeps it: each block's shadow writes applied once the next one begins
  ValidatorSnapshots validators = ValidatorSnapshots::genesis({crypto::Ed25519Public{}});  // |V| = 1
  std::uint64_t finality_depth = 0;  // a lone producer's; what BlockContext passes on (TimeoutTooShort)

  /// Starts the next block with these registry indices present.
  void begin(const std::vector<std::uint32_t>& present = {}) {
    ++height;
    shadow.apply(effects.shadow_writes);
    effects = {};
    present_ = PresentSet(state.index.size());
    for (auto i : present) present_.add(i);
    // As the devchain's producer: under effective Mode A the proposer's view is not read (§8.3).
    if (mode_a_effective(params, validators, height)) present_ = proven_presence(state, height, state.index.size());
    beacon_.emplace(chain_, height);
    begin_block(state, context(), effects);
  }
  /// Applies one instruction in the current block.
  Outcome tx(const Address& sender, const Instruction& instruction) {
    Bytes32 hash{};
    hash[0] = static_cast<std::uint8_t>(++txs_ >> 8);
    hash[1] = static_cast<std::uint8_t>(txs_);
    return apply(state, balances, context(), TxContext{sender, hash}, encode_instruction(instruction), effects);
  }
  /// One block holding exactly this instruction; fails the test if it is refused.
  Outcome ok(const Address& sender, const Instruction& instruction, const std::vector<std::uint32_t>& present = {}) {
    begin(present);
    auto out = tx(sender, instruction);
    EXPECT_FALSE(out.error) << chain_error_name(*out.error);
    return out;
  }
  void fund(const Key& k, u128 amount = 1'000'000) { balances[k.address] += amount; }
  /// Funds and registers each key, one block each.
  void register_all(const std::vector<Key>& keys, u128 stake = 1'000) {
    for (const auto& k : keys) {
      fund(k);
      ok(k.address, registration(k, stake));
    }
  }
  const JobRecord& job_of(const JobId& id) const { return state.jobs.at(id); }
  /// The beacon_hash_v1 of Round(0, view)'s dev seed.
  Bytes32 beacon_hash(std::uint64_t view) const {
    return *beacon_hash_v1(*DevBeacon(chain_, Height{view + 1}).seed(RoundEpoch{0}, View{view}));
  }
  /// The current block as the machine sees it (after begin()).
  BlockContext context() {
    BlockContext c{height, params, *beacon_, present_, validators, std::nullopt, &shadow};
    c.finality_depth = finality_depth;
    return c;
  }
  std::vector<Address> committee_of(const JobId& id) const {
    std::vector<Address> out;
    for (const auto& a : state.jobs.at(id).committee) out.push_back(a.runner);
    return out;
  }

 private:
  Bytes32 chain_{};
  std::optional<DevBeacon> beacon_;
  PresentSet present_;
  std::uint32_t txs_ = 0;
};

}  // namespace cowboy::cip11::chain::testing
