// transitd's HTTP boundary: POST /v1/command (SignedRequest -> Receipt) and
// POST /v1/query (SignedQuery -> Response), nothing else. On the io thread a
// request is decoded, its realm and X-Transit-Control header checked (only a
// query that releases a snapshot may carry it) and its signature verified; then it waits in the sequencer, and the answer is sent
// from there without holding the io thread.
#pragma once

#include <array>
#include <atomic>

#include "net/http_server.h"
#include "transit/contract/errors.h"
#include "transit/node/sequencer.h"

namespace cowboy::transit::node {

/// Realm, key and signature, the same for every signed envelope: the key it
/// verified with, or why not (the payload route asks it too).
Result<PublicKey, Refusal> authenticate(const Sequencer& sequencer, const Text<1, 64>& realm, PrincipalId principal,
                                        const Digest& digest, const Signature& signature);

class Routes {
 public:
  explicit Routes(Sequencer& sequencer) : sequencer_(sequencer) {}
  void handle(net::HttpRequest request, net::HttpResponder respond);
  /// Rejections answered since start with `reason` (the admin listener's /metrics).
  std::uint64_t rejections(Reason reason) const { return rejected_[static_cast<std::size_t>(reason)].load(); }

 private:
  void command(const net::HttpRequest& request, net::HttpResponder respond);
  void query(const net::HttpRequest& request, bool control, net::HttpResponder respond);
  static Refusal hint_not_allowed();
  template <typename Answer> std::function<void(Result<Answer, Refusal>)> answer_with(net::HttpResponder respond) const;
  net::HttpReply reject(const Refusal& refusal) const;
  net::HttpReply reject(const DecodeError& error) const;

  Sequencer& sequencer_;
  mutable std::array<std::atomic<std::uint64_t>, std::size(kReasons)> rejected_{};  // counted where they are answered
};

}  // namespace cowboy::transit::node
