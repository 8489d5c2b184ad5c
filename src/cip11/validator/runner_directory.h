// What a validator knows of the Runner Registry (§7.1, §8.5): each runner's
// key, registry index and health, read from the chain, and the admission
// gate built on it (§6.2, §5.2): a runner is admitted when it is registered,
// not deregistered, and this validator is in its Sub(R).
//
// Thread-safe: the admission check runs on signature worker threads, the
// refresh on the service's block path.
#pragma once

#include <mutex>
#include <map>

#include "cip11/chain/state.h"
#include "cip11/handshake.h"
#include "cip11/presence.h"
#include "devchain/cip11_api.h"

namespace cowboy::cip11 {

class RunnerDirectory {
 public:
  struct Entry {
    crypto::Secp256k1Compressed key{};
    std::uint32_t index = 0;  // ACTIVE_RUNNERS_KEY position, fixed for life
    HealthStatus health = HealthStatus::kHealthy;
  };

  explicit RunnerDirectory(devchain::Cip11Api& chain) : chain_(chain) {}

  /// Reads the whole registry again. False (and the old view kept) if the chain cannot answer.
  bool refresh();
  std::optional<Entry> find(const Address& runner) const;
  /// Refreshes once if `runner` is unknown (a registration newer than the last refresh).
  std::optional<Entry> find_or_refresh(const Address& runner);
  std::size_t size() const;
  /// §8.1: the present set over registry(H-1) - only runners whose index is
  /// below `registry_size` (registered as of the parent block).
  PresentSet present_set(const std::vector<Address>& runners, std::uint32_t registry_size) const;

 private:
  devchain::Cip11Api& chain_;
  mutable std::mutex mu_;
  std::map<Address, Entry> entries_;
};

class RegistryAdmission final : public Admission {
 public:
  /// `validators`: ValidatorSetSnapshot(0)'s peer keys in snapshot order; `me` among them.
  RegistryAdmission(RunnerDirectory& directory, std::vector<crypto::Ed25519Public> validators,
                    const crypto::Ed25519Public& me)
      : directory_(directory), validators_(std::move(validators)), me_(me) {}
  /// kAuthFailed for a key that is no registered, live runner; kNotInSubset
  /// when this validator is not in its Sub(R).
  std::optional<GoodbyeReason> admit(const Hello& peer) override;

 private:
  RunnerDirectory& directory_;
  const std::vector<crypto::Ed25519Public> validators_;
  const crypto::Ed25519Public me_;
};

}  // namespace cowboy::cip11
