// devchain::PeerApis: the other validators' chain APIs, as one validator of
// several reaches them to send blocks, transactions and presence views
// (docs/devchain.md D10, docs/cip11.md choice 130): the ones its --peers
// names, and the chain API of each validator a governance change names,
// learned from the chain as the changes come. So the validators already
// running reach one that joins without a restart, and their --peers need not
// name it beforehand. Any thread; clients() is a snapshot to iterate.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cip11/chain/state.h"
#include "common/result.h"
#include "devchain/http_client.h"

namespace cowboy::devchain {

class PeerApis {
 public:
  /// `urls` are --peers' (http://host:port each); `self` is this validator's
  /// peer key, whose own entry it never adds; `timeout` bounds each call.
  static Result<std::shared_ptr<PeerApis>, std::string> open(const std::vector<std::string>& urls,
                                                             const crypto::Ed25519Public& self,
                                                             std::chrono::milliseconds timeout);
  /// Adds a client for the chain_api of each validator in `named` (Node::validators)
  /// that it does not reach yet; the number added.
  std::size_t learn(const std::vector<cip11::chain::ValidatorEntry>& named);
  std::vector<std::shared_ptr<HttpClient>> clients() const;

 private:
  PeerApis(const crypto::Ed25519Public& self, std::chrono::milliseconds timeout) : self_(self), timeout_(timeout) {}
  bool add(const std::string& url);  // with mu_ held; false when it is no http://host:port

  const crypto::Ed25519Public self_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mu_;
  std::set<std::string> urls_;
  std::vector<std::shared_ptr<HttpClient>> clients_;
};

}  // namespace cowboy::devchain
