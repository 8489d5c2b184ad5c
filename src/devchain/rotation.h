// devchain::Rotation: one validator of a devchain with several of them
// (docs/devchain.md "Several validators"). It owns the timing; the Node owns
// the state and the verification. Not Byzantine fault tolerant, and not meant
// to be: a devchain with a rotating proposer whose every block the others
// re-execute.
//
// Views: after a validator commits the block of view v (its own or a peer's),
// the leader of v+1 (validators_E[(v+1) mod N_E] of the epoch E active at the
// next height, Node::leads; of view 0 where the next height starts an epoch,
// whose views restart, Node::first_view, docs/cip11.md choice 140) proposes
// block_interval later; a validator no active snapshot names only follows.
// A view whose block has not come view_timeout after that is nullified - no
// message says so; every validator reads it off its own clock - and the leader
// of the next view proposes, one view per further view_timeout. The proposer
// sends its block to every peer (POST /v1/chain/blocks), which re-executes it,
// before it writes the block itself: killed in between, it finds the block at
// its peers when it restarts instead of holding one they never saw.
//
// Catch-up: a validator that starts, or hears no block for a whole view,
// asks its peers for their heads and fetches and accepts every block it lacks
// from one that is ahead; a peer on another branch is followed when its
// branch wins the fork-choice rule (Node::follow, docs/devchain.md D11), at
// once when a peer's block was refused for building on another branch. A leader does the same before it proposes, so a
// validator back from a crash never proposes on a stale head; and it proposes
// only after it has committed a block from the others (or a whole rotation of
// timeouts passed with none), since until then its clock does not know their
// views. A validator busy with a block answers another's at once
// (Node::accept_block) rather than wait, and fetches it later.
//
// Transactions: each one a validator's node newly accepts is forwarded to
// every peer (POST /v1/tx), so the next leaders hold it if this one dies.
//
// Peers: those --peers names, and each validator a governance change names
// with its chain API, learned as the head moves (PeerApis, docs/cip11.md
// choice 130): a validator that joins is sent blocks and transactions from
// the block that scheduled it on.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "devchain/http_client.h"
#include "devchain/node.h"
#include "devchain/peer_apis.h"

namespace cowboy::devchain {

struct RotationConfig {
  std::chrono::milliseconds block_interval{200};
  std::chrono::milliseconds view_timeout{1'000};
  /// Test hook (cip11d --test-hold-view): the first block this validator
  /// proposes at a view from hold_from_view on is held - neither sent nor
  /// written here - until a peer has committed another block at its height
  /// (the next leader's, after a view timeout), or hold_for at most; then sent
  /// and written: a fork (docs/devchain.md D11).
  std::optional<cip11::View> hold_from_view;
  std::chrono::milliseconds hold_for{0};
  /// A follower (cip11d --follow, docs/devchain.md D14): a node with no key,
  /// which proposes nothing and which no validator sends blocks to, asks its
  /// peers for their heads every block_interval instead of after a view
  /// timeout, and takes what they hold through the same catch-up and fork
  /// choice (Node::follow: every block verified as accept_block does).
  bool follow_only = false;
};

/// What a follower last learned from its peers (its /readyz and /metrics, D14).
struct PeerHeads {
  std::uint64_t highest = 0;  // the highest head a peer answered with
  std::optional<std::chrono::steady_clock::time_point> read_at;  // when a peer last answered; nullopt: never
};

class Rotation {
 public:
  /// `node` has a validator key (or none, config.follow_only); `peers` are the
  /// validators' chain APIs (the other ones, for a validator).
  Rotation(Node& node, std::shared_ptr<PeerApis> peers, RotationConfig config);
  ~Rotation();
  void start();
  void stop();
  PeerHeads peer_heads() const;

 private:
  void run();
  void forward_loop();
  /// Fetches and accepts blocks from the peer furthest ahead; true when it was behind.
  bool catch_up();
  bool stopped() const;
  void broadcast(const SignedBlock& block);
  /// The test hook's delay, before `block` is sent (RotationConfig::hold_from_view).
  void hold(const SignedBlock& block);

  /// The peers now, after learning any the chain named since (PeerApis::learn).
  std::vector<std::shared_ptr<HttpClient>> peers();

  Node& node_;
  const std::shared_ptr<PeerApis> peers_;
  const RotationConfig config_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  PeerHeads peer_heads_;
  std::deque<Transaction> to_forward_;
  static constexpr std::size_t kMaxForwardQueue = 50'000;
  std::thread thread_, forwarder_;
  bool held_ = false;  // the rotation thread's: the hook held its block
};

}  // namespace cowboy::devchain
